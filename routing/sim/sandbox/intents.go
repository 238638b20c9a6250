package sandbox

import (
	"encoding/hex"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// DepositAddress is the intents deposit address of a quote on its source
// chain, derived from keccak256("swapgate-sandbox-intents-deposit:" + id) in
// the chain's address format: EVM (EIP-55), Solana (base58 of 32 bytes), Sui
// (0x + 64 hex) and NEAR (an implicit account, 64 lowercase hex). Other
// formats get "", and their routes carry no deposit address.
func DepositAddress(c *registry.Chain, quoteID string) string {
	seed := crypto.Keccak256([]byte("swapgate-sandbox-intents-deposit:" + quoteID))
	switch c.AddressFormat {
	case "evm":
		return common.BytesToAddress(seed[12:]).Hex()
	case "solana":
		return base58.Encode(seed)
	case "sui":
		return "0x" + hex.EncodeToString(seed)
	case "near":
		return hex.EncodeToString(seed)
	}
	return ""
}

// intentsPriced prices a request on the solver network. The user pays into
// the deposit address; no approval is needed because the deposit is a plain
// transfer, so no APPROVE cost is listed and the approval address is empty.
func (m *Market) intentsPriced(req *quote.Request, t *tools.Tool) (*quote.Route, error) {
	const provider = registry.ProviderIntents
	// One reading of the prices sizes an exact output's input and prices
	// the route, so that the route answered is the one that was verified.
	px, err := m.readPrices(provider, req, t)
	if err != nil {
		return nil, err
	}
	req, err = m.exactInput(provider, req, t, false, px)
	if err != nil {
		return nil, err
	}
	p, err := m.priceAt(provider, req, t, false, px)
	if err != nil {
		return nil, err
	}
	sendGas := t.GasUnits
	if req.FromToken.IsNative() && req.From.ChainType == registry.EVM {
		sendGas = nativeTransferGas
	}
	g, err := m.planGas(provider, t.Key, req.From, sendGas, false)
	if err != nil {
		return nil, err
	}
	b := &pendingLeg{m: m, kind: legIntents, tool: t, p: p, g: g}
	r := &b.route
	*r = quote.Route{
		Provider:          provider,
		Tool:              t.Key,
		ToolName:          t.Name,
		StepType:          "intents",
		FromAmount:        req.FromAmount,
		FromAmountUSD:     p.inUSD,
		ToAmountUSD:       p.toUSD,
		ExecutionDuration: t.DurationSec,
		Pending:           b,
		PricedGasUSD:      g.USD(),
	}
	fees := toolFeeUSD(t, p.inUSD)
	if req.FeeBps > 0 {
		fees += p.feeUSD
	}
	r.PricedFeeUSD = fees
	if err := pricing.CheckGas(provider, t.Key, r); err != nil {
		return nil, err
	}
	return r, nil
}

// buildIntents fills in what intentsPriced left out: cost lists, amounts,
// the deposit address and, on EVM sources, the deposit transaction.
func (b *pendingLeg) buildIntents(req *quote.Request, r *quote.Route) error {
	g := b.g.Quote()
	r.GasCosts = g.Costs
	r.FeeCosts = make([]quote.FeeCost, 0, 2)
	r.FeeCosts = append(r.FeeCosts, b.m.ToolFeeCost(b.tool, req, b.p.inUSD))
	fillAmounts(r, req, &b.p)
	if req.Indicative {
		return nil
	}
	r.DepositAddress = DepositAddress(req.From, req.ID)
	if r.DepositAddress == "" || req.From.ChainType != registry.EVM {
		return nil
	}
	tx, err := b.m.depositTx(req, r.DepositAddress, g)
	if err != nil {
		return apierr.New(apierr.TransactionBuildFailed, "could not build the deposit transaction").Wrap(err)
	}
	r.Tx = tx
	return nil
}

// depositTx is the EVM transfer of the input to the deposit address: a
// native transfer, or ERC-20 transfer(deposit, amount) on the token.
func (m *Market) depositTx(req *quote.Request, deposit string, g pricing.GasQuote) (*quote.TxRequest, error) {
	tx := &quote.TxRequest{From: req.FromAddress, ChainID: req.From.ID, GasLimit: g.SendLimit, GasPrice: g.Price}
	if req.FromToken.IsNative() {
		tx.To = deposit
		tx.Value = new(big.Int).Set(req.FromAmount)
		return tx, nil
	}
	data, err := m.erc20.Pack("transfer", common.HexToAddress(deposit), req.FromAmount)
	if err != nil {
		return nil, fmt.Errorf("sandbox: pack transfer: %w", err)
	}
	token, err := EVMAddress(req.FromToken.Address)
	if err != nil {
		return nil, err
	}
	tx.To = token.Hex()
	tx.Data = data
	tx.Value = new(big.Int)
	return tx, nil
}
