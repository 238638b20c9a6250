package simgas

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"time"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// baseFeeWobble is how far the sandbox base fee swings around the chain's
// reference, as a fraction.
const baseFeeWobble = 0.05

// Sandbox tips: a share of the base fee plus a floor, so that tiers stay
// strictly ordered even on chains whose base fee is near zero.
var (
	tipShare = [3]float64{0.05, 0.10, 0.20}       // slow, standard, fast
	tipFloor = [3]float64{0.001e9, 0.01e9, 0.1e9} // wei
)

// Sandbox is the deterministic gas oracle of the embedded market. Its figures
// follow the chain's reference base fee and block time from the registry,
// moved by a small wave over the minute of the hour so that refreshes are
// visible without making tests guess.
type Sandbox struct {
	now func() time.Time
}

var _ gas.Oracle = (*Sandbox)(nil)

// NewSandbox returns the sandbox oracle reading the given clock; pass
// time.Now outside tests.
func NewSandbox(now func() time.Time) *Sandbox { return &Sandbox{now: now} }

// GasPrice returns the sandbox record for an EVM chain and ErrUnsupportedChain
// for any other.
func (s *Sandbox) GasPrice(ctx context.Context, chain *registry.Chain) (gas.Record, error) {
	if err := ctx.Err(); err != nil {
		return gas.Record{}, fmt.Errorf("gas: chain %d: %w", chain.ID, err)
	}
	if chain.ChainType != registry.EVM {
		return gas.Record{}, fmt.Errorf("gas: chain %d (%s): %w", chain.ID, chain.ChainType, gas.ErrUnsupportedChain)
	}
	now := s.now()
	wave := math.Sin(2 * math.Pi * (float64(now.UTC().Minute()) + phase(chain.Key)) / 60)
	baseWei := chain.BaseFeeGwei * 1e9 * (1 + baseFeeWobble*wave)
	base := weiOf(baseWei)
	tip := func(i int) *big.Int { return weiOf(baseWei*tipShare[i] + tipFloor[i]) }
	return gas.Record{
		ChainID:     chain.ID,
		Speed:       gas.SpeedsOf(base, [3]*big.Int{tip(0), tip(1), tip(2)}, chain.BlockTimeMs),
		LastUpdated: now.Unix(),
	}, nil
}

// weiOf rounds a non-negative amount of wei held as a float to an integer.
// big.Float keeps chains with very high nominal fees (PulseChain) exact
// beyond the range of uint64.
func weiOf(wei float64) *big.Int {
	if !(wei > 0) {
		return new(big.Int)
	}
	out, _ := big.NewFloat(math.Round(wei)).Int(nil)
	return out
}

// phase maps a chain key to a stable offset in [0, 60) minutes, so that
// chains do not all move in step.
func phase(key string) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return float64(h.Sum32()%6000) / 100
}
