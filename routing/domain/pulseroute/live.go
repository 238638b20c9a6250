package pulseroute

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Tool keys of the live provider. Step 1 of a multi-step quote is named
// after the aggregator's own tool.
const (
	LiveToolWarp   = "hyperlane-warp"
	LiveToolPulseX = "pulsex"
)

// Aggregator is what the live provider needs of the aggregator (the LI.FI
// adapter's quote.Provider): a quote of one swap with its transaction. The
// leg is the aggregator's to choose, so it is asked with "".
type Aggregator interface {
	QuoteLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error)
}

// LiveConfig is what the live market is built from.
type LiveConfig struct {
	// Registry knows the chains' native coins.
	Registry *registry.Registry
	// Price is the reference data's USD price of a token, keyed by chain
	// and lower-case address; a token without one gets no USD figure.
	Price func(chainID uint64, token string) (float64, bool)
	// GasPrice is the gas oracle's standard price on a chain, in wei; a
	// chain without one gets no gas cost figures (its transactions keep
	// their gas limit).
	GasPrice func(chainID uint64) (*big.Int, bool)
	// Aggregator quotes step 1 of multi-step routes; nil leaves the
	// provider without multi-step routes.
	Aggregator Aggregator
}

// LiveMarket is the live provider's Market: figures from the reference
// data (USD prices) and the gas oracle (gas prices), no amount floor (a
// dust route is refused when its gas costs more than it delivers), no tool
// fees of its own (the warp route's only cost is the interchain gas
// payment, listed with the gas), no injected behaviour. Step 1 of a
// multi-step quote is the aggregator's quote from the source token to the
// chain's USDC with the inbound receiver as recipient, whose transaction
// and approval address become step 1's as they are; swaps within chain 369
// call the PulseX router's swapExactTokensForTokens. It is immutable and
// safe for concurrent use.
type LiveMarket struct {
	cfg    LiveConfig
	warp   tools.Tool
	pulseX tools.Tool
	router common.Address
}

var _ Market = (*LiveMarket)(nil)

// NewLiveMarket builds the live market.
func NewLiveMarket(cfg LiveConfig) (*LiveMarket, error) {
	if cfg.Registry == nil || cfg.Price == nil || cfg.GasPrice == nil {
		return nil, errors.New("pulseroute: the live market needs a registry, prices and gas prices")
	}
	ts := LiveTools()
	return &LiveMarket{cfg: cfg, warp: *ts[0], pulseX: *ts[1], router: common.HexToAddress(PulseXRouterAddress)}, nil
}

// LiveTools are the live provider's tools, the warp route and PulseX, for
// the tool catalog of live mode. Gas units and durations are estimates of
// the contracts' work: bridgeAndSwap or transferRemote with the mailbox
// dispatch and a Hyperlane delivery of a few minutes; a two-hop PulseX swap
// confirmed in a block or two.
func LiveTools() []*tools.Tool {
	return []*tools.Tool{
		{Key: LiveToolWarp, Name: "Hyperlane USDC Warp Route", Type: tools.TypeBridge,
			Provider: registry.ProviderPulseroute, DurationSec: 600, GasUnits: 250_000},
		{Key: LiveToolPulseX, Name: "PulseX v2", Type: tools.TypeDEX,
			Provider: registry.ProviderPulseroute, FeeBps: PulseXFeeBps, DurationSec: 20, GasUnits: 160_000},
	}
}

// NewLive builds the live provider: the live market over cfg, chain state
// read from the real contracts (chain), and contracts, whose Swapgate
// addresses are only those configured (NewLiveContracts).
func NewLive(cfg LiveConfig, chain ChainState, contracts *Contracts) (*Provider, error) {
	m, err := NewLiveMarket(cfg)
	if err != nil {
		return nil, err
	}
	return New(cfg.Registry, m, chain, WithContracts(contracts))
}

