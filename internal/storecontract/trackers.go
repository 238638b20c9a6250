package storecontract

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Swaps is the tracked swaps and intents deposits: the tracker's
// (tracker.Store) and the deposit-status endpoint's (edge.DepositSwaps),
// with the ledger and the outbox a transition writes to (Ledger,
// Webhooks). A transition is written with its webhook events and the
// status of the partner's activity line, all or nothing, durably; a swap
// reported twice is tracked once.
type Swaps interface {
	tracker.Store
	edge.DepositSwaps
	edge.QuoteSwaps
	Ledger
	Webhooks
}

// trackedSwap is ptn_a's swap of quote q1, issued at t0, source hash hash.
func trackedSwap(hash string) *swap.Swap {
	return &swap.Swap{ID: hash, QuoteID: "q1", QuoteIssuedAt: t0, PartnerID: "ptn_a", Provider: "aggregator", Tool: "sbx-arcbridge",
		FromChain: 42161, ToChain: 8453, FromAmount: "1000", ToAmount: "990", Status: swap.StatusPending,
		CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Second), NextPoll: t0.Add(2 * time.Second)}
}

// openSwaps lists the IDs of the swaps still polled.
func openSwaps(t testing.TB, s tracker.Store) []string {
	t.Helper()
	var ids []string
	mustNil(t, "open swaps", s.EachOpenSwap(context.Background(), func(w *swap.Swap) bool { ids = append(ids, w.ID); return true }))
	return ids
}

// activityStatus is the status of ptn_a's activity line of q1.
func activityStatus(t testing.TB, s edge.LedgerReader) string {
	t.Helper()
	page, _, err := s.Activities(context.Background(), "ptn_a", account.ActivityQuery{})
	mustNil(t, "activities", err)
	for _, a := range page {
		if a.ID == "q1" {
			return a.Kind + "/" + a.Status
		}
	}
	return ""
}

