package pulsesim

import (
	"bytes"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// PulseX v2 on the sandbox chain 369, as contracts whose state lives in the
// chain: the factory (getPair), one constant-product pair per pool (token0,
// token1, getReserves, swap, emitting Swap and Sync) and the router
// (pulsex_router.go). A pair holds its tokens itself: its ERC-20 balances
// are its reserves, and every swap moves them, so that the amounts the
// router answers over eth_call are those of the pools as they are now.
//
// The storage layout is UniswapV2's, so that eth_getStorageAt reads what it
// would on chain: the factory's getPair mapping at slot 2 (getPair[a][b] at
// keccak256(b ‖ keccak256(a ‖ 2)), written for both orders), a pair's token0
// and token1 at slots 6 and 7, and its reserves packed in slot 8 as
// blockTimestampLast<<224 | reserve1<<112 | reserve0.
//
// Pair addresses follow UniswapV2's pairFor: the CREATE2 address
// keccak256(0xff ‖ factory ‖ keccak256(token0 ‖ token1) ‖ initCodeHash)[12:]
// with the tokens sorted by address. The sandbox's init-code hash is
// PairInitCodeHash, keccak256("swapgate/sandbox/PulseXPair"), not the
// PulseX pair's bytecode hash, so the sandbox's pair addresses are its own:
// clients find a pair with the factory's getPair, as on chain.
//
// The pools and their genesis reserves are SandboxChain's (every registry
// token of 369 with a reference price paired with USDCh, PulseXPoolSideUSD
// a side), written at deploy, before the first transaction (a genesis
// allocation of the pair's balances and its storage), so that a chain
// rebuilt from its operations holds the same pools. While no swap moved a
// pool the router answers exactly what SandboxChain does.

// PairInitCodeHash stands in for the pair bytecode's hash in the sandbox's
// CREATE2 pair addresses (see PairFor).
var PairInitCodeHash = crypto.Keccak256Hash([]byte("swapgate/sandbox/PulseXPair"))

// Storage slots of UniswapV2's factory and pair.
var (
	factoryGetPairSlot = common.BigToHash(big.NewInt(2))
	pairToken0Slot     = common.BigToHash(big.NewInt(6))
	pairToken1Slot     = common.BigToHash(big.NewInt(7))
	pairReservesSlot   = common.BigToHash(big.NewInt(8))
)

// Gas the pair and router charge for their own arithmetic on top of what
// the chain meters (storage, calls, logs), so that a one-hop swap costs
// about what UniswapV2's does (≈ 110,000 with the transaction's base).
const (
	PairSwapWorkGas   = 15_000
	RouterHopWorkGas  = 5_000
	maxUint112Bits    = 112
	pulseXFeeScale    = 10_000
	pulseXFeeBps      = pulseXFeeScale - pulseXFeeKeep
	pairRevertPrefix  = "PulseX: "
	flashSwapRefusal  = "PulseX: flash swaps (swap with data) are not supported by the sandbox"
	pairABIJSONString = `[
 {"type":"function","name":"swap","stateMutability":"nonpayable",
  "inputs":[{"name":"amount0Out","type":"uint256"},{"name":"amount1Out","type":"uint256"},{"name":"to","type":"address"},{"name":"data","type":"bytes"}],
  "outputs":[]}
]`
)

// pairABI is the pair's swap, which pulseroute's ABI lacks (only the router
// calls it); parsed once, never modified.
var pairABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(pairABIJSONString))
	if err != nil {
		panic(fmt.Sprintf("pulsesim: parse pair ABI: %v", err))
	}
	return a
}()

var maxUint112 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), maxUint112Bits), big.NewInt(1))

// SortTokens orders two tokens as UniswapV2 does: token0 is the lower
// address.
func SortTokens(a, b common.Address) (token0, token1 common.Address) {
	if bytes.Compare(a.Bytes(), b.Bytes()) < 0 {
		return a, b
	}
	return b, a
}

// PairFor is the address of the pair of two tokens under a factory, in
// either order (see the CREATE2 rule above).
func PairFor(factory, tokenA, tokenB common.Address) common.Address {
	t0, t1 := SortTokens(tokenA, tokenB)
	salt := crypto.Keccak256(t0.Bytes(), t1.Bytes())
	return common.BytesToAddress(crypto.Keccak256([]byte{0xff}, factory.Bytes(), salt, PairInitCodeHash.Bytes())[12:])
}

