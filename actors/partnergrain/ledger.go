package partnergrain

import (
	"context"
	"fmt"
	"time"

	"github.com/swapgate/swapgate/store"
)

// FencedStore writes quote records only for partners whose epoch is the
// one given (postgres.Store.RecordQuotesFenced), naming the others.
type FencedStore interface {
	RecordQuotesFenced(ctx context.Context, recs []store.EncodedQuote, epochs map[string]int64, d store.Durability) (written []bool, stale []string, err error)
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
// lease is refreshed, up to Attempts times. The rows are sent again, not
// dropped: they are quotes already answered or waiting for their row, so
// the fence does not decide whether a row is written, only that a node
// writes a partner's rows while it holds a lease of the partner's current
// activation; a quote's key keeps a row sent twice from being written
// twice. A lease that cannot be renewed (no node answers for the grain
// yet) is asked for again until Timeout, so that a grain moving off a dead
// node loses no row.
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
func (f *FencedAppender) RecordQuotes(ctx context.Context, recs []store.EncodedQuote, d store.Durability) ([]bool, error) {
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
		batch := make([]store.EncodedQuote, len(todo))
		for j, i := range todo {
			batch[j] = recs[i]
			p := recs[i].Activity().PartnerID
			if _, ok := epochs[p]; ok {
				continue
			}
			e, err := f.lease(ctx, p, refresh[p])
			if err != nil {
				return nil, err
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

// lease is the epoch of the node's lease of partner's grain, refreshed
// when fresh is set. While no node answers for the grain (its node died
// and the others have not seen it go yet) it asks again, backing off,
// until ctx ends: the batch's rows are promised, and waiting out a move
// of the grain is what keeps them.
func (f *FencedAppender) lease(ctx context.Context, partner string, fresh bool) (int64, error) {
	wait := 50 * time.Millisecond
	for {
		var e int64
		var err error
		if fresh {
			e, err = f.Leases.Refresh(ctx, partner)
		} else {
			e, err = f.Leases.Epoch(ctx, partner)
		}
		if err == nil {
			return e, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, fmt.Errorf("partnergrain: ledger batch: lease of %s: %w", partner, err)
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}
