package tickets

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/local"
)

// gatedStore is a real ticket log whose PutTickets waits for the gate, so
// that tests can hold tickets pending.
type gatedStore struct {
	*local.TicketLog
	gate  chan struct{}
	mu    sync.Mutex
	sizes []int
	fail  error
}

func (g *gatedStore) PutTickets(ctx context.Context, ts []store.EncodedTicket) error {
	<-g.gate
	g.mu.Lock()
	g.sizes = append(g.sizes, len(ts))
	fail := g.fail
	g.mu.Unlock()
	if fail != nil {
		return fail
	}
	return g.TicketLog.PutTickets(ctx, ts)
}

func openStore(t *testing.T) *local.TicketLog {
	t.Helper()
	s, err := local.OpenTicketLog(t.TempDir(), local.TicketLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func issue(now time.Time) *quote.Issued {
	req := &quote.Request{ID: quote.NewID(now), From: &registry.Chain{ID: 1}, To: &registry.Chain{ID: 10},
		FromToken: &registry.Token{Address: "0xa"}, ToToken: &registry.Token{Address: "0xb"},
		FromAmount: big.NewInt(1), FromAddress: "0xf", ToAddress: "0xf", Now: now}
	return &quote.Issued{ID: req.ID, Request: req, Route: &quote.Route{Tool: "t", DepositAddress: "0xdep"},
		Provider: "intents", ExpiresAt: now.Add(quote.TTL)}
}

func TestPendingTicketsAreServedAndBounded(t *testing.T) {
	ctx := context.Background()
	g := &gatedStore{TicketLog: openStore(t), gate: make(chan struct{})}
	one, err := store.EncodeTicket(issue(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	// Room for three tickets and half of a fourth: an encoded ticket's
	// size varies by a byte or two with its times, and the fourth must
	// not fit however they fall.
	k := Start(g, Options{MaxPendingBytes: 3*one.Size() + one.Size()/2})
	defer k.Close()

	// Three tickets fit; the first commit is held at the gate. A Keep that
	// waited for room here would wait for ever: it is bounded, and fails.
	var ids []string
	for range 3 {
		is := issue(time.Now())
		kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := k.Keep(kctx, is)
		cancel()
		if err != nil {
			t.Fatalf("Keep within the bound: %v", err)
		}
		ids = append(ids, is.ID)
	}
	for _, id := range ids {
		if tk, err := k.Ticket(ctx, id); err != nil || tk.ID != id || tk.DepositAddress != "0xdep" {
			t.Fatalf("pending ticket %s: %+v %v", id, tk, err)
		}
	}
	// A fourth waits for room rather than a ticket being dropped.
	fourth := issue(time.Now())
	kept := make(chan error, 1)
	go func() { kept <- k.Keep(ctx, fourth) }()
	select {
	case err := <-kept:
		t.Fatalf("Keep beyond the bound returned at once: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(g.gate)
	if err := <-kept; err != nil {
		t.Fatal(err)
	}
	k.Close()
	for _, id := range append(ids, fourth.ID) {
		if tk, err := g.TicketLog.Ticket(ctx, id); err != nil || tk.ID != id {
			t.Fatalf("committed ticket %s: %+v %v", id, tk, err)
		}
	}
	if err := k.Keep(ctx, issue(time.Now())); !errors.Is(err, ErrClosed) {
		t.Fatalf("Keep after Close = %v", err)
	}
}

func TestFailedCommitIsReportedAndRetried(t *testing.T) {
	ctx := context.Background()
	gate := make(chan struct{})
	close(gate)
	g := &gatedStore{TicketLog: openStore(t), gate: gate, fail: errors.New("disk full")}
	k := Start(g, Options{})
	defer k.Close()
	first := issue(time.Now())
	if err := k.Keep(ctx, first); err != nil {
		t.Fatal(err)
	}
	// The failed commit is reported to the next quote, which is refused;
	// the ticket already handed out stays served and is retried.
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		err = k.Keep(ctx, issue(time.Now()))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("a failed commit was never reported")
	}
	if tk, err := k.Ticket(ctx, first.ID); err != nil || tk.ID != first.ID {
		t.Fatalf("ticket of a failed commit: %+v %v", tk, err)
	}
	g.mu.Lock()
	g.fail = nil
	g.mu.Unlock()
	if err := k.Keep(ctx, issue(time.Now())); err != nil {
		t.Fatal(err)
	}
	k.Close()
	if _, err := g.TicketLog.Ticket(ctx, first.ID); err != nil {
		t.Fatalf("retried ticket: %v", err)
	}
}

// TestKeepWaitingForRoomEndsWithItsContext: a Keep waiting for room in a
// full buffer returns when its context ends, though no commit drains it.
func TestKeepWaitingForRoomEndsWithItsContext(t *testing.T) {
	g := &gatedStore{TicketLog: openStore(t), gate: make(chan struct{})}
	one, err := store.EncodeTicket(issue(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	k := Start(g, Options{MaxPendingBytes: one.Size() + one.Size()/2})
	// The gate opens before Close, which waits for the held commit.
	defer func() {
		close(g.gate)
		k.Close()
	}()
	if err := k.Keep(context.Background(), issue(time.Now())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.Keep(ctx, issue(time.Now())) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Keep past its deadline = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Keep waiting for room outlived its context")
	}
}

// A multi-step quote's reference finds it while its commit is pending (a
// step 1 registered moments after its quote), and no longer once the
// store's index has it.
func TestPendingQuoteByRef(t *testing.T) {
	g := &gatedStore{TicketLog: openStore(t), gate: make(chan struct{})}
	k := Start(g, Options{})
	defer k.Close()
	is := issue(time.Now())
	is.Route = &quote.Route{Shape: quote.ShapeMultiStep, MultiStep: &quote.MultiStepQuote{Steps: []quote.Step{
		{Step: 1, TransactionRequest: &quote.StepTx{To: "0xr", Data: "0x02", Value: "0x0", ChainID: 10}}, {Step: 2, Automated: true}}}}
	if err := k.Keep(context.Background(), is); err != nil {
		t.Fatal(err)
	}
	other := issue(time.Now())
	if _, ok := k.PendingQuoteByRef(quote.Ref(other.ID)); ok {
		t.Fatal("a reference no pending quote carries was found")
	}
	if id, ok := k.PendingQuoteByRef(quote.Ref(is.ID)); !ok || id != is.ID {
		t.Fatalf("pending multi-step quote by its reference: %q %v, want %s", id, ok, is.ID)
	}
	close(g.gate)
	k.Close()
	if id, ok := k.PendingQuoteByRef(quote.Ref(is.ID)); ok {
		t.Fatalf("still pending after the commit: %s", id)
	}
}
