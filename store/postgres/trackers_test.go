package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's swap and multi-step deposit tests
// (store/pebble/swap_test.go, store/pebble/inbound_test.go), run against
// PostgreSQL, and what sharing the store adds.

func TestSwapTransitionsAreOneTransaction(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	issued := time.Unix(1_767_225_600, 123).UTC()
	if err := s.CreateWebhook(ctx, &webhook.Registration{PartnerID: "ptn_a", URL: "https://example.com/h",
		Events: []string{webhook.SwapCompleted}, Secret: "s", Active: true}); err != nil {
		t.Fatal(err)
	}
	quoted := &account.Activity{PartnerID: "ptn_a", ID: "qt_1", Kind: account.ActivityQuote,
		Status: account.ActivityQuoted, CreatedAt: issued, FeeMicroUSD: 7,
		Earning: &account.Earning{Ecosystem: "evm", FeeAmount: "7", State: account.EarningPending}}
	if _, err := recordQuotes(ctx, s, store.Synced, []*account.Activity{quoted}); err != nil {
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
	if err != nil || !reflect.DeepEqual(got, tr) {
		t.Fatalf("swap by lower-case hash: %+v %v", got, err)
	}
	acts, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{})
	if err != nil || len(acts) != 1 || acts[0].Kind != account.ActivitySwap || acts[0].Status != swap.StatusDone ||
		acts[0].Earning == nil || acts[0].Earning.FeeAmount != "7" || acts[0].FeeMicroUSD != 7 {
		t.Fatalf("activity %+v %v", acts, err)
	}
	due := dueEntries(t, s, time.Now().Add(time.Hour))
	if len(due) != 1 || due[0].Event != webhook.SwapCompleted {
		t.Fatalf("outbox %+v", due)
	}
	open = 0
	if err := s.EachOpenSwap(ctx, func(*swap.Swap) bool { open++; return true }); err != nil || open != 0 {
		t.Fatalf("open swaps after done %d %v", open, err)
	}
	// A swap of a quote with no line (an anonymous one) changes no line.
	anon := &swap.Swap{ID: "0xdef", QuoteID: "qt_anon", PartnerID: "ptn_a", Status: swap.StatusDone, QuoteIssuedAt: issued}
	if err := s.SaveSwap(ctx, anon, nil); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "activity"); n != 1 {
		t.Fatalf("%d activity rows", n)
	}
	if _, err := s.Swap(ctx, "0xmissing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing swap: %v", err)
	}
}

func TestSwapByDeposit(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	cases := []struct {
		id, address, memo string
	}{
		{"0xAA01", "0xdeposit", ""},
		{"0xaa02", "0xdeposit", "memo-1"},
		{"0xaa03", "0xother", ""},
	}
	for _, c := range cases {
		if _, _, err := s.CreateSwap(ctx, &swap.Swap{ID: c.id, Status: swap.StatusPending, DepositAddress: c.address, DepositMemo: c.memo}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		got, err := s.SwapByDeposit(ctx, c.address, c.memo)
		if err != nil || got.ID != c.id {
			t.Errorf("SwapByDeposit(%s, %q) = %+v, %v; want %s", c.address, c.memo, got, err, c.id)
		}
	}
	if _, err := s.SwapByDeposit(ctx, "0xdeposit", "memo-2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown deposit: %v", err)
	}
}

// TestCreateSwapOnceAcrossNodes: a swap reported to several nodes at once
// is created by one of them; the others get the stored one.
func TestCreateSwapOnceAcrossNodes(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	nodes := []*Store{db.open(t, Options{}), db.open(t, Options{}), db.open(t, Options{})}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
	)
	for i, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, ok, err := s.CreateSwap(ctx, &swap.Swap{ID: "0xSAME", Status: swap.StatusPending, Tool: fmt.Sprint(i)})
			if err != nil || got == nil {
				t.Error(got, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				created++
			}
		}()
	}
	wg.Wait()
	if created != 1 {
		t.Fatalf("%d nodes created the swap", created)
	}
}

func TestEachOpenSwapInOrderAndStops(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	next := time.Unix(1_767_225_600, 0).UTC()
	var want []string
	for i := range trackerChunk + 10 {
		sw := &swap.Swap{ID: fmt.Sprintf("0x%04x", i), Status: swap.StatusPending, NextPoll: next}
		switch i % 3 {
		case 1:
			sw.Status = swap.StatusDone
		case 2:
			sw.NextPoll = time.Time{} // tracking given up
		default:
			want = append(want, sw.ID)
		}
		if _, _, err := s.CreateSwap(ctx, sw); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := s.EachOpenSwap(ctx, func(sw *swap.Swap) bool { got = append(got, sw.ID); return true }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("open swaps %d, want %d in hash order", len(got), len(want))
	}
	calls := 0
	if err := s.EachOpenSwap(ctx, func(*swap.Swap) bool { calls++; return calls < 3 }); err != nil || calls != 3 {
		t.Fatalf("a scan told to stop made %d calls (%v)", calls, err)
	}
}

func TestInboundDepositRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if err := s.CreateWebhook(ctx, newHook("ptn_a", webhook.DepositReceived)); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_767_225_600, 0).UTC()
	d := &inbound.Record{PartnerID: "ptn_a", QuoteID: "qt_x", Deposit: inbound.Deposit{
		Registration: inbound.Registration{TxHash: common.HexToHash("0xAB"), FromAddress: common.HexToAddress("0x01"),
			ToAddress: common.HexToAddress("0x02"), OutputToken: common.HexToAddress("0x03"), DestinationDomain: 369,
			Signature: [65]byte{1, 2, 3, 64: 27}},
		SourceChain: 8453, InputToken: common.HexToAddress("0x04"), AmountIn: big.NewInt(5_000_000), State: inbound.Received,
		CreatedAt: at, UpdatedAt: at}}
	received := []webhook.Event{{Name: webhook.DepositReceived, Time: at, Data: map[string]string{"txHash": "0xab"}}}
	got, created, err := s.CreateInboundDeposit(ctx, d, received)
	if err != nil || !created || got != d {
		t.Fatalf("create %v %v", created, err)
	}
	again := *d
	again.Deposit.State = inbound.Failed
	if got, created, err := s.CreateInboundDeposit(ctx, &again, received); err != nil || created || got.Deposit.State != inbound.Received {
		t.Fatalf("second create replaced the first: %+v %v %v", got, created, err)
	}
	if n := len(dueEntries(t, s, time.Now().Add(time.Hour))); n != 1 {
		t.Fatalf("%d events after a create and a repeated one, want 1", n)
	}
	read, err := s.InboundDepositByHash(ctx, common.HexToHash("0xab").Hex())
	if err != nil || !reflect.DeepEqual(read, d) {
		t.Fatalf("read back %+v %v\nwant %+v", read, err, d)
	}
	open := 0
	if err := s.EachOpenInboundDeposit(ctx, func(*inbound.Record) bool { open++; return true }); err != nil {
		t.Fatal(err)
	}
	d.Deposit.State = inbound.Completed
	if err := s.SaveInboundDeposit(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.EachOpenInboundDeposit(ctx, func(*inbound.Record) bool { open += 10; return true }); err != nil {
		t.Fatal(err)
	}
	if open != 1 {
		t.Fatalf("open deposits counted %d, want 1 before completion and 0 after", open)
	}
	if _, err := s.InboundDepositByHash(ctx, common.HexToHash("0xcd").Hex()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown deposit: %v", err)
	}
}
