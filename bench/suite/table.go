package suite

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Figure is one figure of a table row over the rounds, and its ratio to
// the bare server's ping of the same round (median and range of the
// per-round ratios).
type Figure struct {
	Value Spread `json:"value"`
	Ratio Spread `json:"ratioToBare"`
}

// Row is one line of the table: a scenario against one target, over the
// rounds. Latencies are in microseconds, CPU shares are of all cores.
type Row struct {
	Scenario string `json:"scenario"`
	Target   string `json:"target"`
	// Backend is the store of a Swapgate row, "pebble" or "postgres",
	// given when the run had a PostgreSQL store.
	Backend string `json:"backend,omitempty"`
	// Offered is the open-loop rate of the scenario's fixed-rate runs.
	Offered float64 `json:"offeredRate"`
	RPS     Figure  `json:"rps"`
	P50     Figure  `json:"p50Us"`
	P99     Figure  `json:"p99Us"`
	// Errors and Requests are summed over the rounds' measured parts.
	Errors   int64 `json:"errors"`
	Requests int64 `json:"requests"`
	// GenCPU is the generator's CPU use (getrusage of this process) and
	// ServerCPU the target's (/proc), each as a share of all cores.
	GenCPU    Spread `json:"generatorCpu"`
	ServerCPU Spread `json:"serverCpu"`
	// MaxRate is the find-max result, when the scenario was searched.
	MaxRate *Figure `json:"maxRate,omitempty"`
}

// fmtUs renders microseconds with a unit that keeps three digits or so.
func fmtUs(us float64) string {
	switch {
	case math.IsNaN(us):
		return "-"
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 10_000:
		return fmt.Sprintf("%.2fms", us/1000)
	case us < 100_000:
		return fmt.Sprintf("%.1fms", us/1000)
	case us < 1_000_000:
		return fmt.Sprintf("%.0fms", us/1000)
	default:
		return fmt.Sprintf("%.2fs", us/1e6)
	}
}

// fmtRate renders a rate in requests per second.
func fmtRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	default:
		return fmt.Sprintf("%.2f", r)
	}
}

// fmtRatio renders a ratio spread as "median (min–max)", or the median
// alone when the rounds agree to the digits shown, or "-" when there is no
// reference to divide by.
func fmtRatio(s Spread) string {
	if !s.Valid() {
		return "-"
	}
	med, lo, hi := fmt.Sprintf("%.2f", s.Median), fmt.Sprintf("%.2f", s.Min), fmt.Sprintf("%.2f", s.Max)
	if lo == hi {
		return med
	}
	return med + " (" + lo + "–" + hi + ")"
}

// fmtShare renders a share of the machine as a percentage.
func fmtShare(s Spread) string {
	if !s.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*s.Median)
}

// fmtBytes renders a size in MiB.
func fmtBytes(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// fmtErrors renders an error count with its share of the requests.
func fmtErrors(errs, reqs int64) string {
	if errs == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%.2f%%)", errs, 100*float64(errs)/float64(max(reqs, 1)))
}

// column is a header of the table and its width; a negative width aligns
// left.
type column struct {
	name  string
	width int
}

// tableColumns lists the table's columns; a function, so that the layout
// is not state anyone can change.
func tableColumns() []column {
	return []column{
		{"scenario", -28}, {"target", -9}, {"rps", 8}, {"×bare", -18}, {"p50", 8}, {"×bare", -18},
		{"p99", 8}, {"×bare", -18}, {"errors", 14}, {"gen CPU", 8}, {"srv CPU", 8}, {"max/s", 8}, {"×bare", -18},
	}
}

// WriteTable writes rows as the suite's text table: per row the median of
// each figure over the rounds and the median (min–max) of its per-round
// ratios to the bare server's ping. The ratio of a rate is higher-better,
// of a latency lower-better.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	cols := tableColumns()
	cells := make([]string, len(cols))
	line := func() {
		var l strings.Builder
		for i, c := range cells {
			if i > 0 {
				l.WriteByte(' ')
			}
			width := cols[i].width
			pad := abs(width) - len([]rune(c))
			switch {
			case pad <= 0:
				l.WriteString(c)
			case width < 0:
				l.WriteString(c + strings.Repeat(" ", pad))
			default:
				l.WriteString(strings.Repeat(" ", pad) + c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	for i, c := range cols {
		cells[i] = c.name
	}
	line()
	for _, r := range rows {
		maxRate, maxRatio := "-", "-"
		if r.MaxRate != nil && r.MaxRate.Value.Valid() {
			maxRate, maxRatio = fmtRate(r.MaxRate.Value.Median), fmtRatio(r.MaxRate.Ratio)
		}
		cells = []string{
			r.Scenario, r.Target,
			fmtRate(r.RPS.Value.Median), fmtRatio(r.RPS.Ratio),
			fmtUs(r.P50.Value.Median), fmtRatio(r.P50.Ratio),
			fmtUs(r.P99.Value.Median), fmtRatio(r.P99.Ratio),
			fmtErrors(r.Errors, r.Requests), fmtShare(r.GenCPU), fmtShare(r.ServerCPU),
			maxRate, maxRatio,
		}
		line()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
