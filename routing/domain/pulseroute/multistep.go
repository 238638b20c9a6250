package pulseroute

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// multiStepInbound is variant (b), with the fallback (c) in its
// instructions: any other token on a warp-route chain to chain 369. Step 1,
// signed by the user, is the market's swap on the source chain into the
// chain's warp-route USDC, delivered to the inbound receiver, with the
// partner fee taken from it (Market.SwapToUSDC: the sandbox router, or the
// aggregator's own transaction in live mode). Step 2 is automatic once the
// deposit is registered with the RegisterDeposit signature: the receiver
// bridges the USDC to 369 (paying the interchain gas itself) and swaps on
// PulseX with swapExactTokensForTokens along the path whose getAmountsOut
// figures priced the quote; should that swap fail, the USDCh goes to the
// recipient on 369.
func (p *Provider) multiStepInbound(ctx context.Context, req *quote.Request, t *tools.Tool, w WarpRoute) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	usdc, ok := p.reg.Token(req.From.ID, w.Token.Hex())
	if !ok {
		return nil, noRoute(t.Key, pricing.ReasonNoPossibleRoute, "the registry does not list USDC %s on chain %d", w.Token.Hex(), req.From.ID)
	}
	receiver, ok := p.contracts.InboundReceiver(req.From.ID)
	if !ok {
		return nil, noRoute(t.Key, pricing.ReasonUnsupportedRoute, "no inbound receiver on chain %d", req.From.ID)
	}
	s1, err := p.m.SwapToUSDC(ctx, req, t, usdc, receiver)
	if err != nil {
		return nil, err
	}
	inUSD, usdcPreFee, usdcNet := s1.InUSD, s1.PreFee, s1.Net
	usdch := p.contracts.USDCh().Token
	swap := !isToken(req.ToToken, usdch)
	preFee, out := usdcPreFee, usdcNet
	dexBps := 0
	if swap {
		path := p.pulsePath(usdch, p.pulseToken(req.ToToken))
		if preFee, out, err = p.pulseXOut(ctx, t.Key, usdcPreFee, usdcNet, path); err != nil {
			return nil, err
		}
		dexBps = PulseXFeeBps * (len(path) - 1)
	}
	partnerFee := new(big.Int).Sub(preFee, out)
	r := &quote.Route{
		Provider:          provider,
		Tool:              t.Key,
		ToolName:          t.Name,
		StepType:          "lifi",
		FromAmount:        req.FromAmount,
		ToAmount:          out,
		ToAmountMin:       quote.MinOut(out, req.Slippage),
		PreFeeToAmount:    preFee,
		PartnerFee:        partnerFee,
		FromAmountUSD:     inUSD,
		ToAmountUSD:       p.usdOrUnknown(out, req.ToToken),
		GasCosts:          s1.GasCosts,
		FeeCosts:          append(s1.FeeCosts, p.m.ToolFeeCosts(t, req, inUSD)...),
		ExecutionDuration: s1.Duration + t.DurationSec,
		ApprovalAddress:   s1.ApprovalAddress,
		Step1AmountMin:    s1.NetMin,
	}
	if swap {
		r.FeeCosts = append(r.FeeCosts, p.pulseXFeeCost(usdcNet, dexBps))
		r.ExecutionDuration += pricing.BlockSeconds(req.To)
	}
	if req.FeeBps > 0 && !s1.ListsPartnerFee {
		r.FeeCosts = append(r.FeeCosts, pricing.PartnerFeeCost(req, partnerFee, p.usdOrUnknown(partnerFee, req.ToToken)))
	}
	if r.ToAmountUSD > 0 {
		if err := pricing.CheckGas(provider, t.Key, r); err != nil {
			return nil, err
		}
	}
	if req.Indicative {
		return r, nil
	}
	recipient, err := evmRecipient(req)
	if err != nil {
		return nil, err
	}
	if s1.Tx == nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "step 1 came without a transaction")
	}
	tx := *s1.Tx
	mq, err := NewMultiStepQuote(MultiStepInput{
		ID: req.ID, FromChainID: req.From.ID,
		FromToken: quote.TokenRefOf(req.FromToken), ToToken: quote.TokenRefOf(req.ToToken),
		FromAddress: common.HexToAddress(req.FromAddress), ToAddress: recipient,
		IntermediateChainID: req.From.ID, IntermediateToken: w.Token, InboundReceiver: receiver,
		ApprovalAddress: r.ApprovalAddress, FromAmount: req.FromAmount, ToAmount: out,
		ToAmountMin: r.ToAmountMin, ExecutionDuration: r.ExecutionDuration, Step1Tx: tx,
		Step1Tool: s1.ToolName,
	})
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the multi-step quote").Wrap(err)
	}
	r.Tx, r.Shape, r.MultiStep = &tx, quote.ShapeMultiStep, &mq
	return r, nil
}
