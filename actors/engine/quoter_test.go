package engine

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// memTickets is a TicketKeeper in a map.
type memTickets map[string]*quote.Ticket

func (m memTickets) Keep(_ context.Context, is *quote.Issued) error {
	m[is.ID] = &quote.Ticket{ID: is.ID, ExpiresAt: is.ExpiresAt}
	return nil
}

func (m memTickets) QuoteByDeposit(context.Context, string, string) (string, error) {
	return "", account.ErrNotFound
}

func (m memTickets) Ticket(_ context.Context, id string) (*quote.Ticket, error) {
	if t, ok := m[id]; ok {
		return t, nil
	}
	return nil, account.ErrNotFound
}

func TestLookupTellsExpiredFromUnknown(t *testing.T) {
	now := time.Unix(1_767_225_600, 0)
	store := memTickets{}
	live, stale, swept := quote.NewID(now.Add(-10*time.Second)), quote.NewID(now.Add(-61*time.Second)), quote.NewID(now.Add(-time.Hour))
	store[live] = &quote.Ticket{ID: live, ExpiresAt: now.Add(50 * time.Second)}
	store[stale] = &quote.Ticket{ID: stale, ExpiresAt: now.Add(-time.Second)}
	q := NewQuoter(nil, nil, nil, store, func() time.Time { return now })
	tests := []struct {
		id   string
		want error
	}{
		{live, nil},
		{stale, quote.ErrExpired},
		{swept, quote.ErrExpired},
		{quote.NewID(now), quote.ErrUnknown},
		{"qt_nonsense", quote.ErrUnknown},
	}
	for _, tt := range tests {
		tk, err := q.Lookup(context.Background(), tt.id)
		if !errors.Is(err, tt.want) || (tt.want == nil && tk.ID != tt.id) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", tt.id, tk, err, tt.want)
		}
	}
}

// buildFails is a Builder that cannot build.
type buildFails struct{}

func (buildFails) Build(context.Context, *quote.Request, *quote.Route) error {
	return errors.New("no calldata")
}

// buildOK is a Builder that fills the route's amounts.
type buildOK struct{}

func (buildOK) Build(_ context.Context, _ *quote.Request, r *quote.Route) error {
	r.FromAmount, r.ToAmount = big.NewInt(1), big.NewInt(1)
	return nil
}

// pricedProvider answers each leg with a priced route worth its value in
// USD, no route for "none", and a route whose build fails for "unbuildable".
type pricedProvider struct {
	name  string
	legs  map[string]float64
	order []string
	delay map[string]time.Duration
}

func (p *pricedProvider) Name() string                 { return p.name }
func (p *pricedProvider) Legs(*quote.Request) []string { return p.order }
func (p *pricedProvider) QuoteLeg(ctx context.Context, _ *quote.Request, leg string) (*quote.Route, error) {
	if d := p.delay[leg]; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	switch leg {
	case "none":
		return nil, &quote.NoRoute{Provider: p.name, Tool: leg, Reason: "AMOUNT_TOO_LOW"}
	case "unbuildable":
		return &quote.Route{Provider: p.name, Tool: leg, ToAmountUSD: 1e9, Pending: buildFails{}}, nil
	}
	return &quote.Route{Provider: p.name, Tool: leg, ToAmountUSD: p.legs[leg], Pending: buildOK{}}, nil
}

// testQuoter is a Quoter over an engine of providers, keeping tickets in
// memory, for anonymous EVM-to-EVM requests (the aggregator's).
func testQuoter(t *testing.T, cfg Config, ps ...quote.Provider) (*Quoter, memTickets) {
	t.Helper()
	tickets := memTickets{}
	return NewQuoter(start(t, cfg, ps...), nil, nil, tickets, nil), tickets
}

func evmRequest() *quote.Request {
	return &quote.Request{From: &registry.Chain{ID: 42161, ChainType: registry.EVM, FeeEcosystem: "evm"},
		To: &registry.Chain{ID: 8453, ChainType: registry.EVM}, Order: quote.Recommended}
}

