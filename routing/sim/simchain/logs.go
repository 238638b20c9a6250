package simchain

import (
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// LogFilter selects logs the way eth_getLogs does.
type LogFilter struct {
	// FromBlock and ToBlock bound the blocks searched, both included;
	// ToBlock zero stands for the head.
	FromBlock, ToBlock uint64
	// Addresses, when not empty, keeps logs emitted by one of them.
	Addresses []common.Address
	// Topics constrains topics by position: Topics[i], when not empty,
	// lists the values allowed for topic i.
	Topics [][]common.Hash
}

// Logs returns the logs of successful transactions that match the filter,
// in chain order. The logs are shared and must not be modified.
func (c *Chain) Logs(f LogFilter) []*types.Log {
	to := f.ToBlock
	if head := c.Head().Number; to == 0 || to > head {
		to = head
	}
	var out []*types.Log
	for n := f.FromBlock; n <= to; n++ {
		for _, h := range c.blocks[n].Transactions {
			for _, l := range c.receipts[h].Logs {
				if matches(l, f) {
					out = append(out, l)
				}
			}
		}
	}
	return out
}

func matches(l *types.Log, f LogFilter) bool {
	if len(f.Addresses) > 0 && !slices.Contains(f.Addresses, l.Address) {
		return false
	}
	if len(f.Topics) > len(l.Topics) {
		return false
	}
	for i, alts := range f.Topics {
		if len(alts) > 0 && !slices.Contains(alts, l.Topics[i]) {
			return false
		}
	}
	return true
}
