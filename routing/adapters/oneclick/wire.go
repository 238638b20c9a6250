package oneclick

import "github.com/swapgate/swapgate/routing/adapters/httpjson"

// 1Click enumerations used by the adapter.
const (
	swapExactInput       = "EXACT_INPUT"
	swapExactOutput      = "EXACT_OUTPUT"
	depositOriginChain   = "ORIGIN_CHAIN"
	recipientDestination = "DESTINATION_CHAIN"
	refundOriginChain    = "ORIGIN_CHAIN"
	depositModeMemo      = "MEMO"
)

// wireQuoteRequest is the body of POST /v0/quote.
type wireQuoteRequest struct {
	Dry                bool         `json:"dry"`
	SwapType           string       `json:"swapType"`
	SlippageTolerance  int          `json:"slippageTolerance"`
	OriginAsset        string       `json:"originAsset"`
	DepositType        string       `json:"depositType"`
	DestinationAsset   string       `json:"destinationAsset"`
	Amount             string       `json:"amount"`
	RefundTo           string       `json:"refundTo"`
	RefundType         string       `json:"refundType"`
	Recipient          string       `json:"recipient"`
	RecipientType      string       `json:"recipientType"`
	Deadline           string       `json:"deadline"`
	DepositMode        string       `json:"depositMode,omitempty"`
	QuoteWaitingTimeMs int          `json:"quoteWaitingTimeMs"`
	Referral           string       `json:"referral,omitempty"`
	AppFees            []wireAppFee `json:"appFees,omitempty"`
}

// wireAppFee is one app fee: a recipient and basis points.
type wireAppFee struct {
	Recipient string `json:"recipient"`
	Fee       int    `json:"fee"`
}

// wireQuoteResponse is the answer of POST /v0/quote.
type wireQuoteResponse struct {
	CorrelationID string    `json:"correlationId"`
	Timestamp     string    `json:"timestamp"`
	Signature     string    `json:"signature"`
	Quote         wireQuote `json:"quote"`
}

// wireQuote is 1Click's quote; a dry quote has no deposit address or
// deadline.
type wireQuote struct {
	DepositAddress     string              `json:"depositAddress"`
	DepositMemo        string              `json:"depositMemo"`
	AmountIn           httpjson.FlexString `json:"amountIn"`
	AmountInFormatted  string              `json:"amountInFormatted"`
	AmountInUSD        httpjson.FlexString `json:"amountInUsd"`
	MinAmountIn        httpjson.FlexString `json:"minAmountIn"`
	AmountOut          httpjson.FlexString `json:"amountOut"`
	AmountOutFormatted string              `json:"amountOutFormatted"`
	AmountOutUSD       httpjson.FlexString `json:"amountOutUsd"`
	MinAmountOut       httpjson.FlexString `json:"minAmountOut"`
	Deadline           string              `json:"deadline"`
	TimeWhenInactive   string              `json:"timeWhenInactive"`
	TimeEstimate       float64             `json:"timeEstimate"`
}

// wireError is 1Click's error body.
type wireError struct {
	Message string `json:"message"`
}
