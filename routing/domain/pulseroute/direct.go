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

// directInbound is variant (a): warp-route USDC on a sender chain to chain
// 369 in one transaction, bridgeAndSwap on Swapgate's sender contract, which
// pulls the USDC (so the sender contract is the approval address), keeps the
// partner fee in USDC, sends the rest over the warp route with the
// interchain gas payment as msg.value and, when the destination token is not
// USDCh, swaps on PulseX after arrival (refunding USDCh if the swap cannot
// meet minOutput: the fallback).
//
// The fee is taken from the input, as the contract takes it; the route's
// PartnerFee is what it costs in the destination token, the PulseX output of
// the whole input less that of the bridged amount, so ToAmount + PartnerFee
// == PreFeeToAmount still holds. Without a PulseX leg the bridge is 1:1 and
// ToAmountMin equals ToAmount. sized, set on an exact-output request that
// swaps, holds the chain reads its input was sized and verified on, which
// price the route instead of reads made again (exactInboundInput).
func (p *Provider) directInbound(ctx context.Context, req *quote.Request, t *tools.Tool, w WarpRoute, sized *sizedSwap) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	inUSD, err := p.m.InputUSD(provider, req, t, true)
	if err != nil {
		return nil, err
	}
	amount := req.FromAmount
	bridged, fee := quote.SplitFee(amount, req.FeeBps)
	usdch := p.contracts.USDCh().Token
	swap := !isToken(req.ToToken, usdch)
	preFee, out := amount, bridged
	minOut := bridged
	dexBps := 0
	var payment *big.Int
	readPayment := func() (err error) { payment, err = p.gasPayment(ctx, t.Key, req.From.ID, pulseDomain); return err }
	if swap {
		path := p.pulsePath(usdch, p.pulseToken(req.ToToken))
		if sized != nil {
			preFee, out, payment = sized.preFee, sized.out, sized.payment
		} else if preFee, out, err = p.pulseXOut(ctx, t.Key, amount, bridged, path, readPayment); err != nil {
			return nil, err
		}
		minOut = quote.MinOut(out, req.Slippage)
		dexBps = PulseXFeeBps * (len(path) - 1)
	} else if err := readPayment(); err != nil {
		return nil, err
	}
	g, err := p.m.GasCosts(provider, t.Key, req.From, t.GasUnits, true)
	if err != nil {
		return nil, err
	}
	sender, ok := p.contracts.SenderContract(req.From.ID)
	if !ok {
		return nil, noRoute(t.Key, pricing.ReasonUnsupportedRoute, "no sender contract on chain %d", req.From.ID)
	}
	partnerFee := new(big.Int).Sub(preFee, out)
	r := &quote.Route{
		Provider:          provider,
		Tool:              t.Key,
		ToolName:          t.Name,
		StepType:          "cross",
		FromAmount:        amount,
		ToAmount:          out,
		ToAmountMin:       minOut,
		PreFeeToAmount:    preFee,
		PartnerFee:        partnerFee,
		FromAmountUSD:     inUSD,
		ToAmountUSD:       p.usdOrUnknown(out, req.ToToken),
		GasCosts:          append(g.Costs, p.messagingCost(req.From, payment)),
		FeeCosts:          p.m.ToolFeeCosts(t, req, inUSD),
		ExecutionDuration: t.DurationSec,
		ApprovalAddress:   sender.Hex(),
	}
	if swap {
		r.FeeCosts = append(r.FeeCosts, p.pulseXFeeCost(bridged, dexBps))
		r.ExecutionDuration += pricing.BlockSeconds(req.To)
	}
	if req.FeeBps > 0 {
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
	output := common.Address{} // the zero address asks for native PLS
	if !req.ToToken.IsNative() {
		output = common.HexToAddress(req.ToToken.Address)
	}
	data, err := BridgeAndSwap(SenderCall{
		QuoteRef: quote.Ref(req.ID), DestinationDomain: pulseDomain, Recipient: recipient,
		Amount: amount, Fee: fee, OutputToken: output, MinOutput: minOut,
	})
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the sender contract call").Wrap(err)
	}
	tx := quote.TxRequest{
		To: sender.Hex(), From: req.FromAddress, Data: data, Value: payment,
		ChainID: req.From.ID, GasLimit: g.SendLimit, GasPrice: g.Price,
	}
	dq, err := NewDirectQuote(DirectInput{
		ID: req.ID, Tool: t.Key, FromChainID: req.From.ID, ToChainID: req.To.ID,
		FromToken: quote.TokenRefOf(req.FromToken), ToToken: quote.TokenRefOf(req.ToToken),
		FromAmount: amount, Fee: fee, FeeBps: req.FeeBps, DexFeeBps: dexBps,
		EstimatedOutput: out, MinOutput: minOut, BridgeGasEstimate: payment,
		EstimatedDuration: r.ExecutionDuration, SenderContract: sender, Tx: tx,
	})
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the direct quote").Wrap(err)
	}
	r.Tx, r.Shape, r.Direct = &tx, quote.ShapeDirect, &dq
	return r, nil
}

