package pulseroute

import (
	"math/big"
)

// PulseX v2 is a UniswapV2 fork whose pairs keep 0.29% of every input as
// the fee: its library prices a hop with 9,971/10,000 of the input, where
// UniswapV2 keeps 997/1,000. These are the router's getAmountOut and
// getAmountIn in integer arithmetic, so that amounts computed from a pair's
// reserves equal what the router answers for the same reserves, to the
// unit.
const (
	pulseXFeeKeep  = 9_971
	pulseXFeeScale = 10_000
)

// AmountOut is what a PulseX pair with reserves reserveIn and reserveOut
// pays for amountIn (PulseXLibrary.getAmountOut): zero when an input or a
// reserve is not positive, which the router refuses and callers treat as no
// liquidity.
func AmountOut(amountIn, reserveIn, reserveOut *big.Int) *big.Int {
	if amountIn.Sign() <= 0 || reserveIn.Sign() <= 0 || reserveOut.Sign() <= 0 {
		return new(big.Int)
	}
	withFee := new(big.Int).Mul(amountIn, big.NewInt(pulseXFeeKeep))
	num := new(big.Int).Mul(withFee, reserveOut)
	den := new(big.Int).Mul(reserveIn, big.NewInt(pulseXFeeScale))
	den.Add(den, withFee)
	return num.Quo(num, den)
}

// AmountIn is the least input a PulseX pair with reserves reserveIn and
// reserveOut needs to pay amountOut (PulseXLibrary.getAmountIn), or nil
// when the pair cannot pay it (amountOut at or above reserveOut, or a
// reserve not positive).
func AmountIn(amountOut, reserveIn, reserveOut *big.Int) *big.Int {
	if amountOut.Sign() <= 0 || reserveIn.Sign() <= 0 || amountOut.Cmp(reserveOut) >= 0 {
		return nil
	}
	num := new(big.Int).Mul(reserveIn, amountOut)
	num.Mul(num, big.NewInt(pulseXFeeScale))
	den := new(big.Int).Sub(reserveOut, amountOut)
	den.Mul(den, big.NewInt(pulseXFeeKeep))
	num.Quo(num, den)
	return num.Add(num, big.NewInt(1))
}
