package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// prefixSwap starts swap/<txHash>: a tracked swap (swap.Swap), keyed by its
// source transaction hash in lower case, which is what status queries name.
const prefixSwap = "swap/"

// swapRecord is the on-disk form of a tracked swap.
type swapRecord struct {
	V int `json:"v"`
	swap.Swap
}

func swapKey(id string) []byte { return []byte(prefixSwap + swap.NormalizeHash(id)) }

func decodeSwap(b []byte) (*swap.Swap, error) {
	var r swapRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode swap: %w", err)
	}
	if r.V != 1 {
		return nil, fmt.Errorf("pebblestore: swap %s: record version %d unknown", r.ID, r.V)
	}
	return &r.Swap, nil
}

// Swap returns the tracked swap whose source transaction is hash, or
// store.ErrNotFound.
func (s *Store) Swap(ctx context.Context, hash string) (*swap.Swap, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	val, err := s.get(swapKey(hash))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: swap %s: %w", hash, err)
	}
	return decodeSwap(val)
}

// CreateSwap stores a newly tracked swap in a synced batch, or returns the
// one already tracked under the same hash (created false), so that
// reporting a swap twice tracks it once.
func (s *Store) CreateSwap(ctx context.Context, t *swap.Swap) (stored *swap.Swap, created bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	switch val, err := s.get(swapKey(t.ID)); {
	case err == nil:
		old, err := decodeSwap(val)
		return old, false, err
	case !errors.Is(err, store.ErrNotFound):
		return nil, false, fmt.Errorf("pebblestore: swap %s: %w", t.ID, err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := s.putSwap(b, t); err != nil {
		return nil, false, err
	}
	if t.DepositAddress != "" {
		if err := b.Set(depositSwapKey(t.DepositAddress, t.DepositMemo), []byte(t.ID), nil); err != nil {
			return nil, false, err
		}
	}
	if t.QuoteID != "" {
		if err := b.Set(quoteSwapKey(t.QuoteID), []byte(t.ID), nil); err != nil {
			return nil, false, err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, false, fmt.Errorf("pebblestore: commit swap %s: %w", t.ID, err)
	}
	return t, true, nil
}

// SaveSwap records a transition of a tracked swap in one synced batch: the
// swap record, its webhook events in the partner's outbox, and the status
// of the partner's activity record of the quote (kind swap), so that none
// of the three is durable without the others.
func (s *Store) SaveSwap(ctx context.Context, t *swap.Swap, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	// The activity record is also rewritten by settlement: the partner
	// lock keeps either from losing the other's change.
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	if err := s.putSwap(b, t); err != nil {
		return err
	}
	if t.PartnerID != "" {
		for _, ev := range events {
			if err := s.EnqueueEvent(b, t.PartnerID, ev); err != nil {
				return err
			}
		}
		if err := s.markActivity(b, t); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit swap %s: %w", t.ID, err)
	}
	return nil
}

func (s *Store) putSwap(b *pebble.Batch, t *swap.Swap) error {
	val, err := json.Marshal(swapRecord{V: 1, Swap: *t})
	if err != nil {
		return fmt.Errorf("pebblestore: encode swap %s: %w", t.ID, err)
	}
	return b.Set(swapKey(t.ID), val, nil)
}

// EachOpenSwap calls fn for every tracked swap still due a poll (not
// terminal, tracking not given up), for trackers resuming after a start.
func (s *Store) EachOpenSwap(ctx context.Context, fn func(*swap.Swap) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixSwap), UpperBound: prefixUpperBound(prefixSwap)})
	if err != nil {
		return fmt.Errorf("pebblestore: swap iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		t, err := decodeSwap(it.Value())
		if err != nil {
			return err
		}
		if t.Terminal() || t.NextPoll.IsZero() {
			continue
		}
		if !fn(t) {
			break
		}
	}
	return it.Error()
}

// prefixDepositSwap starts depositswap/<depositAddress>/<memo>: the source
// hash of the tracked swap of an intents deposit, so that its status can be
// asked by deposit address.
const prefixDepositSwap = "depositswap/"

func depositSwapKey(address, memo string) []byte {
	return []byte(prefixDepositSwap + address + "/" + memo)
}

// SwapByDeposit returns the tracked swap of the intents deposit to address
// (and memo), or store.ErrNotFound.
func (s *Store) SwapByDeposit(ctx context.Context, address, memo string) (*swap.Swap, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	id, err := s.get(depositSwapKey(address, memo))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: deposit swap %s: %w", address, err)
	}
	return s.Swap(ctx, string(id))
}

// prefixQuoteSwap starts quoteswap/<quoteId>: the source hash of the swap
// tracked for a quote (the latest, should one quote have been reported
// with several transactions), so that its status can be asked by quote id.
// Swaps tracked before the key was written have none.
const prefixQuoteSwap = "quoteswap/"

func quoteSwapKey(quoteID string) []byte { return []byte(prefixQuoteSwap + quoteID) }

// SwapByQuote returns the tracked swap of quote id, or store.ErrNotFound.
func (s *Store) SwapByQuote(ctx context.Context, quoteID string) (*swap.Swap, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	id, err := s.get(quoteSwapKey(quoteID))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: swap of quote %s: %w", quoteID, err)
	}
	return s.Swap(ctx, string(id))
}
