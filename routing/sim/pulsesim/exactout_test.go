package pulsesim

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// TestPulserouteExactOutput: the direct routes invert exactly (the least
// input whose output after the fee, and after the PulseX swap and the
// slippage where there is one, reaches toAmount; the transaction spends
// it); the multi-step routes and swaps within 369 are refused with their
// reason, and the engine leaves them out.
func TestPulserouteExactOutput(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	tests := []struct {
		name            string
		from            uint64
		fromSym         string
		to              uint64
		toSym           string
		toWhole         string
		feeBps          int
		refusal         string // part of the reason; "" when sized
		wantFromAmount  string // sized: the input, in base units
		wantToAmountMin string
	}{
		// 1000 USDCh net of 30 bps: the least input is ⌊999999999×10000/9970⌋+1.
		{"inbound USDC → USDCh with a fee", 42161, "USDC", 369, "USDCh", "1000", 30, "", "1003009027", "1000000000"},
		{"inbound USDC → USDCh without a fee", 8453, "USDC", 369, "USDCh", "250.5", 0, "", "250500000", "250500000"},
		{"outbound USDCh → USDC", 369, "USDCh", 8453, "USDC", "250", 0, "", "250000000", "250000000"},
		{"inbound USDC → PLSX", 42161, "USDC", 369, "PLSX", "1000000", 30, "", "", ""},
		{"inbound USDC → native PLS", 8453, "USDC", 369, "", "5000000", 0, "", "", ""},
		{"multi-step WETH → USDCh", 42161, "WETH", 369, "USDCh", "1000", 0, "multi-step", "", ""},
		{"swap within 369", 369, "USDCh", 369, "PLSX", "1000", 0, "on chain 369", "", ""},
	}
	for _, tt := range tests {
		req := f.req(t, tt.from, tt.fromSym, tt.to, tt.toSym, "1")
		req.FromAmount = nil
		req.ToAmount = quote.ToUnits(wholeOf(t, tt.toWhole), req.ToToken.Decimals)
		req.FeeBps = tt.feeBps
		why := p.ExactOutputUnsupported(req)
		if tt.refusal != "" {
			if !strings.Contains(why, tt.refusal) {
				t.Errorf("%s: reason %q, want one with %q", tt.name, why, tt.refusal)
			}
			// Asked anyway, the leg answers the reason.
			leg := ToolWarp
			if tt.from == tt.to {
				leg = ToolPulseX
			}
			var nr *quote.NoRoute
			if _, err := p.QuoteLeg(context.Background(), req, leg); !errors.As(err, &nr) || nr.Reason != quote.ReasonExactOutputUnsupported {
				t.Errorf("%s: asked anyway: %v", tt.name, err)
			}
			continue
		}
		if why != "" {
			t.Fatalf("%s: refused: %s", tt.name, why)
		}
		r, err := p.QuoteLeg(context.Background(), req, ToolWarp)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		checkAmounts(t, r)
		if r.ToAmountMin.Cmp(req.ToAmount) < 0 {
			t.Errorf("%s: toAmountMin %s below toAmount %s", tt.name, r.ToAmountMin, req.ToAmount)
		}
		if tt.wantFromAmount != "" && (r.FromAmount.String() != tt.wantFromAmount || r.ToAmountMin.String() != tt.wantToAmountMin) {
			t.Errorf("%s: from %s min %s, want %s and %s", tt.name, r.FromAmount, r.ToAmountMin, tt.wantFromAmount, tt.wantToAmountMin)
		}
		if r.Direct == nil || r.Direct.FromAmount != r.FromAmount.String() || r.Direct.MinOutput != r.ToAmountMin.String() {
			t.Errorf("%s: direct quote %+v", tt.name, r.Direct)
		}
		_, args, err := pulseroute.Decode(r.Tx.Data)
		if err != nil {
			t.Fatal(err)
		}
		spent := args[len(args)-1].(*big.Int) // transferRemote's amount
		if tt.to == 369 {
			spent = args[3].(*big.Int) // bridgeAndSwap's amount
		}
		if spent.Cmp(r.FromAmount) != 0 {
			t.Errorf("%s: the transaction spends %s, the quote says %s", tt.name, spent, r.FromAmount)
		}
		// One unit less falls short.
		less := *req
		less.ToAmount, less.FromAmount = nil, new(big.Int).Sub(r.FromAmount, big.NewInt(1))
		if lr, err := p.QuoteLeg(context.Background(), &less, ToolWarp); err == nil && lr.ToAmountMin.Cmp(req.ToAmount) >= 0 {
			t.Errorf("%s: %s is not the least input", tt.name, r.FromAmount)
		}
	}
}

func wholeOf(t *testing.T, s string) float64 {
	t.Helper()
	v, ok := new(big.Float).SetString(s)
	if !ok {
		t.Fatalf("%q", s)
	}
	f, _ := v.Float64()
	return f
}
