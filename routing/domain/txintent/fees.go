package txintent

import "math/big"

// BumpPercent is how much a replacement raises both fees: geth's pool
// refuses a replacement under 10% more on either fee
// ("replacement transaction underpriced"); 12.5% leaves room for the
// integer rounding of both and for nodes configured a little stricter.
const BumpPercent = 12.5

// MinBump is old raised by 12.5% and rounded up, and at least old+1 so
// that a zero fee still moves.
func MinBump(old *big.Int) *big.Int {
	if old == nil || old.Sign() <= 0 {
		return big.NewInt(1)
	}
	// ceil(old * 9 / 8)
	n := new(big.Int).Mul(old, big.NewInt(9))
	n.Add(n, big.NewInt(7))
	n.Div(n, big.NewInt(8))
	if n.Cmp(old) <= 0 {
		n.Add(old, big.NewInt(1))
	}
	return n
}

// Fees is an EIP-1559 transaction's two fees, in wei.
type Fees struct {
	MaxFeePerGas         *big.Int
	MaxPriorityFeePerGas *big.Int
}

// Initial is the fees of a first transaction: the tip the node suggests
// and a fee cap of twice the base fee plus the tip (the usual headroom of
// six full blocks' rises), both held under limit when limit is set (nil or
// zero is no limit). capped reports that limit lowered one of them.
func Initial(baseFee, tip, limit *big.Int) (f Fees, capped bool) {
	if tip == nil || tip.Sign() < 0 {
		tip = new(big.Int)
	}
	if baseFee == nil || baseFee.Sign() < 0 {
		baseFee = new(big.Int)
	}
	max := new(big.Int).Mul(baseFee, big.NewInt(2))
	max.Add(max, tip)
	f = Fees{MaxFeePerGas: max, MaxPriorityFeePerGas: new(big.Int).Set(tip)}
	return f.capAt(limit)
}

// Bump is the fees of a replacement of a transaction sent with old: both
// raised by BumpPercent, and the fee cap at least twice baseFee plus the
// new tip so that a replacement prompted by a risen base fee clears it.
// ok is false when limit (nil or zero: none) does not leave room for a
// valid replacement: one whose both fees are at least BumpPercent above
// old's; the transaction is then left to wait as it is.
func Bump(old Fees, baseFee, limit *big.Int) (f Fees, ok bool) {
	tip := MinBump(old.MaxPriorityFeePerGas)
	max := MinBump(old.MaxFeePerGas)
	if baseFee != nil && baseFee.Sign() > 0 {
		want := new(big.Int).Mul(baseFee, big.NewInt(2))
		want.Add(want, tip)
		if want.Cmp(max) > 0 {
			max = want
		}
	}
	if tip.Cmp(max) > 0 {
		max = new(big.Int).Set(tip)
	}
	f = Fees{MaxFeePerGas: max, MaxPriorityFeePerGas: tip}
	if limit != nil && limit.Sign() > 0 {
		if f.MaxFeePerGas.Cmp(limit) > 0 {
			f.MaxFeePerGas = new(big.Int).Set(limit)
		}
		if f.MaxFeePerGas.Cmp(MinBump(old.MaxFeePerGas)) < 0 || f.MaxPriorityFeePerGas.Cmp(f.MaxFeePerGas) > 0 {
			return Fees{}, false
		}
	}
	return f, true
}

func (f Fees) capAt(limit *big.Int) (Fees, bool) {
	if limit == nil || limit.Sign() <= 0 {
		return f, false
	}
	capped := false
	if f.MaxFeePerGas.Cmp(limit) > 0 {
		f.MaxFeePerGas = new(big.Int).Set(limit)
		capped = true
	}
	if f.MaxPriorityFeePerGas.Cmp(f.MaxFeePerGas) > 0 {
		f.MaxPriorityFeePerGas = new(big.Int).Set(f.MaxFeePerGas)
		capped = true
	}
	return f, capped
}
