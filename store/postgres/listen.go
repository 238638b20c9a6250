package postgres

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// partnerChannel is the notification channel of partner changes: every
// write of a partner (CreatePartner, UpdatePartner) notifies it in its
// transaction, with the partner's ID as payload, so that every process
// sharing the store hears of a change made anywhere (another node, the
// operator's CLI writing to the database directly).
const partnerChannel = "swapgate_partners"

// watchers are the functions OnPartnerChange registered.
type watchers struct {
	mu  sync.Mutex
	fns []func(partnerID string)
}

func (w *watchers) call(partnerID string) {
	w.mu.Lock()
	fns := w.fns
	w.mu.Unlock()
	for _, fn := range fns {
		fn(partnerID)
	}
}

// OnPartnerChange registers fn, called with a partner's ID after any
// process sharing the store changed that partner (a new partner, a rotated
// key, a disabled account, new limits), once the change's notification
// arrives, milliseconds after its commit; and with "" whenever this store
// starts listening again after losing its connection, since any partner
// may have changed meanwhile. A cache of partners (the edge's
// authenticator) drops what it holds on either. fn runs on the store's
// listening goroutine: it must be quick and must not call the store.
func (s *Store) OnPartnerChange(fn func(partnerID string)) {
	s.partnerWatchers.mu.Lock()
	defer s.partnerWatchers.mu.Unlock()
	s.partnerWatchers.fns = append(s.partnerWatchers.fns, fn)
}

// listen keeps a connection of its own listening to the change channels
// until ctx ends: each fee wallet change drops its cache entry
// (walletcache.go), each partner change is passed to the watchers. It
// reconnects after a failure (a second later); while it is not listening
// the wallet cache keeps nothing. It closes done when it returns.
func (s *Store) listen(ctx context.Context, cfg *pgx.ConnConfig, done chan<- struct{}) {
	defer close(done)
	defer s.wallets.reset(false)
	for ctx.Err() == nil {
		s.listenOnce(ctx, cfg)
		s.wallets.reset(false)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *Store) listenOnce(ctx context.Context, cfg *pgx.ConnConfig) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+walletChannel+"; LISTEN "+partnerChannel); err != nil {
		return
	}
	// Listening from here on: whatever committed before is read afresh.
	s.wallets.reset(true)
	s.partnerWatchers.call("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		switch n.Channel {
		case partnerChannel:
			s.partnerWatchers.call(n.Payload)
		case walletChannel:
			from, k, ok1 := strings.Cut(n.Payload, "/")
			partner, eco, ok2 := strings.Cut(k, "/")
			switch {
			case !ok1 || !ok2:
				s.wallets.reset(true) // not ours to read: forget everything
			case from != s.owner:
				s.wallets.invalidate(walletKey{partner, eco})
			}
		}
	}
}
