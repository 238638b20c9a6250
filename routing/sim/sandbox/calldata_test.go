package sandbox

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// TestRouterCallsMatchABIPack checks the hand-written encoder byte for byte
// against go-ethereum's abi.Pack on the same arguments.
func TestRouterCallsMatchABIPack(t *testing.T) {
	a, err := RouterABI()
	if err != nil {
		t.Fatal(err)
	}
	c, err := newRouterCalls(a)
	if err != nil {
		t.Fatal(err)
	}
	maxU256 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	usdc := common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	user := common.HexToAddress("0x1111111111111111111111111111111111111111")
	fee := common.HexToAddress("0x00000000000000000000000000000000000000ff")
	mint := [32]byte{0: 0xc6, 31: 0x61}
	tests := []struct {
		name     string
		ref      [32]byte
		from     common.Address
		amount   *big.Int
		to       common.Address
		toChain  uint64
		toToken  [32]byte
		min      *big.Int
		receiver []byte
		feeBps   uint16
		feeTo    common.Address
	}{
		{name: "zeros", amount: new(big.Int), min: new(big.Int), receiver: []byte{}},
		{name: "evm receiver", ref: quote.Ref("q-1"), from: usdc, amount: big.NewInt(1_000_000), to: user, toChain: 42161,
			toToken: [32]byte{12: 0xaf}, min: big.NewInt(990_000), receiver: user.Bytes(), feeBps: 30, feeTo: fee},
		{name: "solana receiver (32 bytes)", ref: quote.Ref("q-2"), amount: new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil),
			toChain: 1151111081099710, toToken: mint, min: big.NewInt(1), receiver: bytes.Repeat([]byte{0x9a}, 32), feeBps: 0},
		{name: "sui-like receiver (33 bytes)", ref: quote.Ref("q-3"), from: usdc, amount: maxU256, toChain: ^uint64(0),
			toToken: mint, min: maxU256, receiver: bytes.Repeat([]byte{0x01}, 33), feeBps: ^uint16(0), feeTo: user},
		{name: "address text receiver", ref: quote.Ref("q-4"), amount: big.NewInt(7), min: big.NewInt(5),
			receiver: []byte("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"), feeBps: 100},
		{name: "empty receiver", ref: quote.Ref("q-5"), amount: big.NewInt(7), min: big.NewInt(0), receiver: nil, feeBps: 1},
		{name: "one-byte receiver", ref: quote.Ref("q-6"), amount: big.NewInt(1 << 62), min: big.NewInt(3), receiver: []byte{0xee}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := a.Pack("swap", tt.ref, tt.from, tt.amount, tt.to, tt.min, tt.to, tt.feeBps, tt.feeTo)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.swap(tt.ref, tt.from, tt.amount, tt.to, tt.min, tt.to, tt.feeBps, tt.feeTo)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("swap\n got %x\nwant %x", got, want)
			}
			receiver := tt.receiver
			if receiver == nil {
				receiver = []byte{}
			}
			want, err = a.Pack("bridge", tt.ref, tt.from, tt.amount, new(big.Int).SetUint64(tt.toChain), tt.toToken, tt.min, receiver, tt.feeBps, tt.feeTo)
			if err != nil {
				t.Fatal(err)
			}
			got, err = c.bridge(tt.ref, tt.from, tt.amount, tt.toChain, tt.toToken, tt.min, tt.receiver, tt.feeBps, tt.feeTo)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("bridge\n got %x\nwant %x", got, want)
			}
		})
	}
}

// TestRouterCallsRejectOutOfRange checks that amounts a uint256 cannot hold
// are errors rather than wrapped or panicking encodings.
func TestRouterCallsRejectOutOfRange(t *testing.T) {
	a, err := RouterABI()
	if err != nil {
		t.Fatal(err)
	}
	c, err := newRouterCalls(a)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		amount *big.Int
		want   error
	}{
		{"negative", big.NewInt(-1), errNegative},
		{"257 bits", new(big.Int).Lsh(big.NewInt(1), 256), errTooWide},
		{"nil", nil, errNilValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.swap([32]byte{}, common.Address{}, tt.amount, common.Address{}, big.NewInt(1), common.Address{}, 0, common.Address{}); !errors.Is(err, tt.want) {
				t.Errorf("swap fromAmount: err %v, want %v", err, tt.want)
			}
			if _, err := c.bridge([32]byte{}, common.Address{}, big.NewInt(1), 1, [32]byte{}, tt.amount, nil, 0, common.Address{}); !errors.Is(err, tt.want) {
				t.Errorf("bridge minAmountOut: err %v, want %v", err, tt.want)
			}
		})
	}
}

// BenchmarkRouterBridge measures one bridge encoding: one allocation.
func BenchmarkRouterBridge(b *testing.B) {
	a, err := RouterABI()
	if err != nil {
		b.Fatal(err)
	}
	c, err := newRouterCalls(a)
	if err != nil {
		b.Fatal(err)
	}
	amount, receiver := big.NewInt(1_000_000), bytes.Repeat([]byte{1}, 32)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.bridge([32]byte{}, common.Address{}, amount, 10, [32]byte{}, amount, receiver, 30, common.Address{}); err != nil {
			b.Fatal(err)
		}
	}
}
