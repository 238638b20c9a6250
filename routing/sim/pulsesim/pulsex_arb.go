package pulsesim

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// The sandbox's arbitrage: what arbitrageurs do on chain to a pool whose
// price a swap moved away from the market's, done by one account of the
// sandbox so that sandbox pools come back to their reference price (the
// genesis ratio) after a swap. The arbitrageur is an ordinary account that
// swaps through the router, so its swaps are transactions like any other:
// recorded and replayed by the chains' owner, who decides when it trades
// (actors/sandboxchain).

// arbitrageurSeed is hashed into the arbitrageur's address.
const arbitrageurSeed = "swapgate-sandbox-arbitrageur"

// ArbitrageurAddress is the sandbox's arbitrageur on chain 369: the last 20
// bytes of keccak256("swapgate-sandbox-arbitrageur"). It holds, from
// genesis, ArbitrageFunding times each pool's reserve of every pool token
// (USDCh: of the largest USDCh reserve) and ArbitrageNative of the native
// coin for gas.
func ArbitrageurAddress() common.Address {
	return common.BytesToAddress(crypto.Keccak256([]byte(arbitrageurSeed))[12:])
}

// Parameters of the arbitrage.
const (
	// ArbitrageFunding is the arbitrageur's genesis balance of a pool's
	// token, in multiples of the pool's genesis reserve.
	ArbitrageFunding = 100
	// ArbitrageToleranceBps is how far (in basis points) a pool's price may
	// be from its reference before the arbitrageur trades it back.
	ArbitrageToleranceBps = 1
	// ArbitrageGasLimit is the gas limit of the arbitrageur's
	// transactions, a one-hop swap's with room to spare.
	ArbitrageGasLimit = 300_000
	// ArbitrageDeadline is how long after the transaction's time its swap's
	// deadline lies.
	ArbitrageDeadline = time.Minute
)

// ArbitrageNative is the arbitrageur's genesis native balance, for gas.
var ArbitrageNative = new(big.Int).Lsh(big.NewInt(1), 120)

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// fundArbitrageur allocates the arbitrageur's genesis balances.
func fundArbitrageur(c *simchain.Chain, pools []GenesisPool) error {
	arb := ArbitrageurAddress()
	usdch := new(big.Int)
	var usdchToken common.Address
	for _, p := range pools {
		amt := new(big.Int).Mul(p.TokenReserve, big.NewInt(ArbitrageFunding))
		if err := c.Allocate(arb, p.Token, amt); err != nil {
			return fmt.Errorf("pulsesim: fund the arbitrageur on chain %d: %w", c.ChainID(), err)
		}
		if p.USDChReserve.Cmp(usdch) > 0 {
			usdch.Set(p.USDChReserve)
		}
		usdchToken = p.USDCh
	}
	if len(pools) > 0 {
		if err := c.Allocate(arb, usdchToken, usdch.Mul(usdch, big.NewInt(ArbitrageFunding))); err != nil {
			return fmt.Errorf("pulsesim: fund the arbitrageur on chain %d: %w", c.ChainID(), err)
		}
	}
	if err := c.Allocate(arb, common.Address{}, ArbitrageNative); err != nil {
		return fmt.Errorf("pulsesim: fund the arbitrageur on chain %d: %w", c.ChainID(), err)
	}
	return nil
}

// Arbitrage decides the arbitrageur's next transaction on the sandbox
// chain 369. It is immutable and safe for concurrent use; the chain it
// reads is not, and its owner serialises the reads.
type Arbitrage struct {
	px    pulseroute.PulseX
	pools []GenesisPool
}

// NewArbitrage returns the arbitrage over the pools of px, brought back to
// their genesis ratios (SandboxChain.GenesisPools).
func NewArbitrage(px pulseroute.PulseX, pools []GenesisPool) *Arbitrage {
	return &Arbitrage{px: px, pools: pools}
}

// deviation is how far a pool's price (USDCh per token) is from its
// reference, in basis points, rounded down, with the pool's reserves (the
// token's, then USDCh's); a pool with an empty side reads as on reference.
func (a *Arbitrage) deviation(c *simchain.Chain, p GenesisPool) (rT, rU *big.Int, bps int64) {
	rT, rU = a.reserves(c, p)
	if rT.Sign() <= 0 || rU.Sign() <= 0 {
		return rT, rU, 0
	}
	// |rU/rT − gU/gT| / (gU/gT) = |rU·gT − gU·rT| / (gU·rT)
	diff := new(big.Int).Mul(rU, p.TokenReserve)
	diff.Sub(diff, new(big.Int).Mul(p.USDChReserve, rT))
	diff.Abs(diff).Mul(diff, big.NewInt(10_000))
	den := new(big.Int).Mul(p.USDChReserve, rT)
	q := diff.Quo(diff, den)
	if !q.IsInt64() {
		return rT, rU, 1 << 62
	}
	return rT, rU, q.Int64()
}

