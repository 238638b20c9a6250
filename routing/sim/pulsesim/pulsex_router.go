package pulsesim

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// PulseXRouterCode is the PulseX v2 router on the sandbox chain 369
// (UniswapV2Router02 with PulseXLibrary's 0.29% fee), over the pairs of
// Factory found as UniswapV2's pairFor finds them (PairFor) and read with
// their getReserves:
//
//   - getAmountsOut(amountIn, path) and getAmountsIn(amountOut, path) price
//     hop by hop with pulseroute.AmountOut and AmountIn, the library's
//     arithmetic, from the reserves as they are now. A path of fewer than
//     two tokens reverts "PulseXLibrary: INVALID_PATH"; a zero amount
//     "PulseXLibrary: INSUFFICIENT_INPUT_AMOUNT" (or OUTPUT); a pair with an
//     empty reserve, or an output at or above what it holds,
//     "PulseXLibrary: INSUFFICIENT_LIQUIDITY"; a hop without a pair reverts
//     (on chain, getReserves on an address without code).
//   - swapExactTokensForTokens(amountIn, amountOutMin, path, to, deadline)
//     reverts "PulseXRouter: EXPIRED" once the block's time is past the
//     deadline and "PulseXRouter: INSUFFICIENT_OUTPUT_AMOUNT" when the last
//     amount is below amountOutMin; otherwise it pulls amountIn from the
//     caller into the first pair with transferFrom (approve the router
//     first: without it "ERC20: insufficient allowance") and swaps hop by
//     hop, each pair paying the next, the last paying to. It returns the
//     amounts.
//   - swapExactTokensForETH is the same with a path ending in WPLS: the last
//     pair pays the router, which pays the amount in the native coin to to
//     (see RouterNativeReserve); another path reverts
//     "PulseXRouter: INVALID_PATH".
//
// Anything a swap changed is rolled back with it when it reverts, by the
// chain's journal. None of its functions is payable; others revert.
type PulseXRouterCode struct {
	Factory, WPLS common.Address
}

var _ simchain.Contract = (*PulseXRouterCode)(nil)

// Execute runs one call of the router.
func (p *PulseXRouterCode) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	m, args, err := decodeCall(data, "PulseXRouter", pulseroute.MethodGetAmountsOut, pulseroute.MethodGetAmountsIn,
		pulseroute.MethodSwapExactTokensForTokens, pulseroute.MethodSwapExactTokensForETH)
	if err != nil {
		return nil, err
	}
	if err := notPayable(value, "PulseXRouter", m.Name); err != nil {
		return nil, err
	}
	var amounts []*big.Int
	switch m.Name {
	case pulseroute.MethodGetAmountsOut:
		amounts, err = p.amountsOut(env, args[0].(*big.Int), args[1].([]common.Address))
	case pulseroute.MethodGetAmountsIn:
		amounts, err = p.amountsIn(env, args[0].(*big.Int), args[1].([]common.Address))
	default:
		amounts, err = p.swapExact(env, from, m.Name == pulseroute.MethodSwapExactTokensForETH,
			args[0].(*big.Int), args[1].(*big.Int), args[2].([]common.Address), args[3].(common.Address), args[4].(*big.Int))
	}
	if err != nil {
		return nil, err
	}
	return m.Outputs.Pack(amounts)
}

// reserves reads the reserves of the pair of a and b in that order
// (PulseXLibrary.getReserves).
func (p *PulseXRouterCode) reserves(env *simchain.Env, a, b common.Address) (rA, rB *big.Int, err error) {
	if a == b {
		return nil, nil, simchain.Revert("PulseXLibrary: IDENTICAL_ADDRESSES")
	}
	t0, _ := SortTokens(a, b)
	if t0 == (common.Address{}) {
		return nil, nil, simchain.Revert("PulseXLibrary: ZERO_ADDRESS")
	}
	if err := env.UseGas(RouterHopWorkGas); err != nil {
		return nil, nil, err
	}
	call, err := pulseroute.ABI().Pack(pulseroute.MethodGetReserves)
	if err != nil {
		return nil, nil, simchain.Revertf("PulseXLibrary: %v", err)
	}
	pair := PairFor(p.Factory, a, b)
	ret, err := env.Call(pair, nil, call)
	if err != nil {
		return nil, nil, err
	}
	vals, err := pulseroute.UnpackOutputs(pulseroute.MethodGetReserves, ret)
	if err != nil || len(vals) != 3 {
		// A call to an address without code returns nothing, and
		// Solidity's call of getReserves reverts on it.
		return nil, nil, simchain.Revertf("PulseXLibrary: no pair for %s and %s (getReserves on %s, which has no code)", a.Hex(), b.Hex(), pair.Hex())
	}
	r0, r1 := vals[0].(*big.Int), vals[1].(*big.Int)
	if a == t0 {
		return r0, r1, nil
	}
	return r1, r0, nil
}

