package inbound

import (
	"context"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// scriptChain shows each transaction as its script's current page: the
// test moves it on (sent, mined, confirmed) while the runner reads.
type scriptChain struct {
	fakeChain
	smu sync.Mutex
	ev  inbound.Evidence
}

func (c *scriptChain) set(ev inbound.Evidence) {
	c.smu.Lock()
	defer c.smu.Unlock()
	c.ev = ev
}

func (c *scriptChain) Evidence(_ context.Context, chainID uint64, _ common.Hash) (inbound.Evidence, error) {
	c.smu.Lock()
	defer c.smu.Unlock()
	ev := c.ev
	ev.ChainID = chainID
	return ev, nil
}

// TestRegisterBeforeConfirmation scripts a step-1 transaction's life on
// the source chain around its registration: a registration before the
// transaction is confirmed (unknown, pending, or in fewer blocks than the
// confirmations) is CONFIRMING, publishes nothing, and becomes RECEIVED
// with deposit.received once confirmed, or FAILED with the reason when
// the confirmed transaction is not the deposit or the horizon passes; a
// mined transaction that is not the deposit is refused at once.
func TestRegisterBeforeConfirmation(t *testing.T) {
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, _ := contracts.WarpRoute(8453)
	recv, _ := contracts.InboundReceiver(8453)
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	_, from := body(t, 8453, common.Hash{}, plsx)
	mined := func(status, block, head uint64) inbound.Evidence {
		return inbound.Evidence{State: inbound.TxMined, From: from, Status: status, BlockNumber: block, Head: head,
			Transfers: []inbound.Transfer{{Token: w.Token, From: common.HexToAddress("0xde"), To: recv, Amount: big.NewInt(25_000_000)}}}
	}
	unknown, pending := inbound.Evidence{}, inbound.Evidence{State: inbound.TxPending}
	tests := []struct {
		name    string
		at      inbound.Evidence   // at registration
		then    []inbound.Evidence // afterwards, one page each poll or so
		refused string             // refused at registration: details.reason
		final   inbound.State
		reason  string // FAILED: the reason's start
	}{
		{name: "unknown, then mined and confirmed", at: unknown, then: []inbound.Evidence{pending, mined(1, 10, 11), mined(1, 10, 12)}, final: inbound.Received},
		{name: "mined one block short, then confirmed", at: mined(1, 10, 11), then: []inbound.Evidence{mined(1, 10, 12)}, final: inbound.Received},
		{name: "pending, then reverted", at: pending, then: []inbound.Evidence{mined(0, 10, 12)}, final: inbound.Failed, reason: inbound.ReasonFailed},
		{name: "never mined: the horizon", at: unknown, final: inbound.Failed, reason: inbound.ReasonHorizon},
		{name: "mined and reverted, unconfirmed", at: mined(0, 10, 10), refused: inbound.ReasonFailed},
		{name: "mined by another sender, unconfirmed", at: mined(1, 10, 10), refused: inbound.ReasonSender},
		{name: "confirmed at once", at: mined(1, 10, 20), final: inbound.Received},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := common.BigToHash(big.NewInt(int64(5000 + i)))
			b, _ := body(t, 8453, tx, plsx)
			chain := &scriptChain{fakeChain: fakeChain{contracts: contracts, from: from}}
			at := tt.at
			if tt.refused == inbound.ReasonSender {
				at.From = common.HexToAddress("0xbad")
			} else if at.State == inbound.TxMined {
				at.From = from
			}
			chain.set(at)
			var published atomic.Int32
			r, err := Start(ctx, st, chain, nil, Options{Contracts: contracts, Confirmations: 3, Horizon: 400 * time.Millisecond,
				ConfirmPoll: 10 * time.Millisecond, HoldReceived: true, Published: func() { published.Add(1) }})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Stop()
			d, perr := r.Register(ctx, b)
			if tt.refused != "" {
				if perr == nil || perr.Details["reason"] != tt.refused {
					t.Fatalf("registered %+v, refusal %v; want %s", d, perr, tt.refused)
				}
				return
			}
			if perr != nil {
				t.Fatal(perr)
			}
			if len(tt.then) > 0 || tt.final == inbound.Failed {
				if d.Deposit.State != inbound.Confirming || d.Deposit.AmountIn != nil || published.Load() != 0 {
					t.Fatalf("registered %+v (%d published), want CONFIRMING without an amount or an event", d.Deposit, published.Load())
				}
			}
			for _, ev := range tt.then {
				time.Sleep(30 * time.Millisecond)
				if got, _ := r.Deposit(ctx, tx.Hex()); got.Deposit.State != inbound.Confirming {
					t.Fatalf("left CONFIRMING for %s before the chain confirmed", got.Deposit.State)
				}
				ev.From = from
				chain.set(ev)
			}
			deadline := time.Now().Add(5 * time.Second)
			for d.Deposit.State != tt.final {
				if time.Now().After(deadline) {
					t.Fatalf("deposit %+v, want %s", d.Deposit, tt.final)
				}
				time.Sleep(10 * time.Millisecond)
				if d, err = r.Deposit(ctx, tx.Hex()); err != nil {
					t.Fatal(err)
				}
			}
			// Published is called just after the step is stored.
			for published.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			switch tt.final {
			case inbound.Received:
				if d.Deposit.AmountIn.Int64() != 25_000_000 || published.Load() != 1 {
					t.Fatalf("received %+v, %d events published", d.Deposit, published.Load())
				}
			case inbound.Failed:
				if !strings.HasPrefix(d.Deposit.Reason, tt.reason+": ") || published.Load() != 1 {
					t.Fatalf("failed %q, %d events published; want the reason %s", d.Deposit.Reason, published.Load(), tt.reason)
				}
			}
		})
	}
}