// RunSwaps holds a Swaps implementation to its contract.
func RunSwaps(t *testing.T, open Factory[Swaps]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Swaps])
	}{
		{"a swap reported twice is tracked once, found by any case of its hash", func(t *testing.T, h *Handle[Swaps]) {
			s := h.Store
			got, created, err := s.CreateSwap(ctx, trackedSwap("0xABC"))
			if err != nil || !created || got.ID != "0xABC" {
				t.Fatalf("create %+v %v %v", got, created, err)
			}
			again := trackedSwap("0xabc")
			again.Status = swap.StatusFailed
			if got, created, err := s.CreateSwap(ctx, again); err != nil || created || got.Status != swap.StatusPending {
				t.Fatalf("second create %+v %v %v", got, created, err)
			}
			if w, err := s.Swap(ctx, "0xabc"); err != nil || w.Status != swap.StatusPending {
				t.Fatalf("by lower-case hash %+v %v", w, err)
			}
			if _, err := s.Swap(ctx, "0xdef"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("missing swap: %v", err)
			}
			if ids := openSwaps(t, s); len(ids) != 1 {
				t.Fatalf("open %v", ids)
			}
		}},
		{"a transition writes the swap, its events and the activity line together", func(t *testing.T, h *Handle[Swaps]) {
			s := h.Store
			_, err := record(ctx, s, store.Synced, feeQuote("ptn_a", "q1", "evm", 10, t0))
			mustNil(t, "record", err)
			mustNil(t, "webhook", s.CreateWebhook(ctx, hook("ptn_a", webhook.SwapCompleted)))
			w, _, err := s.CreateSwap(ctx, trackedSwap("0xabc"))
			mustNil(t, "create", err)
			w.Status, w.NextPoll = swap.StatusDone, time.Time{}
			mustNil(t, "save", s.SaveSwap(ctx, w, []webhook.Event{swap.Event(webhook.SwapCompleted, w, t0.Add(time.Minute))}))
			if got, err := s.Swap(ctx, "0xabc"); err != nil || got.Status != swap.StatusDone {
				t.Fatalf("after save %+v %v", got, err)
			}
			if st := activityStatus(t, s); st != account.ActivitySwap+"/"+swap.StatusDone {
				t.Fatalf("activity line %q", st)
			}
			if es := owed(t, s); len(es) != 1 || es[0].Event != webhook.SwapCompleted {
				t.Fatalf("outbox %+v", es)
			}
			if ids := openSwaps(t, s); len(ids) != 0 {
				t.Fatalf("a finished swap is still polled: %v", ids)
			}
		}},
		{"a swap's line is listed in its sender's and its receiver's histories, a page at a time", func(t *testing.T, h *Handle[Swaps]) {
			s := h.Store
			walletSwaps(t, s)
			if got := walletPages(t, s, "ptn_a", account.WalletKey(evmA), 2, ""); got != "q4 q3 q1" {
				t.Fatalf("the EVM wallet's history %q, want q4 q3 q1 (sender of q1 and q4, receiver of q3 and q4, in any case)", got)
			}
			if got := walletPages(t, s, "ptn_a", solS, 1, ""); got != "q2 q1" {
				t.Fatalf("the Solana wallet's history %q, want q2 q1 (sender of q2, receiver of q1)", got)
			}
			if got := walletPages(t, s, "ptn_a", strings.ToLower(solS), 2, ""); got != "" {
				t.Fatalf("a Solana wallet in another case %q, want none (its case is part of it)", got)
			}
			if got := walletPages(t, s, "ptn_a", account.WalletKey(evmA), 1, swap.StatusDone); got != "q3" {
				t.Fatalf("the EVM wallet's DONE swaps %q, want q3", got)
			}
			if got := walletPages(t, s, "ptn_b", account.WalletKey(evmA), 2, ""); got != "q9" {
				t.Fatalf("another partner's history of the wallet %q, want q9 alone", got)
			}
			page, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{Wallet: account.WalletKey(evmA), Limit: 3})
			mustNil(t, "wallet history", err)
			q1 := page[2]
			if q1.ID != "q1" || q1.Kind != account.ActivitySwap || q1.FromAddress != evmA || q1.ToAddress != solS ||
				q1.SendingTxHash != "0xa1" || q1.ReceivingTxHash != "" {
				t.Fatalf("q1's line %+v", q1)
			}
			if q3 := page[1]; q3.SendingTxHash != "0xa3" || q3.ReceivingTxHash != "0xb3" || q3.ToAddress != strings.ToLower(evmA) {
				t.Fatalf("q3's line %+v", q3)
			}
		}},
		{"an intents deposit is found by its target", func(t *testing.T, h *Handle[Swaps]) {
			s := h.Store
			w := trackedSwap("0xd1")
			w.DepositAddress, w.DepositMemo = "dep.near", "m1"
			_, _, err := s.CreateSwap(ctx, w)
			mustNil(t, "create", err)
			if got, err := s.SwapByDeposit(ctx, "dep.near", "m1"); err != nil || got.ID != "0xd1" {
				t.Fatalf("by deposit %+v %v", got, err)
			}
			if _, err := s.SwapByDeposit(ctx, "dep.near", "m2"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("another memo: %v", err)
			}
		}},
		{"a swap is found by its quote, the latest tracked for it", func(t *testing.T, h *Handle[Swaps]) {
			s := h.Store
			if _, err := s.SwapByQuote(ctx, "q1"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("before any swap: %v", err)
			}
			first := trackedSwap("0xq1")
			first.QuoteID = "q1"
			_, _, err := s.CreateSwap(ctx, first)
			mustNil(t, "create", err)
			if got, err := s.SwapByQuote(ctx, "q1"); err != nil || got.ID != "0xq1" {
				t.Fatalf("by quote %+v %v", got, err)
			}
			again := trackedSwap("0xq2")
			again.QuoteID, again.CreatedAt = "q1", first.CreatedAt.Add(time.Second)
			_, _, err = s.CreateSwap(ctx, again)
			mustNil(t, "create again", err)
			if got, err := s.SwapByQuote(ctx, "q1"); err != nil || got.ID != "0xq2" {
				t.Fatalf("by quote after a second transaction %+v %v, want 0xq2", got, err)
			}
			if _, err := s.SwapByQuote(ctx, "q2"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("another quote: %v", err)
			}
		}},
		{"an interrupted transition writes none of its parts, an acknowledged one survives a crash", func(t *testing.T, h *Handle[Swaps]) {
			_, err := record(ctx, h.Store, store.Synced, feeQuote("ptn_a", "q1", "evm", 10, t0))
			mustNil(t, "record", err)
			mustNil(t, "webhook", h.Store.CreateWebhook(ctx, hook("ptn_a", webhook.SwapCompleted)))
			w, _, err := h.Store.CreateSwap(ctx, trackedSwap("0xabc"))
			mustNil(t, "create", err)
			Interrupt(t, h, func(ctx context.Context, s Swaps) error {
				next := *w
				next.Status, next.NextPoll = swap.StatusDone, time.Time{}
				return s.SaveSwap(ctx, &next, []webhook.Event{swap.Event(webhook.SwapCompleted, &next, t0.Add(time.Minute))})
			}, func(t testing.TB, s Swaps) {
				got, err := s.Swap(ctx, "0xabc")
				if err != nil || got.Status != swap.StatusPending || activityStatus(t, s) != account.ActivityQuote+"/"+account.ActivityQuoted || owedIDs(t, s) != "[]" {
					t.Fatalf("an interrupted transition left %+v (%v), line %q, owed %s", got, err, activityStatus(t, s), owedIDs(t, s))
				}
			}, func(t testing.TB, s Swaps) {
				got, err := s.Swap(ctx, "0xabc")
				if err != nil || got.Status != swap.StatusDone || activityStatus(t, s) != account.ActivitySwap+"/"+swap.StatusDone || len(owed(t, s)) != 1 {
					t.Fatalf("after the transition %+v (%v), line %q, owed %s", got, err, activityStatus(t, s), owedIDs(t, s))
				}
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			tt.run(t, &h)
		})
	}
}

