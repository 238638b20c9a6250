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
		n, err := amount("fromAmount", []byte(tt.in))
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

// TestParseAmountsAndRefundTo: a quote request gives exactly one of
// fromAmount and toAmount (both or neither is refused naming them), a
// malformed one is refused naming itself, and refundTo must be an address
// of the source chain's family.
func TestParseAmountsAndRefundTo(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
	const (
		wallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
		solana = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
	)
	base := func(fromChain, toChain, fromToken, toToken string) Params {
		return Params{FromChain: []byte(fromChain), ToChain: []byte(toChain), FromToken: []byte(fromToken), ToToken: []byte(toToken),
			FromAddress: []byte(wallet)}
	}
	evm := func() Params {
		return base("42161", "8453", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	}
	solSource := func() Params {
		p := base("1151111081099710", "42161", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
		p.FromAddress = []byte(solana)
		p.ToAddress = []byte(wallet)
		return p
	}
	with := func(p Params, set func(*Params)) Params { set(&p); return p }
	tests := []struct {
		name       string
		p          Params
		refused    string // the parameter named, "" when accepted
		fromAmount string // accepted: the input ("" on exact output)
		toAmount   string // accepted: the exact output ("" otherwise)
		refundTo   string
	}{
		{"fromAmount", with(evm(), func(p *Params) { p.FromAmount = []byte("1000000") }), "", "1000000", "", ""},
		{"toAmount", with(evm(), func(p *Params) { p.ToAmount = []byte("5000000") }), "", "", "5000000", ""},
		{"neither", evm(), "fromAmount", "", "", ""},
		{"both", with(evm(), func(p *Params) { p.FromAmount, p.ToAmount = []byte("1"), []byte("2") }), "toAmount", "", "", ""},
		{"bad toAmount beside fromAmount", with(evm(), func(p *Params) { p.FromAmount, p.ToAmount = []byte("1"), []byte("abc") }), "toAmount", "", "", ""},
		{"bad fromAmount beside toAmount", with(evm(), func(p *Params) { p.FromAmount, p.ToAmount = []byte("-1"), []byte("2") }), "fromAmount", "", "", ""},
		{"zero toAmount", with(evm(), func(p *Params) { p.ToAmount = []byte("0") }), "toAmount", "", "", ""},
		{"toAmount over uint256", with(evm(), func(p *Params) { p.ToAmount = []byte(new(big.Int).Lsh(big.NewInt(1), 256).String()) }), "toAmount", "", "", ""},
		{"toAmount fraction", with(evm(), func(p *Params) { p.ToAmount = []byte("1.5") }), "toAmount", "", "", ""},
		{"refundTo on EVM", with(evm(), func(p *Params) { p.FromAmount, p.RefundTo = []byte("1"), []byte(wallet) }), "", "1", "", wallet},
		{"refundTo with toAmount", with(evm(), func(p *Params) { p.ToAmount, p.RefundTo = []byte("9"), []byte(wallet) }), "", "", "9", wallet},
		{"refundTo of another family", with(evm(), func(p *Params) { p.FromAmount, p.RefundTo = []byte("1"), []byte(solana) }), "refundTo", "", "", ""},
		{"refundTo malformed", with(evm(), func(p *Params) { p.FromAmount, p.RefundTo = []byte("1"), []byte("0x1234") }), "refundTo", "", "", ""},
		{"refundTo on Solana", with(solSource(), func(p *Params) { p.FromAmount, p.RefundTo = []byte("300000000"), []byte(solana) }), "", "300000000", "", solana},
		{"EVM refundTo on a Solana source", with(solSource(), func(p *Params) { p.FromAmount, p.RefundTo = []byte("300000000"), []byte(wallet) }), "refundTo", "", "", ""},
	}
	for _, tt := range tests {
		req, perr := Parse(reg, cat, tt.p, time.Second)
		if tt.refused != "" {
			if perr == nil || perr.Code != "INVALID_PARAMS" || perr.Details["param"] != tt.refused {
				t.Errorf("%s: %+v, %v; want a refusal naming %s", tt.name, req, perr, tt.refused)
			}
			if perr != nil && (tt.name == "neither" || tt.name == "both") {
				if ps, _ := perr.Details["params"].([]string); len(ps) != 2 || ps[0] != "fromAmount" || ps[1] != "toAmount" {
					t.Errorf("%s: details.params %v, want [fromAmount toAmount]", tt.name, perr.Details["params"])
				}
			}
			continue
		}
		if perr != nil {
			t.Errorf("%s: refused: %v", tt.name, perr)
			continue
		}
		got := func(n *big.Int) string {
			if n == nil {
				return ""
			}
			return n.String()
		}
		if got(req.FromAmount) != tt.fromAmount || got(req.ToAmount) != tt.toAmount || req.ExactOutput() != (tt.toAmount != "") {
			t.Errorf("%s: fromAmount %s toAmount %s", tt.name, got(req.FromAmount), got(req.ToAmount))
		}
		if req.RefundTo != tt.refundTo {
			t.Errorf("%s: refundTo %q, want %q", tt.name, req.RefundTo, tt.refundTo)
		}
		wantRefund := tt.refundTo
		if wantRefund == "" {
			wantRefund = req.FromAddress
		}
		if req.RefundAddress() != wantRefund {
			t.Errorf("%s: refunds go to %q, want %q", tt.name, req.RefundAddress(), wantRefund)
		}
	}
}

// TestParseApprovalAmount: approvalAmount is exact (the default) or max,
// and anything else is refused naming it.
func TestParseApprovalAmount(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value   string
		max     bool
		refused bool
	}{{"", false, false}, {"exact", false, false}, {"max", true, false}, {"MAX", false, true}, {"unlimited", false, true}, {"1000", false, true}} {
		p := Params{FromChain: []byte("42161"), ToChain: []byte("8453"), FromToken: []byte("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
			ToToken: []byte("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), FromAmount: []byte("1000000"),
			FromAddress: []byte("0x8ba1f109551bD432803012645Ac136ddd64DBA72"), ApprovalAmount: []byte(c.value)}
		req, perr := Parse(reg, cat, p, time.Second)
		if c.refused {
			if perr == nil || perr.Code != "INVALID_PARAMS" || perr.Details["param"] != "approvalAmount" {
				t.Errorf("%q: %v, want a refusal naming approvalAmount", c.value, perr)
			}
			continue
		}
		if perr != nil || req.ApprovalMax != c.max {
			t.Errorf("%q: %v, max %v", c.value, perr, req != nil && req.ApprovalMax)
		}
	}
}
