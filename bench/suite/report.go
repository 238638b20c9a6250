package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// writeReport writes results.json, report.html and table.txt to rep.Dir,
// and each of the page's charts as a standalone SVG file in its charts/
// folder, for documents that embed them one by one.
func writeReport(rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	page, charts := renderReport(rep)
	files := map[string][]byte{
		"results.json": append(b, '\n'),
		"report.html":  []byte(page),
		"table.txt":    []byte(rep.TableText + "\n" + strings.Join(rep.Notes, "\n") + "\n"),
	}
	for i, c := range charts {
		files[filepath.Join("charts", fmt.Sprintf("%02d-%s.svg", i+1, slug(c.title)))] = []byte(c.standalone())
	}
	if err := os.MkdirAll(filepath.Join(rep.Dir, "charts"), 0o755); err != nil {
		return fmt.Errorf("charts folder: %w", err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(rep.Dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// slug makes a chart title a file name: lower-case letters and digits,
// runs of anything else one dash.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// reportCSS is the page's only style, inline.
const reportCSS = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}h3{font-size:15px;margin:18px 0 4px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
td.l,th.l{text-align:left}th{background:#f6f6f6}pre{background:#f8f8f8;padding:8px;overflow-x:auto;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:8px}.chart{border:1px solid #eee;max-width:100%;height:auto}
.ct{font:bold 13px system-ui,sans-serif}.ax{font:11px system-ui,sans-serif;fill:#444}
.grid{stroke:#e6e6e6;stroke-width:1}.frame{fill:none;stroke:#bbb}.line{fill:none;stroke-width:1.6}
.band{fill:#f0f4fa}.band:hover{fill:#dde8f7}.muted{color:#666}.pass{color:#2e7d32}.fail{color:#c62828}`

// RenderHTML renders the report as one self-contained page: no script, no
// external style, font or image; every chart is inline SVG. It is written
// as well-formed XML as well as HTML (every element closed, only the five
// XML entities), so that tools and the tests can parse it strictly.
func RenderHTML(rep *Report) string {
	page, _ := renderReport(rep)
	return page
}

// renderReport renders the page and returns its charts in page order.
func renderReport(rep *Report) (string, []chart) {
	var b strings.Builder
	var charts []chart
	emit := func(c chart) {
		charts = append(charts, c)
		b.WriteString(c.svg())
	}
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w(`<!DOCTYPE html>` + "\n")
	w(`<html lang="en"><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/>`)
	w(`<title>Swapgate bench suite %s</title><style>%s</style></head><body>`, esc(rep.Started.UTC().Format(time.RFC3339)), reportCSS)
	w(`<h1>Swapgate against the bare-server limit</h1>`)
	w(`<p class="muted">Preset %s, started %s, took %s. %d cores, %s/%s, %s, kernel %s. Load average at start %s, at end %s.</p>`,
		esc(rep.Preset), esc(rep.Started.UTC().Format(time.RFC3339)), esc(rep.Finished.Sub(rep.Started).Round(time.Second).String()),
		rep.Machine.Cores, esc(rep.Machine.GOOS), esc(rep.Machine.GOARCH), esc(rep.Machine.GoVersion), esc(rep.Machine.Kernel),
		esc(rep.Machine.LoadAvgStart), esc(rep.Machine.LoadAvgEnd))

	w(`<h2>Table</h2>`)
	writeHTMLTable(&b, rep.Table)
	w(`<ul>`)
	for _, n := range rep.Notes {
		w(`<li>%s</li>`, esc(n))
	}
	w(`</ul><pre>%s</pre>`, esc(rep.TableText))

	w(`<h2>Scenarios</h2><table><tr><th class="l">name</th><th class="l">what it measures</th></tr>`)
	for _, s := range rep.Scenarios {
		w(`<tr><td class="l">%s</td><td class="l">%s</td></tr>`, esc(s.Name), esc(s.Doc))
	}
	w(`</table>`)

	w(`<h2>Per scenario</h2><p class="muted">Latency percentile curves of every run (HDR plot: each step right is one more nine), and throughput and p99 per second of each run, warm-up included. Blue: the bare server; orange: Swapgate.</p>`)
	for _, s := range rep.Scenarios {
		runs := runsOf(rep, s.Name)
		if len(runs) == 0 {
			continue
		}
		w(`<h3>%s</h3><div class="charts">`, esc(s.Name))
		emit(curveChart(s.Name, runs))
		emit(timelineChart(s.Name+": throughput per second", "requests/s", runs, func(l float64, p99 float64) float64 { return l }))
		emit(timelineChart(s.Name+": p99 per second", "p99", runs, func(_ float64, p99 float64) float64 { return p99 }))
		w(`</div>`)
	}

	if len(rep.Searches) > 0 {
		w(`<h2>Find-max searches</h2><table><tr><th class="l">scenario</th><th class="l">target</th><th>round</th><th>max/s</th><th class="l">steps (offered/s: p99, verdict)</th></tr>`)
		for _, s := range rep.Searches {
			var steps []string
			for _, st := range s.Result.Steps {
				verdict := `<span class="pass">ok</span>`
				if !st.Pass {
					verdict = `<span class="fail">` + esc(st.Reason) + `</span>`
				}
				steps = append(steps, fmt.Sprintf(`%s: %s %s`, esc(fmtRate(st.Rate)), esc(fmtUs(float64(st.P99Us))), verdict))
			}
			capped := ""
			if s.Result.Capped {
				capped = " (ceiling)"
			}
			w(`<tr><td class="l">%s</td><td class="l">%s</td><td>%d</td><td>%s%s</td><td class="l">%s</td></tr>`,
				esc(s.Scenario), esc(s.Target), s.Round, esc(fmtRate(s.Result.MaxRate)), capped, strings.Join(steps, "; "))
		}
		w(`</table>`)
	}

	w(`<h2>Processes over time</h2><p class="muted">CPU as a share of all cores and resident memory of each server, sampled from /proc/PID/stat and /proc/PID/status, and of the generator (this process). Shaded spans are the runs; hover for their names.</p><div class="charts">`)
	bands := runBands(rep)
	var cpu, rss []series
	for _, p := range rep.Processes {
		var c, m [][2]float64
		for _, s := range p.Samples {
			c = append(c, [2]float64{s.T, 100 * s.CPU})
			m = append(m, [2]float64{s.T, float64(s.RSS) / (1 << 20)})
		}
		cpu = append(cpu, series{name: p.Name, color: palette(p.Name), pts: c})
		rss = append(rss, series{name: p.Name, color: palette(p.Name), pts: m})
	}
	pct := func(v float64) string { return fmtTick(v) + "%" }
	mib := func(v float64) string { return fmtTick(v) + " MiB" }
	emit(chart{title: "CPU (% of all cores)", xLabel: "seconds since start", yLabel: "CPU", series: cpu, bands: bands, yFmt: pct, yMin0: true})
	emit(chart{title: "Resident memory", xLabel: "seconds since start", yLabel: "RSS", series: rss, bands: bands, yFmt: mib, yMin0: true})
	if len(rep.DeliveriesPerSec) > 0 {
		var d [][2]float64
		for i, n := range rep.DeliveriesPerSec {
			d = append(d, [2]float64{float64(i), float64(n)})
		}
		emit(chart{title: "Webhook deliveries per second at the receiver (retries included)", xLabel: "seconds since start",
			yLabel: "deliveries/s", series: []series{{name: "receiver", color: palette("receiver"), pts: d}}, bands: bands, yMin0: true})
	}
	w(`</div>`)

	w(`<h2>Servers</h2><table><tr><th class="l">name</th><th>pid</th><th class="l">address</th><th class="l">arguments</th><th class="l">log</th></tr>`)
	for _, s := range rep.Servers {
		w(`<tr><td class="l">%s</td><td>%d</td><td class="l">%s</td><td class="l">%s</td><td class="l">%s</td></tr>`,
			esc(s.Name), s.PID, esc(s.Addr), esc(strings.Join(s.Args, " ")), esc(s.Log))
	}
	w(`</table><p class="muted">Every figure is also in results.json next to this page.</p></body></html>` + "\n")
	return b.String(), charts
}

// writeHTMLTable renders the rows as an HTML table with the same cells as
// the text one.
func writeHTMLTable(b *strings.Builder, rows []Row) {
	b.WriteString(`<table><tr>`)
	for _, c := range tableColumns() {
		cls := ""
		if c.width < 0 && c.name != "×bare" {
			cls = ` class="l"`
		}
		fmt.Fprintf(b, `<th%s>%s</th>`, cls, esc(c.name))
	}
	b.WriteString(`</tr>`)
	for _, r := range rows {
		maxRate, maxRatio := "-", "-"
		if r.MaxRate != nil && r.MaxRate.Value.Valid() {
			maxRate, maxRatio = fmtRate(r.MaxRate.Value.Median), fmtRatio(r.MaxRate.Ratio)
		}
		cells := []string{r.Scenario, r.Target, fmtRate(r.RPS.Value.Median), fmtRatio(r.RPS.Ratio), fmtUs(r.P50.Value.Median), fmtRatio(r.P50.Ratio),
			fmtUs(r.P99.Value.Median), fmtRatio(r.P99.Ratio), fmtErrors(r.Errors, r.Requests), fmtShare(r.GenCPU), fmtShare(r.ServerCPU), maxRate, maxRatio}
		b.WriteString(`<tr>`)
		for i, c := range cells {
			cls := ""
			if i < 2 {
				cls = ` class="l"`
			}
			fmt.Fprintf(b, `<td%s>%s</td>`, cls, esc(c))
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</table>`)
}

// runsOf returns the fixed-rate runs of a scenario, bare first.
func runsOf(rep *Report, scenario string) []RunRecord {
	var out []RunRecord
	for _, r := range rep.Runs {
		if r.Scenario == scenario && r.Summary != nil {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Target < out[j].Target })
	return out
}

func runName(r RunRecord) string { return fmt.Sprintf("%s r%d", r.Target, r.Round) }

// curveChart is the HDR percentile plot of a scenario's runs.
func curveChart(name string, runs []RunRecord) chart {
	c := chart{title: name + ": latency by percentile", xLabel: "percentile", yLabel: "latency", logY: true,
		xTicks: percentileTicks(), yFmt: func(v float64) string { return fmtUs(v) }}
	for _, r := range runs {
		var pts [][2]float64
		for _, p := range r.Summary.Curve {
			pts = append(pts, [2]float64{percentileX(p.Percentile), float64(p.LatencyUs)})
		}
		c.series = append(c.series, series{name: runName(r), color: palette(r.Target), dash: r.Round%2 == 0, pts: pts})
	}
	return c
}

// timelineChart plots one value per interval line of each run against the
// time into the run.
func timelineChart(title, yLabel string, runs []RunRecord, value func(rps, p99 float64) float64) chart {
	c := chart{title: title, xLabel: "seconds into the run", yLabel: yLabel, yMin0: true}
	if strings.HasSuffix(title, "p99 per second") {
		c.yFmt = func(v float64) string { return fmtUs(v) }
	}
	for _, r := range runs {
		var pts [][2]float64
		for _, l := range r.Timeline {
			if l.Requests == 0 {
				continue
			}
			pts = append(pts, [2]float64{l.ElapsedSec, value(l.RPS, float64(l.Latency.P99))})
		}
		c.series = append(c.series, series{name: runName(r), color: palette(r.Target), dash: r.Round%2 == 0, pts: pts})
	}
	return c
}

// runBands are the spans of the runs and searches on the suite's clock.
func runBands(rep *Report) []band {
	var out []band
	for _, r := range rep.Runs {
		out = append(out, band{r.StartSec, r.EndSec, fmt.Sprintf("%s@%s round %d", r.Scenario, r.Target, r.Round)})
	}
	for _, s := range rep.Searches {
		out = append(out, band{s.StartSec, s.EndSec, fmt.Sprintf("find-max %s@%s round %d", s.Scenario, s.Target, s.Round)})
	}
	return out
}
