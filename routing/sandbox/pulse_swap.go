package sandbox

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
	"github.com/swapgate/swapgate/routing/tools"
)

// pulseSwapRoute is a swap within chain 369 on sbx-pulsex, in Shape A. The
// output is PulseX's (ChainState.AmountsOut), so it agrees with what the
// inbound routes' final leg would give; the user calls the sandbox router on
// 369, which takes the partner fee from the output like every other router
// route.
func (m *Market) pulseSwapRoute(ctx context.Context, req *quote.Request, t *tools.Tool) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	pin, ok := m.tokenPrice(req.FromToken)
	if !ok {
		return nil, noRoute(provider, t.Key, ReasonNoPossibleRoute, "no USD price for %s on chain %d", req.FromToken.Symbol, req.From.ID)
	}
	inUSD := usdOf(req.FromAmount, req.FromToken, pin)
	tc := m.toolConfig(t)
	if inUSD < tc.MinAmountUSD {
		return nil, noRoute(provider, t.Key, ReasonAmountTooLow,
			"%s quotes inputs worth at least $%.2f; %s %s is worth $%.2f",
			t.Name, tc.MinAmountUSD, formatUnits(req.FromAmount, req.FromToken.Decimals), req.FromToken.Symbol, inUSD)
	}
	in, out := m.pulseToken(req.FromToken), m.pulseToken(req.ToToken)
	if in == out {
		return nil, noRoute(provider, t.Key, ReasonNoPossibleRoute, "PLS and WPLS are wrapped, not swapped")
	}
	path := m.pulsePath(in, out)
	preFee, err := m.amountsOut(ctx, t.Key, req.FromAmount, path)
	if err != nil {
		return nil, err
	}
	erc20Source := !req.FromToken.IsNative()
	g, err := m.gasCosts(provider, t.Key, req.From, t.GasUnits, erc20Source)
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
		GasCosts:      g.costs,
		FeeCosts: []quote.FeeCost{{
			Name:        t.Name + " fee",
			Description: fmt.Sprintf("PulseX pool fee, %d bps per hop over %d hops", t.FeeBps, len(path)-1),
			Amount:      bpsOf(req.FromAmount, bps),
			AmountUSD:   inUSD * float64(bps) / 1e4,
			Percentage:  float64(bps) / 1e4,
			Token:       req.FromToken,
			Included:    true,
		}},
		ExecutionDuration: blockSeconds(req.From),
	}
	outPrice, _ := m.tokenPrice(req.ToToken)
	applyPartnerFee(r, req, preFee, outPrice)
	if r.ToAmountUSD > 0 {
		if err := checkGas(provider, t.Key, r); err != nil {
			return nil, err
		}
	}
	if erc20Source {
		r.ApprovalAddress = RouterAddress(req.From.ID).Hex()
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
	data, err := packSwap(m.router, req.ID, fromTok, req.FromAmount, toTok, r.ToAmountMin, recipient, req.FeeBps, feeRecipient(req.FeeRecipient))
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the PulseX swap").Wrap(err)
	}
	r.Tx = &quote.TxRequest{
		To: RouterAddress(req.From.ID).Hex(), From: req.FromAddress, Data: data, Value: nativeValue(req),
		ChainID: req.From.ID, GasLimit: g.sendLimit, GasPrice: g.price,
	}
	return r, nil
}
