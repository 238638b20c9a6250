package account

import (
	"slices"
	"strings"
)

// EarningsGroup sums a partner's earnings of one ecosystem and state; a
// settled group is moreover one transaction's: ChainID and TxHash name the
// transfer that paid it (both zero for earnings settled without one).
type EarningsGroup struct {
	Ecosystem     string
	ChainID       uint64
	TxHash        string
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

type earningsKey struct {
	eco, state string
	chain      uint64
	tx         string
}

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
	k := earningsKey{eco: e.Ecosystem, state: e.State}
	if e.State == EarningSettled {
		k.chain, k.tx = e.SettledChainID, e.SettledTx
	}
	g := t.sums[k]
	if g == nil {
		g = &EarningsGroup{Ecosystem: e.Ecosystem, ChainID: k.chain, TxHash: k.tx}
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
	byEco := func(a, b EarningsGroup) int {
		if c := compareEcosystems(a.Ecosystem, b.Ecosystem); c != 0 {
			return c
		}
		if a.ChainID != b.ChainID {
			if a.ChainID < b.ChainID {
				return -1
			}
			return 1
		}
		return strings.Compare(a.TxHash, b.TxHash)
	}
	slices.SortFunc(out.Pending, byEco)
	slices.SortFunc(out.Settled, byEco)
	return out
}
