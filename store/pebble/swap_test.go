package pebblestore

import (
	"context"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

func TestSwapTransitionsAreOneBatch(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	issued := time.Unix(1_767_225_600, 123).UTC()
	if err := s.CreateWebhook(ctx, &webhook.Registration{PartnerID: "ptn_a", URL: "https://example.com/h",
		Events: []string{webhook.SwapCompleted}, Secret: "s", Active: true}); err != nil {
		t.Fatal(err)
	}
	b := s.db.NewBatch()
	if err := s.PutActivity(b, &account.Activity{PartnerID: "ptn_a", ID: "qt_1", Kind: account.ActivityQuote,
		Status: account.ActivityQuoted, CreatedAt: issued}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	tr := &swap.Swap{ID: "0xABC", QuoteID: "qt_1", PartnerID: "ptn_a", Status: swap.StatusPending,
		CreatedAt: issued, NextPoll: issued.Add(time.Second), QuoteIssuedAt: issued}
	got, created, err := s.CreateSwap(ctx, tr)
	if err != nil || !created || got.ID != "0xABC" {
		t.Fatalf("create: %+v %v %v", got, created, err)
	}
	again := *tr
	again.Status = swap.StatusFailed
	if got, created, err := s.CreateSwap(ctx, &again); err != nil || created || got.Status != swap.StatusPending {
		t.Fatalf("second create replaced the first: %+v %v %v", got, created, err)
	}
	open := 0
	if err := s.EachOpenSwap(ctx, func(*swap.Swap) bool { open++; return true }); err != nil || open != 1 {
		t.Fatalf("open swaps %d %v", open, err)
	}

	tr.Status, tr.NextPoll = swap.StatusDone, time.Time{}
	ev := swap.Event(webhook.SwapCompleted, tr, issued.Add(time.Minute))
	if err := s.SaveSwap(ctx, tr, []webhook.Event{ev}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Swap(ctx, "0xabc")
	if err != nil || got.Status != swap.StatusDone {
		t.Fatalf("swap by lower-case hash: %+v %v", got, err)
	}
	acts, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{})
	if err != nil || len(acts) != 1 || acts[0].Kind != account.ActivitySwap || acts[0].Status != swap.StatusDone {
		t.Fatalf("activity %+v %v", acts, err)
	}
	due := 0
	if err := s.DueDeliveries(ctx, time.Time{}, time.Now().Add(time.Hour), nil, func(e *webhook.OutboxEntry) bool {
		due++
		return e.Event == webhook.SwapCompleted
	}); err != nil || due != 1 {
		t.Fatalf("outbox %d %v", due, err)
	}
	open = 0
	if err := s.EachOpenSwap(ctx, func(*swap.Swap) bool { open++; return true }); err != nil || open != 0 {
		t.Fatalf("open swaps after done %d %v", open, err)
	}
}
