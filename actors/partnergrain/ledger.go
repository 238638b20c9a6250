package partnergrain

import (
	"context"
	"fmt"
	"time"

	"github.com/swapgate/swapgate/persistence"
)

// FencedStore writes quote records only for partners whose epoch is the
// one given (postgres.Store.RecordQuotesFenced), naming the others.
type FencedStore interface {
	RecordQuotesFenced(ctx context.Context, recs []persistence.EncodedQuote, epochs map[string]int64, d persistence.Durability) (written []bool, stale []string, err error)
}

// Leases gives the epoch a node's lease of a partner's grain carries, and
// renews it (Limiter does).
type Leases interface {
	Epoch(ctx context.Context, partner string) (int64, error)
	Refresh(ctx context.Context, partner string) (int64, error)
}

// FencedAppender is the ledger actor's store in a cluster (it satisfies
// ledger.Appender): each batch carries the lease's epoch of each partner,
// and the rows of partners whose epoch moved are sent again after their
// lease is refreshed, up to Attempts times.
type FencedAppender struct {
	Store   FencedStore
	Leases  Leases
	Metrics *Metrics
	// Timeout bounds one batch, refreshes and retries included (default
	// 10 s): the ledger actor gives no deadline of its own.
	Timeout time.Duration
	// Attempts bounds the tries of one batch (default 5).
	Attempts int
}

// RecordQuotes writes recs as the ledger's store does, fenced.
func (f *FencedAppender) RecordQuotes(ctx context.Context, recs []persistence.EncodedQuote, d persistence.Durability) ([]bool, error) {
	timeout, attempts := f.Timeout, f.Attempts
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if attempts <= 0 {
		attempts = 5
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	written := make([]bool, len(recs))
	todo := make([]int, len(recs)) // indexes into recs still to write
	for i := range todo {
		todo[i] = i
	}
	refresh := map[string]bool{}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt == attempts {
			return nil, fmt.Errorf("partnergrain: ledger batch: %d rows still fenced out after %d attempts", len(todo), attempts)
		}
		epochs := map[string]int64{}
		batch := make([]persistence.EncodedQuote, len(todo))
		for j, i := range todo {
			batch[j] = recs[i]
			p := recs[i].Activity().PartnerID
			if _, ok := epochs[p]; ok {
				continue
			}
			var e int64
			var err error
			if refresh[p] {
				e, err = f.Leases.Refresh(ctx, p)
			} else {
				e, err = f.Leases.Epoch(ctx, p)
			}
			if err != nil {
				return nil, fmt.Errorf("partnergrain: ledger batch: lease of %s: %w", p, err)
			}
			epochs[p] = e
		}
		w, stale, err := f.Store.RecordQuotesFenced(ctx, batch, epochs, d)
		if err != nil {
			return nil, err
		}
		clear(refresh)
		for _, p := range stale {
			refresh[p] = true
			if f.Metrics != nil {
				f.Metrics.ledgerStale.Add(1)
			}
		}
		next := todo[:0]
		for j, i := range todo {
			written[i] = w[j]
			if refresh[recs[i].Activity().PartnerID] {
				next = append(next, i)
			}
		}
		todo = next
	}
	return written, nil
}
