package simchain

import (
	"encoding/hex"
	"errors"
	"math/big"
	"strconv"
	"testing"
)

// FuzzParseTxRequest (see scripts/fuzz-targets): the sandbox broadcast's
// transaction request never panics the parser; a refusal is a
// *RequestError naming one of its four fields; an accepted request,
// written out again as a quote writes it (hex data, hex value, decimal
// gas limit), parses to itself. ParseQuantity, which checks the gas price,
// agrees with the value's rule.
func FuzzParseTxRequest(f *testing.F) {
	f.Add("0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "0x095ea7b3", "0x0", "100000")
	f.Add("0xaf88d065e77c8cc2239327c5edb3a432268e5831", "", "1000000000000000000", "0x5208")
	f.Add("", "0x1", "-1", "0xffffffffff")
	f.Add("0x1", "0xzz", "0x", "1_000")
	f.Add("0xAF88D065E77C8CC2239327C5EDB3A432268E5831", "0X00", "+1", "30000001")
	f.Fuzz(func(t *testing.T, to, data, value, gasLimit string) {
		req, err := ParseTxRequest(to, data, value, gasLimit)
		if value != "" {
			q, ok := ParseQuantity(value)
			alone, e := ParseTxRequest("0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "", value, "")
			if ok != (e == nil) || (ok && q.Cmp(alone.Value) != 0) {
				t.Fatalf("ParseQuantity(%q) = %v, %v; as a value: %v, %v", value, q, ok, alone.Value, e)
			}
		}
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || (re.Field != "to" && re.Field != "data" && re.Field != "value" && re.Field != "gasLimit") {
				t.Fatalf("refusal %v names no field of the request", err)
			}
			return
		}
		if req.GasLimit > BlockGasLimit {
			t.Fatalf("gas limit %d accepted", req.GasLimit)
		}
		v := "0x0"
		if req.Value != nil {
			if req.Value.Sign() < 0 || req.Value.Cmp(maxUint256) > 0 {
				t.Fatalf("value %s accepted", req.Value)
			}
			v = "0x" + req.Value.Text(16)
		}
		again, err := ParseTxRequest(req.To.Hex(), "0x"+hex.EncodeToString(req.Data), v, strconv.FormatUint(req.GasLimit, 10))
		if err != nil {
			t.Fatalf("%+v written out again is refused: %v", req, err)
		}
		if again.To != req.To || hex.EncodeToString(again.Data) != hex.EncodeToString(req.Data) ||
			valueOf(again.Value).Cmp(valueOf(req.Value)) != 0 || again.GasLimit != req.GasLimit {
			t.Fatalf("round trip changed %+v into %+v", req, again)
		}
	})
}

func valueOf(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}
