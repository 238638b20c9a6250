package scenario

import (
	"slices"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		kind    Kind
		value   string
		sandbox bool
		want    Name
		refused bool
	}{
		{"no header", Quote, "", true, "", false},
		{"no header in live mode", Quote, "", false, "", false},
		{"a quote scenario", Quote, "refund", true, Refund, false},
		{"every quote scenario", Quote, "incomplete-deposit", true, IncompleteDeposit, false},
		{"an on-ramp scenario", Onramp, "payment-failed", true, PaymentFailed, false},
		{"an on-ramp one on a quote", Quote, "payment-failed", true, "", true},
		{"a quote one on an order", Onramp, "refund", true, "", true},
		{"case matters", Quote, "Refund", true, "", true},
		{"unknown", Quote, "explode", true, "", true},
		{"live mode", Quote, "refund", false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.kind, tt.value, tt.sandbox)
			if (err != nil) != tt.refused || got != tt.want {
				t.Fatalf("Parse = %q, %v", got, err)
			}
			if err == nil {
				return
			}
			if err.Code != apierr.InvalidParams || err.Details["param"] != Header {
				t.Fatalf("refusal %+v", err)
			}
			if tt.sandbox {
				var want []string
				for _, n := range Allowed(tt.kind) {
					want = append(want, string(n))
				}
				if !slices.Equal(err.Details["allowed"].([]string), want) {
					t.Fatalf("allowed %v", err.Details["allowed"])
				}
			}
		})
	}
}

// The rules each scenario carries.
func TestRules(t *testing.T) {
	for _, n := range Allowed(Quote) {
		if n.FailsQuote() != (n == NoRoute || n == UpstreamError || n == UpstreamRateLimited) {
			t.Errorf("%s FailsQuote", n)
		}
		want := 0
		if n == PriceDrift {
			want = DriftBps
		}
		if n.PriceMoveBps(true) != want || n.PriceMoveBps(false) != 0 {
			t.Errorf("%s moves %d at execute, %d at quote", n, n.PriceMoveBps(true), n.PriceMoveBps(false))
		}
		if after := n.AfterReprice(); (n == PriceDrift) != (after == "") || (after != "" && after != n) {
			t.Errorf("%s after a reprice is %q", n, after)
		}
	}
	if DriftBps <= 50 {
		t.Fatalf("price-drift moves %d bps, not past the default maximum drift", DriftBps)
	}
}

// FuzzParse (see scripts/fuzz-targets): never a panic; a refusal is
// INVALID_PARAMS naming the header; what it accepts is an allowed value,
// read back as given.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "refund", "expired", "nope", "price-drift\x00", "ré"} {
		f.Add(s, true, false)
	}
	f.Fuzz(func(t *testing.T, v string, sandbox, onramp bool) {
		k := Quote
		if onramp {
			k = Onramp
		}
		n, err := Parse(k, v, sandbox)
		if err != nil {
			if err.Code != apierr.InvalidParams || err.HTTPStatus() != 400 || err.Details["param"] != Header {
				t.Fatalf("refusal %+v", err)
			}
			return
		}
		if string(n) != v || (v != "" && !slices.Contains(Allowed(k), n)) || (v != "" && !sandbox) {
			t.Fatalf("accepted %q as %q", v, n)
		}
	})
}
