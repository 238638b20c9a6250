package pulseroute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/quote/quotetest"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Swapgate's own contracts as a live deployment configures them.
var (
	liveSender   = common.HexToAddress("0x5e4de0000000000000000000000000000000a161")
	liveReceiver = common.HexToAddress("0x4ece1e0000000000000000000000000000000a16")
)

// fakeState is chain state as the real contracts would answer: a fixed
// gas payment per source chain and PulseX paying 2 units out per unit in
// per hop; reads of chain 8453 have no node.
type fakeState struct {
	payments map[uint64]int64
	rate     int64      // units out per unit in, per hop; 2 when 0
	mu       sync.Mutex // a route's reads run at once
	reads    []string
}

// read records a read; sortedReads lists them in a fixed order, since a
// route's reads have none.
func (f *fakeState) read(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, s)
}

func (f *fakeState) sortedReads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(slices.Values(f.reads))
}

func (f *fakeState) QuoteGasPayment(_ context.Context, chainID uint64, dest uint32) (*big.Int, error) {
	f.read(fmt.Sprintf("quoteGasPayment %d→%d", chainID, dest))
	p, ok := f.payments[chainID]
	if !ok {
		return nil, fmt.Errorf("chain %d: %w", chainID, ErrNoNode)
	}
	return big.NewInt(p), nil
}

func (f *fakeState) AmountsOut(_ context.Context, in *big.Int, path []common.Address) ([]*big.Int, error) {
	f.read(fmt.Sprintf("getAmountsOut %d hops", len(path)-1))
	rate := f.rate
	if rate == 0 {
		rate = 2
	}
	out := []*big.Int{in}
	for range path[1:] {
		out = append(out, new(big.Int).Mul(out[len(out)-1], big.NewInt(rate)))
	}
	return out, nil
}

// fakeAggregator answers step 1 with a fixed route, or refuses, and keeps
// the request it was asked.
type fakeAggregator struct {
	route *quote.Route
	err   error
	asked *quote.Request
}

func (f *fakeAggregator) QuoteLeg(_ context.Context, req *quote.Request, _ string) (*quote.Route, error) {
	r := *req
	f.asked = &r
	if f.err != nil {
		return nil, f.err
	}
	out := *f.route
	return &out, nil
}

// aggregatorRoute is what the aggregator answers for 1 WETH → 2,000 USDC on
// Arbitrum, delivered to the inbound receiver.
func aggregatorRoute() *quote.Route {
	return &quote.Route{
		Provider: registry.ProviderAggregator, Tool: "uniswap", ToolName: "Uniswap V3",
		ToAmount: big.NewInt(1_994_000_000), PreFeeToAmount: big.NewInt(2_000_000_000), PartnerFee: big.NewInt(6_000_000),
		ToAmountMin: big.NewInt(1_984_000_000), ExecutionDuration: 30,
		ApprovalAddress: "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE",
		FeeCosts:        []quote.FeeCost{{Name: "Integrator Fee", Amount: big.NewInt(3e15), Percentage: 0.003}},
		GasCosts:        []quote.GasCost{{Type: "SEND", Amount: big.NewInt(4e13), Limit: 300_000}},
		Tx: &quote.TxRequest{To: "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE", From: "0x1111111111111111111111111111111111111111",
			Data: []byte{0x4c, 0x47, 0x8b, 0xbe, 0x01}, Value: new(big.Int), ChainID: 42161, GasLimit: 400_000, GasPrice: big.NewInt(1e7)},
	}
}

type liveFixture struct {
	reg   *registry.Registry
	state *fakeState
	agg   *fakeAggregator
	p     *Provider
}

// newLive builds the live provider with reference prices for every token
// but native PLS, gas prices on Arbitrum only, a sender contract and an
// inbound receiver on Arbitrum only.
func newLive(t *testing.T, agg *fakeAggregator) liveFixture {
	t.Helper()
	state := &fakeState{payments: map[uint64]int64{42161: 70_000_000_000_000, 1: 90_000_000_000_000, quote.PulseChainID: 5e18}}
	f := newLiveOn(t, agg, state)
	f.state = state
	return f
}

