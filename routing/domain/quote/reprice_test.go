package quote

import (
	"math/big"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

func TestDrift(t *testing.T) {
	tests := []struct {
		quoted, current string
		want            int64
	}{
		{"10000", "10000", 0},
		{"10000", "9950", 50},
		{"10000", "9949", 51},
		{"1000000", "994999", 51}, // 50.01 bps rounds up
		{"1000000", "995000", 50},
		{"10000", "10050", -50},
		{"1000000", "1000001", 0}, // a rise rounds toward zero
		{"10000", "0", 10000},
		{"0", "5", 0},
	}
	for _, tt := range tests {
		q, _ := new(big.Int).SetString(tt.quoted, 10)
		c, _ := new(big.Int).SetString(tt.current, 10)
		if got := Drift(q, c); got != tt.want {
			t.Errorf("Drift(%s, %s) = %d, want %d", tt.quoted, tt.current, got, tt.want)
		}
	}
}

func TestParseMaxPriceDrift(t *testing.T) {
	tests := []struct {
		raw  string
		nil_ bool
		want int
		ok   bool
	}{
		{"", true, DefaultMaxPriceDriftBps, true},
		{"null", false, DefaultMaxPriceDriftBps, true},
		{"0", false, 0, true},
		{"50", false, 50, true},
		{"10000", false, 10000, true},
		{"10001", false, 0, false},
		{"-1", false, 0, false},
		{"1.5", false, 0, false},
		{"5e1", false, 0, false},
		{`"50"`, false, 0, false},
		{"true", false, 0, false},
		{"99999999999999999999", false, 0, false},
	}
	for _, tt := range tests {
		var raw []byte
		if !tt.nil_ {
			raw = []byte(tt.raw)
		}
		got, err := ParseMaxPriceDrift(raw)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseMaxPriceDrift(%s) = %d, %v", tt.raw, got, err)
			continue
		}
		if err != nil && (err.Code != apierr.InvalidParams || err.Details["param"] != "maxPriceDriftBps") {
			t.Errorf("refusal %+v", err)
		}
	}
}

