package suite

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/bench/loadgen"
)

// fakeRun is a fixed-rate run with figures derived from its p50.
func fakeRun(scenario, target string, round int, rps float64, p50 int64) RunRecord {
	sum := &loadgen.Summary{Scenario: scenario, RPS: rps, ElapsedSec: 2}
	sum.Requests, sum.Latency = int64(rps*2), loadgen.Percentiles{P50: p50, P99: 4 * p50, Max: 10 * p50}
	for i, q := range loadgen.CurveQuantiles() {
		sum.Curve = append(sum.Curve, loadgen.CurvePoint{Percentile: q, LatencyUs: p50 + int64(i)*p50/2})
	}
	var tl []loadgen.Line
	for s := 1; s <= 3; s++ {
		l := loadgen.Line{ElapsedSec: float64(s), RPS: rps, Latency: loadgen.Percentiles{P99: 4 * p50}, Warmup: s == 1}
		l.Requests = int64(rps)
		tl = append(tl, l)
	}
	return RunRecord{Scenario: scenario, Target: target, Round: round, Offered: 1000, Summary: sum, Timeline: tl,
		StartSec: float64(round * 10), EndSec: float64(round*10 + 3), GenCPU: 0.1, ServerCPU: 0.2}
}

// testEnv is an environment holding three rounds of ping (bare and
// Swapgate) and quote-partner, and searches of ping.
func testEnv() *environment {
	env := &environment{cfg: Quick(), cores: 2}
	env.cfg.Scenarios = []string{"quote-partner"}
	for r, f := range []float64{1, 2, 1.1} { // round 2 is twice as slow for everyone
		round := r + 1
		env.runs = append(env.runs,
			fakeRun("ping", targetBare, round, 1000, int64(100*f)),
			fakeRun("ping", targetSwapgate, round, 1000, int64(150*f)),
			fakeRun("quote-partner", targetSwapgate, round, 990, int64(1000*f)))
		env.searches = append(env.searches,
			SearchRecord{Scenario: "ping", Target: targetBare, Round: round, Result: FindMaxResult{MaxRate: 80000 / f}},
			SearchRecord{Scenario: "ping", Target: targetSwapgate, Round: round, Result: FindMaxResult{MaxRate: 40000 / f}})
	}
	env.runs[2].Summary.Errors = 3
	return env
}