// newLiveOn is newLive reading chain state from state.
func newLiveOn(t *testing.T, agg *fakeAggregator, state ChainState) liveFixture {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	price := func(chainID uint64, token string) (float64, bool) {
		if token != strings.ToLower(token) {
			t.Errorf("price asked with %q, not lower case", token)
		}
		tok, ok := reg.Token(chainID, token)
		if !ok || (chainID == quote.PulseChainID && tok.IsNative()) {
			return 0, false
		}
		p, err := strconv.ParseFloat(tok.PriceUSD, 64)
		return p, err == nil
	}
	gas := func(chainID uint64) (*big.Int, bool) {
		if chainID == 42161 {
			return big.NewInt(1e8), true
		}
		return nil, false
	}
	contracts, err := NewLiveContracts(Config{SenderContracts: map[uint64]common.Address{42161: liveSender},
		InboundReceivers: map[uint64]common.Address{42161: liveReceiver}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := LiveConfig{Registry: reg, Price: price, GasPrice: gas}
	if agg != nil {
		cfg.Aggregator = agg
	}
	p, err := NewLive(cfg, state, contracts)
	if err != nil {
		t.Fatal(err)
	}
	return liveFixture{reg: reg, agg: agg, p: p}
}

// req builds a request by chain and symbol ("" = native) for whole tokens.
func (f liveFixture) req(t *testing.T, from uint64, fromSym string, to uint64, toSym, whole string) *quote.Request {
	t.Helper()
	r := quotetest.Request(t, f.reg, from, fromSym, to, toSym, whole,
		"0x1111111111111111111111111111111111111111", "0x2222222222222222222222222222222222222222")
	r.ID = "q-live-1"
	return r
}

// noSandbox fails on any trace of the sandbox in a live route: a sbx-
// tool, a sandbox name, the sandbox router.
func noSandbox(t *testing.T, r *quote.Route) {
	t.Helper()
	b, err := json.Marshal(struct {
		Tool, ToolName, Approval string
		Fees                     []quote.FeeCost
		Tx                       *quote.TxRequest
		Direct                   *quote.DirectQuote
		Multi                    *quote.MultiStepQuote
	}{r.Tool, r.ToolName, r.ApprovalAddress, r.FeeCosts, r.Tx, r.Direct, r.MultiStep})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"sbx-", "Sandbox", "sandbox"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("live route mentions %q: %s", bad, b)
		}
	}
}

