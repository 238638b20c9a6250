package pulseroute

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// multiStepInbound is variant (b), with the fallback (c) in its
// instructions: any other token on a warp-route chain to chain 369. Step 1,
// signed by the user, is a sandbox router swap on the source chain into the
// chain's warp-route USDC, delivered to the inbound receiver, with the
// partner fee taken from the USDC by the router. Step 2 is automatic once the
// deposit is registered with the RegisterDeposit signature: the receiver
// bridges the USDC to 369 (paying the interchain gas itself) and swaps on
// PulseX; should that swap fail, the USDCh goes to the recipient on 369.
func (p *Provider) multiStepInbound(ctx context.Context, req *quote.Request, t *tools.Tool, w WarpRoute) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	dex, ok := p.m.Tool(ToolStep1)
	if !ok || !dex.Supports(req.From.ID) {
		return nil, noRoute(t.Key, sandbox.ReasonNoPossibleRoute, "no sandbox DEX on chain %d for step 1", req.From.ID)
	}
	usdc, ok := p.reg.Token(req.From.ID, w.Token.Hex())
	if !ok {
		return nil, noRoute(t.Key, sandbox.ReasonNoPossibleRoute, "the registry does not list USDC %s on chain %d", w.Token.Hex(), req.From.ID)
	}
	step1 := *req
	step1.To, step1.ToToken = req.From, usdc
	inUSD, usdcPreFee, err := p.m.PriceSwap(provider, &step1, dex)
	if err != nil {
		return nil, err
	}
	if err := p.m.CheckFloor(provider, req, t, inUSD); err != nil {
		return nil, err
	}
	usdcNet, _ := quote.SplitFee(usdcPreFee, req.FeeBps)
	usdch := p.contracts.USDCh().Token
	swap := !isToken(req.ToToken, usdch)
	preFee, out := usdcPreFee, usdcNet
	dexBps := 0
	if swap {
		path := p.pulsePath(usdch, p.pulseToken(req.ToToken))
		if preFee, err = p.amountsOut(ctx, t.Key, usdcPreFee, path); err != nil {
			return nil, err
		}
		if out, err = p.amountsOut(ctx, t.Key, usdcNet, path); err != nil {
			return nil, err
		}
		dexBps = PulseXFeeBps * (len(path) - 1)
	}
	erc20Source := !req.FromToken.IsNative()
	g, err := p.m.GasCosts(provider, t.Key, req.From, dex.GasUnits, erc20Source)
	if err != nil {
		return nil, err
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
		GasCosts:          g.Costs,
		FeeCosts:          []quote.FeeCost{p.m.ToolFeeCost(dex, req, inUSD), p.m.ToolFeeCost(t, req, inUSD)},
		ExecutionDuration: sandbox.BlockSeconds(req.From) + t.DurationSec,
	}
	if swap {
		r.FeeCosts = append(r.FeeCosts, p.pulseXFeeCost(usdcNet, dexBps))
		r.ExecutionDuration += sandbox.BlockSeconds(req.To)
	}
	if req.FeeBps > 0 {
		r.FeeCosts = append(r.FeeCosts, sandbox.PartnerFeeCost(req, partnerFee, p.usdOrUnknown(partnerFee, req.ToToken)))
	}
	if erc20Source {
		r.ApprovalAddress = sandbox.RouterAddress(req.From.ID).Hex()
	}
	if r.ToAmountUSD > 0 {
		if err := sandbox.CheckGas(provider, t.Key, r); err != nil {
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
	receiver, ok := p.contracts.InboundReceiver(req.From.ID)
	if !ok {
		return nil, noRoute(t.Key, sandbox.ReasonUnsupportedRoute, "no inbound receiver on chain %d", req.From.ID)
	}
	from, err := sandbox.EVMAddress(req.FromToken.Address)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build step 1").Wrap(err)
	}
	data, err := p.m.SwapCall(req, from, w.Token, quote.MinOut(usdcNet, req.Slippage), usdcPreFee, receiver)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build step 1").Wrap(err)
	}
	tx := quote.TxRequest{
		To: sandbox.RouterAddress(req.From.ID).Hex(), From: req.FromAddress, Data: data, Value: sandbox.NativeValue(req),
		ChainID: req.From.ID, GasLimit: g.SendLimit, GasPrice: g.Price,
	}
	mq, err := NewMultiStepQuote(MultiStepInput{
		ID: req.ID, FromChainID: req.From.ID,
		FromToken: quote.TokenRefOf(req.FromToken), ToToken: quote.TokenRefOf(req.ToToken),
		FromAddress: common.HexToAddress(req.FromAddress), ToAddress: recipient,
		IntermediateChainID: req.From.ID, IntermediateToken: w.Token, InboundReceiver: receiver,
		ApprovalAddress: r.ApprovalAddress, FromAmount: req.FromAmount, ToAmount: out,
		ToAmountMin: r.ToAmountMin, ExecutionDuration: r.ExecutionDuration, Step1Tx: tx,
	})
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the multi-step quote").Wrap(err)
	}
	r.Tx, r.Shape, r.MultiStep = &tx, quote.ShapeMultiStep, &mq
	return r, nil
}
