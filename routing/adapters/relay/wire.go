package relay

import "github.com/swapgate/swapgate/routing/adapters/httpjson"

// quoteBody is the body of POST /quote/v2, the fields the adapter sends.
type quoteBody struct {
	User                string   `json:"user"`
	Recipient           string   `json:"recipient"`
	OriginChainID       uint64   `json:"originChainId"`
	DestinationChainID  uint64   `json:"destinationChainId"`
	OriginCurrency      string   `json:"originCurrency"`
	DestinationCurrency string   `json:"destinationCurrency"`
	Amount              string   `json:"amount"`
	TradeType           string   `json:"tradeType"`
	RefundTo            string   `json:"refundTo,omitempty"`
	SlippageTolerance   string   `json:"slippageTolerance,omitempty"`
	AppFees             []appFee `json:"appFees,omitempty"`
}

// appFee is one of the integrator's fees: its recipient and basis points
// as a string.
type appFee struct {
	Recipient string `json:"recipient"`
	Fee       string `json:"fee"`
}

// Relay's trade types.
const (
	tradeExactInput  = "EXACT_INPUT"
	tradeExactOutput = "EXACT_OUTPUT"
)

// wireQuote is the answer of /quote/v2, the fields the adapter reads.
type wireQuote struct {
	Steps   []wireStep `json:"steps"`
	Fees    wireFees   `json:"fees"`
	Details struct {
		Operation    string              `json:"operation"`
		TimeEstimate httpjson.FlexString `json:"timeEstimate"`
		CurrencyIn   wireAmount          `json:"currencyIn"`
		CurrencyOut  wireAmount          `json:"currencyOut"`
	} `json:"details"`
	Breakdown []struct {
		TimeEstimate httpjson.FlexString `json:"timeEstimate"`
	} `json:"breakdown"`
}

// Step kinds.
const (
	kindTransaction = "transaction"
	kindSignature   = "signature"
)

// stepApprove is the id of the step that approves the source token.
const stepApprove = "approve"

type wireStep struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	Description string     `json:"description"`
	RequestID   string     `json:"requestId"`
	Items       []wireItem `json:"items"`
}

// wireItem is one item of a step. Data is the transaction of a
// transaction step; a signature step's is another shape, never read.
type wireItem struct {
	Status string  `json:"status"`
	Data   *wireTx `json:"data"`
	Check  *struct {
		Endpoint string `json:"endpoint"`
		Method   string `json:"method"`
	} `json:"check"`
}

type wireTx struct {
	From                 string              `json:"from"`
	To                   string              `json:"to"`
	Data                 string              `json:"data"`
	Value                httpjson.FlexString `json:"value"`
	ChainID              httpjson.FlexString `json:"chainId"`
	Gas                  httpjson.FlexString `json:"gas"`
	MaxFeePerGas         httpjson.FlexString `json:"maxFeePerGas"`
	MaxPriorityFeePerGas httpjson.FlexString `json:"maxPriorityFeePerGas"`
}

type wireFees struct {
	Gas     *wireFee `json:"gas"`
	Relayer *wireFee `json:"relayer"`
	App     *wireFee `json:"app"`
}

type wireFee struct {
	Currency  wireCurrency        `json:"currency"`
	Amount    httpjson.FlexString `json:"amount"`
	AmountUSD httpjson.FlexString `json:"amountUsd"`
}

type wireCurrency struct {
	ChainID  httpjson.FlexString `json:"chainId"`
	Address  string              `json:"address"`
	Symbol   string              `json:"symbol"`
	Name     string              `json:"name"`
	Decimals uint8               `json:"decimals"`
}

type wireAmount struct {
	Currency        wireCurrency        `json:"currency"`
	Amount          httpjson.FlexString `json:"amount"`
	AmountFormatted string              `json:"amountFormatted"`
	AmountUSD       httpjson.FlexString `json:"amountUsd"`
	MinimumAmount   httpjson.FlexString `json:"minimumAmount"`
}

// wireError is Relay's error body.
type wireError struct {
	Message   string `json:"message"`
	ErrorCode string `json:"errorCode"`
}

// wireStatus is the answer of /intents/status/v3.
type wireStatus struct {
	Status     string              `json:"status"`
	Details    string              `json:"details"`
	InTxHashes []string            `json:"inTxHashes"`
	TxHashes   []string            `json:"txHashes"`
	UpdatedAt  httpjson.FlexString `json:"updatedAt"`
}

// wireChains is the answer of /chains.
type wireChains struct {
	Chains *[]struct {
		ID       httpjson.FlexString `json:"id"`
		Name     string              `json:"name"`
		Disabled bool                `json:"disabled"`
		VMType   string              `json:"vmType"`
	} `json:"chains"`
}