// ticketsOf answers one ticket.
type ticketsOf struct{ t quote.Ticket }

func (k ticketsOf) Ticket(_ context.Context, id string) (*quote.Ticket, error) {
	if id != k.t.ID {
		return nil, store.ErrNotFound
	}
	t := k.t
	return &t, nil
}

// TestRegisterHoldsTheQuotesMinimum: a step-1 transaction whose calldata
// is a quote's step 1 (found by keccak256 of it, as a live step 1 from the
// aggregator is) must deliver at least the quote's step-1 minimum: below it
// the registration is refused BELOW_MINIMUM, or, confirmed later, the
// deposit FAILS so; at or above it the deposit carries the quote and its
// partner. A transaction no quote gave is accepted on its USDC alone.
func TestRegisterHoldsTheQuotesMinimum(t *testing.T) {
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, _ := contracts.WarpRoute(8453)
	recv, _ := contracts.InboundReceiver(8453)
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	_, from := body(t, 8453, common.Hash{}, plsx)
	call := quote.CallRef([]byte("the aggregator's step 1"))
	mined := func(head uint64, ref [32]byte) inbound.Evidence {
		return inbound.Evidence{State: inbound.TxMined, From: from, Status: 1, BlockNumber: 10, Head: head, CallRef: ref,
			Transfers: []inbound.Transfer{{Token: w.Token, From: common.HexToAddress("0xde"), To: recv, Amount: big.NewInt(25_000_000)}}}
	}
	tests := []struct {
		name    string
		at      inbound.Evidence
		then    inbound.Evidence // zero: nothing later
		min     string
		refused bool
		final   inbound.State
		quoteID string
	}{
		{name: "at least the minimum", at: mined(10, call), min: "25000000", final: inbound.Received, quoteID: "qt_1"},
		{name: "below the minimum", at: mined(10, call), min: "25000001", refused: true},
		{name: "confirmed later, below the minimum", at: inbound.Evidence{}, then: mined(10, call), min: "30000000", final: inbound.Failed},
		{name: "confirmed later, the quote found then", at: inbound.Evidence{}, then: mined(10, call), min: "1", final: inbound.Received, quoteID: "qt_1"},
		{name: "no quote gave it: the USDC alone", at: mined(10, quote.CallRef([]byte("other"))), min: "30000000", final: inbound.Received},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := common.BigToHash(big.NewInt(int64(7000 + i)))
			b, _ := body(t, 8453, tx, plsx)
			chain := &scriptChain{fakeChain: fakeChain{contracts: contracts, from: from}}
			chain.set(tt.at)
			tickets := ticketsOf{quote.Ticket{ID: "qt_1", PartnerID: "ptn_x", Step1AmountMin: tt.min}}
			r, err := Start(ctx, st, chain, tickets, Options{Contracts: contracts, Confirmations: 1, ConfirmPoll: 10 * time.Millisecond,
				HoldReceived: true, PendingRef: func(ref [32]byte) (string, bool) { return "qt_1", ref == call }})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Stop()
			d, perr := r.Register(ctx, b)
			if tt.refused {
				if perr == nil || perr.Details["reason"] != inbound.ReasonBelowMinimum || perr.Details["minimum"] != tt.min {
					t.Fatalf("registered %+v, refusal %v; want BELOW_MINIMUM", d, perr)
				}
				return
			}
			if perr != nil {
				t.Fatal(perr)
			}
			if tt.then.State != inbound.TxNotFound {
				chain.set(tt.then)
			}
			deadline := time.Now().Add(5 * time.Second)
			for d.Deposit.State != tt.final {
				if time.Now().After(deadline) {
					t.Fatalf("deposit %+v, want %s", d.Deposit, tt.final)
				}
				time.Sleep(10 * time.Millisecond)
				if d, err = r.Deposit(ctx, tx.Hex()); err != nil {
					t.Fatal(err)
				}
			}
			if tt.final == inbound.Failed && !strings.HasPrefix(d.Deposit.Reason, inbound.ReasonBelowMinimum+": ") {
				t.Fatalf("failed for %q, want BELOW_MINIMUM", d.Deposit.Reason)
			}
			wantPartner := ""
			if tt.quoteID != "" {
				wantPartner = "ptn_x"
			}
			if tt.final == inbound.Received && (d.QuoteID != tt.quoteID || d.PartnerID != wantPartner) {
				t.Fatalf("deposit of quote %q partner %q, want %q", d.QuoteID, d.PartnerID, tt.quoteID)
			}
		})
	}
}