// Keys are hyperlane-warp and pulsex.
func (l *LiveMarket) Keys() Keys { return Keys{Warp: LiveToolWarp, PulseX: LiveToolPulseX} }

// Tool returns one of the two live tools.
func (l *LiveMarket) Tool(key string) (*tools.Tool, bool) {
	switch key {
	case LiveToolWarp:
		t := l.warp
		return &t, true
	case LiveToolPulseX:
		t := l.pulseX
		return &t, true
	}
	return nil, false
}

// Inject does nothing: live tools answer as they answer.
func (l *LiveMarket) Inject(context.Context, string, *tools.Tool) error { return nil }

// TokenPrice is the reference data's price.
func (l *LiveMarket) TokenPrice(t *registry.Token) (float64, bool) {
	p, ok := l.cfg.Price(t.ChainID, strings.ToLower(t.Address))
	if !ok || !(p > 0) {
		return 0, false
	}
	return p, true
}

// usdOrUnknown values an amount, quote.NoUSD without a fresh price.
func (l *LiveMarket) usdOrUnknown(amount *big.Int, t *registry.Token) float64 {
	if p, ok := l.TokenPrice(t); ok {
		return pricing.USDOf(amount, t, p)
	}
	return quote.NoUSD()
}

// InputUSD values the input at the reference price, quote.NoUSD without
// one; live routes keep no floor and need no price.
func (l *LiveMarket) InputUSD(_ string, req *quote.Request, _ *tools.Tool, _ bool) (float64, error) {
	return l.usdOrUnknown(req.FromAmount, req.FromToken), nil
}

// GasCosts prices the transaction at the gas oracle's price, valued at the
// native coin's reference price; without an oracle price there are no cost
// figures, and the transaction keeps its limit.
func (l *LiveMarket) GasCosts(_, _ string, c *registry.Chain, sendGas uint64, approve bool) (pricing.GasQuote, error) {
	price, ok := l.cfg.GasPrice(c.ID)
	if !ok || price == nil || price.Sign() <= 0 {
		return pricing.GasQuote{SendLimit: pricing.WithMargin(sendGas)}, nil
	}
	native, ok := l.cfg.Registry.Token(c.ID, "native")
	if !ok {
		return pricing.GasQuote{SendLimit: pricing.WithMargin(sendGas)}, nil
	}
	np, ok := l.TokenPrice(native)
	if !ok {
		np = quote.NoUSD() // the costs' USD figures are left out
	}
	g := pricing.PlanGas(price, native, np, sendGas, approve)
	return g.Quote(), nil
}

// ToolFeeCosts lists nothing: the live tools charge no fee of their own
// (PulseX's pool fee is listed with the swap, the warp route's cost is the
// interchain gas payment).
func (l *LiveMarket) ToolFeeCosts(*tools.Tool, *quote.Request, float64) []quote.FeeCost { return nil }

