package sandbox

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/pulseroute"
	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
	"github.com/swapgate/swapgate/routing/tools"
)

// multiStepInbound is variant (b), with the fallback (c) in its
// instructions: any other token on a warp-route chain to chain 369. Step 1,
// signed by the user, is a sandbox router swap on the source chain into the
// chain's warp-route USDC, delivered to the inbound receiver, with the
// partner fee taken from the USDC by the router. Step 2 is automatic once the
// deposit is registered with the RegisterDeposit signature: the receiver
// bridges the USDC to 369 (paying the interchain gas itself) and swaps on
// PulseX; should that swap fail, the USDCh goes to the recipient on 369.
func (m *Market) multiStepInbound(ctx context.Context, req *quote.Request, t *tools.Tool, w pulseroute.WarpRoute) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	dex, ok := m.cat.Tool(ToolStep1)
	if !ok || !dex.Supports(req.From.ID) {
		return nil, noRoute(provider, t.Key, ReasonNoPossibleRoute, "no sandbox DEX on chain %d for step 1", req.From.ID)
	}
	usdc, ok := m.reg.Token(req.From.ID, w.Token.Hex())
	if !ok {
		return nil, noRoute(provider, t.Key, ReasonNoPossibleRoute, "the registry does not list USDC %s on chain %d", w.Token.Hex(), req.From.ID)
	}
	step1 := *req
	step1.To, step1.ToToken = req.From, usdc
	p, err := m.priceLeg(provider, &step1, dex, false)
	if err != nil {
		return nil, err
	}
	if err := m.checkFloor(req, t.Key, p.inUSD); err != nil {
		return nil, err
	}
	usdcPreFee := p.preFeeBig()
	usdcNet, _ := quote.SplitFee(usdcPreFee, req.FeeBps)
	usdch := m.pulse.USDCh().Token
	swap := !isToken(req.ToToken, usdch)
	preFee, out := usdcPreFee, usdcNet
	dexBps := 0
	if swap {
		path := m.pulsePath(usdch, m.pulseToken(req.ToToken))
		if preFee, err = m.amountsOut(ctx, t.Key, usdcPreFee, path); err != nil {
			return nil, err
		}
		if out, err = m.amountsOut(ctx, t.Key, usdcNet, path); err != nil {
			return nil, err
		}
		dexBps = pulseroute.PulseXFeeBps * (len(path) - 1)
	}
	erc20Source := !req.FromToken.IsNative()
	g, err := m.gasCosts(provider, t.Key, req.From, dex.GasUnits, erc20Source)
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
		FromAmountUSD:     p.inUSD,
		ToAmountUSD:       m.usdOrZero(out, req.ToToken),
		GasCosts:          g.costs,
		FeeCosts:          []quote.FeeCost{m.toolFeeCost(dex, req, p.inUSD), m.toolFeeCost(t, req, p.inUSD)},
		ExecutionDuration: blockSeconds(req.From) + t.DurationSec,
	}
	if swap {
		r.FeeCosts = append(r.FeeCosts, m.pulseXFeeCost(usdcNet, dexBps))
		r.ExecutionDuration += blockSeconds(req.To)
	}
	if req.FeeBps > 0 {
		r.FeeCosts = append(r.FeeCosts, partnerFeeCost(req, partnerFee, m.usdOrZero(partnerFee, req.ToToken)))
	}
	if erc20Source {
		r.ApprovalAddress = RouterAddress(req.From.ID).Hex()
	}
	if r.ToAmountUSD > 0 {
		if err := checkGas(provider, t.Key, r); err != nil {
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
	receiver, ok := m.pulse.InboundReceiver(req.From.ID)
	if !ok {
		return nil, noRoute(provider, t.Key, ReasonUnsupportedRoute, "no inbound receiver on chain %d", req.From.ID)
	}
	from, err := evmAddress(req.FromToken.Address)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build step 1").Wrap(err)
	}
	data, err := packSwap(m.router, req.ID, from, req.FromAmount, w.Token, quote.MinOut(usdcNet, req.Slippage),
		receiver, req.FeeBps, feeRecipient(req.FeeRecipient))
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build step 1").Wrap(err)
	}
	tx := quote.TxRequest{
		To: RouterAddress(req.From.ID).Hex(), From: req.FromAddress, Data: data, Value: nativeValue(req),
		ChainID: req.From.ID, GasLimit: g.sendLimit, GasPrice: g.price,
	}
	mq, err := pulseroute.NewMultiStepQuote(pulseroute.MultiStepInput{
		ID: req.ID, FromChainID: req.From.ID,
		FromToken: pulseroute.TokenRefOf(req.FromToken), ToToken: pulseroute.TokenRefOf(req.ToToken),
		FromAddress: common.HexToAddress(req.FromAddress), ToAddress: recipient,
		IntermediateChainID: req.From.ID, IntermediateToken: w.Token, InboundReceiver: receiver,
		ApprovalAddress: r.ApprovalAddress, FromAmount: req.FromAmount, ToAmount: out,
		ToAmountMin: r.ToAmountMin, ExecutionDuration: r.ExecutionDuration, Step1Tx: tx,
	})
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the multi-step quote").Wrap(err)
	}
	r.Tx, r.Shape, r.Payload = &tx, quote.ShapeMultiStep, mq
	return r, nil
}
