package pulseroute

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// pulseDomain is chain 369's Hyperlane domain, which equals its chain id.
const pulseDomain = uint32(quote.PulseChainID)

// Provider is the "pulseroute" provider: every route to or from chain 369.
// Inbound routes from a warp-route chain are direct (Shape B) when they
// start from that chain's USDC and multi-step (Shape C) otherwise; outbound
// routes are the fee-free USDCh → USDC bridge (Shape B); swaps within 369
// go through PulseX (Shape A). It is immutable after New and safe for
// concurrent use.
type Provider struct {
	reg       *registry.Registry
	m         Market
	keys      Keys
	contracts *Contracts
	chain     ChainState
}

var _ quote.Provider = (*Provider)(nil)

// Option adjusts a Provider at construction.
type Option func(*Provider)

// WithContracts replaces the contract facts (Swapgate's own sender and
// inbound-receiver addresses are configuration).
func WithContracts(c *Contracts) Option { return func(p *Provider) { p.contracts = c } }

// New builds the provider on a market and the chain state it reads
// (Hyperlane gas payments, PulseX amounts). Without options it routes with
// DefaultContracts.
func New(reg *registry.Registry, m Market, chain ChainState, opts ...Option) (*Provider, error) {
	if reg == nil || m == nil || chain == nil {
		return nil, errors.New("pulseroute: registry, market and chain state are all required")
	}
	p := &Provider{reg: reg, m: m, keys: m.Keys(), chain: chain}
	for _, o := range opts {
		o(p)
	}
	if p.contracts == nil {
		p.contracts = DefaultContracts()
	}
	return p, nil
}

// FeeExempt reports the direct outbound USDCh → USDC bridge, which carries
// no fee by product decision and so needs no fee wallet: USDCh on chain 369
// to a warp-route chain's canonical USDC.
func (p *Provider) FeeExempt(req *quote.Request) bool {
	if req.From.ID != quote.PulseChainID || req.To.ID == quote.PulseChainID {
		return false
	}
	return common.IsHexAddress(req.FromToken.Address) && common.IsHexAddress(req.ToToken.Address) &&
		p.contracts.IsBridgeToken(req.From.ID, common.HexToAddress(req.FromToken.Address)) &&
		p.contracts.IsBridgeToken(req.To.ID, common.HexToAddress(req.ToToken.Address))
}

// Name is "pulseroute".
func (p *Provider) Name() string { return registry.ProviderPulseroute }

var (
	_ quote.ExactOutputQuoter = (*Provider)(nil)
	_ quote.RefundToQuoter    = (*Provider)(nil)
)

// RefundToUnsupported is "": pulseroute takes a refund address, though none
// of its routes refunds on the source chain (a direct route that cannot
// swap on 369 pays USDCh to the recipient there; a multi-step deposit whose
// bridge fails is left for an operator), so it is recorded and never used.
func (p *Provider) RefundToUnsupported(*quote.Request) string { return "" }

// ExactOutputUnsupported says which exact-output requests pulseroute cannot
// size. The direct routes invert exactly: the outbound USDCh → USDC bridge
// delivers its input one for one and takes no fee; the inbound USDC → USDCh
// bridge delivers its input less the partner fee, one for one
// (quote.GrossForNet); an inbound route that swaps on PulseX after the
// bridge reads the pools backwards (getAmountsIn, where the chain state
// offers it: AmountsInReader) for the bridged amount whose output, less the
// slippage, reaches toAmount, and then the input whose net of the fee is
// that amount. A multi-step route (step 1 an aggregator swap quoted from
// its input, step 2 a PulseX swap after a bridge) and a swap within 369
// are left out of the race with this reason. Pairs pulseroute refuses
// anyway are raced, so that the leg's own refusal explains itself.
func (p *Provider) ExactOutputUnsupported(req *quote.Request) string {
	from, to := req.From.ID, req.To.ID
	switch {
	case from == quote.PulseChainID && to == quote.PulseChainID:
		return "pulseroute cannot size an exact output on chain 369: its swaps there are quoted from their input only"
	case to == quote.PulseChainID:
		w, ok := p.contracts.WarpRoute(from)
		if !ok || w.Synthetic {
			return ""
		}
		if !isToken(req.FromToken, w.Token) {
			return "pulseroute cannot size an exact output on a multi-step route (step 1 is an aggregator swap quoted from its input); start from USDC on a warp-route chain for a direct route"
		}
		if _, ok := p.chain.(AmountsInReader); !ok && !isToken(req.ToToken, p.contracts.USDCh().Token) {
			return "pulseroute cannot size an exact output through PulseX here: its chain state does not read getAmountsIn"
		}
	}
	return ""
}