// TestRowsMedianOfPerRoundRatios checks the aggregation: figures are
// medians over rounds, ratios are taken per round against that round's bare
// ping, so round 2's slowness (on both sides) does not show as a ratio.
func TestRowsMedianOfPerRoundRatios(t *testing.T) {
	rows := testEnv().rows()
	if len(rows) != 3 || rows[0].Target != targetBare || rows[1].Target != targetSwapgate || rows[2].Scenario != "quote-partner" {
		t.Fatalf("rows %+v", rows)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	sg := rows[1]
	if !near(sg.P50.Value.Median, 165) || !near(sg.P50.Value.Min, 150) || !near(sg.P50.Value.Max, 300) {
		t.Fatalf("Swapgate p50 over rounds %+v", sg.P50.Value)
	}
	if !near(sg.P50.Ratio.Median, 1.5) || !near(sg.P50.Ratio.Min, 1.5) || !near(sg.P50.Ratio.Max, 1.5) || sg.P50.Ratio.N != 3 {
		t.Fatalf("Swapgate p50 ratio %+v, want 1.5 every round", sg.P50.Ratio)
	}
	if sg.MaxRate == nil || !near(sg.MaxRate.Ratio.Median, 0.5) || !near(sg.MaxRate.Value.Median, 40000/1.1) {
		t.Fatalf("max rate %+v", sg.MaxRate)
	}
	q := rows[2]
	if !near(q.P50.Ratio.Median, 10) || !near(q.RPS.Ratio.Median, 0.99) || q.Errors != 3 || q.Requests != 3*1980 || q.MaxRate != nil {
		t.Fatalf("quote row %+v", q)
	}
	if bare := rows[0]; !near(bare.P99.Ratio.Median, 1) || !near(bare.GenCPU.Median, 0.1) || !near(bare.ServerCPU.Median, 0.2) {
		t.Fatalf("bare row %+v", bare)
	}
}

// TestRowsRatioOnlyAtEqualLoad: a run offered another rate than the bare
// ping (webhook-storm's events) gets figures but no ratio.
func TestRowsRatioOnlyAtEqualLoad(t *testing.T) {
	env := testEnv()
	env.cfg.Scenarios = []string{"webhook-storm"}
	r := fakeRun("webhook-storm", targetSwapgate, 1, 100, 2000)
	r.Offered = 100
	env.runs = append(env.runs, r)
	rows := env.rows()
	w := rows[len(rows)-1]
	if w.Scenario != "webhook-storm" || w.RPS.Value.Median != 100 || w.RPS.Ratio.Valid() || w.P99.Ratio.Valid() {
		t.Fatalf("webhook row %+v", w)
	}
}

func testReport() *Report {
	env := testEnv()
	start := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	rep := &Report{Preset: "quick", Started: start, Finished: start.Add(90 * time.Second), Machine: Machine{Cores: 2, GOOS: "linux"},
		Scenarios: []ScenarioInfo{{"ping", "ping <both> & more"}, {"quote-partner", "quotes"}},
		Servers:   []ServerInfo{{Name: "main", PID: 42, Addr: "127.0.0.1:1", Args: []string{"serve"}, Log: "logs/main.log"}},
		Runs:      env.runs, Searches: env.searches, Notes: []string{"a note with <markup> & an ampersand"},
		DeliveriesPerSec: []int{0, 3, 5, 2},
		Processes: []ProcSeries{
			{Name: "bare", PID: 1, Samples: []ProcSample{{T: 1, CPU: 0.1, RSS: 30 << 20}, {T: 2, CPU: 0.3, RSS: 31 << 20}}},
			{Name: "main", PID: 2, Samples: []ProcSample{{T: 1, CPU: 0.4, RSS: 60 << 20}, {T: 2, CPU: 0.5, RSS: 64 << 20}}},
		},
	}
	rep.Table = env.rows()
	var b strings.Builder
	_ = WriteTable(&b, rep.Table)
	rep.TableText = b.String()
	return rep
}

// TestRenderHTMLIsSelfContainedAndWellFormed parses the whole page
// strictly as XML (it is written to be both), checks that nothing is
// fetched from elsewhere (no script, no link, no src or href), and parses
// every inline SVG on its own, each with lines drawn.
func TestRenderHTMLIsSelfContainedAndWellFormed(t *testing.T) {
	page := RenderHTML(testReport())
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Fatalf("no doctype: %.80s", page)
	}
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = true
	elements := map[string]int{}
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("page is not well-formed: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			elements[el.Name.Local]++
			stack = append(stack, el.Name.Local)
			for _, a := range el.Attr {
				if a.Name.Local == "src" || a.Name.Local == "href" {
					t.Fatalf("<%s %s=%q> fetches from elsewhere", el.Name.Local, a.Name.Local, a.Value)
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements %v", stack)
	}
	for _, banned := range []string{"script", "link", "img", "iframe", "object"} {
		if elements[banned] > 0 {
			t.Fatalf("page has <%s>", banned)
		}
	}
	if elements["html"] != 1 || elements["head"] != 1 || elements["style"] != 1 || elements["title"] < 1 || elements["table"] < 3 {
		t.Fatalf("page structure %v", elements)
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "url(") || strings.Contains(page, "@import") {
		t.Fatal("page refers to something outside itself")
	}
	// 3 charts per scenario with runs (ping, quote-partner), then CPU,
	// memory and webhook deliveries.
	svgs := strings.Split(page, "<svg ")[1:]
	if len(svgs) != 2*3+3 {
		t.Fatalf("%d charts, want 9", len(svgs))
	}
	for i, s := range svgs {
		doc := "<svg " + s[:strings.Index(s, "</svg>")+len("</svg>")]
		var svg struct {
			XMLName   xml.Name `xml:"svg"`
			ViewBox   string   `xml:"viewBox,attr"`
			Title     string   `xml:"title"`
			Polylines []struct {
				Points string `xml:"points,attr"`
				Stroke string `xml:"stroke,attr"`
			} `xml:"polyline"`
		}
		dec := xml.NewDecoder(strings.NewReader(doc))
		dec.Strict = true
		if err := dec.Decode(&svg); err != nil {
			t.Fatalf("chart %d is not well-formed SVG: %v\n%.300s", i, err, doc)
		}
		if svg.ViewBox == "" || svg.Title == "" || len(svg.Polylines) == 0 {
			t.Fatalf("chart %d (%q): viewBox %q, %d lines", i, svg.Title, svg.ViewBox, len(svg.Polylines))
		}
		for _, p := range svg.Polylines {
			for _, xy := range strings.Fields(p.Points) {
				var x, y float64
				if _, err := fmtSscan(xy, &x, &y); err != nil || x < 0 || x > chartW || y < 0 || y > chartH {
					t.Fatalf("chart %d (%q): point %q outside the chart", i, svg.Title, xy)
				}
			}
		}
	}
	for _, want := range []string{"ping &lt;both&gt; &amp; more", "a note with &lt;markup&gt; &amp; an ampersand", "quote-partner", "99.99%", "max/s"} {
		if !strings.Contains(page, want) {
			t.Fatalf("page lacks %q", want)
		}
	}
}

func TestChartWithoutData(t *testing.T) {
	s := chart{title: "empty"}.svg()
	var v struct{ XMLName xml.Name }
	if err := xml.Unmarshal([]byte(s), &v); err != nil || !strings.Contains(s, "no data") {
		t.Fatalf("%v: %s", err, s)
	}
}

func TestPercentileAxis(t *testing.T) {
	for p, want := range map[float64]float64{0: 0, 90: 1, 99: 2, 99.9: 3, 99.99: 4, 99.999: 5, 100: 5.5} {
		if got := percentileX(p); math.Abs(got-want) > 1e-9 {
			t.Errorf("percentileX(%v) = %v, want %v", p, got, want)
		}
	}
	if fmtTick(0.15000000000000002) != "0.15" || fmtTick(2500) != "2500" {
		t.Fatal("fmtTick")
	}
}

// fmtSscan reads "x,y".
func fmtSscan(xy string, x, y *float64) (int, error) {
	return fmt.Sscanf(xy, "%f,%f", x, y)
}

// TestStandaloneChartsAreSVGDocuments: every chart of the page is also
// a well-formed SVG document of its own, in the SVG namespace with its
// style inside, so that a document can embed the file alone.
func TestStandaloneChartsAreSVGDocuments(t *testing.T) {
	_, charts := renderReport(testReport())
	if len(charts) == 0 {
		t.Fatal("no charts")
	}
	names := map[string]bool{}
	for _, c := range charts {
		name := slug(c.title)
		if name == "" || names[name] {
			t.Fatalf("chart %q has the file name %q, empty or taken", c.title, name)
		}
		names[name] = true
		doc := c.standalone()
		d := xml.NewDecoder(strings.NewReader(doc))
		d.Strict = true
		var root *xml.StartElement
		styles := 0
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed: %v", name, err)
			}
			if el, ok := tok.(xml.StartElement); ok {
				if root == nil {
					root = &el
				}
				if el.Name.Local == "style" {
					styles++
				}
			}
		}
		if root == nil || root.Name.Local != "svg" || root.Name.Space != "http://www.w3.org/2000/svg" || styles != 1 {
			t.Fatalf("%s: root %v, %d styles", name, root, styles)
		}
	}
}
