package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/pgtest"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// TestAcknowledgedWritesSurviveACrash writes every kind of durable record
// from several goroutines, crashes the server in the middle (every server
// process killed, no checkpoint), restarts it, and finds every write that
// was acknowledged, and no ledger row twice.
func TestAcknowledgedWritesSurviveACrash(t *testing.T) {
	ctx := context.Background()
	server := pgtest.Private(t)
	dsn, dir := server.DSN(t), t.TempDir()
	s, err := Open(ctx, dsn, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		acked = map[string][]string{}
	)
	ack := func(kind, id string) {
		mu.Lock()
		defer mu.Unlock()
		acked[kind] = append(acked[kind], id)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// Each writer writes until the crash makes it fail.
	writers := map[string]func(i int) error{
		"partner": func(i int) error {
			p := newPartner(fmt.Sprintf("ptn_%05d", i), fmt.Sprint("key-", i))
			if err := s.CreatePartner(ctx, p); err != nil {
				return err
			}
			ack("partner", p.ID)
			return nil
		},
		"wallet": func(i int) error {
			id := fmt.Sprintf("ptn_w%05d", i)
			if err := s.PutFeeWallet(ctx, id, "evm", "0x1111111111111111111111111111111111111111"); err != nil {
				return err
			}
			ack("wallet", id)
			return nil
		},
		"answer": func(i int) error {
			k := fmt.Sprint("key-", i)
			if err := s.RememberAnswer(ctx, idempotency.Key{Scope: "partner.ptn_a", Value: k},
				idempotency.NewRecord(idempotency.Fingerprint{1}, 201, []byte("{}"), time.Now())); err != nil {
				return err
			}
			ack("answer", k)
			return nil
		},
		"ledger": func(i int) error {
			var batch []*account.Activity
			for j := range 5 {
				// Every other batch repeats the previous one's last quote.
				n := 4*i + j
				batch = append(batch, feeQuote("ptn_a", fmt.Sprintf("qt_%06d", n), "evm", 1, at.Add(time.Duration(n))))
			}
			written, err := recordQuotes(ctx, s, store.Synced, batch)
			if err != nil {
				return err
			}
			for j, ok := range written {
				if ok {
					ack("ledger", batch[j].ID)
				}
			}
			return nil
		},
		"webhook": func(i int) error {
			w := newHook(fmt.Sprintf("ptn_h%05d", i), webhook.SwapCompleted)
			if err := s.CreateWebhook(ctx, w); err != nil {
				return err
			}
			ack("webhook", w.ID)
			if _, err := s.Publish(ctx, w.PartnerID, webhook.Event{Name: webhook.SwapCompleted, Time: time.Now()}); err != nil {
				return err
			}
			ack("outbox", w.ID)
			return nil
		},
	}
	var wg sync.WaitGroup
	for kind, write := range writers {
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; ; i += 2 {
					if err := write(i); err != nil {
						return
					}
				}
			}()
		}
		_ = kind
	}
	time.Sleep(400 * time.Millisecond)
	server.Crash(t)
	wg.Wait()
	_ = s.Close()
	server.Restart(t)

	s, err = Open(ctx, dsn, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for kind := range writers {
		if len(acked[kind]) == 0 {
			t.Errorf("no %s write was acknowledged before the crash: the test proves nothing of them", kind)
		}
	}
	for _, id := range acked["partner"] {
		if _, err := s.Partner(ctx, id); err != nil {
			t.Errorf("acknowledged partner %s: %v", id, err)
		}
	}
	for _, id := range acked["wallet"] {
		if _, ok, err := s.FeeWallet(ctx, id, "evm"); err != nil || !ok {
			t.Errorf("acknowledged wallet of %s: %v %v", id, ok, err)
		}
	}
	for _, k := range acked["answer"] {
		if _, err := s.IdempotentAnswer(ctx, idempotency.Key{Scope: "partner.ptn_a", Value: k}); err != nil {
			t.Errorf("acknowledged answer %s: %v", k, err)
		}
	}
	stored := map[string]int{}
	for _, a := range rowsOf(t, s, "ptn_a") {
		stored[a.ID]++
	}
	for _, id := range acked["ledger"] {
		if stored[id] != 1 {
			t.Errorf("acknowledged ledger row %s stored %d times", id, stored[id])
		}
	}
	for id, n := range stored {
		if n != 1 {
			t.Errorf("ledger row %s stored %d times", id, n)
		}
	}
	for _, id := range acked["webhook"] {
		if _, err := s.WebhookByID(ctx, id); err != nil {
			t.Errorf("acknowledged webhook %s: %v", id, err)
		}
	}
	queued := map[string]bool{}
	for _, e := range dueEntries(t, s, time.Now().Add(time.Hour)) {
		queued[e.WebhookID] = true
	}
	for _, id := range acked["outbox"] {
		if !queued[id] {
			t.Errorf("acknowledged event for webhook %s is not in the outbox", id)
		}
	}
	if err := s.Ping(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	t.Logf("acknowledged before the crash: %d partners, %d wallets, %d answers, %d ledger rows, %d webhooks, %d events",
		len(acked["partner"]), len(acked["wallet"]), len(acked["answer"]), len(acked["ledger"]), len(acked["webhook"]), len(acked["outbox"]))
}