// TestConfirmingResumesAfterRestart: a CONFIRMING deposit is open work: a
// runner started on the store after the one that registered it stopped
// reads the chain again and moves it on, once.
func TestConfirmingResumesAfterRestart(t *testing.T) {
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, _ := contracts.WarpRoute(8453)
	recv, _ := contracts.InboundReceiver(8453)
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	tx := common.BigToHash(big.NewInt(9001))
	b, from := body(t, 8453, tx, plsx)
	chain := &scriptChain{fakeChain: fakeChain{contracts: contracts, from: from}}
	opts := Options{Contracts: contracts, ConfirmPoll: 10 * time.Millisecond, HoldReceived: true}
	r, err := Start(ctx, st, chain, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d, perr := r.Register(ctx, b); perr != nil || d.Deposit.State != inbound.Confirming {
		t.Fatalf("registered %+v %v", d, perr)
	}
	r.Stop()
	chain.set(inbound.Evidence{State: inbound.TxMined, From: from, Status: 1, BlockNumber: 3,
		Transfers: []inbound.Transfer{{Token: w.Token, From: common.HexToAddress("0xde"), To: recv, Amount: big.NewInt(25_000_000)}}})
	time.Sleep(50 * time.Millisecond)
	if d, err := r.Deposit(ctx, tx.Hex()); err != nil || d.Deposit.State != inbound.Confirming {
		t.Fatalf("a stopped runner moved the deposit: %+v %v", d, err)
	}
	var published atomic.Int32
	opts.Published = func() { published.Add(1) }
	r2, err := Start(ctx, st, chain, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := r2.Deposit(ctx, tx.Hex())
		if err == nil && d.Deposit.State == inbound.Received && published.Load() == 1 {
			if d.Deposit.AmountIn.Int64() != 25_000_000 {
				t.Fatalf("resumed %+v", d.Deposit)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not resumed: %+v %v (%d published)", d, err, published.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if published.Load() != 1 {
		t.Fatalf("%d events published, want deposit.received once", published.Load())
	}
}
