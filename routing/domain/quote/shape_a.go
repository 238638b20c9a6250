package quote

import (
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"strconv"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// GET /v1/quote is the hot endpoint, and encoding/json spent dozens of
// allocations per answer on small strings. Shape A is therefore appended
// straight into the response buffer; the bytes are exactly those
// json.Marshal makes of the struct form of Shape A kept in the tests (same
// field order, omitempty rules, string escaping and float format), which a
// golden test checks.

// LivePrices gives the live USD prices of a chain's tokens, keyed by
// lower-case address, as the price cache holds them; ok is false while the
// chain has none. Responses show a live price where there is one, so that
// clients see the figure the quote was priced with.
type LivePrices func(chainID uint64) (byAddress map[string]float64, ok bool)

// of is prices for a chain; a nil LivePrices has none.
func (p LivePrices) of(chainID uint64) (map[string]float64, bool) {
	if p == nil {
		return nil, false
	}
	return p(chainID)
}

// AppendShapeA appends a route in Shape A, the object GET /v1/quote
// answers aggregator and intents routes with and GET /v1/routes lists every
// route in. prices gives the live USD prices of the action's tokens; a
// token without one has no priceUSD, and a USD figure that is not known
// (NoUSD) is left out.
// estimate.approvalAddress is the ERC-20 spender to approve, or null when
// the input needs no approval (native inputs).
func AppendShapeA(b []byte, prices LivePrices, req *Request, rt *Route, expiresAt int64) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, req.ID)
	b = append(b, `,"type":`...)
	b = jsonenc.AppendString(b, rt.StepType)
	b = append(b, `,"tool":`...)
	b = jsonenc.AppendString(b, rt.Tool)
	b = append(b, `,"toolDetails":{"key":`...)
	b = jsonenc.AppendString(b, rt.Tool)
	b = append(b, `,"name":`...)
	b = jsonenc.AppendString(b, rt.ToolName)
	b = append(b, `},"action":{"fromChainId":`...)
	b = strconv.AppendUint(b, req.From.ID, 10)
	b = append(b, `,"toChainId":`...)
	b = strconv.AppendUint(b, req.To.ID, 10)
	b = append(b, `,"fromToken":`...)
	b = appendActionToken(b, prices, req.FromToken)
	b = append(b, `,"toToken":`...)
	b = appendActionToken(b, prices, req.ToToken)
	// An exact-output request's input is the route's own (each route
	// sized it), and the action echoes the toAmount it was sized for.
	b = append(b, `,"fromAmount":`...)
	if req.ExactOutput() {
		b = appendDecString(b, rt.FromAmount)
		b = append(b, `,"toAmount":`...)
		b = appendDecString(b, req.ToAmount)
	} else {
		b = appendDecString(b, req.FromAmount)
	}
	b = append(b, `,"fromAddress":`...)
	b = jsonenc.AppendString(b, req.FromAddress)
	b = append(b, `,"toAddress":`...)
	b = jsonenc.AppendString(b, req.ToAddress)
	if req.RefundTo != "" {
		b = append(b, `,"refundTo":`...)
		b = jsonenc.AppendString(b, req.RefundTo)
	}
	b = append(b, `,"slippage":`...)
	b = jsonenc.AppendFloat(b, req.Slippage)
	b = append(b, `},"estimate":{"tool":`...)
	b = jsonenc.AppendString(b, rt.Tool)
	b = append(b, `,"fromAmount":`...)
	b = appendDecString(b, rt.FromAmount)
	b = appendUSDField(b, `,"fromAmountUSD":`, rt.FromAmountUSD)
	b = append(b, `,"toAmount":`...)
	b = appendDecString(b, rt.ToAmount)
	b = appendUSDField(b, `,"toAmountUSD":`, rt.ToAmountUSD)
	b = append(b, `,"toAmountMin":`...)
	b = appendDecString(b, rt.ToAmountMin)
	// A route whose input needs no allowance (a native input, an intents
	// deposit made with a transfer) has no spender: null, not "".
	b = append(b, `,"approvalAddress":`...)
	if rt.ApprovalAddress == "" {
		b = append(b, "null"...)
	} else {
		b = jsonenc.AppendString(b, rt.ApprovalAddress)
	}
	b = append(b, `,"gasCosts":[`...)
	for i := range rt.GasCosts {
		g := &rt.GasCosts[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = jsonenc.AppendString(b, g.Type)
		b = append(b, `,"price":`...)
		b = appendDecString(b, g.Price)
		if g.Estimate > 0 {
			b = append(b, `,"estimate":"`...)
			b = strconv.AppendUint(b, g.Estimate, 10)
			b = append(b, '"')
		}
		if g.Limit > 0 {
			b = append(b, `,"limit":"`...)
			b = strconv.AppendUint(b, g.Limit, 10)
			b = append(b, '"')
		}
		b = append(b, `,"amount":`...)
		b = appendDecString(b, g.Amount)
		b = appendUSDField(b, `,"amountUSD":`, g.AmountUSD)
		b = append(b, `,"token":`...)
		var addr, sym string
		var dec uint8
		if g.Token != nil {
			addr, sym, dec = g.Token.Address, g.Token.Symbol, g.Token.Decimals
		}
		b = appendTokenRef(b, addr, sym, dec)
		b = append(b, '}')
	}
	b = append(b, `],"feeCosts":[`...)
	for i := range rt.FeeCosts {
		f := &rt.FeeCosts[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonenc.AppendString(b, f.Name)
		if f.Description != "" {
			b = append(b, `,"description":`...)
			b = jsonenc.AppendString(b, f.Description)
		}
		b = append(b, `,"amount":`...)
		b = appendDecString(b, f.Amount)
		b = appendUSDField(b, `,"amountUSD":`, f.AmountUSD)
		b = append(b, `,"percentage":"`...)
		b = strconv.AppendFloat(b, f.Percentage, 'f', -1, 64)
		b = append(b, `","included":`...)
		b = strconv.AppendBool(b, f.Included)
		if f.Token != nil {
			b = append(b, `,"token":`...)
			b = appendTokenRef(b, f.Token.Address, f.Token.Symbol, f.Token.Decimals)
		}
		b = append(b, '}')
	}
	b = append(b, `],"executionDuration":`...)
	b = strconv.AppendInt(b, int64(rt.ExecutionDuration), 10)
	b = append(b, '}')
	if tx := rt.Tx; tx != nil && tx.Encoding == EncodingBase64 {
		// A serialized non-EVM transaction: no to, value or gas to show.
		b = append(b, `,"transactionRequest":{"chainId":`...)
		b = strconv.AppendUint(b, tx.ChainID, 10)
		b = append(b, `,"encoding":"base64","data":"`...)
		b = base64.StdEncoding.AppendEncode(b, tx.Data)
		b = append(b, `"}`...)
	} else if tx != nil {
		b = append(b, `,"transactionRequest":`...)
		b = appendEVMTx(b, tx)
	}
	if rt.DepositAddress != "" {
		b = append(b, `,"depositAddress":`...)
		b = jsonenc.AppendString(b, rt.DepositAddress)
	}
	if rt.DepositMemo != "" {
		b = append(b, `,"depositMemo":`...)
		b = jsonenc.AppendString(b, rt.DepositMemo)
	}
	b = append(b, `,"expiresAt":`...)
	b = strconv.AppendInt(b, expiresAt, 10)
	return append(b, '}')
}

// appendEVMTx appends an EVM transaction request, {to, from?, data, value,
// chainId, gasLimit, gasPrice?}, as a route's transactionRequest and a
// quote's approvals show it.
func appendEVMTx(b []byte, tx *TxRequest) []byte {
	b = append(b, `{"to":`...)
	b = jsonenc.AppendString(b, tx.To)
	if tx.From != "" {
		b = append(b, `,"from":`...)
		b = jsonenc.AppendString(b, tx.From)
	}
	b = append(b, `,"data":"0x`...)
	b = hex.AppendEncode(b, tx.Data)
	b = append(b, `","value":`...)
	b = appendHexBig(b, tx.Value)
	b = append(b, `,"chainId":`...)
	b = strconv.AppendUint(b, tx.ChainID, 10)
	b = append(b, `,"gasLimit":"0x`...)
	b = strconv.AppendUint(b, tx.GasLimit, 16)
	b = append(b, '"')
	if tx.GasPrice != nil {
		b = append(b, `,"gasPrice":`...)
		b = appendHexBig(b, tx.GasPrice)
	}
	return append(b, '}')
}

// appendActionToken appends an actionToken, its priceUSD the live price
// when prices has one and absent otherwise: never a reference figure that
// no market observed.
func appendActionToken(b []byte, prices LivePrices, t *registry.Token) []byte {
	b = append(b, `{"address":`...)
	b = jsonenc.AppendString(b, t.Address)
	b = append(b, `,"symbol":`...)
	b = jsonenc.AppendString(b, t.Symbol)
	b = append(b, `,"decimals":`...)
	b = strconv.AppendUint(b, uint64(t.Decimals), 10)
	if byAddress, ok := prices.of(t.ChainID); ok {
		var buf [96]byte
		key := appendLowerASCII(buf[:0], t.Address)
		if p, ok := byAddress[string(key)]; ok {
			b = append(b, `,"priceUSD":"`...)
			b = strconv.AppendFloat(b, p, 'f', -1, 64)
			return append(b, `"}`...)
		}
	}
	return append(b, '}')
}

// appendTokenRef appends the {address, symbol, decimals} of a cost's token.
func appendTokenRef(b []byte, addr, sym string, dec uint8) []byte {
	b = append(b, `{"address":`...)
	b = jsonenc.AppendString(b, addr)
	b = append(b, `,"symbol":`...)
	b = jsonenc.AppendString(b, sym)
	b = append(b, `,"decimals":`...)
	b = strconv.AppendUint(b, uint64(dec), 10)
	return append(b, '}')
}

// appendLowerASCII appends s with ASCII letters in lower case.
func appendLowerASCII(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// appendDecString appends decStr(v) as a JSON string.
func appendDecString(b []byte, v *big.Int) []byte {
	b = append(b, '"')
	switch {
	case v == nil:
		b = append(b, '0')
	case v.Sign() >= 0 && v.IsUint64():
		b = strconv.AppendUint(b, v.Uint64(), 10)
	default:
		b = v.Append(b, 10)
	}
	return append(b, '"')
}

// appendHexBig appends hexBig(v) as a JSON string.
func appendHexBig(b []byte, v *big.Int) []byte {
	switch {
	case v == nil || v.Sign() == 0:
		return append(b, `"0x0"`...)
	case v.Sign() > 0 && v.IsUint64():
		b = append(b, `"0x`...)
		b = strconv.AppendUint(b, v.Uint64(), 16)
	default:
		b = append(b, `"0x`...)
		b = v.Append(b, 16)
	}
	return append(b, '"')
}

// appendUSDField appends the field name and usd(v), or nothing when v is
// not known.
func appendUSDField(b []byte, name string, v float64) []byte {
	if !KnownUSD(v) {
		return b
	}
	b = append(b, name...)
	return appendUSD(b, v)
}

// appendUSD appends usd(v) as a JSON string.
func appendUSD(b []byte, v float64) []byte {
	b = append(b, '"')
	if v >= 1 || v <= -1 {
		b = strconv.AppendFloat(b, v, 'f', 2, 64)
	} else {
		b = strconv.AppendFloat(b, v, 'f', 6, 64)
	}
	return append(b, '"')
}