func TestLiveDirectRoutes(t *testing.T) {
	tests := []struct {
		name                           string
		from                           uint64
		fromSym                        string
		to                             uint64
		toSym                          string
		feeBps                         int
		rate                           int64
		wantTo, wantApproval           string
		wantPayment                    int64
		wantMethod                     string
		wantReads                      []string
		wantToAmountMin, wantFromUSDOK bool
	}{
		{name: "inbound USDC to USDCh", from: 42161, fromSym: "USDC", to: 369, toSym: "USDCh", feeBps: 30,
			wantTo: liveSender.Hex(), wantApproval: liveSender.Hex(), wantPayment: 70_000_000_000_000, wantMethod: MethodBridgeAndSwap,
			wantReads: []string{"quoteGasPayment 42161→369"}, wantFromUSDOK: true},
		// PulseX prices PLSX (18 decimals) at about $0.00003.
		{name: "inbound USDC to PLSX", from: 42161, fromSym: "USDC", to: 369, toSym: "PLSX", feeBps: 30, rate: 3e16,
			wantTo: liveSender.Hex(), wantApproval: liveSender.Hex(), wantPayment: 70_000_000_000_000, wantMethod: MethodBridgeAndSwap,
			wantReads: []string{"getAmountsOut 1 hops", "getAmountsOut 1 hops", "quoteGasPayment 42161→369"}, wantFromUSDOK: true},
		{name: "outbound USDCh to USDC", from: 369, fromSym: "USDCh", to: 42161, toSym: "USDC",
			wantTo: USDChAddress, wantPayment: 5e18, wantMethod: MethodTransferRemote,
			wantReads: []string{"quoteGasPayment 369→42161"}, wantFromUSDOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLive(t, nil)
			f.state.rate = tt.rate
			req := f.req(t, tt.from, tt.fromSym, tt.to, tt.toSym, "1000")
			req.FeeBps = tt.feeBps
			if !f.p.FeeExempt(req) != (tt.from != quote.PulseChainID) {
				t.Errorf("FeeExempt = %v for %s", f.p.FeeExempt(req), tt.name)
			}
			legs := f.p.Legs(req)
			if len(legs) != 1 || legs[0] != LiveToolWarp {
				t.Fatalf("legs %v, want [%s]", legs, LiveToolWarp)
			}
			r, err := f.p.QuoteLeg(context.Background(), req, legs[0])
			if err != nil {
				t.Fatalf("QuoteLeg: %v", err)
			}
			noSandbox(t, r)
			if got := f.state.sortedReads(); fmt.Sprint(got) != fmt.Sprint(tt.wantReads) {
				t.Errorf("chain reads %v, want %v", got, tt.wantReads)
			}
			if r.Shape != quote.ShapeDirect || r.Direct == nil || r.Tx == nil {
				t.Fatalf("shape %v, direct %v", r.Shape, r.Direct)
			}
			if !strings.EqualFold(r.Tx.To, tt.wantTo) || r.ApprovalAddress != tt.wantApproval || r.Tx.Value.Int64() != tt.wantPayment ||
				r.Direct.BridgeGasEstimate != strconv.FormatInt(tt.wantPayment, 10) {
				t.Errorf("tx to %s value %s approval %q gas estimate %s; want %s, %d, %q", r.Tx.To, r.Tx.Value, r.ApprovalAddress,
					r.Direct.BridgeGasEstimate, tt.wantTo, tt.wantPayment, tt.wantApproval)
			}
			if m, _, err := Decode(r.Tx.Data); err != nil || m != tt.wantMethod {
				t.Errorf("calldata %s, %v; want %s", m, err, tt.wantMethod)
			}
			fee := r.GasCosts[len(r.GasCosts)-1]
			if fee.Type != "FEE" || fee.Amount.Int64() != tt.wantPayment {
				t.Errorf("messaging cost %+v", fee)
			}
			// Arbitrum has a gas price (APPROVE and SEND costs), chain 369
			// none: its transaction keeps a limit and no cost figures.
			if tt.from == 42161 && (len(r.GasCosts) != 3 || r.Tx.GasPrice == nil || r.Tx.GasPrice.Int64() != 1e8) {
				t.Errorf("Arbitrum gas: %+v, price %v", r.GasCosts, r.Tx.GasPrice)
			}
			if tt.from == quote.PulseChainID && (len(r.GasCosts) != 1 || r.Tx.GasLimit == 0 || r.Tx.GasPrice != nil) {
				t.Errorf("369 gas: %+v, limit %d, price %v", r.GasCosts, r.Tx.GasLimit, r.Tx.GasPrice)
			}
			if (r.FromAmountUSD > 0) != tt.wantFromUSDOK {
				t.Errorf("fromAmountUSD %v", r.FromAmountUSD)
			}
		})
	}
}

