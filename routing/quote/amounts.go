package quote

import (
	"math"
	"math/big"
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

// MinOut is the least a route may deliver under a slippage fraction,
// rounded down; slippage is applied in parts per billion so that fractions
// such as 0.005 are exact.
func MinOut(amount *big.Int, slippage float64) *big.Int {
	keep := int64(math.Round((1 - slippage) * 1e9))
	out := new(big.Int).Mul(amount, big.NewInt(keep))
	return out.Quo(out, big.NewInt(1e9))
}

// ToUnits converts a float amount of whole tokens into base units.
func ToUnits(whole float64, decimals uint8) *big.Int {
	f := new(big.Float).SetFloat64(whole)
	f.Mul(f, new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	i, _ := f.Int(nil)
	return i
}

// FromUnits converts base units into a float amount of whole tokens.
func FromUnits(units *big.Int, decimals uint8) float64 {
	f := new(big.Float).SetInt(units)
	f.Quo(f, new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	v, _ := f.Float64()
	return v
}
