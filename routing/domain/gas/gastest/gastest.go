// Package gastest holds what tests of every gas oracle check of a record.
package gastest

import (
	"math/big"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/gas"
)

// Wei reads a decimal wei amount of a record, failing the test on anything
// else.
func Wei(t testing.TB, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("not a decimal wei amount: %q", s)
	}
	return v
}

// CheckTiers verifies the invariants every record must hold, whatever the
// oracle: tips ordered, gasPrice = base + tip and maxFee = 2·base + tip with
// one base fee for all tiers, and waits ordered the other way.
func CheckTiers(t testing.TB, rec gas.Record) (base *big.Int) {
	t.Helper()
	tiers := []gas.Tier{rec.Speed.Slow, rec.Speed.Standard, rec.Speed.Fast}
	for i, tr := range tiers {
		tip := Wei(t, tr.MaxPriorityFeePerGas)
		gp := Wei(t, tr.GasPrice)
		b := new(big.Int).Sub(gp, tip)
		if b.Sign() < 0 {
			t.Fatalf("tier %d: gasPrice %s below tip %s", i, gp, tip)
		}
		if base == nil {
			base = b
		} else if b.Cmp(base) != 0 {
			t.Fatalf("tier %d: base fee %s, tier 0 had %s", i, b, base)
		}
		wantMax := new(big.Int).Add(new(big.Int).Lsh(b, 1), tip)
		if got := Wei(t, tr.MaxFeePerGas); got.Cmp(wantMax) != 0 {
			t.Fatalf("tier %d: maxFeePerGas %s, want 2·%s + %s = %s", i, got, b, tip, wantMax)
		}
		if Wei(t, tr.MaxFeePerGas).Cmp(gp) < 0 {
			t.Fatalf("tier %d: maxFee below gasPrice", i)
		}
		if i > 0 {
			prev := tiers[i-1]
			if Wei(t, prev.MaxPriorityFeePerGas).Cmp(tip) > 0 {
				t.Fatalf("tier %d tip %s below the slower tier's %s", i, tip, prev.MaxPriorityFeePerGas)
			}
			if prev.EstimatedTime < tr.EstimatedTime {
				t.Fatalf("tier %d waits %ds, longer than the slower tier's %ds", i, tr.EstimatedTime, prev.EstimatedTime)
			}
		}
	}
	return base
}