// getPairSlot is the storage slot of the factory's getPair[a][b].
func getPairSlot(a, b common.Address) common.Hash {
	inner := crypto.Keccak256(common.BytesToHash(a.Bytes()).Bytes(), factoryGetPairSlot.Bytes())
	return crypto.Keccak256Hash(common.BytesToHash(b.Bytes()).Bytes(), inner)
}

// packReserves and unpackReserves are slot 8's layout.
func packReserves(r0, r1 *big.Int, ts uint32) common.Hash {
	v := new(big.Int).Lsh(new(big.Int).SetUint64(uint64(ts)), 224)
	v.Or(v, new(big.Int).Lsh(r1, maxUint112Bits))
	v.Or(v, r0)
	return common.BigToHash(v)
}

func unpackReserves(h common.Hash) (r0, r1 *big.Int, ts uint32) {
	v := h.Big()
	r0 = new(big.Int).And(v, maxUint112)
	r1 = new(big.Int).And(new(big.Int).Rsh(v, maxUint112Bits), maxUint112)
	ts = uint32(new(big.Int).Rsh(v, 224).Uint64())
	return r0, r1, ts
}

// PairReserves reads a pair's reserves from the chain's storage, as
// getReserves answers them, without a call: for the sandbox's own reads
// (the arbitrage, tests). A pair that does not exist reads as zero.
func PairReserves(c *simchain.Chain, pair common.Address) (reserve0, reserve1 *big.Int, blockTimestampLast uint32) {
	return unpackReserves(c.Storage(pair, pairReservesSlot))
}

// GenesisPool is one PulseX pool of the sandbox chain at its reference
// price: Token paired with USDCh, with the reserves each side holds at
// genesis.
type GenesisPool struct {
	Token, USDCh               common.Address
	TokenReserve, USDChReserve *big.Int
}

// GenesisPools lists the sandbox's PulseX pools at genesis, ordered by the
// token's address: the reserves SandboxChain prices with.
func (s *SandboxChain) GenesisPools() []GenesisPool {
	out := make([]GenesisPool, 0, len(s.reserves))
	for tok, p := range s.reserves {
		out = append(out, GenesisPool{Token: tok, USDCh: s.usdch,
			TokenReserve: new(big.Int).Set(p.token), USDChReserve: new(big.Int).Set(p.usdch)})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Token.Bytes(), out[j].Token.Bytes()) < 0 })
	return out
}

// PulseXFactoryCode is the PulseX factory on the sandbox chain:
// getPair(tokenA, tokenB) answers the pair of two tokens in either order,
// the zero address when there is none, from its storage. The pairs are
// created at genesis (DeployPulseX); createPair and everything else
// revert.
type PulseXFactoryCode struct{}

// Execute answers getPair.
func (PulseXFactoryCode) Execute(env *simchain.Env, _ common.Address, value *big.Int, data []byte) ([]byte, error) {
	m, args, err := decodeCall(data, "PulseXFactory", pulseroute.MethodGetPair)
	if err != nil {
		return nil, err
	}
	if err := notPayable(value, "PulseXFactory", m.Name); err != nil {
		return nil, err
	}
	v, err := env.Load(getPairSlot(args[0].(common.Address), args[1].(common.Address)))
	if err != nil {
		return nil, err
	}
	return m.Outputs.Pack(common.BytesToAddress(v.Bytes()))
}

// PulseXPairCode is a PulseX v2 pair on the sandbox chain, UniswapV2Pair's
// swap side with the 0.29% fee: token0, token1 and getReserves read its
// storage; swap(amount0Out, amount1Out, to, data) pays the outputs to to,
// then takes as input whatever its balances hold above its reserves and
// requires the fee-adjusted constant product not to fall (balance·10000 −
// in·29 on each side, "PulseX: K"), updates the reserves to its balances
// ("PulseX: OVERFLOW" above 2^112) and emits Sync and Swap. Flash swaps
// (data not empty) and liquidity (mint, burn, the LP token) are not
// served. One value serves every pair: its state is in the chain.
type PulseXPairCode struct{}