// InboundDeposits is the registered multi-step deposits
// (inboundrun.Store), with the index of multi-step quotes by reference it
// reads and the outbox its steps publish to. A step is written with its
// events, all or nothing, durably; a deposit registered twice is kept
// once.
type InboundDeposits interface {
	inboundrun.Store
	PutQuoteRefs(ctx context.Context, ts []store.EncodedTicket) error
	SweepQuoteRefs(ctx context.Context, before time.Time) error
	Webhooks
}

// deposit is ptn_a's deposit of transaction hash, received.
func deposit(hash string) *inbound.Record {
	return &inbound.Record{PartnerID: "ptn_a", QuoteID: "qt_x", Deposit: inbound.Deposit{
		Registration: inbound.Registration{TxHash: common.HexToHash(hash), FromAddress: common.HexToAddress("0x01"),
			ToAddress: common.HexToAddress("0x02"), OutputToken: common.HexToAddress("0x03"), DestinationDomain: 369,
			Signature: [65]byte{1, 2, 3, 64: 27}},
		SourceChain: 8453, InputToken: common.HexToAddress("0x04"), AmountIn: big.NewInt(5_000_000), State: inbound.Received,
		CreatedAt: t0, UpdatedAt: t0}}
}

// depositState is the stored state of the deposit of hash, "" for none.
func depositState(t testing.TB, s inboundrun.Store, hash string) inbound.State {
	t.Helper()
	d, err := s.InboundDepositByHash(context.Background(), common.HexToHash(hash).Hex())
	if errors.Is(err, account.ErrNotFound) {
		return ""
	}
	mustNil(t, "deposit by hash", err)
	return d.Deposit.State
}

