package edge

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

func TestBarChart(t *testing.T) {
	cases := []struct {
		name    string
		values  []float64
		heights []string
	}{
		{"scaled to the tallest", []float64{0, 69, 138}, []string{`height="0.0"`, `height="69.0"`, `height="138.0"`}},
		{"all zero draws flat bars", []float64{0, 0}, []string{`height="0.0"`, `height="0.0"`}},
	}
	for _, tc := range cases {
		labels := make([]string, len(tc.values))
		for i := range labels {
			labels[i] = "d" + strconv.Itoa(i)
		}
		svg := string(barChart("Quotes <per day>", labels, tc.values, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }))
		if got := strings.Count(svg, "<rect "); got != len(tc.values) {
			t.Errorf("%s: %d bars", tc.name, got)
		}
		for _, h := range tc.heights {
			if !strings.Contains(svg, h) {
				t.Errorf("%s: no bar with %s in %s", tc.name, h, svg)
			}
		}
		if strings.Contains(svg, "<per day>") || !strings.Contains(svg, "&lt;per day&gt;") {
			t.Errorf("%s: the name is not escaped", tc.name)
		}
	}
}

func TestTxHistory(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := &account.Activity{ID: "qt_1", CreatedAt: t0}
	recs := []*webhook.DeliveryRecord{
		{Event: webhook.SwapCompleted, CreatedAt: t0.Add(2 * time.Minute)},
		{Event: webhook.SwapPending, CreatedAt: t0.Add(time.Minute)},
		{Event: webhook.SwapPending, CreatedAt: t0.Add(time.Minute + time.Second)}, // the same event to a second webhook
	}
	got := fmt.Sprint(txHistory(a, recs))
	want := "[{2026-03-01T12:00:00Z quoted} {2026-03-01T12:01:00Z swap.pending published} {2026-03-01T12:02:00Z swap.completed published}]"
	if got != want {
		t.Fatalf("history %s, want %s", got, want)
	}
}

// Every chart writes its words in one type size, the wide as the narrow:
// none is SVG text (which grows with the drawing's width), each is an HTML
// label the stylesheet sizes once, in rem.
func TestBarChartLabelsOneSize(t *testing.T) {
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	hours := make([]string, 24)
	days := make([]string, 30)
	for i := range hours {
		hours[i] = fmt.Sprintf("%02d:00", i)
	}
	for i := range days {
		days[i] = fmt.Sprintf("03-%02d", i+1)
	}
	charts := map[string]string{
		"wide":   string(barChart("Requests per hour, last 24 hours", hours, make([]float64, 24), count)),
		"narrow": string(barChart("Quotes per day", days, make([]float64, 30), count)),
	}
	for name, svg := range charts {
		if strings.Contains(svg, "<text") {
			t.Errorf("the %s chart writes SVG text, which scales with its width: %s", name, svg)
		}
		if got := strings.Count(svg, `<span class="chart-label`); got != 3 {
			t.Errorf("the %s chart has %d labels, want 3 (its maximum, first and last): %s", name, got, svg)
		}
		if strings.Contains(svg, "font-size") || strings.Contains(svg, "style=") {
			t.Errorf("the %s chart sizes its own type: %s", name, svg)
		}
	}
	css, err := portalFiles.ReadFile("portal/portal.css")
	if err != nil {
		t.Fatal(err)
	}
	var sizes []string
	for _, line := range strings.Split(string(css), "\n") {
		if strings.Contains(line, "chart") && strings.Contains(line, "font-size") {
			sizes = append(sizes, strings.TrimSpace(line))
		}
	}
	if len(sizes) != 1 || !strings.HasPrefix(sizes[0], ".chart-label {") || !strings.Contains(sizes[0], "rem") {
		t.Fatalf("the stylesheet sizes chart type in %d rules, want one .chart-label rule in rem: %q", len(sizes), sizes)
	}
}