// Execute runs one call of a pair.
func (PulseXPairCode) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	if len(data) >= 4 {
		if m, err := pairABI.MethodById(data[:4]); err == nil && m.Name == "swap" {
			if err := notPayable(value, "PulseX", m.Name); err != nil {
				return nil, err
			}
			args, err := m.Inputs.Unpack(data[4:])
			if err != nil {
				return nil, simchain.Revert("PulseX: invalid calldata for swap")
			}
			return nil, pairSwap(env, from, args[0].(*big.Int), args[1].(*big.Int), args[2].(common.Address), args[3].([]byte))
		}
	}
	m, _, err := decodeCall(data, "PulseX", pulseroute.MethodGetReserves, pulseroute.MethodToken0, pulseroute.MethodToken1)
	if err != nil {
		return nil, err
	}
	if err := notPayable(value, "PulseX", m.Name); err != nil {
		return nil, err
	}
	switch m.Name {
	case pulseroute.MethodToken0, pulseroute.MethodToken1:
		slot := pairToken0Slot
		if m.Name == pulseroute.MethodToken1 {
			slot = pairToken1Slot
		}
		v, err := env.Load(slot)
		if err != nil {
			return nil, err
		}
		return m.Outputs.Pack(common.BytesToAddress(v.Bytes()))
	default:
		v, err := env.Load(pairReservesSlot)
		if err != nil {
			return nil, err
		}
		r0, r1, ts := unpackReserves(v)
		return m.Outputs.Pack(r0, r1, ts)
	}
}

func pairSwap(env *simchain.Env, sender common.Address, out0, out1 *big.Int, to common.Address, data []byte) error {
	if out0.Sign() <= 0 && out1.Sign() <= 0 {
		return simchain.Revert("PulseX: INSUFFICIENT_OUTPUT_AMOUNT")
	}
	if len(data) > 0 {
		return simchain.Revert(flashSwapRefusal)
	}
	if err := env.UseGas(PairSwapWorkGas); err != nil {
		return err
	}
	packed, err := env.Load(pairReservesSlot)
	if err != nil {
		return err
	}
	r0, r1, _ := unpackReserves(packed)
	if out0.Cmp(r0) >= 0 || out1.Cmp(r1) >= 0 {
		return simchain.Revert("PulseX: INSUFFICIENT_LIQUIDITY")
	}
	t0h, err := env.Load(pairToken0Slot)
	if err != nil {
		return err
	}
	t1h, err := env.Load(pairToken1Slot)
	if err != nil {
		return err
	}
	t0, t1 := common.BytesToAddress(t0h.Bytes()), common.BytesToAddress(t1h.Bytes())
	if to == t0 || to == t1 {
		return simchain.Revert("PulseX: INVALID_TO")
	}
	if out0.Sign() > 0 {
		if err := env.Transfer(t0, to, out0); err != nil {
			return err
		}
	}
	if out1.Sign() > 0 {
		if err := env.Transfer(t1, to, out1); err != nil {
			return err
		}
	}
	b0, err := env.Balance(t0, env.Self())
	if err != nil {
		return err
	}
	b1, err := env.Balance(t1, env.Self())
	if err != nil {
		return err
	}
	in0, in1 := amountIn(b0, r0, out0), amountIn(b1, r1, out1)
	if in0.Sign() <= 0 && in1.Sign() <= 0 {
		return simchain.Revert("PulseX: INSUFFICIENT_INPUT_AMOUNT")
	}
	adj := func(bal, in *big.Int) *big.Int {
		v := new(big.Int).Mul(bal, big.NewInt(pulseXFeeScale))
		return v.Sub(v, new(big.Int).Mul(in, big.NewInt(pulseXFeeBps)))
	}
	k := new(big.Int).Mul(r0, r1)
	k.Mul(k, big.NewInt(pulseXFeeScale*pulseXFeeScale))
	if new(big.Int).Mul(adj(b0, in0), adj(b1, in1)).Cmp(k) < 0 {
		return simchain.Revert("PulseX: K")
	}
	if b0.Cmp(maxUint112) > 0 || b1.Cmp(maxUint112) > 0 {
		return simchain.Revert("PulseX: OVERFLOW")
	}
	if err := env.Store(pairReservesSlot, packReserves(b0, b1, uint32(env.Time()))); err != nil {
		return err
	}
	evs := pulseroute.ABI().Events
	syncData, err := evs["Sync"].Inputs.NonIndexed().Pack(b0, b1)
	if err != nil {
		return simchain.Revertf("PulseX: encode Sync: %v", err)
	}
	if err := env.Emit([]common.Hash{evs["Sync"].ID}, syncData); err != nil {
		return err
	}
	swapData, err := evs["Swap"].Inputs.NonIndexed().Pack(in0, in1, out0, out1)
	if err != nil {
		return simchain.Revertf("PulseX: encode Swap: %v", err)
	}
	return env.Emit([]common.Hash{evs["Swap"].ID, common.BytesToHash(sender.Bytes()), common.BytesToHash(to.Bytes())}, swapData)
}