func (p *PulseXRouterCode) amountsOut(env *simchain.Env, amountIn *big.Int, path []common.Address) ([]*big.Int, error) {
	if len(path) < 2 {
		return nil, simchain.Revert("PulseXLibrary: INVALID_PATH")
	}
	amounts := []*big.Int{new(big.Int).Set(amountIn)}
	for i := 0; i+1 < len(path); i++ {
		if amounts[i].Sign() <= 0 {
			return nil, simchain.Revert("PulseXLibrary: INSUFFICIENT_INPUT_AMOUNT")
		}
		rIn, rOut, err := p.reserves(env, path[i], path[i+1])
		if err != nil {
			return nil, err
		}
		if rIn.Sign() <= 0 || rOut.Sign() <= 0 {
			return nil, simchain.Revert("PulseXLibrary: INSUFFICIENT_LIQUIDITY")
		}
		amounts = append(amounts, pulseroute.AmountOut(amounts[i], rIn, rOut))
	}
	return amounts, nil
}

func (p *PulseXRouterCode) amountsIn(env *simchain.Env, amountOut *big.Int, path []common.Address) ([]*big.Int, error) {
	if len(path) < 2 {
		return nil, simchain.Revert("PulseXLibrary: INVALID_PATH")
	}
	amounts := make([]*big.Int, len(path))
	amounts[len(path)-1] = new(big.Int).Set(amountOut)
	for i := len(path) - 1; i > 0; i-- {
		if amounts[i].Sign() <= 0 {
			return nil, simchain.Revert("PulseXLibrary: INSUFFICIENT_OUTPUT_AMOUNT")
		}
		rIn, rOut, err := p.reserves(env, path[i-1], path[i])
		if err != nil {
			return nil, err
		}
		if rIn.Sign() <= 0 || rOut.Sign() <= 0 {
			return nil, simchain.Revert("PulseXLibrary: INSUFFICIENT_LIQUIDITY")
		}
		in := pulseroute.AmountIn(amounts[i], rIn, rOut)
		if in == nil {
			// On chain the library's subtraction underflows; either way no
			// input buys this much.
			return nil, simchain.Revert("PulseXLibrary: INSUFFICIENT_LIQUIDITY")
		}
		amounts[i-1] = in
	}
	return amounts, nil
}

// swapExact is swapExactTokensForTokens, and swapExactTokensForETH when
// toNative.
func (p *PulseXRouterCode) swapExact(env *simchain.Env, from common.Address, toNative bool,
	amountIn, amountOutMin *big.Int, path []common.Address, to common.Address, deadline *big.Int) ([]*big.Int, error) {
	if deadline.Cmp(new(big.Int).SetUint64(env.Time())) < 0 {
		return nil, simchain.Revert("PulseXRouter: EXPIRED")
	}
	if toNative && (len(path) < 2 || path[len(path)-1] != p.WPLS) {
		return nil, simchain.Revert("PulseXRouter: INVALID_PATH")
	}
	amounts, err := p.amountsOut(env, amountIn, path)
	if err != nil {
		return nil, err
	}
	out := amounts[len(amounts)-1]
	if out.Cmp(amountOutMin) < 0 {
		return nil, simchain.Revert("PulseXRouter: INSUFFICIENT_OUTPUT_AMOUNT")
	}
	if err := env.TransferFrom(path[0], from, PairFor(p.Factory, path[0], path[1]), amounts[0]); err != nil {
		return nil, err
	}
	recipient := to
	if toNative {
		recipient = env.Self()
	}
	for i := 0; i+1 < len(path); i++ {
		in, outTok := path[i], path[i+1]
		t0, _ := SortTokens(in, outTok)
		out0, out1 := new(big.Int), amounts[i+1]
		if in != t0 {
			out0, out1 = out1, out0
		}
		next := recipient
		if i+2 < len(path) {
			next = PairFor(p.Factory, outTok, path[i+2])
		}
		call, err := pairABI.Pack("swap", out0, out1, next, []byte{})
		if err != nil {
			return nil, simchain.Revertf("PulseXRouter: encode swap: %v", err)
		}
		if _, err := env.Call(PairFor(p.Factory, in, outTok), nil, call); err != nil {
			return nil, err
		}
	}
	if toNative {
		if err := env.Transfer(common.Address{}, to, out); err != nil {
			return nil, err
		}
	}
	return amounts, nil
}
