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
