package account

import "slices"

// EarningsGroup sums a partner's earnings of one ecosystem and state.
type EarningsGroup struct {
	Ecosystem     string
	RowCount      int
	TotalMicroUSD int64
}

// Earnings are a partner's earnings, pending and settled, by ecosystem in
// the canonical order. Ecosystems whose total is zero are left out.
type Earnings struct {
	Pending []EarningsGroup
	Settled []EarningsGroup
}

// EarningsTally sums earnings one activity record at a time, so that a
// store can feed it while it scans.
type EarningsTally struct {
	sums map[earningsKey]*EarningsGroup
}

type earningsKey struct{ eco, state string }

// NewEarningsTally starts an empty sum.
func NewEarningsTally() *EarningsTally {
	return &EarningsTally{sums: map[earningsKey]*EarningsGroup{}}
}

// Add counts a's earning, if it has one; it always returns true, so that
// it can serve as a scan's callback.
func (t *EarningsTally) Add(a *Activity) bool {
	e := a.Earning
	if e == nil {
		return true
	}
	k := earningsKey{e.Ecosystem, e.State}
	g := t.sums[k]
	if g == nil {
		g = &EarningsGroup{Ecosystem: e.Ecosystem}
		t.sums[k] = g
	}
	g.RowCount++
	g.TotalMicroUSD += a.FeeMicroUSD
	return true
}

// Earnings returns the sums counted so far.
func (t *EarningsTally) Earnings() *Earnings {
	out := &Earnings{Pending: []EarningsGroup{}, Settled: []EarningsGroup{}}
	for k, g := range t.sums {
		if g.TotalMicroUSD == 0 {
			continue
		}
		if k.state == EarningSettled {
			out.Settled = append(out.Settled, *g)
		} else {
			out.Pending = append(out.Pending, *g)
		}
	}
	byEco := func(a, b EarningsGroup) int { return compareEcosystems(a.Ecosystem, b.Ecosystem) }
	slices.SortFunc(out.Pending, byEco)
	slices.SortFunc(out.Settled, byEco)
	return out
}
