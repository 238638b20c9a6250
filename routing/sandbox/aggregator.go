package sandbox

import (
	"math/big"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
	"github.com/swapgate/swapgate/routing/tools"
)

// aggregatorRoute prices a request on an aggregator DEX or bridge and builds
// the router transaction for EVM sources.
func (m *Market) aggregatorRoute(req *quote.Request, t *tools.Tool) (*quote.Route, error) {
	const provider = registry.ProviderAggregator
	hop := t.Type != tools.TypeDEX && !sameAsset(req.FromToken, req.ToToken)
	p, err := m.priceLeg(provider, req, t, hop)
	if err != nil {
		return nil, err
	}
	erc20Source := req.From.ChainType == registry.EVM && !req.FromToken.IsNative()
	g, err := m.gasCosts(provider, t.Key, req.From, t.GasUnits, erc20Source)
	if err != nil {
		return nil, err
	}
	r := &quote.Route{
		Provider:      provider,
		Tool:          t.Key,
		ToolName:      t.Name,
		StepType:      "cross",
		FromAmount:    req.FromAmount,
		FromAmountUSD: p.inUSD,
		GasCosts:      g.costs,
		FeeCosts:      []quote.FeeCost{toolFeeCost(t, req, p.inUSD)},
	}
	switch {
	case t.Type == tools.TypeDEX:
		r.StepType = "swap"
		r.ExecutionDuration = blockSeconds(req.From)
	case hop:
		r.FeeCosts = append(r.FeeCosts, hopFeeCost(req, p.inUSD))
		r.ExecutionDuration = t.DurationSec + blockSeconds(req.To)
	default:
		r.ExecutionDuration = t.DurationSec
	}
	applyPartnerFee(r, req, p.preFee, p.outPrice)
	if err := checkGas(provider, t.Key, r); err != nil {
		return nil, err
	}
	if erc20Source {
		r.ApprovalAddress = RouterAddress(req.From.ID).Hex()
	}
	if req.Indicative || req.From.ChainType != registry.EVM {
		return r, nil
	}
	tx, err := m.routerTx(req, r, g)
	if err != nil {
		return nil, apierr.New(apierr.TransactionBuildFailed, "could not build the sandbox router transaction").Wrap(err)
	}
	r.Tx = tx
	return r, nil
}

// routerTx builds the sandbox router call of an aggregator route: swap
// within a chain, bridge across chains. The minimum out is the route's
// ToAmountMin, so the router enforces the quoted slippage.
func (m *Market) routerTx(req *quote.Request, r *quote.Route, g gasQuote) (*quote.TxRequest, error) {
	from, err := evmAddress(req.FromToken.Address)
	if err != nil {
		return nil, err
	}
	feeTo := feeRecipient(req.FeeRecipient)
	var data []byte
	if req.From.ID == req.To.ID {
		to, err := evmAddress(req.ToToken.Address)
		if err != nil {
			return nil, err
		}
		receiver, err := evmAddress(req.ToAddress)
		if err != nil {
			return nil, err
		}
		data, err = packSwap(m.router, req.ID, from, req.FromAmount, to, r.ToAmountMin, receiver, req.FeeBps, feeTo)
		if err != nil {
			return nil, err
		}
	} else {
		receiver, err := receiverBytes(req.To, req.ToAddress)
		if err != nil {
			return nil, err
		}
		data, err = packBridge(m.router, req.ID, from, req.FromAmount, req.To.ID, tokenBytes32(req.To, req.ToToken), r.ToAmountMin, receiver, req.FeeBps, feeTo)
		if err != nil {
			return nil, err
		}
	}
	return &quote.TxRequest{
		To:       RouterAddress(req.From.ID).Hex(),
		From:     req.FromAddress,
		Data:     data,
		Value:    nativeValue(req),
		ChainID:  req.From.ID,
		GasLimit: g.sendLimit,
		GasPrice: g.price,
	}, nil
}

// nativeValue is the value a transaction carries: the input for native
// sources, nothing for tokens.
func nativeValue(req *quote.Request) *big.Int {
	if req.FromToken.IsNative() {
		return new(big.Int).Set(req.FromAmount)
	}
	return new(big.Int)
}