// RunInboundDeposits holds an InboundDeposits implementation to its
// contract.
func RunInboundDeposits(t *testing.T, open Factory[InboundDeposits]) {
	ctx := context.Background()
	received := webhook.Event{Name: webhook.DepositReceived, Time: t0, Data: map[string]string{"txHash": "0xab"}}
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[InboundDeposits])
	}{
		{"registered once, read back whole, open until terminal", func(t *testing.T, h *Handle[InboundDeposits]) {
			s := h.Store
			d := deposit("0xab")
			got, created, err := s.CreateInboundDeposit(ctx, d, nil)
			if err != nil || !created || got != d {
				t.Fatalf("create %v %v", created, err)
			}
			again := deposit("0xab")
			again.Deposit.State = inbound.Failed
			if got, created, err := s.CreateInboundDeposit(ctx, again, nil); err != nil || created || got.Deposit.State != inbound.Received {
				t.Fatalf("second create %+v %v %v", got, created, err)
			}
			read, err := s.InboundDepositByHash(ctx, common.HexToHash("0xab").Hex())
			if err != nil || !reflect.DeepEqual(read, d) {
				t.Fatalf("read back %+v %v\nwant %+v", read, err, d)
			}
			count := func() int {
				n := 0
				mustNil(t, "open deposits", s.EachOpenInboundDeposit(ctx, func(*inbound.Record) bool { n++; return true }))
				return n
			}
			if count() != 1 {
				t.Fatal("a received deposit is not open")
			}
			d.Deposit.State = inbound.Completed
			mustNil(t, "save", s.SaveInboundDeposit(ctx, d, nil))
			if count() != 0 || depositState(t, s, "0xab") != inbound.Completed {
				t.Fatal("a completed deposit is still open")
			}
		}},
		{"multi-step quotes are found by reference", func(t *testing.T, h *Handle[InboundDeposits]) {
			ms, err := store.EncodeTicket(issuedQuote(t0, multiStep()))
			mustNil(t, "encode", err)
			plain, err := store.EncodeTicket(issuedQuote(t0.Add(time.Second), plainRoute()))
			mustNil(t, "encode", err)
			mustNil(t, "put refs", h.Store.PutQuoteRefs(ctx, []store.EncodedTicket{ms, plain}))
			ref, ok := ms.QuoteRef()
			if !ok {
				t.Fatal("a multi-step ticket has no reference")
			}
			if id, err := h.Store.QuoteByRef(ctx, ref); err != nil || id != ms.ID {
				t.Fatalf("by reference %q %v, want %q", id, err, ms.ID)
			}
			// And by its step-1 calldata's, which a live step 1 (the
			// aggregator's transaction, no quote reference) is found by.
			if call, ok := ms.CallRef(); !ok || call != quote.CallRef([]byte{0x02}) {
				t.Fatalf("step-1 reference %x %v, want keccak256 of the calldata", call, ok)
			}
			if id, err := h.Store.QuoteByRef(ctx, quote.CallRef([]byte{0x02})); err != nil || id != ms.ID {
				t.Fatalf("by step-1 calldata %q %v, want %q", id, err, ms.ID)
			}
			if _, ok := plain.QuoteRef(); ok {
				t.Fatal("a plain quote has a reference")
			}
			// Any quote with an EVM transaction is found by its calldata's,
			// which a transaction broadcast without execute is matched by.
			if call, ok := plain.CallRef(); !ok || call != quote.CallRef([]byte{0xab}) {
				t.Fatalf("call reference of a plain quote %x %v, want keccak256 of its calldata", call, ok)
			}
			if id, err := h.Store.QuoteByRef(ctx, quote.CallRef([]byte{0xab})); err != nil || id != plain.ID {
				t.Fatalf("a plain quote by its calldata %q %v, want %q", id, err, plain.ID)
			}
			if _, err := h.Store.QuoteByRef(ctx, [32]byte{1}); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("unknown reference: %v", err)
			}
			// The sweep drops plain quotes' call references with their
			// tickets, hours after; multi-step quotes' stay.
			later, err := store.EncodeTicket(issuedQuote(t0.Add(3*time.Hour), &quote.Route{Tool: "relay",
				Tx: &quote.TxRequest{To: "0xr", Data: []byte{0xef}, ChainID: 1}}))
			mustNil(t, "encode", err)
			mustNil(t, "put later refs", h.Store.PutQuoteRefs(ctx, []store.EncodedTicket{later}))
			mustNil(t, "sweep", h.Store.SweepQuoteRefs(ctx, t0.Add(2*time.Hour)))
			if _, err := h.Store.QuoteByRef(ctx, quote.CallRef([]byte{0xab})); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("a swept call reference: %v", err)
			}
			if id, err := h.Store.QuoteByRef(ctx, quote.CallRef([]byte{0xef})); err != nil || id != later.ID {
				t.Fatalf("a later call reference after the sweep %q %v, want %q", id, err, later.ID)
			}
			if id, err := h.Store.QuoteByRef(ctx, quote.CallRef([]byte{0x02})); err != nil || id != ms.ID {
				t.Fatalf("a multi-step quote's step-1 reference after the sweep %q %v", id, err)
			}
			if id, err := h.Store.QuoteByRef(ctx, ref); err != nil || id != ms.ID {
				t.Fatalf("a multi-step quote's reference after the sweep %q %v", id, err)
			}
		}},
		{"an interrupted registration leaves nothing, an acknowledged one survives a crash with its event", func(t *testing.T, h *Handle[InboundDeposits]) {
			mustNil(t, "webhook", h.Store.CreateWebhook(ctx, hook("ptn_a", webhook.DepositReceived)))
			Interrupt(t, h, func(ctx context.Context, s InboundDeposits) error {
				_, _, err := s.CreateInboundDeposit(ctx, deposit("0xab"), []webhook.Event{received})
				return err
			}, func(t testing.TB, s InboundDeposits) {
				if st := depositState(t, s, "0xab"); st != "" || owedIDs(t, s) != "[]" {
					t.Fatalf("an interrupted registration left state %q, owed %s", st, owedIDs(t, s))
				}
			}, func(t testing.TB, s InboundDeposits) {
				if st := depositState(t, s, "0xab"); st != inbound.Received || len(owed(t, s)) != 1 {
					t.Fatalf("after the registration: state %q, owed %s", st, owedIDs(t, s))
				}
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			tt.run(t, &h)
		})
	}
}

