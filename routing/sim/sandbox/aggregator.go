package sandbox

import (
	"math/big"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// aggregatorPriced prices a request on an aggregator DEX or bridge, leaving
// the cost lists, amounts and transaction to the route's builder.
func (m *Market) aggregatorPriced(req *quote.Request, t *tools.Tool) (*quote.Route, error) {
	const provider = registry.ProviderAggregator
	hop := t.Type != tools.TypeDEX && !sameAsset(req.FromToken, req.ToToken)
	// One reading of the prices sizes an exact output's input and prices
	// the route, so that the route answered is the one that was verified.
	px, err := m.readPrices(provider, req, t)
	if err != nil {
		return nil, err
	}
	req, err = m.exactInput(provider, req, t, hop, px)
	if err != nil {
		return nil, err
	}
	p, err := m.priceAt(provider, req, t, hop, px)
	if err != nil {
		return nil, err
	}
	erc20Source := req.From.ChainType == registry.EVM && !req.FromToken.IsNative()
	g, err := m.planGas(provider, t.Key, req.From, t.GasUnits, erc20Source)
	if err != nil {
		return nil, err
	}
	b := &pendingLeg{m: m, kind: legAggregator, tool: t, p: p, g: g, erc20Source: erc20Source}
	r := &b.route
	*r = quote.Route{
		Provider:      provider,
		Tool:          t.Key,
		ToolName:      t.Name,
		StepType:      "cross",
		FromAmount:    req.FromAmount,
		FromAmountUSD: p.inUSD,
		ToAmountUSD:   p.toUSD,
		Pending:       b,
		PricedGasUSD:  g.USD(),
	}
	// Summed in the order the built fee list holds them.
	fees := toolFeeUSD(t, p.inUSD)
	switch {
	case t.Type == tools.TypeDEX:
		r.StepType = "swap"
		r.ExecutionDuration = pricing.BlockSeconds(req.From)
	case hop:
		fees += hopFeeUSD(p.inUSD)
		r.ExecutionDuration = t.DurationSec + pricing.BlockSeconds(req.To)
	default:
		r.ExecutionDuration = t.DurationSec
	}
	if req.FeeBps > 0 {
		fees += p.feeUSD
	}
	r.PricedFeeUSD = fees
	if err := pricing.CheckGas(provider, t.Key, r); err != nil {
		return nil, err
	}
	return r, nil
}

// buildAggregator fills in what aggregatorPriced left out.
func (b *pendingLeg) buildAggregator(req *quote.Request, r *quote.Route) error {
	m, t := b.m, b.tool
	g := b.g.Quote()
	r.GasCosts = g.Costs
	r.FeeCosts = make([]quote.FeeCost, 0, 3)
	r.FeeCosts = append(r.FeeCosts, m.ToolFeeCost(t, req, b.p.inUSD))
	if b.p.hop {
		r.FeeCosts = append(r.FeeCosts, hopFeeCost(req, b.p.inUSD))
	}
	fillAmounts(r, req, &b.p)
	if b.erc20Source {
		r.ApprovalAddress = m.routerHex(req.From.ID)
	}
	if req.Indicative || req.From.ChainType != registry.EVM {
		return nil
	}
	tx, err := m.routerTx(req, r, g)
	if err != nil {
		return apierr.New(apierr.TransactionBuildFailed, "could not build the sandbox router transaction").Wrap(err)
	}
	r.Tx = tx
	return nil
}

// routerTx builds the sandbox router call of an aggregator route: swap
// within a chain, bridge across chains. The minimum out is the route's
// ToAmountMin, so the router enforces the quoted slippage, and the word
// after the arguments is its PreFeeToAmount, which the router settles at.
func (m *Market) routerTx(req *quote.Request, r *quote.Route, g pricing.GasQuote) (*quote.TxRequest, error) {
	from, err := EVMAddress(req.FromToken.Address)
	if err != nil {
		return nil, err
	}
	feeTo := feeRecipient(req.FeeRecipient)
	var data []byte
	if req.From.ID == req.To.ID {
		to, err := EVMAddress(req.ToToken.Address)
		if err != nil {
			return nil, err
		}
		receiver, err := EVMAddress(req.ToAddress)
		if err != nil {
			return nil, err
		}
		data, err = packSwap(m.router, req.ID, from, req.FromAmount, to, revertingMinOut(req, r), r.PreFeeToAmount, receiver, req.FeeBps, feeTo)
		if err != nil {
			return nil, err
		}
	} else {
		receiver, err := receiverBytes(req.To, req.ToAddress)
		if err != nil {
			return nil, err
		}
		data, err = packBridge(m.router, req.ID, from, req.FromAmount, req.To.ID, tokenBytes32(req.To, req.ToToken), revertingMinOut(req, r), r.PreFeeToAmount, receiver, req.FeeBps, feeTo)
		if err != nil {
			return nil, err
		}
	}
	return &quote.TxRequest{
		To:       m.routerHex(req.From.ID),
		From:     req.FromAddress,
		Data:     data,
		Value:    NativeValue(req),
		ChainID:  req.From.ID,
		GasLimit: g.SendLimit,
		GasPrice: g.Price,
	}, nil
}

// NativeValue is the value a transaction carries: the input for native
// sources, nothing for tokens.
func NativeValue(req *quote.Request) *big.Int {
	if req.FromToken.IsNative() {
		return new(big.Int).Set(req.FromAmount)
	}
	return new(big.Int)
}
