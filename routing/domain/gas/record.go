// Package gas provides gas price records per chain: the three speed tiers that
// GET /v1/gas-prices reports and the quote engine uses to cost transactions.
// Consumers depend on the one-method Oracle interface; the refdata actors poll
// it per chain in the background.
package gas

import (
	"context"
	"errors"
	"math/big"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Tier is one speed of the gas market. Amounts are wei as decimal strings,
// because they overflow JSON numbers on some chains.
type Tier struct {
	GasPrice             string `json:"gasPrice"`
	MaxFeePerGas         string `json:"maxFeePerGas"`
	MaxPriorityFeePerGas string `json:"maxPriorityFeePerGas"`
	// EstimatedTime is the expected wait for inclusion, in seconds.
	EstimatedTime int `json:"estimatedTime"`
}

// Speeds groups the three tiers under the keys the specification names.
type Speeds struct {
	Slow     Tier `json:"slow"`
	Standard Tier `json:"standard"`
	Fast     Tier `json:"fast"`
}

// Record is the gas price record of one chain (SPEC "Gas price record").
type Record struct {
	ChainID uint64 `json:"chainId"`
	Speed   Speeds `json:"speed"`
	// LastUpdated is in Unix seconds.
	LastUpdated int64 `json:"lastUpdated"`
}

// Oracle gives the current gas record of a chain.
type Oracle interface {
	GasPrice(ctx context.Context, chain *registry.Chain) (Record, error)
}

// ErrUnsupportedChain is returned for chains without an EVM gas market
// (Solana, Bitcoin, NEAR, ...): gas prices in wei mean nothing there. The HTTP
// edge answers it with INVALID_PARAMS.
var ErrUnsupportedChain = errors.New("gas: chain has no EVM gas market")

// ErrNoSource is returned for an EVM chain no configured source reads (in
// live mode, a chain without a node): it has no record, as a chain without
// a gas market has none.
var ErrNoSource = errors.New("gas: no source for this chain")

// Inclusion targets of the tiers, in blocks.
const (
	slowBlocks     = 10
	standardBlocks = 3
	fastBlocks     = 1
)

// SpeedsOf builds the three tiers of a chain from its base fee and the tip
// each tier pays (slow, standard, fast: 10, 3 and 1 blocks to inclusion).
// Every oracle builds its record this way, whatever it read the fees from.
func SpeedsOf(baseFee *big.Int, tips [3]*big.Int, blockTimeMs int) Speeds {
	return Speeds{
		Slow:     tierOf(baseFee, tips[0], slowBlocks, blockTimeMs),
		Standard: tierOf(baseFee, tips[1], standardBlocks, blockTimeMs),
		Fast:     tierOf(baseFee, tips[2], fastBlocks, blockTimeMs),
	}
}

// tierOf builds a tier from the base fee and the tip: the legacy gas price a
// wallet would pay now is base + tip, and the EIP-1559 cap 2×base + tip
// survives six consecutive full blocks of base-fee growth (12.5% each).
func tierOf(baseFee, tip *big.Int, blocks, blockTimeMs int) Tier {
	gasPrice := new(big.Int).Add(baseFee, tip)
	maxFee := new(big.Int).Lsh(baseFee, 1)
	maxFee.Add(maxFee, tip)
	return Tier{
		GasPrice:             gasPrice.String(),
		MaxFeePerGas:         maxFee.String(),
		MaxPriorityFeePerGas: tip.String(),
		EstimatedTime:        estimatedSeconds(blocks, blockTimeMs),
	}
}

// estimatedSeconds converts a block count to seconds, rounding up and never
// answering less than one second (sub-second chains still take a moment).
func estimatedSeconds(blocks, blockTimeMs int) int {
	ms := blocks * blockTimeMs
	s := (ms + 999) / 1000
	if s < 1 {
		s = 1
	}
	return s
}
