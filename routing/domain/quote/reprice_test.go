package quote

import (
	"math/big"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
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
