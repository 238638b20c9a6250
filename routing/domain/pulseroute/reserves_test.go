package pulseroute

import (
	"math/big"
	"testing"
)

func TestAmountOutIsTheRoutersArithmetic(t *testing.T) {
	n := func(s string) *big.Int { v, _ := new(big.Int).SetString(s, 10); return v }
	for _, c := range []struct {
		in, rIn, rOut, want string
	}{
		{"1000000", "1000000000", "1000000000", "996106"},
		{"0", "1000", "1000", "0"},
		{"5", "0", "1000", "0"},
	} {
		if got := AmountOut(n(c.in), n(c.rIn), n(c.rOut)); got.Cmp(n(c.want)) != 0 {
			t.Errorf("AmountOut(%s, %s, %s) = %s, want %s", c.in, c.rIn, c.rOut, got, c.want)
		}
	}
}

// AmountIn is the least input: it buys amountOut, one unit less does not.
func TestAmountInIsTheLeastInput(t *testing.T) {
	rIn, rOut := big.NewInt(7_000_000_000), big.NewInt(3_000_000_000_000)
	for _, out := range []int64{1, 999, 1_000_000, 2_999_999_999_999} {
		in := AmountIn(big.NewInt(out), rIn, rOut)
		if in == nil {
			t.Fatalf("AmountIn(%d) = nil", out)
		}
		if AmountOut(in, rIn, rOut).Cmp(big.NewInt(out)) < 0 {
			t.Errorf("AmountIn(%d) = %s buys less than asked", out, in)
		}
		less := new(big.Int).Sub(in, big.NewInt(1))
		if less.Sign() > 0 && AmountOut(less, rIn, rOut).Cmp(big.NewInt(out)) >= 0 {
			t.Errorf("AmountIn(%d) = %s is not the least input", out, in)
		}
	}
	if AmountIn(rOut, rIn, rOut) != nil {
		t.Error("AmountIn of the whole reserve should be nil")
	}
}
