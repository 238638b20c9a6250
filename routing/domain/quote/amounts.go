package quote

import (
	"math"
	"math/big"

	"github.com/holiman/uint256"
)

var tenThousand = big.NewInt(10_000)

// SplitFee takes bps basis points out of an amount: fee is rounded down,
// and net + fee == amount exactly, so a route's output plus its partner fee
// always equals its pre-fee output.
func SplitFee(amount *big.Int, bps int) (net, fee *big.Int) {
	fee = new(big.Int).Mul(amount, big.NewInt(int64(bps)))
	fee.Quo(fee, tenThousand)
	return new(big.Int).Sub(amount, fee), fee
}

// SplitFee256 is SplitFee on uint256 values, which live on the stack: the
// pricing phase of a leg splits fees for every candidate, so it must not
// allocate. The product is taken at 512 bits, so it never overflows; bps
// must not be negative.
func SplitFee256(amount *uint256.Int, bps int) (net, fee uint256.Int) {
	var b uint256.Int
	b.SetUint64(uint64(bps))
	fee.MulDivOverflow(amount, &b, uint256.NewInt(10_000))
	net.Sub(amount, &fee)
	return net, fee
}

// MinOut is the least a route may deliver under a slippage fraction,
// rounded down; slippage is applied in parts per billion so that fractions
// such as 0.005 are exact.
func MinOut(amount *big.Int, slippage float64) *big.Int {
	keep := int64(math.Round((1 - slippage) * 1e9))
	out := new(big.Int).Mul(amount, big.NewInt(keep))
	return out.Quo(out, big.NewInt(1e9))
}
