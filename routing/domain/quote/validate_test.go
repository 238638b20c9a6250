package quote

import (
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// TestParseUint64MatchesStrconv checks the in-place reader against
// strconv.ParseUint(s, 10, 64), which it replaces on the request path.
func TestParseUint64MatchesStrconv(t *testing.T) {
	for _, s := range []string{"", "0", "1", "42161", "007", "+1", "-1", " 1", "1 ", "1_000", "0x10", "1e3",
		"18446744073709551615", "18446744073709551616", "99999999999999999999", "184467440737095516150"} {
		want, werr := strconv.ParseUint(s, 10, 64)
		got, ok := parseUint64([]byte(s))
		if ok != (werr == nil) || (ok && got != want) {
			t.Errorf("parseUint64(%q) = %d, %v; strconv gives %d, %v", s, got, ok, want, werr)
		}
	}
}

// TestAmount checks fromAmount parsing on both sides of the 64-bit fast
// path and at the uint256 bound.
func TestAmount(t *testing.T) {
	maxText := maxUint256.String()
	over := new(big.Int).Add(maxUint256, big.NewInt(1)).String()
	tests := []struct {
		in   string
		want string // "" when refused
	}{
		{"", ""},
		{"0", ""},
		{"000", ""},
		{"-5", ""},
		{"1.5", ""},
		{"1e18", ""},
		{"1", "1"},
		{"0001000", "1000"},
		{"1000000000", "1000000000"},
		{"18446744073709551615", "18446744073709551615"},
		{"18446744073709551616", "18446744073709551616"},
		{"1000000000000000000000000", "1000000000000000000000000"},
		{maxText, maxText},
		{over, ""},
	}
	for _, tt := range tests {
		n, err := amount([]byte(tt.in))
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("amount(%q) = %s, want a refusal", tt.in, n)
		case tt.want != "" && err != nil:
			t.Errorf("amount(%q): %v", tt.in, err)
		case tt.want != "" && n.String() != tt.want:
			t.Errorf("amount(%q) = %s, want %s", tt.in, n, tt.want)
		}
	}
}

// TestToolSet: a tools or denyTools list must name a tool; one that names
// none (blanks, commas) is refused rather than read as "no tool".
func TestToolSet(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]int{
		"sbx-canal": 1, " sbx-canal , sbx-intents ": 2, "sbx-canal,,sbx-canal": 1,
		" ": -1, ",": -1, ", ,": -1, "\n": -1, "nope": -1, "sbx-canal,nope": -1,
	} {
		set, err := toolSet(cat, "denyTools", v)
		switch {
		case want < 0 && (err == nil || err.Details["param"] != "denyTools"):
			t.Errorf("toolSet(%q) = %v, %v; want a refusal naming denyTools", v, set, err)
		case want >= 0 && (err != nil || len(set) != want):
			t.Errorf("toolSet(%q) = %v, %v; want %d tools", v, set, err, want)
		}
	}
}

// TestStrategyParams checks the timing parameters' bounds: maxWaitMs from
// 1 to the deadline, minWaitMs and reduceEveryMs up to maxWaitMs (the
// deadline when absent), expectedResults up to MaxExpectedResults, each
// refusal naming its parameter.
func TestStrategyParams(t *testing.T) {
	const deadline = 1500 * time.Millisecond
	ms := time.Millisecond
	tests := []struct {
		p       Params
		refused string
		want    StrategyParams
	}{
		{Params{}, "", StrategyParams{}},
		{Params{MaxWaitMs: []byte("1500"), MinWaitMs: []byte("0"), ExpectedResults: []byte("0"), ReduceEveryMs: []byte("1500")}, "",
			StrategyParams{MaxWait: 1500 * ms, HasMaxWait: true, HasMinWait: true, HasExpected: true, ReduceEvery: 1500 * ms, HasReduce: true}},
		{Params{MinWaitMs: []byte("600"), ExpectedResults: []byte("4"), ReduceEveryMs: []byte("300")}, "",
			StrategyParams{MinWait: 600 * ms, HasMinWait: true, ExpectedResults: 4, HasExpected: true, ReduceEvery: 300 * ms, HasReduce: true}},
		{Params{MaxWaitMs: []byte("0")}, "maxWaitMs", StrategyParams{}},
		{Params{MaxWaitMs: []byte("1501")}, "maxWaitMs", StrategyParams{}},
		{Params{MaxWaitMs: []byte("-1")}, "maxWaitMs", StrategyParams{}},
		{Params{MaxWaitMs: []byte("100"), MinWaitMs: []byte("101")}, "minWaitMs", StrategyParams{}},
		{Params{MinWaitMs: []byte("1501")}, "minWaitMs", StrategyParams{}},
		{Params{MaxWaitMs: []byte("100"), ReduceEveryMs: []byte("101")}, "reduceEveryMs", StrategyParams{}},
		{Params{ReduceEveryMs: []byte("1e3")}, "reduceEveryMs", StrategyParams{}},
		{Params{ExpectedResults: []byte("1001")}, "expectedResults", StrategyParams{}},
		{Params{ExpectedResults: []byte(" 1")}, "expectedResults", StrategyParams{}},
	}
	for i, tt := range tests {
		got, err := strategyParams(tt.p, deadline)
		switch {
		case tt.refused != "" && (err == nil || err.Details["param"] != tt.refused || err.Code != "INVALID_PARAMS"):
			t.Errorf("case %d: %+v, %v; want a refusal naming %s", i, got, err, tt.refused)
		case tt.refused == "" && (err != nil || got != tt.want):
			t.Errorf("case %d: %+v, %v; want %+v", i, got, err, tt.want)
		}
	}
}
