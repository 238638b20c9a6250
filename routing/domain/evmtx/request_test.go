package evmtx_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/evmtx"
)

func TestParseTxRequest(t *testing.T) {
	const usdcAddr = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
	cases := []struct {
		name                      string
		to, data, value, gasLimit string
		want                      evmtx.TxRequest
		field                     string // the field refused; empty: accepted
	}{
		{name: "full", to: usdcAddr, data: "0xa9059cbb00", value: "0x2386f26fc10000", gasLimit: "0x186a0",
			want: evmtx.TxRequest{To: common.HexToAddress(usdcAddr), Data: []byte{0xa9, 0x05, 0x9c, 0xbb, 0}, Value: big.NewInt(1e16), GasLimit: 100_000}},
		{name: "decimal quantities", to: usdcAddr, value: "10000000000000000", gasLimit: "100000",
			want: evmtx.TxRequest{To: common.HexToAddress(usdcAddr), Value: big.NewInt(1e16), GasLimit: 100_000}},
		{name: "lower case, empty data, zero value", to: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", data: "0x", value: "0x0",
			want: evmtx.TxRequest{To: common.HexToAddress(usdcAddr), Value: new(big.Int)}},
		{name: "hex with leading zeros", to: usdcAddr, value: "0x01", want: evmtx.TxRequest{To: common.HexToAddress(usdcAddr), Value: big.NewInt(1)}},
		{name: "no to", field: "to"},
		{name: "bad checksum", to: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB4a", field: "to"},
		{name: "short to", to: "0xA0b86991", field: "to"},
		{name: "odd data", to: usdcAddr, data: "0xa9059cb", field: "data"},
		{name: "data without 0x", to: usdcAddr, data: "a9059cbb", field: "data"},
		{name: "data not hex", to: usdcAddr, data: "0xzz", field: "data"},
		{name: "negative value", to: usdcAddr, value: "-1", field: "value"},
		{name: "value with a sign", to: usdcAddr, value: "+1", field: "value"},
		{name: "value not a number", to: usdcAddr, value: "1e18", field: "value"},
		{name: "empty hex value", to: usdcAddr, value: "0x", field: "value"},
		{name: "value above 2^256-1", to: usdcAddr, value: "0x10000000000000000000000000000000000000000000000000000000000000000", field: "value"},
		{name: "gas limit above the block's", to: usdcAddr, gasLimit: "30000001", field: "gasLimit"},
		{name: "gas limit not a number", to: usdcAddr, gasLimit: "lots", field: "gasLimit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evmtx.ParseTxRequest(tc.to, tc.data, tc.value, tc.gasLimit)
			if tc.field != "" {
				var re *evmtx.RequestError
				if !errors.As(err, &re) || re.Field != tc.field {
					t.Fatalf("err %v, want a refusal of %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.To != tc.want.To || string(got.Data) != string(tc.want.Data) || got.GasLimit != tc.want.GasLimit ||
				(got.Value == nil) != (tc.want.Value == nil) || (got.Value != nil && got.Value.Cmp(tc.want.Value) != 0) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
