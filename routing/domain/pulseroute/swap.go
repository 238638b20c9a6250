package pulseroute

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// swapRoute is a swap within chain 369 on sbx-pulsex, in Shape A. The
// output is PulseX's (ChainState.AmountsOut), so it agrees with what the
// inbound routes' final leg would give; the user calls the sandbox router on
// 369, which takes the partner fee from the output like every other router
// route.
func (p *Provider) swapRoute(ctx context.Context, req *quote.Request, t *tools.Tool) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	pin, ok := p.m.TokenPrice(req.FromToken)
	if !ok {
		return nil, noRoute(t.Key, sandbox.ReasonNoPossibleRoute, "no USD price for %s on chain %d", req.FromToken.Symbol, req.From.ID)
	}
	inUSD := sandbox.USDOf(req.FromAmount, req.FromToken, pin)
	if err := p.m.CheckFloor(provider, req, t, inUSD); err != nil {
		return nil, err
	}
	in, out := p.pulseToken(req.FromToken), p.pulseToken(req.ToToken)
	if in == out {
		return nil, noRoute(t.Key, sandbox.ReasonNoPossibleRoute, "PLS and WPLS are wrapped, not swapped")
	}
	path := p.pulsePath(in, out)
	preFee, err := p.amountsOut(ctx, t.Key, req.FromAmount, path)
	if err != nil {
		return nil, err
	}
	erc20Source := !req.FromToken.IsNative()
	g, err := p.m.GasCosts(provider, t.Key, req.From, t.GasUnits, erc20Source)
	if err != nil {
		return nil, err
	}
	bps := t.FeeBps * (len(path) - 1)
	r := &quote.Route{
		Provider:      provider,
		Tool:          t.Key,
		ToolName:      t.Name,
		StepType:      "swap",
		FromAmount:    req.FromAmount,
		FromAmountUSD: inUSD,
		GasCosts:      g.Costs,
		FeeCosts: []quote.FeeCost{{
			Name:        t.Name + " fee",
			Description: fmt.Sprintf("PulseX pool fee, %d bps per hop over %d hops", t.FeeBps, len(path)-1),
			Amount:      sandbox.BpsOf(req.FromAmount, bps),
			AmountUSD:   inUSD * float64(bps) / 1e4,
			Percentage:  float64(bps) / 1e4,
			Token:       req.FromToken,
			Included:    true,
		}},
		ExecutionDuration: sandbox.BlockSeconds(req.From),
	}
	outPrice, ok := p.m.TokenPrice(req.ToToken)
	if !ok {
		outPrice = quote.NoUSD() // the output's USD figures are left out
	}
	sandbox.ApplyPartnerFee(r, req, preFee, outPrice)
	if r.ToAmountUSD > 0 {
		if err := sandbox.CheckGas(provider, t.Key, r); err != nil {
			return nil, err
		}
	}
	if erc20Source {
		r.ApprovalAddress = sandbox.RouterAddress(req.From.ID).Hex()
	}
	if req.Indicative {
		return r, nil
	}
	recipient, err := evmRecipient(req)
	if err != nil {
		return nil, err
	}
	fromTok, toTok := common.Address{}, common.Address{}
	if erc20Source {
		fromTok = in
	}
	if !req.ToToken.IsNative() {
		toTok = out
	}
	data, err := p.m.SwapCall(req, fromTok, toTok, r.ToAmountMin, r.PreFeeToAmount, recipient)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the PulseX swap").Wrap(err)
	}
	r.Tx = &quote.TxRequest{
		To: sandbox.RouterAddress(req.From.ID).Hex(), From: req.FromAddress, Data: data, Value: sandbox.NativeValue(req),
		ChainID: req.From.ID, GasLimit: g.SendLimit, GasPrice: g.Price,
	}
	return r, nil
}
