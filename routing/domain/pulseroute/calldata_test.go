package pulseroute

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

var (
	alice  = common.HexToAddress("0x1111111111111111111111111111111111111111")
	bob    = common.HexToAddress("0x2222222222222222222222222222222222222222")
	tokenA = common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	tokenB = common.HexToAddress(WPLSAddress)
)

func TestCalldataSelectorsAndRoundTrip(t *testing.T) {
	amt := big.NewInt(1_500_000)
	deadline := big.NewInt(1_800_000_000)
	path := []common.Address{tokenA, tokenB, bob}
	ref := quote.Ref("q-123")
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name     string
		data     []byte
		selector string // as the contract facts list it, or keccak of the signature
		method   string
		args     []any
	}{
		{"transferRemote", must(TransferRemote(369, alice, amt)), "81b4e8b4", MethodTransferRemote,
			[]any{uint32(369), AddressToBytes32(alice), amt}},
		{"quoteGasPayment", must(QuoteGasPaymentCall(42161)), "f2ed8c53", MethodQuoteGasPayment,
			[]any{uint32(42161)}},
		{"getAmountsOut", must(GetAmountsOutCall(amt, path)), "d06ca61f", MethodGetAmountsOut,
			[]any{amt, path}},
		{"getAmountsIn", must(GetAmountsInCall(amt, path)), "1f00ca74", MethodGetAmountsIn,
			[]any{amt, path}},
		{"swapExactTokensForTokens", must(SwapExactTokensForTokens(amt, big.NewInt(7), path, bob, deadline)), "38ed1739",
			MethodSwapExactTokensForTokens, []any{amt, big.NewInt(7), path, bob, deadline}},
		{"approve", must(Approve(bob, amt)), "095ea7b3", MethodApprove, []any{bob, amt}},
		{"transfer", must(Transfer(bob, amt)), "a9059cbb", MethodTransfer, []any{bob, amt}},
		{"balanceOf", must(BalanceOfCall(alice)), "70a08231", MethodBalanceOf, []any{alice}},
		{"allowance", must(AllowanceCall(alice, bob)), "dd62ed3e", MethodAllowance, []any{alice, bob}},
		{"bridgeAndSwap", must(BridgeAndSwap(SenderCall{QuoteRef: ref, DestinationDomain: 369, Recipient: alice,
			Amount: amt, Fee: big.NewInt(4500), OutputToken: tokenB, MinOutput: big.NewInt(99)})),
			hex.EncodeToString(crypto.Keccak256([]byte("bridgeAndSwap(bytes32,uint32,bytes32,uint256,uint256,address,uint256)"))[:4]),
			MethodBridgeAndSwap,
			[]any{ref, uint32(369), AddressToBytes32(alice), amt, big.NewInt(4500), tokenB, big.NewInt(99)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := hex.EncodeToString(tc.data[:4]); got != tc.selector {
				t.Errorf("selector %s, want %s", got, tc.selector)
			}
			sel, err := Selector(tc.method)
			if err != nil || hex.EncodeToString(sel[:]) != tc.selector {
				t.Errorf("Selector(%s) = %x, %v", tc.method, sel, err)
			}
			method, args, err := Decode(tc.data)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if method != tc.method {
				t.Errorf("method %s, want %s", method, tc.method)
			}
			if !reflect.DeepEqual(args, tc.args) {
				t.Errorf("args %#v\nwant %#v", args, tc.args)
			}
		})
	}
}

// TestTransferRemoteLayout checks the encoding word by word against the ABI
// rules, independently of the ABI library: the recipient is the address
// left-padded to 32 bytes.
func TestTransferRemoteLayout(t *testing.T) {
	data, err := TransferRemote(369, alice, big.NewInt(1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, "81b4e8b4"+
		"0000000000000000000000000000000000000000000000000000000000000171"+
		"0000000000000000000000001111111111111111111111111111111111111111"+
		"00000000000000000000000000000000000000000000000000000000000f4240")
	if !bytes.Equal(data, want) {
		t.Fatalf("calldata\n%x\nwant\n%x", data, want)
	}
}

func TestBytes32Address(t *testing.T) {
	b := AddressToBytes32(alice)
	if a, err := Bytes32ToAddress(b); err != nil || a != alice {
		t.Errorf("round trip %s, %v", a, err)
	}
	b[0] = 1
	if _, err := Bytes32ToAddress(b); err == nil {
		t.Error("accepted a word with high bytes set")
	}
}

func TestCalldataRefusesBadInput(t *testing.T) {
	neg := big.NewInt(-1)
	huge := new(big.Int).Lsh(big.NewInt(1), 256)
	one := big.NewInt(1)
	path := []common.Address{tokenA, tokenB}
	for name, fn := range map[string]func() ([]byte, error){
		"transferRemote negative":  func() ([]byte, error) { return TransferRemote(1, alice, neg) },
		"transferRemote nil":       func() ([]byte, error) { return TransferRemote(1, alice, nil) },
		"transferRemote >uint256":  func() ([]byte, error) { return TransferRemote(1, alice, huge) },
		"getAmountsOut short path": func() ([]byte, error) { return GetAmountsOutCall(one, path[:1]) },
		"swap nil deadline":        func() ([]byte, error) { return SwapExactTokensForTokens(one, one, path, bob, nil) },
		"swap short path":          func() ([]byte, error) { return SwapExactTokensForTokens(one, one, nil, bob, one) },
		"approve negative":         func() ([]byte, error) { return Approve(bob, neg) },
		"transfer nil":             func() ([]byte, error) { return Transfer(bob, nil) },
		"bridgeAndSwap fee>amount": func() ([]byte, error) {
			return BridgeAndSwap(SenderCall{Amount: one, Fee: big.NewInt(2), MinOutput: one})
		},
		"bridgeAndSwap nil minimum": func() ([]byte, error) { return BridgeAndSwap(SenderCall{Amount: one, Fee: one}) },
	} {
		if _, err := fn(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	if _, _, err := Decode([]byte{0x81, 0xb4}); !errors.Is(err, ErrShortCalldata) {
		t.Errorf("short: %v", err)
	}
	if _, _, err := Decode(mustHex(t, "deadbeef")); !errors.Is(err, ErrUnknownSelector) {
		t.Errorf("unknown: %v", err)
	}
	// A known selector with a truncated argument list.
	if _, _, err := Decode(mustHex(t, "a9059cbb0000")); err == nil {
		t.Error("truncated arguments decoded")
	}
	if _, err := Selector("mint"); err == nil {
		t.Error("Selector(mint) succeeded")
	}
}
