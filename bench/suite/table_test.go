package suite

import (
	"math"
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	rows := []Row{
		{Scenario: "ping", Target: "bare", Offered: 1000,
			RPS: Figure{one(999.8), one(1)}, P50: Figure{one(85), one(1)}, P99: Figure{one(310), one(1)},
			Requests: 6000, GenCPU: one(0.051), ServerCPU: one(0.032),
			MaxRate: &Figure{Spread{71000, 70000, 72000, 2}, one(1)}},
		{Scenario: "quote-slow-provider", Target: "swapgate", Offered: 1000,
			RPS: Figure{one(998), Spread{0.998, 0.99, 1.0, 2}}, P50: Figure{one(301_200), Spread{3543.5, 3000, 4100.25, 2}},
			P99:    Figure{one(1_520_000), Spread{4903, 4903, 4903, 2}},
			Errors: 3, Requests: 6000, GenCPU: one(0.2), ServerCPU: Spread{}},
	}
	var b strings.Builder
	if err := WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"scenario                     target         rps ×bare                   p50 ×bare                   p99 ×bare                      errors  gen CPU  srv CPU    max/s ×bare\n" +
		"ping                         bare          1000 1.00                   85µs 1.00                  310µs 1.00                            0     5.1%     3.2%    71000 1.00\n" +
		"quote-slow-provider          swapgate       998 1.00 (0.99–1.00)      301ms 3543.50 (3000.00–4100.25)    1.52s 4903.00                 3 (0.05%)    20.0%        -        - -\n"
	if b.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestFormatters(t *testing.T) {
	for us, want := range map[float64]string{0: "0µs", 999: "999µs", 1234: "1.23ms", 45_600: "45.6ms", 312_000: "312ms", 1_500_000: "1.50s", math.NaN(): "-"} {
		if got := fmtUs(us); got != want {
			t.Errorf("fmtUs(%v) = %q, want %q", us, got, want)
		}
	}
	for r, want := range map[float64]string{71234.4: "71234", 55.55: "55.5", 2.5: "2.50"} {
		if got := fmtRate(r); got != want {
			t.Errorf("fmtRate(%v) = %q, want %q", r, got, want)
		}
	}
	if fmtRatio(Spread{}) != "-" || fmtRatio(Spread{1.374, 1.2, 1.5, 3}) != "1.37 (1.20–1.50)" || fmtRatio(Spread{2, 1.999, 2.001, 2}) != "2.00" {
		t.Fatal("fmtRatio")
	}
	if fmtErrors(0, 10) != "0" || fmtErrors(1, 200) != "1 (0.50%)" {
		t.Fatal("fmtErrors")
	}
}
