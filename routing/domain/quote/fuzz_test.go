package quote

import (
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// The fuzz targets of the quote parameters (see scripts/fuzz-targets). Each
// holds the parser to its contract: it never panics, a refusal is
// INVALID_PARAMS (400) naming the parameter at fault, and what it accepts
// reads back the same when written out again.

var fuzzCatalog = sync.OnceValues(func() (*registry.Registry, *tools.Catalog) {
	reg, err := registry.Load()
	if err != nil {
		panic(err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		panic(err)
	}
	return reg, cat
})

var quoteParamNames = []string{"fromChain", "toChain", "fromToken", "toToken", "fromAmount", "fromAddress",
	"toAddress", "slippage", "tools", "denyTools", "preferredTool", "order", "toAmount", "refundTo"}

// wantParamRefusal fails unless err is INVALID_PARAMS with status 400
// naming one of params.
func wantParamRefusal(t *testing.T, err *apierr.Error, params ...string) {
	t.Helper()
	if err.Code != apierr.InvalidParams || err.HTTPStatus() != 400 {
		t.Fatalf("refusal %s (%d): %s", err.Code, err.HTTPStatus(), err.Message)
	}
	p, _ := err.Details["param"].(string)
	for _, want := range params {
		if p == want {
			return
		}
	}
	t.Fatalf("refusal names %q (%s), want one of %v", p, err.Message, params)
}

// fuzzDeadline is the server's quote deadline the fuzz targets parse under.
const fuzzDeadline = 300 * time.Millisecond

// FuzzParse: Parse over every parameter of /v1/quote but the timing ones
// (FuzzStrategyParams).
func FuzzParse(f *testing.F) {
	const wallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	f.Add("42161", "8453", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"100000000", wallet, wallet, "0.005", "sbx-canal", "", "", "FASTEST", "", wallet)
	f.Add("1", "1151111081099710", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
		"300000000", wallet, "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV", "50", "", "sbx-intents", "sbx-intents", "", "", "")
	f.Add("42161", "369", "native", "0x0000000000000000000000000000000000000000", "1", wallet, "", "", "", "", "", "cheapest", "", "")
	f.Add("0", "-1", "", "", "1e400", "", "", "NaN", ",", " ", "x", "?", "-2", "x")
	f.Add("42161", "8453", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"", wallet, "", "", "", "", "", "", "5000000", wallet)
	f.Add("42161", "8453", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"1", wallet, "", "", "", "", "", "", "1", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV")
	f.Fuzz(func(t *testing.T, fromChain, toChain, fromToken, toToken, fromAmount, fromAddress, toAddress,
		slippage, toolList, denyTools, preferred, order, toAmount, refundTo string) {
		reg, cat := fuzzCatalog()
		p := Params{FromChain: []byte(fromChain), ToChain: []byte(toChain), FromToken: []byte(fromToken), ToToken: []byte(toToken),
			FromAmount: []byte(fromAmount), FromAddress: []byte(fromAddress), ToAddress: []byte(toAddress),
			Slippage: []byte(slippage), Tools: []byte(toolList), DenyTools: []byte(denyTools),
			PreferredTool: []byte(preferred), Order: []byte(order), ToAmount: []byte(toAmount), RefundTo: []byte(refundTo)}
		req, err := Parse(reg, cat, p, fuzzDeadline)
		if err != nil {
			if req != nil {
				t.Fatal("a refusal returned a request")
			}
			wantParamRefusal(t, err, quoteParamNames...)
			return
		}
		if req.From == nil || req.To == nil || req.FromToken == nil || req.ToToken == nil {
			t.Fatalf("accepted without chains or tokens: %+v", req)
		}
		// Exactly one amount, positive and within uint256.
		amt := req.FromAmount
		if (req.FromAmount == nil) == (req.ToAmount == nil) {
			t.Fatalf("accepted fromAmount %v with toAmount %v", req.FromAmount, req.ToAmount)
		}
		if req.ExactOutput() {
			amt = req.ToAmount
		}
		if amt.Sign() <= 0 || amt.Cmp(maxUint256) > 0 {
			t.Fatalf("accepted amount %s", amt)
		}
		if req.RefundTo != refundTo {
			t.Fatalf("refundTo %q kept as %q", refundTo, req.RefundTo)
		}
		if !(req.Slippage >= 0 && req.Slippage <= MaxSlippageBps/10_000.0) {
			t.Fatalf("accepted slippage %v", req.Slippage)
		}
		if req.Dry != (toAddress == "") || req.ToAddress == "" {
			t.Fatalf("dry %v with toAddress %q (kept %q)", req.Dry, toAddress, req.ToAddress)
		}
		// Written out as a client would, the request reads back the same.
		again := Params{
			FromChain: []byte(strconv.FormatUint(req.From.ID, 10)), ToChain: []byte(strconv.FormatUint(req.To.ID, 10)),
			FromToken: []byte(fromToken), ToToken: []byte(toToken),
			FromAddress: []byte(req.FromAddress), RefundTo: []byte(req.RefundTo),
			Slippage: []byte(strconv.FormatFloat(req.Slippage, 'g', -1, 64)),
			Tools:    []byte(joinSet(req.AllowTools)), DenyTools: []byte(joinSet(req.DenyTools)),
			PreferredTool: []byte(req.PreferredTool), Order: []byte(req.Order),
		}
		if !req.Dry {
			again.ToAddress = []byte(req.ToAddress)
		}
		if req.ExactOutput() {
			again.ToAmount = []byte(req.ToAmount.String())
		} else {
			again.FromAmount = []byte(req.FromAmount.String())
		}
		req2, err := Parse(reg, cat, again, fuzzDeadline)
		if err != nil {
			t.Fatalf("the accepted request written out again is refused: %v", err)
		}
		if !reflect.DeepEqual(req, req2) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", req, req2)
		}
	})
}

func joinSet(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return strings.Join(keys, ",")
}

// FuzzAmount: fromAmount is a positive base-10 integer that fits uint256,
// and an accepted one is read exactly.
func FuzzAmount(f *testing.F) {
	for _, s := range []string{"1", "0", "007", "-1", "1e18", "18446744073709551616", maxUint256.String(), "+5", " 1", "1.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, err := amount("fromAmount", []byte(v))
		want, ok := new(big.Int).SetString(v, 10)
		valid := ok && v != "" && strings.Trim(v, "0123456789") == "" && want.Sign() > 0 && want.Cmp(maxUint256) <= 0
		if err != nil {
			if valid {
				t.Fatalf("amount(%q) refused: %v", v, err)
			}
			wantParamRefusal(t, err, "fromAmount")
			return
		}
		if !valid {
			t.Fatalf("amount(%q) = %s, want a refusal", v, n)
		}
		if n.Cmp(want) != 0 || n.String() != strings.TrimLeft(v, "0") {
			t.Fatalf("amount(%q) = %s", v, n)
		}
	})
}

// FuzzSlippage: a slippage is a finite non-negative fraction or basis
// points of at most 50%; what is accepted, written as the fraction it
// became, reads back the same.
func FuzzSlippage(f *testing.F) {
	for _, s := range []string{"0.005", "50", "1", "5000", "5001", "0.5", "0.50000001", "-0", "NaN", "Inf", "1e400", "0x1p-2", "1_0", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := slippage(v)
		if err != nil {
			wantParamRefusal(t, err, "slippage")
			return
		}
		if math.IsNaN(got) || got < 0 || got > MaxSlippageBps/10_000.0 {
			t.Fatalf("slippage(%q) = %v", v, got)
		}
		raw, _ := strconv.ParseFloat(v, 64)
		if raw < 1 && got != raw {
			t.Fatalf("slippage(%q) = %v, a fraction below 1 must be kept", v, got)
		}
		back, err := slippage(strconv.FormatFloat(got, 'g', -1, 64))
		if err != nil || back != got {
			t.Fatalf("slippage(%q) = %v, which reads back as %v, %v", v, got, back, err)
		}
	})
}

