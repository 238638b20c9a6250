package quote

import "github.com/swapgate/swapgate/routing/domain/registry"

// Shape B is data.quote of a pulseroute direct quote: one transaction on
// the source chain (inbound through Swapgate's sender contract, or the
// fee-free outbound bridge through transferRemote on USDCh). The pulseroute
// provider builds it, checking that its figures agree; AppendResponse
// renders it with encoding/json, whose bytes clients already receive.

// TokenRef is a token as Shapes B and C show it.
type TokenRef struct {
	Address  string `json:"address"`
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
}

// TokenRefOf is the TokenRef of a registry token.
func TokenRefOf(t *registry.Token) TokenRef {
	return TokenRef{Address: t.Address, Symbol: t.Symbol, Decimals: t.Decimals}
}

// DirectTx is Shape B's transactionRequest; numbers are hex strings as the
// standard shape renders them, chainId an integer.
type DirectTx struct {
	To       string `json:"to"`
	Data     string `json:"data"`
	Value    string `json:"value"`
	ChainID  uint64 `json:"chainId"`
	GasLimit string `json:"gasLimit"`
}

// FeeBreakdown splits a direct quote's cost. TotalFeeBps is ServiceFeeBps
// plus DexFeeBps, so the fee-free outbound bridge (no service fee, no DEX
// leg) reports 0, which is how clients recognise it. MessagingFee is the
// warp route's gas payment in the source chain's native coin (wei, decimal).
type FeeBreakdown struct {
	TotalFeeBps   int    `json:"totalFeeBps"`
	ServiceFeeBps int    `json:"serviceFeeBps"`
	DexFeeBps     int    `json:"dexFeeBps"`
	MessagingFee  string `json:"messagingFee"`
}

// DirectQuote is Shape B, data.quote of a pulseroute direct quote (inbound
// via the sender contract, or outbound via transferRemote on USDCh).
type DirectQuote struct {
	ID                 string       `json:"id"`
	Provider           string       `json:"provider"`
	Tool               string       `json:"tool"`
	FromChainID        uint64       `json:"fromChainId"`
	ToChainID          uint64       `json:"toChainId"`
	FromToken          TokenRef     `json:"fromToken"`
	ToToken            TokenRef     `json:"toToken"`
	FromAmount         string       `json:"fromAmount"`
	Fee                string       `json:"fee"`
	FeePercentage      string       `json:"feePercentage"`
	BridgeAmount       string       `json:"bridgeAmount"`
	EstimatedOutput    string       `json:"estimatedOutput"`
	MinOutput          string       `json:"minOutput"`
	BridgeGasEstimate  string       `json:"bridgeGasEstimate"`
	EstimatedDuration  int          `json:"estimatedDuration"`
	SenderContract     string       `json:"senderContract"`
	TransactionRequest DirectTx     `json:"transactionRequest"`
	FeeBreakdown       FeeBreakdown `json:"feeBreakdown"`
}