func TestLiveMultiStep(t *testing.T) {
	tests := []struct {
		name       string
		agg        *fakeAggregator
		fromChain  uint64
		wantReason string
		wantIn     string
	}{
		{name: "aggregator route", agg: &fakeAggregator{route: aggregatorRoute()}, fromChain: 42161},
		{name: "no aggregator route", agg: &fakeAggregator{err: &quote.NoRoute{Provider: registry.ProviderAggregator, Reason: "NO_POSSIBLE_ROUTE", Message: "No available quotes for the requested transfer"}},
			fromChain: 42161, wantReason: "NO_POSSIBLE_ROUTE", wantIn: "aggregator has no route"},
		{name: "no aggregator configured", fromChain: 42161, wantReason: "UNSUPPORTED_ROUTE", wantIn: "not configured"},
		{name: "no inbound receiver configured", agg: &fakeAggregator{route: aggregatorRoute()}, fromChain: 1,
			wantReason: "UNSUPPORTED_ROUTE", wantIn: "no inbound receiver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLive(t, tt.agg)
			req := f.req(t, tt.fromChain, "WETH", 369, "PLSX", "1")
			req.FeeBps = 30
			r, err := f.p.QuoteLeg(context.Background(), req, LiveToolWarp)
			if tt.wantReason != "" {
				var nr *quote.NoRoute
				if !errors.As(err, &nr) || nr.Reason != tt.wantReason || !strings.Contains(nr.Message, tt.wantIn) || nr.Tool != LiveToolWarp {
					t.Fatalf("error %v, want a %s no-route saying %q", err, tt.wantReason, tt.wantIn)
				}
				return
			}
			if err != nil {
				t.Fatalf("QuoteLeg: %v", err)
			}
			noSandbox(t, r)
			asked := tt.agg.asked
			usdc, _ := f.reg.TokenBySymbol(42161, "USDC")
			if asked.To.ID != 42161 || asked.ToToken != usdc || asked.ToAddress != liveReceiver.Hex() || asked.FromToken != req.FromToken ||
				asked.FromAmount.Cmp(req.FromAmount) != 0 || asked.FeeBps != 30 {
				t.Errorf("aggregator asked for %d %s to %s", asked.To.ID, asked.ToToken.Symbol, asked.ToAddress)
			}
			want := aggregatorRoute()
			mq := r.MultiStep
			if r.Shape != quote.ShapeMultiStep || mq == nil {
				t.Fatalf("shape %v", r.Shape)
			}
			s1 := mq.Steps[0].TransactionRequest
			if s1 == nil || s1.To != want.Tx.To || s1.Data != "0x4c478bbe01" || s1.Value != "0x0" || s1.ChainID != 42161 ||
				r.Tx.To != want.Tx.To || r.Tx.GasLimit != want.Tx.GasLimit {
				t.Errorf("step 1 %+v, want the aggregator's transaction %+v", s1, want.Tx)
			}
			// The deposit's registration holds step 1 to the aggregator's
			// own minimum out.
			if want.ToAmountMin == nil || r.Step1AmountMin == nil || r.Step1AmountMin.Cmp(want.ToAmountMin) != 0 {
				t.Errorf("step 1's minimum %v, want the aggregator's %v", r.Step1AmountMin, want.ToAmountMin)
			}
			if r.ApprovalAddress != want.ApprovalAddress || !strings.Contains(mq.Instructions.Step1, "Approve "+want.ApprovalAddress) {
				t.Errorf("approval %q, instructions %q", r.ApprovalAddress, mq.Instructions.Step1)
			}
			if !strings.Contains(mq.Steps[0].Description, "Uniswap V3") || !strings.Contains(mq.Steps[0].Description, liveReceiver.Hex()) {
				t.Errorf("step 1 description %q", mq.Steps[0].Description)
			}
			// Step 2's PulseX swap is priced on what step 1 delivers:
			// 2 out per unit in for the one hop USDCh → PLSX.
			if r.ToAmount.Cmp(new(big.Int).Mul(want.ToAmount, big.NewInt(2))) != 0 ||
				r.PreFeeToAmount.Cmp(new(big.Int).Mul(want.PreFeeToAmount, big.NewInt(2))) != 0 {
				t.Errorf("amounts %s (%s before the fee)", r.ToAmount, r.PreFeeToAmount)
			}
			// The aggregator lists the partner fee as it takes it; the
			// route does not list it twice.
			partner := 0
			for _, fc := range r.FeeCosts {
				if fc.Name == "Integrator Fee" || fc.Name == "Partner fee" {
					partner++
				}
			}
			if partner != 1 {
				t.Errorf("fee costs %+v list the partner fee %d times", r.FeeCosts, partner)
			}
		})
	}
}

