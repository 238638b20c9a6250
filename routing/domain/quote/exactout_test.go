package quote

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// TestSizeInput: the least input whose output reaches the target, from
// any guess, for outputs that grow in steps, saturate or start at a floor;
// an unreachable target is ErrOutputUnreachable and a forward error ends
// the search.
func TestSizeInput(t *testing.T) {
	e18 := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	// rate: out = in*num/den, floored (a price with a fee).
	rate := func(num, den int64) func(*big.Int) *big.Int {
		return func(in *big.Int) *big.Int {
			o := new(big.Int).Mul(in, big.NewInt(num))
			return o.Quo(o, big.NewInt(den))
		}
	}
	// floor: below min nothing is quoted.
	floor := func(min int64, f func(*big.Int) *big.Int) func(*big.Int) *big.Int {
		return func(in *big.Int) *big.Int {
			if in.Cmp(big.NewInt(min)) < 0 {
				return nil
			}
			return f(in)
		}
	}
	// capped: the output saturates at c (a pool's depth).
	capped := func(c int64, f func(*big.Int) *big.Int) func(*big.Int) *big.Int {
		return func(in *big.Int) *big.Int {
			o := f(in)
			if o.Cmp(big.NewInt(c)) > 0 {
				return big.NewInt(c)
			}
			return o
		}
	}
	tests := []struct {
		name   string
		out    func(*big.Int) *big.Int
		target *big.Int
		guess  *big.Int
		want   string // "" when unreachable
	}{
		{"identity", rate(1, 1), big.NewInt(1000), nil, "1000"},
		{"identity, guess exact", rate(1, 1), big.NewInt(1000), big.NewInt(1000), "1000"},
		{"identity, guess far above", rate(1, 1), big.NewInt(1000), e18, "1000"},
		{"30 bps fee", rate(9970, 10000), big.NewInt(5_000_000), big.NewInt(4_000_000), "5015046"},
		{"price 1e12 per unit", rate(1, 1_000_000_000_000), big.NewInt(7), big.NewInt(1), "7000000000000"},
		{"target of one", rate(3, 2), big.NewInt(1), nil, "1"},
		{"floor above the answer", floor(500, rate(2, 1)), big.NewInt(10), nil, "500"},
		{"saturated pool", capped(1000, rate(1, 1)), big.NewInt(1001), nil, ""},
		{"reachable below the cap", capped(1000, rate(1, 1)), big.NewInt(999), big.NewInt(5), "999"},
	}
	for _, tt := range tests {
		calls := 0
		got, err := SizeInput(tt.target, tt.guess, func(in *big.Int) (bool, error) {
			calls++
			o := tt.out(in)
			return o != nil && o.Cmp(tt.target) >= 0, nil
		})
		if tt.want == "" {
			if !errors.Is(err, ErrOutputUnreachable) {
				t.Errorf("%s: %v, %v; want unreachable", tt.name, got, err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("%s: %v, %v; want %s", tt.name, got, err, tt.want)
			continue
		}
		// Verified: the input found reaches the target, one less does not.
		if o := tt.out(got); o == nil || o.Cmp(tt.target) < 0 {
			t.Errorf("%s: %s delivers %v < %s", tt.name, got, o, tt.target)
		}
		if less := new(big.Int).Sub(got, big.NewInt(1)); less.Sign() > 0 {
			if o := tt.out(less); o != nil && o.Cmp(tt.target) >= 0 {
				t.Errorf("%s: %s is not the least input (%s suffices)", tt.name, got, less)
			}
		}
		if calls > maxSizeSteps {
			t.Errorf("%s: %d calls", tt.name, calls)
		}
	}
	boom := errors.New("no price")
	if _, err := SizeInput(big.NewInt(5), nil, func(*big.Int) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("forward error: %v", err)
	}
	if _, err := SizeInput(big.NewInt(0), nil, func(*big.Int) (bool, error) { return true, nil }); err == nil {
		t.Error("a zero target was sized")
	}
}

// TestGrossForNet: the least amount SplitFee leaves at least net from, for
// fees from none to the platform maximum, checked against SplitFee itself.
func TestGrossForNet(t *testing.T) {
	for _, bps := range []int{0, 1, 25, 30, 100, 333, 500, 9999} {
		for _, n := range []int64{1, 2, 3, 99, 100, 101, 9999, 10_000, 1_000_000, 123_456_789} {
			net := big.NewInt(n)
			a := GrossForNet(net, bps)
			if got, _ := SplitFee(a, bps); got.Cmp(net) < 0 {
				t.Errorf("bps %d net %d: %s leaves %s", bps, n, a, got)
			}
			if less := new(big.Int).Sub(a, big.NewInt(1)); less.Sign() > 0 {
				if got, _ := SplitFee(less, bps); got.Cmp(net) >= 0 {
					t.Errorf("bps %d net %d: %s is not the least (%s leaves %s)", bps, n, a, less, got)
				}
			}
		}
	}
}

// TestForRoute: an exact-output request reads each route's own input; a
// request for a given input is itself.
func TestForRoute(t *testing.T) {
	in := &Request{FromAmount: big.NewInt(5)}
	if in.ForRoute(&Route{FromAmount: big.NewInt(7)}) != in {
		t.Error("a fromAmount request was copied")
	}
	ex := &Request{ToAmount: big.NewInt(9), FromAddress: "0xa"}
	r := ex.ForRoute(&Route{FromAmount: big.NewInt(12)})
	if r == ex || r.FromAmount.Int64() != 12 || r.ToAmount.Int64() != 9 || r.FromAddress != "0xa" || ex.FromAmount != nil {
		t.Errorf("%+v from %+v", r, ex)
	}
}

// TestGrossForMin: the least output whose MinOut keeps at least min, for
// slippages from none to the maximum, checked against MinOut itself.
func TestGrossForMin(t *testing.T) {
	for _, sl := range []float64{0, 0.001, 0.003, 0.005, 0.01, 0.123456, 0.5} {
		for _, n := range []int64{1, 2, 7, 100, 999_999, 1_000_000, 123_456_789_012} {
			min := big.NewInt(n)
			a := GrossForMin(min, sl)
			if MinOut(a, sl).Cmp(min) < 0 {
				t.Errorf("slippage %v min %d: %s keeps %s", sl, n, a, MinOut(a, sl))
			}
			if less := new(big.Int).Sub(a, big.NewInt(1)); less.Sign() > 0 && MinOut(less, sl).Cmp(min) >= 0 {
				t.Errorf("slippage %v min %d: %s is not the least", sl, n, a)
			}
		}
	}
}

// setMin is a Builder that fills a route's amounts with min as its
// ToAmountMin, the figure a provider's final pricing came to.
type setMin struct{ min *big.Int }

func (b setMin) Build(_ context.Context, _ *Request, r *Route) error {
	r.ToAmount, r.ToAmountMin = new(big.Int).Add(b.min, big.NewInt(1)), b.min
	return nil
}

// TestCompleteDropsShortExactOutput: an exact-output route whose
// toAmountMin, once built, falls short of toAmount is never completed: it
// is dropped as a NoRoute with EXACT_OUTPUT_SHORT, which data.timing shows
// as a dropped leg with the reason; a route that reaches toAmount, and any
// route of a request for a given input, is completed as it is.
func TestCompleteDropsShortExactOutput(t *testing.T) {
	exact := &Request{ToAmount: big.NewInt(1000)}
	given := &Request{FromAmount: big.NewInt(5)}
	tests := []struct {
		name    string
		req     *Request
		route   *Route
		dropped bool
	}{
		{"exact, priced one short", exact, &Route{Pending: setMin{big.NewInt(999)}}, true},
		{"exact, priced exactly", exact, &Route{Pending: setMin{big.NewInt(1000)}}, false},
		{"exact, priced above", exact, &Route{Pending: setMin{big.NewInt(1001)}}, false},
		{"exact, built short", exact, &Route{ToAmountMin: big.NewInt(1)}, true},
		{"exact, built without a minimum", exact, &Route{ToAmount: big.NewInt(5000)}, true},
		{"exact, built above", exact, &Route{ToAmountMin: big.NewInt(5000)}, false},
		{"given input, short of nothing", given, &Route{Pending: setMin{big.NewInt(1)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.route.Provider, tt.route.Tool = "aggregator", "sbx-a"
			err := Complete(context.Background(), tt.req, tt.route)
			if !tt.dropped {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				return
			}
			var nr *NoRoute
			if !errors.As(err, &nr) || nr.Reason != "EXACT_OUTPUT_SHORT" || nr.Tool != "sbx-a" || nr.Provider != "aggregator" {
				t.Fatalf("Complete of a route short of toAmount: %v, want a NoRoute EXACT_OUTPUT_SHORT", err)
			}
			o := LegOutcome{Provider: "aggregator", Leg: "sbx-a", Answered: true, Err: err}
			tm := NewTiming([]LegOutcome{o}, RaceEnd{}, nil)
			l := tm.Legs[0]
			if l.Status.String() != "dropped" || !strings.Contains(l.Reason, "toAmount 1000") {
				t.Fatalf("timing leg %+v, want dropped with the reason", l)
			}
			if b := AppendTiming(nil, tm); !strings.Contains(string(b), `"outcome":"dropped","reason":"`) {
				t.Fatalf("data.timing %s", b)
			}
		})
	}
}
