package pulseroute

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// swapRoute is a swap within chain 369 on the PulseX tool, in Shape A. The
// output is PulseX's (ChainState.AmountsOut), so it agrees with what the
// inbound routes' final leg would give; the market builds the transaction
// (Market.Swap369: the sandbox router on 369, which takes the partner fee
// from the output like every other router route, or the real PulseX
// router).
func (p *Provider) swapRoute(ctx context.Context, req *quote.Request, t *tools.Tool) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	if err := p.m.CheckSwap369(req, t); err != nil {
		return nil, err
	}
	inUSD, err := p.m.InputUSD(provider, req, t, true)
	if err != nil {
		return nil, err
	}
	in, out := p.pulseToken(req.FromToken), p.pulseToken(req.ToToken)
	if in == out {
		return nil, noRoute(t.Key, pricing.ReasonNoPossibleRoute, "PLS and WPLS are wrapped, not swapped")
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
			Amount:      pricing.BpsOf(req.FromAmount, bps),
			AmountUSD:   inUSD * float64(bps) / 1e4,
			Percentage:  float64(bps) / 1e4,
			Token:       req.FromToken,
			Included:    true,
		}},
		ExecutionDuration: pricing.BlockSeconds(req.From),
	}
	outPrice, ok := p.m.TokenPrice(req.ToToken)
	if !ok {
		outPrice = quote.NoUSD() // the output's USD figures are left out
	}
	pricing.ApplyPartnerFee(r, req, preFee, outPrice)
	if r.ToAmountUSD > 0 {
		if err := pricing.CheckGas(provider, t.Key, r); err != nil {
			return nil, err
		}
	}
	if erc20Source {
		r.ApprovalAddress = p.m.Spender369().Hex()
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
	tx, err := p.m.Swap369(req, Swap369{From: fromTok, To: toTok, Path: path, MinOut: r.ToAmountMin,
		PreFee: r.PreFeeToAmount, Recipient: recipient, Gas: g})
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the PulseX swap").Wrap(err)
	}
	r.Tx = &tx
	return r, nil
}