// exactInboundInput answers an exact-output request on the direct inbound
// route with the input it needs. Into USDCh the bridge is one for one
// (exactDirectInput). Into another token the bridged USDCh is swapped on
// PulseX and the route's ToAmountMin is that swap's output less the
// slippage: the output needed is the least whose quote.MinOut reaches
// toAmount (quote.GrossForMin); getAmountsIn gives the bridged amount that
// buys it, checked forward with getAmountsOut (and raised by a base unit
// while short, which the UniswapV2 formulas never need: getAmountsIn
// rounds up), and the input is the least whose net of the partner fee is
// that bridged amount. A request for a given input is returned as it is.
//
// The reads that verified the input price the route (sizedSwap): a live
// node answers at its latest block, and a pool read again after sizing may
// have moved, so an output read again could fall short of what was
// checked. The forward check reads the bridged amount's output beside the
// interchain gas payment, and then, with a partner fee, the whole input's
// output (the route's PreFeeToAmount): as many round trips as pricing
// after sizing took, one fewer without a fee.
func (p *Provider) exactInboundInput(ctx context.Context, req *quote.Request, t *tools.Tool) (*quote.Request, *sizedSwap, error) {
	usdch := p.contracts.USDCh().Token
	if !req.ExactOutput() || isToken(req.ToToken, usdch) {
		return exactDirectInput(req, req.FeeBps), nil, nil
	}
	reader, ok := p.chain.(AmountsInReader)
	if !ok {
		return nil, nil, noRoute(t.Key, quote.ReasonExactOutputUnsupported, "%s", p.ExactOutputUnsupported(req))
	}
	path := p.pulsePath(usdch, p.pulseToken(req.ToToken))
	need := quote.GrossForMin(req.ToAmount, req.Slippage)
	ins, err := reader.AmountsIn(ctx, need, path)
	if err != nil {
		if errors.Is(err, ErrNoPair) {
			return nil, nil, noRoute(t.Key, pricing.ReasonInsufficientLiq, "PulseX cannot deliver %s %s on chain 369 along this path", req.ToAmount, req.ToToken.Symbol)
		}
		if errors.Is(err, ErrNoNode) {
			return nil, nil, noRoute(t.Key, pricing.ReasonUnsupportedRoute, "no JSON-RPC node is configured for chain %d, whose PulseX prices this route", quote.PulseChainID)
		}
		return nil, nil, chainStateError("PulseX getAmountsIn", err)
	}
	bridged := new(big.Int).Set(ins[0])
	for range 3 {
		var out, payment *big.Int
		err := readAll(
			func() (err error) { out, err = p.amountsOut(ctx, t.Key, bridged, path); return err },
			func() (err error) { payment, err = p.gasPayment(ctx, t.Key, req.From.ID, pulseDomain); return err })
		if err != nil {
			return nil, nil, err
		}
		if out.Cmp(need) < 0 {
			bridged.Add(bridged, big.NewInt(1))
			continue
		}
		amount := quote.GrossForNet(bridged, req.FeeBps)
		preFee := out
		if amount.Cmp(bridged) != 0 {
			if preFee, err = p.amountsOut(ctx, t.Key, amount, path); err != nil {
				return nil, nil, err
			}
			// Read after out, from a pool that may have moved since: the
			// partner fee it values (preFee − out) is never negative.
			if preFee.Cmp(out) < 0 {
				preFee = out
			}
		}
		return req.WithFromAmount(amount), &sizedSwap{preFee: preFee, out: out, payment: payment}, nil
	}
	return nil, nil, chainStateError("PulseX getAmountsIn", fmt.Errorf("the input it gives for %s does not buy it", need))
}

// sizedSwap is what sizing a direct inbound route into a PulseX token read
// and verified: the PulseX output of the whole input (preFee) and of the
// bridged amount (out, whose quote.MinOut reaches toAmount), and the warp
// route's interchain gas payment. directInbound prices the route from it
// instead of reading the chain again.
type sizedSwap struct {
	preFee, out, payment *big.Int
}

// exactDirectInput answers an exact-output request on a direct route
// without a swap with the input it needs: the least input whose output
// after the partner fee (the inbound bridge's; the outbound one takes none)
// is toAmount. These routes deliver one for one without slippage, so their
// ToAmountMin is that output.
func exactDirectInput(req *quote.Request, feeBps int) *quote.Request {
	if !req.ExactOutput() {
		return req
	}
	return req.WithFromAmount(quote.GrossForNet(req.ToAmount, feeBps))
}