// TestStreamPassesEachBuiltRoute checks the streaming hook: each route is
// passed once, built, as its leg answers and before Stream returns; a
// route whose build fails and a leg without a route are not passed; the
// quote returned is the best route, issued and kept as Quote's, with the
// race's timing.
func TestStreamPassesEachBuiltRoute(t *testing.T) {
	agg := &pricedProvider{name: "aggregator", order: []string{"slow", "fast", "none", "unbuildable"},
		legs: map[string]float64{"slow": 20, "fast": 10}, delay: map[string]time.Duration{"slow": 30 * time.Millisecond}}
	q, tickets := testQuoter(t, Config{Deadline: 5 * time.Second}, agg)
	var passed []string
	is, err := q.Stream(context.Background(), evmRequest(), nil, func(r *quote.Route) {
		if r.Pending != nil || r.ToAmount == nil {
			t.Errorf("route %s passed before it was built", r.Tool)
		}
		passed = append(passed, r.Tool)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(passed) != 2 || passed[0] != "fast" || passed[1] != "slow" {
		t.Fatalf("routes passed %v, want fast then slow", passed)
	}
	if is.Route.Tool != "slow" || tickets[is.ID] == nil {
		t.Fatalf("issued %s (ticket %v), want slow", is.Route.Tool, tickets[is.ID])
	}
	want := map[string]quote.LegStatus{"slow": quote.LegWon, "fast": quote.LegAnswered, "none": quote.LegNoRoute, "unbuildable": quote.LegFailed}
	if is.Timing == nil || is.Timing.Reason != quote.StopAllAnswered || len(is.Timing.Legs) != len(want) {
		t.Fatalf("timing %+v", is.Timing)
	}
	for _, l := range is.Timing.Legs {
		if l.Status != want[l.Tool] {
			t.Errorf("leg %s: %v, want %v", l.Tool, l.Status, want[l.Tool])
		}
	}
	// Quote is Stream without the hook: the same answer, and only the
	// winner built.
	is, err = q.Quote(context.Background(), evmRequest(), nil)
	if err != nil || is.Route.Tool != "slow" || is.Timing == nil {
		t.Fatalf("Quote: %+v, %v", is, err)
	}
}

// memLedger records partner quotes in memory.
type memLedger struct{ recorded []*account.Activity }

func (l *memLedger) Record(_ context.Context, a *account.Activity) error {
	l.recorded = append(l.recorded, a)
	return nil
}

// TestStreamCancelledIssuesNothing: a streamed race whose context is
// cancelled in the middle (its client went away) ends at once, the legs
// still running told to stop, and issues nothing, though a route had
// come: no ticket, no ledger record, no win.
func TestStreamCancelledIssuesNothing(t *testing.T) {
	agg := &pricedProvider{name: "aggregator", order: []string{"fast", "slow"},
		legs: map[string]float64{"slow": 20, "fast": 10}, delay: map[string]time.Duration{"slow": time.Minute}}
	e := start(t, Config{Deadline: 2 * time.Minute}, agg)
	tickets, ledger := memTickets{}, &memLedger{}
	q := NewQuoter(e, ledger, nil, tickets, nil)
	partner := &account.Partner{ID: "ptn_streamer", EnabledEcosystems: []string{"evm"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := evmRequest()
	req.FromToken, req.ToToken = &registry.Token{ChainID: 42161, Address: "0xa"}, &registry.Token{ChainID: 8453, Address: "0xb"}
	began := time.Now()
	is, err := q.Stream(ctx, req, partner, func(r *quote.Route) {
		if r.Tool == "fast" {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || is != nil {
		t.Fatalf("Stream after its context was cancelled: %+v, %v", is, err)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("the cancelled race took %v", took)
	}
	if len(tickets) != 0 || len(ledger.recorded) != 0 {
		t.Fatalf("a cancelled race issued %d tickets and %d records", len(tickets), len(ledger.recorded))
	}
	if w := e.legs["aggregator"]; w != nil {
		for tool, st := range w {
			if st.wins.Load() != 0 {
				t.Fatalf("%s won a cancelled race", tool)
			}
		}
	}
}

// exemptProvider declares fee-exempt the requests to one chain.
type exemptProvider struct {
	pricedProvider
	toChain uint64
}

func (p *exemptProvider) FeeExempt(req *quote.Request) bool { return req.To.ID == p.toChain }

// TestFeeExemptionsComeFromProviders checks that the quoter takes fee
// exemptions from the providers it races, and only from those that
// declare them.
func TestFeeExemptionsComeFromProviders(t *testing.T) {
	plain := &pricedProvider{name: "plain", order: []string{"a"}, legs: map[string]float64{"a": 1}}
	exempt := &exemptProvider{pricedProvider: pricedProvider{name: "exempt", order: []string{"b"}, legs: map[string]float64{"b": 1}}, toChain: 8453}
	tests := []struct {
		name      string
		providers []quote.Provider
		toChain   uint64
		want      bool
	}{
		{"no provider declares", []quote.Provider{plain}, 8453, false},
		{"declared pair", []quote.Provider{plain, exempt}, 8453, true},
		{"other pair", []quote.Provider{plain, exempt}, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := testQuoter(t, Config{}, tt.providers...)
			req := evmRequest()
			req.To.ID = tt.toChain
			if got := q.feeFree(req); got != tt.want {
				t.Errorf("feeFree = %v, want %v", got, tt.want)
			}
		})
	}
	if NewQuoter(nil, nil, nil, memTickets{}, nil).feeFree(evmRequest()) {
		t.Error("a quoter without an engine exempts a request")
	}
}

// TestRepriceTheQuotedTool: an execute's re-pricing races the quote's
// provider and builds the quote's tool even where another ranks first,
// issues nothing until Issue, and answers the race's failure for a tool
// that no longer quotes.
func TestRepriceTheQuotedTool(t *testing.T) {
	agg := &pricedProvider{name: "aggregator", order: []string{"slow", "fast", "none"},
		legs: map[string]float64{"slow": 20, "fast": 10}}
	q, tickets := testQuoter(t, Config{Deadline: 5 * time.Second}, agg)
	tests := []struct {
		tool string
		ok   bool
	}{{"fast", true}, {"slow", true}, {"none", false}, {"gone", false}}
	for _, tt := range tests {
		req := evmRequest()
		is, err := q.Reprice(context.Background(), req, nil, "aggregator", tt.tool)
		if (err == nil) != tt.ok {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		if !tt.ok {
			continue
		}
		if is.Route.Tool != tt.tool || is.Route.ToAmount == nil || !req.Repricing || !req.AllowTools[tt.tool] || len(req.AllowTools) != 1 {
			t.Fatalf("%s: repriced %+v from %+v", tt.tool, is.Route, req)
		}
		if tickets[is.ID] != nil {
			t.Fatalf("%s: a re-pricing issued %s before Issue", tt.tool, is.ID)
		}
		if err := q.Issue(context.Background(), is, nil); err != nil || tickets[is.ID] == nil {
			t.Fatalf("%s: Issue: %v", tt.tool, err)
		}
	}
}