// Wallets of the wallet-history case: an EVM address in its EIP-55 case
// and a Solana address.
const (
	evmA = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	solS = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
)

// walletSwaps records ptn_a's quotes q1 … q5, a minute apart, and ptn_b's
// q9, and tracks swaps of all but q5 (a quote never executed): q1 evmA →
// solS, q2 solS → 0x…02, q3 0x…03 → evmA in lower case (DONE, with its
// destination transaction), q4 evmA → evmA, q9 (ptn_b) evmA → 0x…02.
// Each swap is saved twice, as a tracker's polls save it.
func walletSwaps(t *testing.T, s Swaps) {
	ctx := context.Background()
	type sw struct {
		partner, quote, from, to, status, recv string
	}
	swaps := []sw{
		{"ptn_a", "q1", evmA, solS, swap.StatusPending, ""},
		{"ptn_a", "q2", solS, "0x0000000000000000000000000000000000000002", swap.StatusPending, ""},
		{"ptn_a", "q3", "0x0000000000000000000000000000000000000003", strings.ToLower(evmA), swap.StatusDone, "0xb3"},
		{"ptn_a", "q4", evmA, evmA, swap.StatusPending, ""},
		{"ptn_b", "q9", evmA, "0x0000000000000000000000000000000000000002", swap.StatusPending, ""},
	}
	for i, id := range []string{"q1", "q2", "q3", "q4", "q5"} {
		_, err := record(ctx, s, store.Synced, feeQuote("ptn_a", id, "evm", 0, t0.Add(time.Duration(i)*time.Minute)))
		mustNil(t, "record", err)
	}
	_, err := record(ctx, s, store.Synced, feeQuote("ptn_b", "q9", "evm", 0, t0))
	mustNil(t, "record", err)
	for _, c := range swaps {
		w := trackedSwap("0xa" + c.quote[1:])
		w.PartnerID, w.QuoteID, w.FromAddress, w.ToAddress = c.partner, c.quote, c.from, c.to
		if c.partner == "ptn_a" {
			w.QuoteIssuedAt = t0.Add(time.Duration(c.quote[1]-'1') * time.Minute)
		}
		w.Sending = swap.Leg{TxHash: w.ID, ChainID: w.FromChain}
		w, _, err := s.CreateSwap(ctx, w)
		mustNil(t, "create", err)
		mustNil(t, "save", s.SaveSwap(ctx, w, nil))
		w.Status, w.Receiving = c.status, swap.Leg{TxHash: c.recv, ChainID: w.ToChain}
		mustNil(t, "save again", s.SaveSwap(ctx, w, nil))
	}
}

// walletPages lists the ids of a wallet's swaps in partnerID's history,
// newest first, reading every page of limit lines (with status, when set).
func walletPages(t testing.TB, s edge.LedgerReader, partnerID, wallet string, limit int, status string) string {
	t.Helper()
	var ids []string
	q := account.ActivityQuery{Limit: limit, Wallet: wallet, Status: status}
	for range 10 {
		page, next, err := s.Activities(context.Background(), partnerID, q)
		mustNil(t, "wallet activities", err)
		if len(page) > limit {
			t.Fatalf("a page of %d lines, limit %d", len(page), limit)
		}
		for _, a := range page {
			ids = append(ids, a.ID)
		}
		if next == "" {
			return strings.Join(ids, " ")
		}
		q.Cursor = next
	}
	t.Fatalf("more than 10 pages: %v", ids)
	return ""
}
