package edge

import (
	"strconv"
	"strings"
	"testing"
)

func TestBarChart(t *testing.T) {
	cases := []struct {
		name    string
		values  []float64
		heights []string
	}{
		{"scaled to the tallest", []float64{0, 64, 128}, []string{`height="0.0"`, `height="64.0"`, `height="128.0"`}},
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
