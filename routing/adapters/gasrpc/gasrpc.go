package gasrpc

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// FeeHistoryReader is the one call the FeeHistory oracle needs from a node.
type FeeHistoryReader interface {
	FeeHistory(ctx context.Context, blockCount uint64, lastBlock *big.Int, rewardPercentiles []float64) (*ethereum.FeeHistory, error)
}

var _ FeeHistoryReader = (*ethclient.Client)(nil)

// feeHistoryBlocks is how many recent blocks the oracle looks at: enough to
// smooth one odd block, few enough to follow a fee spike within a minute.
const feeHistoryBlocks = 20

// rewardPercentiles are the tips, within each block, that the slow, standard
// and fast tiers follow.
var rewardPercentiles = []float64{10, 50, 90}

// FeeHistory is the live gas oracle: it reads eth_feeHistory from a chain's
// RPC endpoint and turns it into the three tiers.
type FeeHistory struct {
	client FeeHistoryReader
	now    func() time.Time
	// timeout bounds each read (noderead.Bound).
	timeout time.Duration
}

var _ gas.Oracle = (*FeeHistory)(nil)

// NewFeeHistory returns an oracle reading from client, under the
// caller's deadline only: the service's oracle comes from Dial.
func NewFeeHistory(client FeeHistoryReader) *FeeHistory {
	return &FeeHistory{client: client, now: time.Now}
}

// Dial connects to a JSON-RPC endpoint and returns an oracle reading from
// it, each read bounded by timeout (--rpc-timeout). Close releases the
// connection.
func Dial(ctx context.Context, url string, timeout time.Duration) (*FeeHistory, error) {
	c, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("gas: dial %s: %w", url, err)
	}
	o := NewFeeHistory(c)
	o.timeout = timeout
	return o, nil
}

// Close closes the underlying client when it is closable (an *ethclient.Client
// from Dial is).
func (o *FeeHistory) Close() {
	if c, ok := o.client.(interface{ Close() }); ok {
		c.Close()
	}
}

// GasPrice reads the fee history of the last blocks and derives the record:
// the base fee is the one the node announces for the pending block, the tip
// of each tier is the median, over the blocks, of that tier's percentile.
func (o *FeeHistory) GasPrice(ctx context.Context, chain *registry.Chain) (gas.Record, error) {
	if chain.ChainType != registry.EVM {
		return gas.Record{}, fmt.Errorf("gas: chain %d (%s): %w", chain.ID, chain.ChainType, gas.ErrUnsupportedChain)
	}
	var fh *ethereum.FeeHistory
	err := noderead.Read(ctx, o.timeout, func(ctx context.Context) (err error) {
		fh, err = o.client.FeeHistory(ctx, feeHistoryBlocks, nil, rewardPercentiles)
		return err
	})
	if err != nil {
		return gas.Record{}, fmt.Errorf("gas: chain %d: eth_feeHistory: %w", chain.ID, err)
	}
	rec, err := recordFromFeeHistory(chain, fh, o.now())
	if err != nil {
		return gas.Record{}, fmt.Errorf("gas: chain %d: %w", chain.ID, err)
	}
	return rec, nil
}

var errEmptyFeeHistory = errors.New("eth_feeHistory returned no base fee")

// recordFromFeeHistory is the arithmetic of GasPrice, apart from the network.
func recordFromFeeHistory(chain *registry.Chain, fh *ethereum.FeeHistory, now time.Time) (gas.Record, error) {
	if fh == nil || len(fh.BaseFee) == 0 {
		return gas.Record{}, errEmptyFeeHistory
	}
	// BaseFee has one entry more than there are blocks: the last is the
	// base fee of the block after the newest, the one a transaction sent
	// now competes for.
	base := fh.BaseFee[len(fh.BaseFee)-1]
	if base == nil {
		base = new(big.Int)
	}
	tips := [3]*big.Int{}
	for i := range tips {
		tips[i] = medianTip(fh, i)
	}
	return gas.Record{
		ChainID:     chain.ID,
		Speed:       gas.SpeedsOf(base, tips, chain.BlockTimeMs),
		LastUpdated: now.Unix(),
	}, nil
}

// medianTip is the median over blocks of the percentile-th reward. Empty
// blocks report a reward of zero that says nothing about the market, so they
// are left out unless every block was empty. Because each block's rewards are
// ordered by percentile, the medians are ordered too: slow ≤ standard ≤ fast.
func medianTip(fh *ethereum.FeeHistory, percentile int) *big.Int {
	var busy, all []*big.Int
	for b, rewards := range fh.Reward {
		if percentile >= len(rewards) || rewards[percentile] == nil {
			continue
		}
		all = append(all, rewards[percentile])
		if b < len(fh.GasUsedRatio) && fh.GasUsedRatio[b] > 0 {
			busy = append(busy, rewards[percentile])
		}
	}
	vals := busy
	if len(vals) == 0 {
		vals = all
	}
	if len(vals) == 0 {
		return new(big.Int)
	}
	vals = slices.Clone(vals)
	slices.SortFunc(vals, func(a, b *big.Int) int { return a.Cmp(b) })
	mid := len(vals) / 2
	if len(vals)%2 == 1 {
		return new(big.Int).Set(vals[mid])
	}
	sum := new(big.Int).Add(vals[mid-1], vals[mid])
	return sum.Rsh(sum, 1)
}
