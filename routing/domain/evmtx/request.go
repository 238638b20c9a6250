package evmtx

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/address"
)

// RequestError is a transaction request field that cannot be parsed.
type RequestError struct {
	// Field is the JSON name of the field: to, data, value or gasLimit.
	Field  string
	Reason string
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("simchain: transaction request %s: %s", e.Field, e.Reason)
}

// ParseTxRequest reads a transaction request as wallets and quote answers
// write it (every field a JSON string):
//
//   - to: 0x and 40 hex digits, passing EIP-55 when in mixed case;
//     required, since the sandbox chain does not create contracts;
//   - data: 0x-prefixed hex of whole bytes; empty or "0x" for none;
//   - value: wei, as a 0x-prefixed hex quantity or a decimal integer,
//     at most 2^256-1; empty for none;
//   - gasLimit: the same two forms, at most BlockGasLimit; empty for none
//     (Send then uses BlockGasLimit).
//
// A field that fails is reported as a *RequestError naming it.
func ParseTxRequest(to, data, value, gasLimit string) (TxRequest, error) {
	var req TxRequest
	if to == "" {
		return req, &RequestError{"to", "required: contract creation is not supported"}
	}
	if err := address.Validate("evm", to); err != nil {
		return req, &RequestError{"to", err.Error()}
	}
	req.To = common.HexToAddress(to)

	if data != "" && data != "0x" {
		if !has0x(data) || len(data)%2 != 0 {
			return req, &RequestError{"data", "want 0x followed by hex bytes"}
		}
		b, err := hex.DecodeString(data[2:])
		if err != nil {
			return req, &RequestError{"data", "want 0x followed by hex bytes"}
		}
		req.Data = b
	}

	if value != "" {
		v, ok := parseQuantity(value)
		if !ok || v.Cmp(maxUint256) > 0 {
			return req, &RequestError{"value", "want wei as a hex quantity or a decimal integer below 2^256"}
		}
		req.Value = v
	}

	if gasLimit != "" {
		g, ok := parseQuantity(gasLimit)
		if !ok || !g.IsUint64() || g.Uint64() > BlockGasLimit {
			return req, &RequestError{"gasLimit", "want a hex quantity or a decimal integer of at most " + strconv.Itoa(BlockGasLimit)}
		}
		req.GasLimit = g.Uint64()
	}
	return req, nil
}

func has0x(s string) bool { return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }

// ParseQuantity reads a quantity as a transaction request writes its value
// or gas price: a non-negative integer below 2^256, 0x-prefixed hex or
// decimal.
func ParseQuantity(s string) (*big.Int, bool) {
	v, ok := parseQuantity(s)
	if !ok || v.Cmp(maxUint256) > 0 {
		return nil, false
	}
	return v, true
}

// parseQuantity reads a non-negative integer as 0x-prefixed hex or decimal.
func parseQuantity(s string) (*big.Int, bool) {
	base := 10
	if has0x(s) {
		s, base = s[2:], 16
	}
	if s == "" || strings.ContainsAny(s, "+-_ ") {
		return nil, false
	}
	return new(big.Int).SetString(s, base)
}
