package sandbox

import (
	"context"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// TestExactOutputInvertsPricing: an exact-output request on every leg of
// an aggregator pair (a DEX swap, a bridge with its destination hop) and
// an intents pair, with and without a partner fee and slippage, is
// answered with the least input whose route's ToAmountMin reaches toAmount:
// the same leg quoted forward at that input gives the same route, and one
// unit less falls short.
func TestExactOutputInvertsPricing(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	ctx := context.Background()
	type provider interface {
		quote.Provider
		quote.ExactOutputQuoter
	}
	tests := []struct {
		name     string
		p        provider
		from     uint64
		fromSym  string
		to       uint64
		toSym    string
		toWhole  string
		feeBps   int
		slippage float64
	}{
		{"DEX swap ETH→USDC on Arbitrum", m.Aggregator(), 42161, "", 42161, "USDC", "2500", 0, 0.005},
		{"bridge USDC Arbitrum→Base", m.Aggregator(), 42161, "USDC", 8453, "USDC", "1000", 25, 0.005},
		{"bridge with a hop USDC→WETH", m.Aggregator(), 42161, "USDC", 8453, "WETH", "0.3", 30, 0.01},
		{"intents USDC Arbitrum→Solana", m.Intents(), 42161, "USDC", 1151111081099710, "USDC", "750", 0, 0},
		{"intents ETH→Solana USDC", m.Intents(), 1, "", 1151111081099710, "USDC", "5000", 50, 0.003},
	}
	for _, tt := range tests {
		fwd := f.req(t, tt.from, tt.fromSym, tt.to, tt.toSym, "1")
		exact := *fwd
		exact.FromAmount = nil
		exact.ToAmount = quote.ToUnits(mustFloat(t, tt.toWhole), fwd.ToToken.Decimals)
		exact.FeeBps, exact.Slippage = tt.feeBps, tt.slippage
		if tt.feeBps > 0 {
			exact.FeeRecipient = feeWallet
		}
		if tt.p.ExactOutputUnsupported(&exact) != "" {
			t.Fatalf("%s: refused", tt.name)
		}
		legs := tt.p.Legs(&exact)
		if len(legs) == 0 {
			t.Fatalf("%s: no legs", tt.name)
		}
		sized := 0
		for _, leg := range legs {
			r, err := tt.p.QuoteLeg(ctx, &exact, leg)
			if err != nil {
				t.Logf("%s/%s: %v", tt.name, leg, err)
				continue
			}
			sized++
			checkAmounts(t, r)
			if r.ToAmountMin.Cmp(exact.ToAmount) < 0 {
				t.Errorf("%s/%s: toAmountMin %s below toAmount %s", tt.name, leg, r.ToAmountMin, exact.ToAmount)
			}
			if exact.FromAmount != nil {
				t.Fatalf("%s: the request's input was set", tt.name)
			}
			// Forward at the sized input: the same figures.
			at := exact
			at.ToAmount, at.FromAmount = nil, r.FromAmount
			again, err := tt.p.QuoteLeg(ctx, &at, leg)
			if err != nil {
				t.Fatalf("%s/%s forward: %v", tt.name, leg, err)
			}
			if again.ToAmountMin.Cmp(r.ToAmountMin) != 0 || again.ToAmount.Cmp(r.ToAmount) != 0 {
				t.Errorf("%s/%s: forward at %s gives %s (min %s), exact gave %s (min %s)", tt.name, leg, r.FromAmount,
					again.ToAmount, again.ToAmountMin, r.ToAmount, r.ToAmountMin)
			}
			// One unit less falls short.
			at.FromAmount = new(big.Int).Sub(r.FromAmount, big.NewInt(1))
			if less, err := tt.p.QuoteLeg(ctx, &at, leg); err == nil && less.ToAmountMin.Cmp(exact.ToAmount) >= 0 {
				t.Errorf("%s/%s: %s is not the least input: %s delivers min %s", tt.name, leg, r.FromAmount, at.FromAmount, less.ToAmountMin)
			}
			// The transaction spends the sized input.
			if r.Tx != nil && exact.FromToken.IsNative() && r.Tx.Value.Cmp(r.FromAmount) != 0 {
				t.Errorf("%s/%s: tx value %s, input %s", tt.name, leg, r.Tx.Value, r.FromAmount)
			}
		}
		if sized == 0 {
			t.Errorf("%s: no leg sized the input", tt.name)
		}
	}
}

// TestExactOutputBeyondThePool: an output no input can buy (more than the
// pool holds) is a reasoned no-route, not a guess.
func TestExactOutputBeyondThePool(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	req := f.req(t, 42161, "USDC", 8453, "USDC", "1")
	req.FromAmount = nil
	req.ToAmount = quote.ToUnits(1e15, req.ToToken.Decimals)
	for _, leg := range m.Aggregator().Legs(req) {
		if _, err := m.Aggregator().QuoteLeg(context.Background(), req, leg); noRouteReason(err) != "INSUFFICIENT_LIQUIDITY" {
			t.Errorf("%s: %v, want INSUFFICIENT_LIQUIDITY", leg, err)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, ok := new(big.Float).SetString(s)
	if !ok {
		t.Fatalf("%q", s)
	}
	f, _ := v.Float64()
	return f
}

// TestExactOutputPricedFromTheSnapshotThatSizedIt: the price source moves
// between every two reads (the source token loses a hundredth of a percent
// of its price at each), as a live price feed may while a leg is sized.
// The route answered is priced from the one reading of the prices its
// input was sized on, so its toAmountMin still reaches toAmount; priced
// again from a later reading it would fall short.
func TestExactOutputPricedFromTheSnapshotThatSizedIt(t *testing.T) {
	f := loadFixture(t)
	ref := fixedPrices(f.reg)
	type provider interface {
		quote.Provider
		quote.ExactOutputQuoter
	}
	tests := []struct {
		name    string
		intents bool
		from    uint64
		fromSym string
		to      uint64
		toSym   string
		toWhole string
	}{
		{"aggregator bridge USDC Arbitrum→Base", false, 42161, "USDC", 8453, "USDC", "1000"},
		{"aggregator DEX swap ETH→USDC", false, 42161, "", 42161, "USDC", "2500"},
		{"intents ETH→Solana USDC", true, 1, "", 1151111081099710, "USDC", "5000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exact := f.req(t, tt.from, tt.fromSym, tt.to, tt.toSym, "1")
			exact.FromAmount = nil
			exact.ToAmount = quote.ToUnits(mustFloat(t, tt.toWhole), exact.ToToken.Decimals)
			exact.Slippage = 0.005
			source := strings.ToLower(exact.FromToken.Address)
			var reads atomic.Int64
			moving := func(chainID uint64, token string) (float64, bool) {
				p, ok := ref(chainID, token)
				if ok && chainID == tt.from && token == source {
					p *= 1 - 1e-4*float64(reads.Add(1))
				}
				return p, ok
			}
			m, err := New(f.reg, f.cat, moving, fixedGas, Config{})
			if err != nil {
				t.Fatal(err)
			}
			var p provider = m.Aggregator()
			if tt.intents {
				p = m.Intents()
			}
			sized := 0
			for _, leg := range p.Legs(exact) {
				r, err := p.QuoteLeg(context.Background(), exact, leg)
				if err != nil {
					t.Errorf("%s: %v", leg, err)
					continue
				}
				sized++
				if r.ToAmountMin.Cmp(exact.ToAmount) < 0 {
					t.Errorf("%s: toAmountMin %s below toAmount %s (input %s)", leg, r.ToAmountMin, exact.ToAmount, r.FromAmount)
				}
			}
			if sized == 0 || reads.Load() == 0 {
				t.Fatalf("no leg sized (%d price reads)", reads.Load())
			}
		})
	}
}
