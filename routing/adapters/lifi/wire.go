package lifi

import (
	"encoding/json"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
)

// wireToken is LI.FI's Token.
type wireToken struct {
	Address  string              `json:"address"`
	ChainID  httpjson.FlexString `json:"chainId"`
	Symbol   string              `json:"symbol"`
	Name     string              `json:"name"`
	Decimals uint8               `json:"decimals"`
	CoinKey  string              `json:"coinKey"`
	LogoURI  string              `json:"logoURI"`
	PriceUSD httpjson.FlexString `json:"priceUSD"`
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
		FromChainID httpjson.FlexString `json:"fromChainId"`
		ToChainID   httpjson.FlexString `json:"toChainId"`
		FromToken   wireToken           `json:"fromToken"`
		ToToken     wireToken           `json:"toToken"`
		FromAmount  httpjson.FlexString `json:"fromAmount"`
		FromAddress string              `json:"fromAddress"`
		ToAddress   string              `json:"toAddress"`
		Slippage    float64             `json:"slippage"`
	} `json:"action"`
	Estimate           wireEstimate `json:"estimate"`
	TransactionRequest *wireTx      `json:"transactionRequest"`
	IncludedSteps      []wireStep   `json:"includedSteps"`
}

// wireEstimate is LI.FI's Estimate.
type wireEstimate struct {
	Tool              string              `json:"tool"`
	FromAmount        httpjson.FlexString `json:"fromAmount"`
	FromAmountUSD     httpjson.FlexString `json:"fromAmountUSD"`
	ToAmount          httpjson.FlexString `json:"toAmount"`
	ToAmountMin       httpjson.FlexString `json:"toAmountMin"`
	ToAmountUSD       httpjson.FlexString `json:"toAmountUSD"`
	ApprovalAddress   string              `json:"approvalAddress"`
	FeeCosts          []wireFeeCost       `json:"feeCosts"`
	GasCosts          []wireGasCost       `json:"gasCosts"`
	ExecutionDuration float64             `json:"executionDuration"`
}

// wireGasCost is LI.FI's GasCost.
type wireGasCost struct {
	Type      string              `json:"type"`
	Price     httpjson.FlexString `json:"price"`
	Estimate  httpjson.FlexString `json:"estimate"`
	Limit     httpjson.FlexString `json:"limit"`
	Amount    httpjson.FlexString `json:"amount"`
	AmountUSD httpjson.FlexString `json:"amountUSD"`
	Token     wireToken           `json:"token"`
}

// wireFeeCost is LI.FI's FeeCost.
type wireFeeCost struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	Percentage  httpjson.FlexString `json:"percentage"`
	Amount      httpjson.FlexString `json:"amount"`
	AmountUSD   httpjson.FlexString `json:"amountUSD"`
	Token       wireToken           `json:"token"`
	Included    bool                `json:"included"`
}

// wireTx is LI.FI's TransactionRequest: numbers are hex strings.
type wireTx struct {
	To       string              `json:"to"`
	From     string              `json:"from"`
	Data     string              `json:"data"`
	Value    httpjson.FlexString `json:"value"`
	GasLimit httpjson.FlexString `json:"gasLimit"`
	GasPrice httpjson.FlexString `json:"gasPrice"`
	ChainID  httpjson.FlexString `json:"chainId"`
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
		LogoURI         string `json:"logoURI"`
		SupportedChains []struct {
			FromChainID uint64 `json:"fromChainId"`
			ToChainID   uint64 `json:"toChainId"`
		} `json:"supportedChains"`
	} `json:"bridges"`
	Exchanges []struct {
		Key             string                `json:"key"`
		Name            string                `json:"name"`
		LogoURI         string                `json:"logoURI"`
		SupportedChains []httpjson.FlexString `json:"supportedChains"`
	} `json:"exchanges"`
}

// wireTokens is the /v1/tokens answer.
type wireTokens struct {
	Tokens map[string][]wireToken `json:"tokens"`
}