// directOutbound is variant (d): USDCh on chain 369 to canonical USDC on a
// warp-route chain, transferRemote on the USDCh synthetic router, which burns
// from the sender (no approval). It is fee free by product decision: no
// service or partner fee (so no fee wallet is needed either), no DEX, output
// equal to input; the only cost is the interchain gas payment in PLS.
// Anything else leaving chain 369 is refused with the reason.
func (p *Provider) directOutbound(ctx context.Context, req *quote.Request, t *tools.Tool) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	synth := p.contracts.USDCh()
	if !isToken(req.FromToken, synth.Token) {
		return nil, noRoute(t.Key, pricing.ReasonUnsupportedRoute,
			"out of chain 369 only USDCh (%s) is bridged, to canonical USDC on chains %s; swap into USDCh on chain 369 first",
			synth.Token.Hex(), p.senderChainList())
	}
	w, ok := p.contracts.WarpRoute(req.To.ID)
	if !ok || w.Synthetic {
		return nil, noRoute(t.Key, pricing.ReasonUnsupportedRoute,
			"chain %d has no USDC warp route from chain 369; outbound routes reach chains %s", req.To.ID, p.senderChainList())
	}
	if !isToken(req.ToToken, w.Token) {
		return nil, noRoute(t.Key, pricing.ReasonUnsupportedRoute,
			"the outbound bridge delivers only canonical USDC (%s) on chain %d", w.Token.Hex(), req.To.ID)
	}
	amount := req.FromAmount
	inUSD, err := p.m.InputUSD(provider, req, t, false)
	if err != nil {
		return nil, err
	}
	payment, err := p.gasPayment(ctx, t.Key, req.From.ID, w.Domain())
	if err != nil {
		return nil, err
	}
	g, err := p.m.GasCosts(provider, t.Key, req.From, t.GasUnits, false)
	if err != nil {
		return nil, err
	}
	r := &quote.Route{
		Provider:          provider,
		Tool:              t.Key,
		ToolName:          t.Name,
		StepType:          "cross",
		FromAmount:        amount,
		ToAmount:          new(big.Int).Set(amount),
		ToAmountMin:       new(big.Int).Set(amount),
		PreFeeToAmount:    new(big.Int).Set(amount),
		PartnerFee:        new(big.Int),
		FromAmountUSD:     inUSD,
		ToAmountUSD:       p.usdOrUnknown(amount, req.ToToken),
		GasCosts:          append(g.Costs, p.messagingCost(req.From, payment)),
		ExecutionDuration: t.DurationSec,
	}
	if req.Indicative {
		return r, nil
	}
	recipient, err := evmRecipient(req)
	if err != nil {
		return nil, err
	}
	data, err := TransferRemote(w.Domain(), recipient, amount)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build transferRemote").Wrap(err)
	}
	tx := quote.TxRequest{
		To: synth.Router.Hex(), From: req.FromAddress, Data: data, Value: payment,
		ChainID: req.From.ID, GasLimit: g.SendLimit, GasPrice: g.Price,
	}
	zero := new(big.Int)
	dq, err := NewDirectQuote(DirectInput{
		ID: req.ID, Tool: t.Key, FromChainID: req.From.ID, ToChainID: req.To.ID,
		FromToken: quote.TokenRefOf(req.FromToken), ToToken: quote.TokenRefOf(req.ToToken),
		FromAmount: amount, Fee: zero, EstimatedOutput: amount, MinOutput: amount,
		BridgeGasEstimate: payment, EstimatedDuration: r.ExecutionDuration,
		SenderContract: synth.Router, Tx: tx,
	})
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the direct quote").Wrap(err)
	}
	r.Tx, r.Shape, r.Direct = &tx, quote.ShapeDirect, &dq
	return r, nil
}

// pulseXFeeCost is the PulseX pool fee of the swap on 369, in USDCh units.
func (p *Provider) pulseXFeeCost(bridged *big.Int, bps int) quote.FeeCost {
	usdch, _ := p.reg.Token(quote.PulseChainID, USDChAddress)
	amount := pricing.BpsOf(bridged, bps)
	fc := quote.FeeCost{
		Name:        p.pulseXFeeName(),
		Description: "PulseX pool fee of the swap on chain 369 after the bridge",
		Amount:      amount,
		Percentage:  float64(bps) / 1e4,
		Token:       usdch,
		Included:    true,
	}
	if usdch != nil {
		fc.AmountUSD = p.usdOrUnknown(amount, usdch)
	}
	return fc
}

// pulseXFeeName names the PulseX pool fee after the market's PulseX tool.
func (p *Provider) pulseXFeeName() string {
	if t, ok := p.m.Tool(p.keys.PulseX); ok {
		return t.Name + " fee"
	}
	return "PulseX v2 DEX fee"
}