// FuzzStrategyParams: the timing parameters of /v1/quote and /v1/routes
// (maxWaitMs, minWaitMs, expectedResults, reduceEveryMs) under a server
// deadline. A refusal is INVALID_PARAMS naming one of them; what is
// accepted lies within its bounds (maxWaitMs from 1 ms to the deadline,
// the waits within maxWaitMs) and reads back the same written as a client
// would.
func FuzzStrategyParams(f *testing.F) {
	f.Add(uint16(300), "300", "0", "2", "50")
	f.Add(uint16(300), "", "", "", "")
	f.Add(uint16(300), "0", "", "", "")
	f.Add(uint16(1), "1", "1", "1000", "1")
	f.Add(uint16(300), "200", "250", "1001", "-1")
	f.Add(uint16(300), "18446744073709551616", "1e3", " 5", "0x10")
	f.Fuzz(func(t *testing.T, deadlineMs uint16, maxWait, minWait, expected, reduce string) {
		if deadlineMs == 0 {
			return
		}
		deadline := time.Duration(deadlineMs) * time.Millisecond
		p := Params{MaxWaitMs: []byte(maxWait), MinWaitMs: []byte(minWait), ExpectedResults: []byte(expected), ReduceEveryMs: []byte(reduce)}
		sp, err := strategyParams(p, deadline)
		if err != nil {
			wantParamRefusal(t, err, "maxWaitMs", "minWaitMs", "expectedResults", "reduceEveryMs")
			return
		}
		limit := deadline
		if sp.HasMaxWait {
			if sp.MaxWait < time.Millisecond || sp.MaxWait > deadline {
				t.Fatalf("accepted maxWaitMs %q as %v under a %v deadline", maxWait, sp.MaxWait, deadline)
			}
			limit = sp.MaxWait
		}
		if sp.MinWait < 0 || sp.MinWait > limit || sp.ReduceEvery < 0 || sp.ReduceEvery > limit {
			t.Fatalf("accepted waits %v and %v beyond %v", sp.MinWait, sp.ReduceEvery, limit)
		}
		if sp.ExpectedResults < 0 || sp.ExpectedResults > MaxExpectedResults {
			t.Fatalf("accepted expectedResults %d", sp.ExpectedResults)
		}
		if sp.HasMaxWait != (maxWait != "") || sp.HasMinWait != (minWait != "") || sp.HasExpected != (expected != "") || sp.HasReduce != (reduce != "") {
			t.Fatalf("parameters given %q %q %q %q read as %+v", maxWait, minWait, expected, reduce, sp)
		}
		ms := func(has bool, d time.Duration) []byte {
			if !has {
				return nil
			}
			return []byte(strconv.FormatInt(d.Milliseconds(), 10))
		}
		again := Params{MaxWaitMs: ms(sp.HasMaxWait, sp.MaxWait), MinWaitMs: ms(sp.HasMinWait, sp.MinWait),
			ReduceEveryMs: ms(sp.HasReduce, sp.ReduceEvery)}
		if sp.HasExpected {
			again.ExpectedResults = []byte(strconv.Itoa(sp.ExpectedResults))
		}
		sp2, err := strategyParams(again, deadline)
		if err != nil || sp2 != sp {
			t.Fatalf("read back %+v (%v), want %+v", sp2, err, sp)
		}
	})
}