// reserves are a pool's reserves now: the token's, then USDCh's.
func (a *Arbitrage) reserves(c *simchain.Chain, p GenesisPool) (rT, rU *big.Int) {
	r0, r1, _ := PairReserves(c, PairFor(a.px.Factory, p.Token, p.USDCh))
	if t0, _ := SortTokens(p.Token, p.USDCh); t0 == p.Token {
		return r0, r1
	}
	return r1, r0
}

// MaxDeviationBps is the largest deviation of any pool from its reference
// price now, in basis points.
func (a *Arbitrage) MaxDeviationBps(c *simchain.Chain) int64 {
	var worst int64
	for _, p := range a.pools {
		if _, _, d := a.deviation(c, p); d > worst {
			worst = d
		}
	}
	return worst
}

// Next is the arbitrageur's next transaction at time now, for the pool
// furthest from its reference price (the first in token order on a tie):
// an approve of the router (for the whole of 2^256−1) where the
// arbitrageur has not approved the token it must sell, else the swap that
// brings the pool's price back to its reference, with the current output
// as its minimum. ok is false while every pool is within
// ArbitrageToleranceBps. The arbitrageur sends it (ArbitrageurAddress).
func (a *Arbitrage) Next(c *simchain.Chain, now time.Time) (tx simchain.TxRequest, ok bool, err error) {
	best, bestDev := -1, int64(ArbitrageToleranceBps)
	for i, p := range a.pools {
		if _, _, d := a.deviation(c, p); d > bestDev {
			best, bestDev = i, d
		}
	}
	if best < 0 {
		return tx, false, nil
	}
	p := a.pools[best]
	rT, rU := a.reserves(c, p)
	// The reserves at the reference ratio with the same product:
	// rU'² = rT·rU·gU/gT and rT'² = rT·rU·gT/gU.
	k := new(big.Int).Mul(rT, rU)
	targetU := new(big.Int).Sqrt(new(big.Int).Quo(new(big.Int).Mul(k, p.USDChReserve), p.TokenReserve))
	var path []common.Address
	var in, rIn, rOut *big.Int
	if targetU.Cmp(rU) > 0 {
		// The token is cheap in the pool: buy it with USDCh.
		path, in, rIn, rOut = []common.Address{p.USDCh, p.Token}, targetU.Sub(targetU, rU), rU, rT
	} else {
		targetT := new(big.Int).Sqrt(new(big.Int).Quo(new(big.Int).Mul(k, p.TokenReserve), p.USDChReserve))
		if targetT.Cmp(rT) <= 0 {
			return tx, false, nil
		}
		path, in, rIn, rOut = []common.Address{p.Token, p.USDCh}, targetT.Sub(targetT, rT), rT, rU
	}
	arb := ArbitrageurAddress()
	if c.Allowance(path[0], arb, a.px.Router).Cmp(in) < 0 {
		data, err := simchain.ApproveCalldata(a.px.Router, maxUint256)
		if err != nil {
			return tx, false, fmt.Errorf("pulsesim: arbitrage approve: %w", err)
		}
		return simchain.TxRequest{To: path[0], Data: data, GasLimit: ArbitrageGasLimit}, true, nil
	}
	out := pulseroute.AmountOut(in, rIn, rOut)
	if out.Sign() <= 0 {
		return tx, false, nil
	}
	// The block's time is now, or a second after the head where the clock
	// lags the chain.
	at := max(now.Unix(), int64(c.Head().Time)+1)
	deadline := big.NewInt(at + int64(ArbitrageDeadline/time.Second))
	data, err := pulseroute.SwapExactTokensForTokens(in, out, path, arb, deadline)
	if err != nil {
		return tx, false, fmt.Errorf("pulsesim: arbitrage swap: %w", err)
	}
	return simchain.TxRequest{To: a.px.Router, Data: data, GasLimit: ArbitrageGasLimit}, true, nil
}
