package lifi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// flexString accepts a JSON string or number and keeps its text: LI.FI
// sends most amounts as strings but a few (gas estimates, durations in some
// tools) as numbers, and precision must not be lost through float64.
type flexString string

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want string or number, got %s", b)
		}
		*f = flexString(n.String())
	}
	return nil
}

// wireToken is LI.FI's Token.
type wireToken struct {
	Address  string     `json:"address"`
	ChainID  flexString `json:"chainId"`
	Symbol   string     `json:"symbol"`
	Name     string     `json:"name"`
	Decimals uint8      `json:"decimals"`
	CoinKey  string     `json:"coinKey"`
	LogoURI  string     `json:"logoURI"`
	PriceUSD flexString `json:"priceUSD"`
}

// wireStep is LI.FI's Step, the body of a /v1/quote answer.
type wireStep struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Tool        string `json:"tool"`
	ToolDetails struct {
		Key     string `json:"key"`
		Name    string `json:"name"`
		LogoURI string `json:"logoURI"`
	} `json:"toolDetails"`
	Action struct {
		FromChainID flexString `json:"fromChainId"`
		ToChainID   flexString `json:"toChainId"`
		FromToken   wireToken  `json:"fromToken"`
		ToToken     wireToken  `json:"toToken"`
		FromAmount  flexString `json:"fromAmount"`
		FromAddress string     `json:"fromAddress"`
		ToAddress   string     `json:"toAddress"`
		Slippage    float64    `json:"slippage"`
	} `json:"action"`
	Estimate           wireEstimate `json:"estimate"`
	TransactionRequest *wireTx      `json:"transactionRequest"`
	IncludedSteps      []wireStep   `json:"includedSteps"`
}

// wireEstimate is LI.FI's Estimate.
type wireEstimate struct {
	Tool              string        `json:"tool"`
	FromAmount        flexString    `json:"fromAmount"`
	FromAmountUSD     flexString    `json:"fromAmountUSD"`
	ToAmount          flexString    `json:"toAmount"`
	ToAmountMin       flexString    `json:"toAmountMin"`
	ToAmountUSD       flexString    `json:"toAmountUSD"`
	ApprovalAddress   string        `json:"approvalAddress"`
	FeeCosts          []wireFeeCost `json:"feeCosts"`
	GasCosts          []wireGasCost `json:"gasCosts"`
	ExecutionDuration float64       `json:"executionDuration"`
}

// wireGasCost is LI.FI's GasCost.
type wireGasCost struct {
	Type      string     `json:"type"`
	Price     flexString `json:"price"`
	Estimate  flexString `json:"estimate"`
	Limit     flexString `json:"limit"`
	Amount    flexString `json:"amount"`
	AmountUSD flexString `json:"amountUSD"`
	Token     wireToken  `json:"token"`
}

// wireFeeCost is LI.FI's FeeCost.
type wireFeeCost struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Percentage  flexString `json:"percentage"`
	Amount      flexString `json:"amount"`
	AmountUSD   flexString `json:"amountUSD"`
	Token       wireToken  `json:"token"`
	Included    bool       `json:"included"`
}

// wireTx is LI.FI's TransactionRequest: numbers are hex strings.
type wireTx struct {
	To       string     `json:"to"`
	From     string     `json:"from"`
	Data     string     `json:"data"`
	Value    flexString `json:"value"`
	GasLimit flexString `json:"gasLimit"`
	GasPrice flexString `json:"gasPrice"`
	ChainID  flexString `json:"chainId"`
}

// wireError is LI.FI's error body. Errors is either a list of tool errors
// (older answers) or {filteredOut, failed[{subpaths{key: [tool error]}}]}.
type wireError struct {
	Message string          `json:"message"`
	Code    int             `json:"code"`
	Errors  json.RawMessage `json:"errors"`
}

// wireToolError is one tool's reason for not quoting.
type wireToolError struct {
	ErrorType string `json:"errorType"`
	Code      string `json:"code"`
	Tool      string `json:"tool"`
	Message   string `json:"message"`
}

// toolErrors extracts the tool errors from either shape of Errors.
func (e *wireError) toolErrors() []wireToolError {
	if len(e.Errors) == 0 {
		return nil
	}
	var list []wireToolError
	if json.Unmarshal(e.Errors, &list) == nil {
		return list
	}
	var grouped struct {
		FilteredOut []wireToolError `json:"filteredOut"`
		Failed      []struct {
			Subpaths map[string][]wireToolError `json:"subpaths"`
		} `json:"failed"`
	}
	if json.Unmarshal(e.Errors, &grouped) != nil {
		return nil
	}
	for _, f := range grouped.Failed {
		for _, errs := range f.Subpaths {
			list = append(list, errs...)
		}
	}
	return append(list, grouped.FilteredOut...)
}

// wireTools is the /v1/tools answer.
type wireTools struct {
	Bridges []struct {
		Key             string `json:"key"`
		Name            string `json:"name"`
		SupportedChains []struct {
			FromChainID uint64 `json:"fromChainId"`
			ToChainID   uint64 `json:"toChainId"`
		} `json:"supportedChains"`
	} `json:"bridges"`
	Exchanges []struct {
		Key             string       `json:"key"`
		Name            string       `json:"name"`
		SupportedChains []flexString `json:"supportedChains"`
	} `json:"exchanges"`
}

// wireTokens is the /v1/tokens answer.
type wireTokens struct {
	Tokens map[string][]wireToken `json:"tokens"`
}