// SwapToUSDC asks the aggregator for the swap from the source token to the
// chain's USDC with the inbound receiver as toAddress. The request's allow
// list and preferred tool name pulseroute's tools, not the aggregator's, so
// they are not passed on; its deny list is. No aggregator route is no
// multi-step route, with the aggregator's reason: step 1 is never made up.
func (l *LiveMarket) SwapToUSDC(ctx context.Context, req *quote.Request, warp *tools.Tool, usdc *registry.Token, receiver common.Address) (*Step1, error) {
	if l.cfg.Aggregator == nil {
		return nil, noRoute(warp.Key, pricing.ReasonUnsupportedRoute,
			"multi-step routes take step 1 from the aggregator, which is not configured")
	}
	step1 := *req
	step1.To, step1.ToToken, step1.ToAddress = req.From, usdc, receiver.Hex()
	step1.Dry = false
	step1.AllowTools, step1.PreferredTool = nil, ""
	r, err := l.cfg.Aggregator.QuoteLeg(ctx, &step1, "")
	if err != nil {
		var nr *quote.NoRoute
		if errors.As(err, &nr) {
			return nil, noRoute(warp.Key, pricing.ReasonNoPossibleRoute,
				"the aggregator has no route from %s to USDC on chain %d for step 1: %s", req.FromToken.Symbol, req.From.ID, nr.Message)
		}
		return nil, fmt.Errorf("pulseroute step 1 from the aggregator: %w", err)
	}
	if err := checkStep1(req, r, usdc); err != nil {
		return nil, apierr.New(apierr.UpstreamError, "the aggregator's step 1 does not fit the route").Wrap(err)
	}
	tool := r.ToolName
	if tool == "" {
		tool = r.Tool
	}
	return &Step1{
		InUSD: l.usdOrUnknown(req.FromAmount, req.FromToken), PreFee: r.PreFeeToAmount, Net: r.ToAmount, NetMin: r.ToAmountMin,
		GasCosts: r.GasCosts, FeeCosts: r.FeeCosts, ListsPartnerFee: req.FeeBps > 0,
		Duration: r.ExecutionDuration, ApprovalAddress: r.ApprovalAddress, ToolName: tool, Tx: r.Tx,
	}, nil
}

// checkStep1 refuses an aggregator route that cannot be step 1: amounts
// missing, or a transaction (required unless indicative) on another chain
// or without a target.
func checkStep1(req *quote.Request, r *quote.Route, usdc *registry.Token) error {
	if r.ToAmount == nil || r.ToAmount.Sign() <= 0 || r.PreFeeToAmount == nil || r.PreFeeToAmount.Cmp(r.ToAmount) < 0 {
		return fmt.Errorf("step 1 delivers %v %s (%v before the fee)", r.ToAmount, usdc.Symbol, r.PreFeeToAmount)
	}
	if req.Indicative {
		return nil
	}
	switch {
	case r.Tx == nil:
		return errors.New("step 1 came without a transaction")
	case r.Tx.ChainID != req.From.ID:
		return fmt.Errorf("step 1's transaction is on chain %d, not %d", r.Tx.ChainID, req.From.ID)
	case !common.IsHexAddress(r.Tx.To):
		return fmt.Errorf("step 1's transaction goes to %q", r.Tx.To)
	}
	return nil
}

// CheckSwap369 refuses what the PulseX router's swapExactTokensForTokens
// cannot do: native PLS on either side (WPLS is the token to use), and a
// partner fee, which the router has no way to take.
func (l *LiveMarket) CheckSwap369(req *quote.Request, t *tools.Tool) error {
	if req.FromToken.IsNative() || req.ToToken.IsNative() {
		return noRoute(t.Key, pricing.ReasonUnsupportedRoute,
			"swaps within chain 369 call PulseX's swapExactTokensForTokens, which swaps ERC-20 tokens only; use WPLS (%s) for PLS", WPLSAddress)
	}
	if req.FeeBps > 0 {
		return noRoute(t.Key, pricing.ReasonUnsupportedRoute,
			"swaps within chain 369 call the PulseX router, which cannot take a partner fee; they are quoted only without one")
	}
	return nil
}

// Swap369 is swapExactTokensForTokens on the PulseX router, to the
// recipient, valid until the quote expires.
func (l *LiveMarket) Swap369(req *quote.Request, s Swap369) (quote.TxRequest, error) {
	deadline := big.NewInt(req.Now.Add(quote.TTL).Unix())
	data, err := SwapExactTokensForTokens(req.FromAmount, s.MinOut, s.Path, s.Recipient, deadline)
	if err != nil {
		return quote.TxRequest{}, err
	}
	return quote.TxRequest{
		To: l.router.Hex(), From: req.FromAddress, Data: data, Value: new(big.Int),
		ChainID: req.From.ID, GasLimit: s.Gas.SendLimit, GasPrice: s.Gas.Price,
	}, nil
}

// Spender369 is the PulseX router.
func (l *LiveMarket) Spender369() common.Address { return l.router }