// Legs is the PulseX tool within chain 369 and the warp tool for any pair
// across 369.
// The warp leg is offered even for pairs it cannot serve (369 to a chain
// without a warp route, or anything but USDCh out of 369), so that QuoteLeg
// answers with a reasoned no-route instead of a silent empty list.
func (p *Provider) Legs(req *quote.Request) []string {
	from, to := req.From.ID, req.To.ID
	if from != quote.PulseChainID && to != quote.PulseChainID {
		return nil
	}
	key := p.keys.Warp
	if from == to {
		if strings.EqualFold(req.FromToken.Address, req.ToToken.Address) {
			return nil
		}
		key = p.keys.PulseX
	}
	if !req.ToolAllowed(key) {
		return nil
	}
	return []string{key}
}

// QuoteLeg prices one pulseroute leg in the variant the request calls for.
func (p *Provider) QuoteLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	t, ok := p.m.Tool(leg)
	if !ok || t.Provider != provider {
		return nil, noRoute(leg, pricing.ReasonUnsupportedRoute, "%q is not a pulseroute tool", leg)
	}
	if err := p.m.Inject(ctx, req.ID, t); err != nil {
		return nil, err
	}
	if req.ExactOutput() {
		// The engine leaves such a request out of the race; a caller that
		// asks anyway gets the reason, not a route priced from no input.
		if why := p.ExactOutputUnsupported(req); why != "" {
			return nil, noRoute(leg, quote.ReasonExactOutputUnsupported, "%s", why)
		}
	}
	from, to := req.From.ID, req.To.ID
	switch {
	case from == quote.PulseChainID && to == quote.PulseChainID:
		if leg != p.keys.PulseX {
			return nil, noRoute(leg, pricing.ReasonUnsupportedRoute, "swaps within chain 369 go through %s", p.keys.PulseX)
		}
		return p.swapRoute(ctx, req, t)
	case leg != p.keys.Warp:
		return nil, noRoute(leg, pricing.ReasonUnsupportedRoute, "routes across chain 369 go through %s", p.keys.Warp)
	case to == quote.PulseChainID:
		w, ok := p.contracts.WarpRoute(from)
		if !ok || w.Synthetic {
			return nil, noRoute(leg, pricing.ReasonUnsupportedRoute,
				"chain %d has no USDC warp route to chain 369; inbound routes start on chains %s", from, p.senderChainList())
		}
		if isToken(req.FromToken, w.Token) {
			in, sized, err := p.exactInboundInput(ctx, req, t)
			if err != nil {
				return nil, err
			}
			return p.directInbound(ctx, in, t, w, sized)
		}
		return p.multiStepInbound(ctx, req, t, w)
	default:
		return p.directOutbound(ctx, exactDirectInput(req, 0), t)
	}
}