// A ticket's reprice parameters parse back into the request it was
// issued from: the same chains, tokens, amount, parties and slippage.
func TestRepriceParams(t *testing.T) {
	reg, cat := fuzzCatalog()
	const wallet, other = "0x8ba1f109551bD432803012645Ac136ddd64DBA72", "0x2222222222222222222222222222222222222222"
	for _, tc := range []struct {
		toAddress string
		slippage  string
	}{{other, ""}, {"", "0.0123"}, {other, "75"}} {
		p := Params{FromChain: []byte("42161"), ToChain: []byte("8453"), FromToken: []byte("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
			ToToken: []byte("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), FromAmount: []byte("123456789"),
			FromAddress: []byte(wallet), ToAddress: []byte(tc.toAddress), Slippage: []byte(tc.slippage)}
		orig, err := Parse(reg, cat, p, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		tk := &Ticket{FromChain: orig.From.ID, ToChain: orig.To.ID, FromToken: orig.FromToken.Address, ToToken: orig.ToToken.Address,
			FromAmount: orig.FromAmount.String(), FromAddress: orig.FromAddress, ToAddress: orig.ToAddress, Dry: orig.Dry, Slippage: orig.Slippage}
		again, err := Parse(reg, cat, tk.RepriceParams(), time.Second)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if !reflect.DeepEqual(orig, again) {
			t.Fatalf("%+v: reparsed %+v, issued from %+v", tc, again, orig)
		}
	}
}

// FuzzMaxPriceDrift (see scripts/fuzz-targets): never a panic; a refusal
// names maxPriceDriftBps; what it accepts is an integer from 0 to 10000
// that reads back the same.
func FuzzMaxPriceDrift(f *testing.F) {
	for _, s := range []string{"50", "0", "10000", "-0", "007", "1e2", "null", "\"1\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := ParseMaxPriceDrift(raw)
		if err != nil {
			wantParamRefusal(t, err, "maxPriceDriftBps")
			return
		}
		if v < 0 || v > MaxPriceDriftBps {
			t.Fatalf("accepted %q as %d", raw, v)
		}
		if string(raw) != "null" && raw != nil {
			if back, _ := strconv.ParseInt(string(raw), 10, 64); int(back) != v {
				t.Fatalf("%q read as %d", raw, v)
			}
		}
	})
}

// TestCheckPrice is execute's decision: the slippage first (below the
// quote's toAmountMin its transaction would revert: SLIPPAGE_ERROR, at any
// maxPriceDriftBps), then the drift (past maxPriceDriftBps within the
// slippage: PRICE_CHANGED), else the price holds. An exact-output quote is
// judged on the output of its sized input against its toAmountMin, which
// is at least the toAmount asked for.
func TestCheckPrice(t *testing.T) {
	// 1000000 quoted at the default 0.5% slippage: toAmountMin 995000.
	plain := &Ticket{ID: "qt_plain", FromAmount: "1000000", ToAmount: "1000000", ToAmountMin: "995000"}
	// 3% slippage: toAmountMin 970000, so a 100 bps fall stays above it.
	wide := &Ticket{ID: "qt_wide", FromAmount: "1000000", ToAmount: "1000000", ToAmountMin: "970000", Slippage: 0.03}
	// Exact output of 500000: the input sized so that toAmountMin reaches it.
	exact := &Ticket{ID: "qt_exact", FromAmount: "503000", ToAmount: "502600", ToAmountMin: "500000", ExactToAmount: "500000"}
	// A ticket that knew no minimum is judged on the drift alone.
	noMin := &Ticket{ID: "qt_nomin", FromAmount: "1000000", ToAmount: "1000000"}
	tests := []struct {
		name     string
		t        *Ticket
		current  string
		maxDrift int
		want     Verdict
		code     string
		drift    int64
	}{
		{"unchanged", plain, "1000000", 50, PriceHolds, "", 0},
		{"improved", plain, "1000100", 50, PriceHolds, "", -1},
		{"within drift", plain, "996000", 50, PriceHolds, "", 40},
		{"at toAmountMin, at the drift", plain, "995000", 50, PriceHolds, "", 50},
		{"past drift within slippage", wide, "990000", 50, PriceMoved, apierr.PriceChanged, 100},
		{"past a drift of 0 at toAmountMin", plain, "995000", 0, PriceMoved, apierr.PriceChanged, 50},
		{"below toAmountMin", plain, "990000", 50, BelowMinimum, apierr.SlippageError, 100},
		{"below toAmountMin by one", plain, "994999", 50, BelowMinimum, apierr.SlippageError, 51},
		{"below toAmountMin within a wide drift", plain, "990000", 150, BelowMinimum, apierr.SlippageError, 100},
		{"below toAmountMin at any drift", plain, "990000", MaxPriceDriftBps, BelowMinimum, apierr.SlippageError, 100},
		{"below a wide slippage", wide, "969999", 500, BelowMinimum, apierr.SlippageError, 301},
		{"within a wide drift and slippage", wide, "990000", 150, PriceHolds, "", 100},
		{"exact output within its margin", exact, "501000", 50, PriceHolds, "", 32},
		{"exact output at toAmount", exact, "500000", 100, PriceHolds, "", 52},
		{"exact output past drift at toAmount", exact, "500000", 50, PriceMoved, apierr.PriceChanged, 52},
		{"exact output below toAmount", exact, "499999", MaxPriceDriftBps, BelowMinimum, apierr.SlippageError, 52},
		{"no minimum, past drift", noMin, "900000", 50, PriceMoved, apierr.PriceChanged, 1000},
		{"no minimum, within drift", noMin, "900000", 1000, PriceHolds, "", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur, _ := new(big.Int).SetString(tt.current, 10)
			c, err := tt.t.CheckPrice(cur, tt.maxDrift)
			if err != nil {
				t.Fatal(err)
			}
			if c.Verdict != tt.want || c.DriftBps != tt.drift {
				t.Fatalf("verdict %d drift %d, want %d drift %d", c.Verdict, c.DriftBps, tt.want, tt.drift)
			}
			e := c.Refusal("qt_new")
			if tt.code == "" {
				if e != nil {
					t.Fatalf("refused %+v", e)
				}
				return
			}
			if e == nil || e.Code != tt.code || e.Details["newQuoteId"] != "qt_new" || e.Details["currentToAmount"] != tt.current {
				t.Fatalf("refusal %+v, want %s", e, tt.code)
			}
			switch tt.code {
			case apierr.SlippageError:
				if e.HTTPStatus() != 400 || e.Details["toAmountMin"] != tt.t.ToAmountMin {
					t.Fatalf("SLIPPAGE_ERROR %d %v", e.HTTPStatus(), e.Details)
				}
			case apierr.PriceChanged:
				if e.HTTPStatus() != 409 || e.Details["quotedToAmount"] != tt.t.ToAmount || e.Details["driftBps"] != tt.drift {
					t.Fatalf("PRICE_CHANGED %d %v", e.HTTPStatus(), e.Details)
				}
			}
		})
	}
	for _, bad := range []*Ticket{{ID: "qt_bad", ToAmount: "x", ToAmountMin: "1"}, {ID: "qt_bad", ToAmount: "10", ToAmountMin: "1e3"}} {
		if _, err := bad.CheckPrice(big.NewInt(1), 50); err == nil {
			t.Errorf("ticket %+v judged", bad)
		}
	}
}

// TestRequoteExactParams: an exact-output ticket is quoted again for its
// toAmount, not its sized input; any other ticket is not.
func TestRequoteExactParams(t *testing.T) {
	exact := &Ticket{FromChain: 42161, ToChain: 8453, FromToken: "0xa", ToToken: "0xb", FromAmount: "503000",
		ToAmount: "502600", ToAmountMin: "500000", ExactToAmount: "500000", FromAddress: "0xf", ToAddress: "0xt", Slippage: 0.01}
	p, ok := exact.RequoteExactParams()
	if !ok || p.FromAmount != nil || string(p.ToAmount) != "500000" || string(p.Slippage) != "0.01" || string(p.ToAddress) != "0xt" {
		t.Fatalf("params %+v %v", p, ok)
	}
	if _, ok := (&Ticket{FromAmount: "1", ToAmount: "1"}).RequoteExactParams(); ok {
		t.Fatal("a ticket for a given input quoted again as exact output")
	}
}

// The price-drift scenario moves the price past the default slippage (so
// an execute at the default answers SLIPPAGE_ERROR) and past the default
// maximum drift (so a quote with a wider slippage answers PRICE_CHANGED),
// and stays within 3% (so slippage=0.03 covers it).
func TestPriceDriftScenarioPastDefaultSlippage(t *testing.T) {
	if float64(scenario.DriftBps) <= DefaultSlippage*1e4 || scenario.DriftBps <= DefaultMaxPriceDriftBps || scenario.DriftBps >= 300 {
		t.Fatalf("price-drift moves %d bps: want past %v bps of slippage and %d of drift, within 300",
			scenario.DriftBps, DefaultSlippage*1e4, DefaultMaxPriceDriftBps)
	}
}