// amountIn is what a pair's balance holds above what it kept of a reserve
// after paying out: balance − (reserve − out), or zero.
func amountIn(balance, reserve, out *big.Int) *big.Int {
	kept := new(big.Int).Sub(reserve, out)
	if balance.Cmp(kept) <= 0 {
		return new(big.Int)
	}
	return kept.Sub(balance, kept)
}

// decodeCall reads calldata of one of the named methods of pulseroute's
// ABI, reverting in the contract's words otherwise.
func decodeCall(data []byte, contract string, methods ...string) (*abi.Method, []any, error) {
	if len(data) < 4 {
		return nil, nil, simchain.Revertf("%s: no function selector", contract)
	}
	m, err := pulseroute.ABI().MethodById(data[:4])
	if err != nil || !contains(methods, m.Name) {
		return nil, nil, simchain.Revertf("%s: function selector %#x not recognised", contract, data[:4])
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, nil, simchain.Revertf("%s: invalid calldata for %s", contract, m.Name)
	}
	return m, args, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func notPayable(value *big.Int, contract, method string) error {
	if value != nil && value.Sign() != 0 {
		return simchain.Revertf("%s: %s is not payable", contract, method)
	}
	return nil
}

// RouterNativeReserve is the native coin the sandbox PulseX router holds
// from genesis, out of which swapExactTokensForETH pays: the sandbox's WPLS
// is a plain token without withdraw, so the router keeps the WPLS a swap
// delivers to it and pays the same amount of PLS from this reserve, as
// unwrapping would.
var RouterNativeReserve = new(big.Int).Lsh(big.NewInt(1), 128)

// DeployPulseX installs PulseX on the sandbox chain 369 before its first
// transaction: the factory, one pair per genesis pool (its tokens and
// reserves in storage, its ERC-20 balances allocated equal to the
// reserves), the router with its native reserve, and the arbitrageur's
// genesis balances (see ArbitrageurAddress).
func DeployPulseX(c *simchain.Chain, px pulseroute.PulseX, pools []GenesisPool) error {
	wrap := func(err error) error { return fmt.Errorf("pulsesim: deploy PulseX on chain %d: %w", c.ChainID(), err) }
	if err := c.Deploy(px.Factory, PulseXFactoryCode{}); err != nil {
		return wrap(err)
	}
	for _, p := range pools {
		if p.TokenReserve.Sign() <= 0 || p.USDChReserve.Sign() <= 0 ||
			p.TokenReserve.Cmp(maxUint112) > 0 || p.USDChReserve.Cmp(maxUint112) > 0 {
			return wrap(fmt.Errorf("pool %s/%s: reserves %s and %s must be between 1 and 2^112-1",
				p.Token.Hex(), p.USDCh.Hex(), p.TokenReserve, p.USDChReserve))
		}
		pair := PairFor(px.Factory, p.Token, p.USDCh)
		t0, t1 := SortTokens(p.Token, p.USDCh)
		r0, r1 := p.TokenReserve, p.USDChReserve
		if t0 != p.Token {
			r0, r1 = r1, r0
		}
		steps := []func() error{
			func() error { return c.Deploy(pair, PulseXPairCode{}) },
			func() error { return c.InitStorage(pair, pairToken0Slot, common.BytesToHash(t0.Bytes())) },
			func() error { return c.InitStorage(pair, pairToken1Slot, common.BytesToHash(t1.Bytes())) },
			func() error {
				return c.InitStorage(pair, pairReservesSlot, packReserves(r0, r1, uint32(c.Head().Time)))
			},
			func() error { return c.InitStorage(px.Factory, getPairSlot(t0, t1), common.BytesToHash(pair.Bytes())) },
			func() error { return c.InitStorage(px.Factory, getPairSlot(t1, t0), common.BytesToHash(pair.Bytes())) },
			func() error { return c.Allocate(pair, t0, r0) },
			func() error { return c.Allocate(pair, t1, r1) },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return wrap(err)
			}
		}
	}
	if err := c.Deploy(px.Router, &PulseXRouterCode{Factory: px.Factory, WPLS: px.WPLS}); err != nil {
		return wrap(err)
	}
	if err := c.Allocate(px.Router, common.Address{}, RouterNativeReserve); err != nil {
		return wrap(err)
	}
	return fundArbitrageur(c, pools)
}