// noRoute is the provider's reasoned refusal of a leg.
func noRoute(tool, reason, format string, args ...any) *quote.NoRoute {
	return &quote.NoRoute{Provider: registry.ProviderPulseroute, Tool: tool, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// senderChainList names the warp-route chains, for refusals.
func (p *Provider) senderChainList() string {
	ids := p.contracts.SenderChains()
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

// isToken reports whether a registry token is the given contract.
func isToken(t *registry.Token, addr common.Address) bool {
	return !t.IsNative() && common.IsHexAddress(t.Address) && common.HexToAddress(t.Address) == addr
}

// pulseToken is a 369 token's address in PulseX paths: WPLS for native PLS.
func (p *Provider) pulseToken(t *registry.Token) common.Address {
	if t.IsNative() {
		return p.contracts.PulseX().WPLS
	}
	return common.HexToAddress(t.Address)
}

// pulsePath is the PulseX path between two 369 tokens: direct when either is
// USDCh, through USDCh otherwise (every pool is paired with it).
func (p *Provider) pulsePath(from, to common.Address) []common.Address {
	usdch := p.contracts.USDCh().Token
	if from == usdch || to == usdch {
		return []common.Address{from, to}
	}
	return []common.Address{from, usdch, to}
}

// amountsOut reads PulseX and keeps the last amount; a missing pair is a
// reasoned no-route, any other failure a chain-state error.
func (p *Provider) amountsOut(ctx context.Context, tool string, amount *big.Int, path []common.Address) (*big.Int, error) {
	if amount.Sign() == 0 {
		return new(big.Int), nil
	}
	out, err := p.chain.AmountsOut(ctx, amount, path)
	if err != nil {
		if errors.Is(err, ErrNoPair) {
			return nil, noRoute(tool, pricing.ReasonNoPossibleRoute, "PulseX has no pool for this pair on chain 369")
		}
		if errors.Is(err, ErrNoNode) {
			return nil, noRoute(tool, pricing.ReasonUnsupportedRoute, "no JSON-RPC node is configured for chain %d, whose PulseX prices this route", quote.PulseChainID)
		}
		return nil, chainStateError("PulseX getAmountsOut", err)
	}
	last := out[len(out)-1]
	if last.Sign() <= 0 {
		return nil, noRoute(tool, pricing.ReasonInsufficientLiq, "PulseX returns nothing for this amount")
	}
	return last, nil
}

// pulseXOut prices a route's PulseX leg for the whole input (preFee) and for
// the input after the partner fee (net), both read at once, or once when the
// partner takes no fee; the route's other reads (extra: the interchain gas
// payment) run beside them.
func (p *Provider) pulseXOut(ctx context.Context, tool string, whole, net *big.Int, path []common.Address, extra ...func() error) (preFee, out *big.Int, err error) {
	reads := []func() error{func() (err error) { preFee, err = p.amountsOut(ctx, tool, whole, path); return err }}
	same := whole.Cmp(net) == 0
	if !same {
		reads = append(reads, func() (err error) { out, err = p.amountsOut(ctx, tool, net, path); return err })
	}
	if err := readAll(append(reads, extra...)...); err != nil {
		return nil, nil, err
	}
	if same {
		out = new(big.Int).Set(preFee)
	}
	return preFee, out, nil
}

// readAll runs a route's chain-state reads at once, so that the route costs
// one node round trip rather than one per read, and returns the first
// failure in the order the reads are given, as reading them one after
// another would. Each read ends with the race's context.
func readAll(reads ...func() error) error {
	if len(reads) == 1 {
		return reads[0]()
	}
	errs := make([]error, len(reads))
	var wg sync.WaitGroup
	for i, read := range reads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = read()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// gasPayment reads the warp route's interchain gas payment.
func (p *Provider) gasPayment(ctx context.Context, tool string, chainID uint64, destination uint32) (*big.Int, error) {
	v, err := p.chain.QuoteGasPayment(ctx, chainID, destination)
	if err != nil {
		if errors.Is(err, ErrNoNode) {
			return nil, noRoute(tool, pricing.ReasonUnsupportedRoute, "no JSON-RPC node is configured for chain %d, whose warp route prices this route", chainID)
		}
		return nil, chainStateError("warp route quoteGasPayment", err)
	}
	return v, nil
}

// chainStateError keeps an *apierr.Error from an RPC-backed reader (an
// RPC_FAILURE) and makes any other failure one.
func chainStateError(what string, err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return err
	}
	return apierr.New(apierr.RPCFailure, what+" failed").Wrap(err)
}

// messagingCost lists the warp route's interchain gas payment as a FEE gas
// cost in the source chain's native coin.
func (p *Provider) messagingCost(c *registry.Chain, payment *big.Int) quote.GasCost {
	native, _ := p.reg.Token(c.ID, "native")
	g := quote.GasCost{Type: "FEE", Amount: payment, Token: native, AmountUSD: quote.NoUSD()}
	if native != nil {
		if price, ok := p.m.TokenPrice(native); ok {
			g.AmountUSD = pricing.USDOf(payment, native, price)
		}
	}
	return g
}

// evmRecipient parses the request's recipient, which every pulseroute chain
// takes in EVM form.
func evmRecipient(req *quote.Request) (common.Address, error) {
	if !common.IsHexAddress(req.ToAddress) {
		return common.Address{}, apierr.Param("toAddress", "recipient on chain "+fmt.Sprint(req.To.ID)+" must be an EVM address")
	}
	return common.HexToAddress(req.ToAddress), nil
}

// usdOrUnknown values an amount at the token's price, quote.NoUSD when it
// has none (never observed, or too old): pulseroute amounts come from chain
// state, so a missing price only leaves the USD figure out.
func (p *Provider) usdOrUnknown(amount *big.Int, t *registry.Token) float64 {
	if price, ok := p.m.TokenPrice(t); ok {
		return pricing.USDOf(amount, t, price)
	}
	return quote.NoUSD()
}
