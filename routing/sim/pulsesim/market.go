package pulsesim

import (
	"context"
	"errors"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// Tool keys of the sandbox pulseroute provider and of the sandbox DEX its
// multi-step routes swap on in step 1.
const (
	ToolWarp   = "sbx-warp"
	ToolPulseX = "sbx-pulsex"
	ToolStep1  = "sbx-uniflow"
)

// Market is the sandbox market as pulseroute's Market: prices, gas, amount
// floors, tool fees and injected tool behaviour are the sandbox market's,
// so that routes through 369 are priced like every other sandbox route and
// rank fairly against them; step 1 of a multi-step quote is a sandbox
// router swap priced on sbx-uniflow, and swaps within 369 call the sandbox
// router there. It is immutable and safe for concurrent use.
type Market struct {
	m *sandbox.Market
}

var _ pulseroute.Market = (*Market)(nil)

// NewMarket wraps the sandbox market.
func NewMarket(m *sandbox.Market) *Market { return &Market{m: m} }

// Keys are sbx-warp and sbx-pulsex.
func (s *Market) Keys() pulseroute.Keys { return pulseroute.Keys{Warp: ToolWarp, PulseX: ToolPulseX} }

// Tool looks a tool up in the sandbox catalog.
func (s *Market) Tool(key string) (*tools.Tool, bool) { return s.m.Tool(key) }

// Inject plays the tool's configured sandbox behaviour.
func (s *Market) Inject(ctx context.Context, quoteID string, t *tools.Tool) error {
	return s.m.Inject(ctx, quoteID, t)
}

// TokenPrice is the sandbox market's price.
func (s *Market) TokenPrice(t *registry.Token) (float64, bool) { return s.m.TokenPrice(t) }

// InputUSD values the input at the market's price and keeps the tool's
// floor; with priced set, an input without a price is no route.
func (s *Market) InputUSD(provider string, req *quote.Request, t *tools.Tool, priced bool) (float64, error) {
	var inUSD float64
	if pin, ok := s.m.TokenPrice(req.FromToken); ok {
		inUSD = pricing.USDOf(req.FromAmount, req.FromToken, pin)
	} else if priced {
		return 0, pricing.NoRoute(provider, t.Key, pricing.ReasonNoPossibleRoute, "no USD price for %s on chain %d", req.FromToken.Symbol, req.From.ID)
	}
	if err := s.m.CheckFloor(provider, req, t, inUSD); err != nil {
		return 0, err
	}
	return inUSD, nil
}

// GasCosts is the sandbox market's gas.
func (s *Market) GasCosts(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (pricing.GasQuote, error) {
	return s.m.GasCosts(provider, tool, c, sendGas, approve)
}

// ToolFeeCosts lists the sandbox tool's fee, zero included.
func (s *Market) ToolFeeCosts(t *tools.Tool, req *quote.Request, inUSD float64) []quote.FeeCost {
	return []quote.FeeCost{s.m.ToolFeeCost(t, req, inUSD)}
}

// SwapToUSDC prices step 1 on sbx-uniflow as the aggregator would (keeping
// the warp tool's floor) and builds the sandbox router's swap into USDC for
// the inbound receiver, settling at the pre-fee output, with the partner
// fee taken by the router.
func (s *Market) SwapToUSDC(_ context.Context, req *quote.Request, warp *tools.Tool, usdc *registry.Token, receiver common.Address) (*pulseroute.Step1, error) {
	const provider = registry.ProviderPulseroute
	dex, ok := s.m.Tool(ToolStep1)
	if !ok || !dex.Supports(req.From.ID) {
		return nil, pricing.NoRoute(provider, warp.Key, pricing.ReasonNoPossibleRoute, "no sandbox DEX on chain %d for step 1", req.From.ID)
	}
	step1 := *req
	step1.To, step1.ToToken = req.From, usdc
	inUSD, preFee, err := s.m.PriceSwap(provider, &step1, dex)
	if err != nil {
		return nil, err
	}
	if err := s.m.CheckFloor(provider, req, warp, inUSD); err != nil {
		return nil, err
	}
	net, _ := quote.SplitFee(preFee, req.FeeBps)
	erc20Source := !req.FromToken.IsNative()
	g, err := s.m.GasCosts(provider, warp.Key, req.From, dex.GasUnits, erc20Source)
	if err != nil {
		return nil, err
	}
	router := sandbox.RouterAddress(req.From.ID)
	st := &pulseroute.Step1{
		InUSD: inUSD, PreFee: preFee, Net: net, NetMin: quote.MinOut(net, req.Slippage),
		GasCosts: g.Costs, FeeCosts: []quote.FeeCost{s.m.ToolFeeCost(dex, req, inUSD)},
		Duration: pricing.BlockSeconds(req.From),
	}
	if erc20Source {
		st.ApprovalAddress = router.Hex()
	}
	if req.Indicative {
		return st, nil
	}
	from, err := sandbox.EVMAddress(req.FromToken.Address)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build step 1").Wrap(err)
	}
	if !common.IsHexAddress(usdc.Address) {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build step 1").Wrap(errors.New("USDC is not an EVM token"))
	}
	data, err := s.m.SwapCall(req, from, common.HexToAddress(usdc.Address), quote.MinOut(net, req.Slippage), preFee, receiver)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build step 1").Wrap(err)
	}
	st.Tx = &quote.TxRequest{
		To: router.Hex(), From: req.FromAddress, Data: data, Value: sandbox.NativeValue(req),
		ChainID: req.From.ID, GasLimit: g.SendLimit, GasPrice: g.Price,
	}
	return st, nil
}

// CheckSwap369 accepts every swap: the sandbox router takes native PLS and
// the partner fee alike.
func (s *Market) CheckSwap369(*quote.Request, *tools.Tool) error { return nil }

// Swap369 is the sandbox router's swap on chain 369.
func (s *Market) Swap369(req *quote.Request, sw pulseroute.Swap369) (quote.TxRequest, error) {
	data, err := s.m.SwapCall(req, sw.From, sw.To, sw.MinOut, sw.PreFee, sw.Recipient)
	if err != nil {
		return quote.TxRequest{}, err
	}
	return quote.TxRequest{
		To: sandbox.RouterAddress(req.From.ID).Hex(), From: req.FromAddress, Data: data, Value: sandbox.NativeValue(req),
		ChainID: req.From.ID, GasLimit: sw.Gas.SendLimit, GasPrice: sw.Gas.Price,
	}, nil
}

// Spender369 is the sandbox router on chain 369.
func (s *Market) Spender369() common.Address { return sandbox.RouterAddress(quote.PulseChainID) }

// NewProvider builds the sandbox pulseroute provider on the sandbox market,
// reading chain state from chain (the deterministic SandboxChain of the
// registry's reference prices when nil).
func NewProvider(reg *registry.Registry, m *sandbox.Market, chain pulseroute.ChainState, opts ...pulseroute.Option) (*pulseroute.Provider, error) {
	if chain == nil {
		sc, err := NewSandboxChain(reg)
		if err != nil {
			return nil, err
		}
		chain = sc
	}
	return pulseroute.New(reg, NewMarket(m), chain, opts...)
}