func TestLiveSwapWithin369(t *testing.T) {
	tests := []struct {
		name       string
		fromSym    string
		toSym      string
		feeBps     int
		wantReason string
	}{
		{name: "ERC-20 to ERC-20 without a fee", fromSym: "HEX", toSym: "PLSX"},
		{name: "a partner fee", fromSym: "HEX", toSym: "PLSX", feeBps: 30, wantReason: "UNSUPPORTED_ROUTE"},
		{name: "native PLS", fromSym: "", toSym: "PLSX", wantReason: "UNSUPPORTED_ROUTE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLive(t, nil)
			req := f.req(t, 369, tt.fromSym, 369, tt.toSym, "1000")
			req.FeeBps = tt.feeBps
			legs := f.p.Legs(req)
			if len(legs) != 1 || legs[0] != LiveToolPulseX {
				t.Fatalf("legs %v", legs)
			}
			r, err := f.p.QuoteLeg(context.Background(), req, legs[0])
			if tt.wantReason != "" {
				var nr *quote.NoRoute
				if !errors.As(err, &nr) || nr.Reason != tt.wantReason {
					t.Fatalf("error %v, want %s", err, tt.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			noSandbox(t, r)
			if r.Tx.To != PulseXRouterAddress || r.ApprovalAddress != PulseXRouterAddress {
				t.Errorf("tx to %s, approval %s; want the PulseX router", r.Tx.To, r.ApprovalAddress)
			}
			m, args, err := Decode(r.Tx.Data)
			if err != nil || m != MethodSwapExactTokensForTokens {
				t.Fatalf("calldata %s, %v", m, err)
			}
			// HEX → USDCh → PLSX: two hops at 2 out per unit in.
			if args[0].(*big.Int).Cmp(req.FromAmount) != 0 || r.ToAmount.Cmp(new(big.Int).Mul(req.FromAmount, big.NewInt(4))) != 0 ||
				args[1].(*big.Int).Cmp(r.ToAmountMin) != 0 || len(args[2].([]common.Address)) != 3 ||
				args[4].(*big.Int).Int64() != req.Now.Add(quote.TTL).Unix() {
				t.Errorf("swap args %v, route out %s min %s", args, r.ToAmount, r.ToAmountMin)
			}
		})
	}
}

// TestLiveRefusals: what live mode cannot know is no route, with the
// reason; nothing is made up.
func TestLiveRefusals(t *testing.T) {
	tests := []struct {
		name       string
		from, to   uint64
		fromSym    string
		toSym      string
		wantReason string
		wantIn     string
	}{
		{"no sender contract configured", 1, 369, "USDC", "USDCh", "UNSUPPORTED_ROUTE", "no sender contract on chain 1"},
		{"no node for the source chain", 8453, 369, "USDC", "USDCh", "UNSUPPORTED_ROUTE", "no JSON-RPC node is configured for chain 8453"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLive(t, nil)
			_, err := f.p.QuoteLeg(context.Background(), f.req(t, tt.from, tt.fromSym, tt.to, tt.toSym, "100"), LiveToolWarp)
			var nr *quote.NoRoute
			if !errors.As(err, &nr) || nr.Reason != tt.wantReason || !strings.Contains(nr.Message, tt.wantIn) {
				t.Fatalf("error %v, want %s saying %q", err, tt.wantReason, tt.wantIn)
			}
		})
	}
}

// TestFeeExempt: only the direct outbound bridge, USDCh on 369 to a
// warp-route chain's canonical USDC, is fee-exempt.
func TestFeeExempt(t *testing.T) {
	f := newLive(t, nil)
	tests := []struct {
		from    uint64
		fromSym string
		to      uint64
		toSym   string
		want    bool
	}{
		{369, "USDCh", 42161, "USDC", true},
		{369, "USDCh", 1, "USDC", true},
		{369, "USDCh", 8453, "WETH", false},
		{369, "PLSX", 42161, "USDC", false},
		{369, "USDCh", 56, "USDC", false}, // BNB Chain's USDC is not on the warp route
		{42161, "USDC", 369, "USDCh", false},
		{369, "USDCh", 369, "PLSX", false},
		{42161, "USDC", 8453, "USDC", false},
	}
	for _, tt := range tests {
		req := f.req(t, tt.from, tt.fromSym, tt.to, tt.toSym, "10")
		if got := f.p.FeeExempt(req); got != tt.want {
			t.Errorf("%d %s → %d %s: FeeExempt = %v, want %v", tt.from, tt.fromSym, tt.to, tt.toSym, got, tt.want)
		}
	}
}
