package engine

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// exactProvider is a fakeProvider that quotes exact outputs unless it says
// why not.
type exactProvider struct {
	*fakeProvider
	refuse string
}

func (p *exactProvider) ExactOutputUnsupported(*quote.Request) string { return p.refuse }

// TestExactOutputRaceLeavesOutWhoCannot: on an exact-output request a
// provider that cannot size the input is not sent a leg; its one outcome
// says why and shows as unsupported in the timing, and the others race as
// usual. A request for a given input races every provider.
func TestExactOutputRaceLeavesOutWhoCannot(t *testing.T) {
	can := &exactProvider{fakeProvider: &fakeProvider{name: "can", legs: []string{"t1", "t2"}}}
	cannot := &exactProvider{fakeProvider: &fakeProvider{name: "cannot", legs: []string{"t3"}}, refuse: "no inverse for this variant"}
	plain := &fakeProvider{name: "plain", legs: []string{""}}
	e := start(t, Config{Deadline: 5 * time.Second}, can, cannot, plain)

	tests := []struct {
		name  string
		req   *quote.Request
		sent  [3]int32 // legs each provider was sent: can, cannot, plain
		legs  int
		wantR map[string]string // unsupported outcomes: provider → reason
	}{
		{"exact output", &quote.Request{ToAmount: big.NewInt(5)}, [3]int32{2, 0, 0}, 4,
			map[string]string{"cannot": "no inverse for this variant", "plain": "the plain provider does not quote exact output"}},
		{"given input", &quote.Request{FromAmount: big.NewInt(5)}, [3]int32{2, 1, 1}, 4, nil},
	}
	for _, tt := range tests {
		before := [3]int32{can.calls.Load(), cannot.calls.Load(), plain.calls.Load()}
		outcomes, end := e.Race(t.Context(), tt.req, names(can, cannot, plain), nil)
		sent := [3]int32{can.calls.Load() - before[0], cannot.calls.Load() - before[1], plain.calls.Load() - before[2]}
		if sent != tt.sent || len(outcomes) != tt.legs || end.Reason != quote.StopAllAnswered {
			t.Fatalf("%s: sent %v, %d outcomes, %v; want %v, %d", tt.name, sent, len(outcomes), end.Reason, tt.sent, tt.legs)
		}
		tm := quote.NewTiming(outcomes, end, nil)
		unsupported := map[string]string{}
		for _, l := range tm.Legs {
			if l.Status == quote.LegUnsupported {
				unsupported[l.Provider] = l.Reason
			}
		}
		if len(unsupported) != len(tt.wantR) {
			t.Errorf("%s: unsupported %v, want %v", tt.name, unsupported, tt.wantR)
		}
		for p, why := range tt.wantR {
			if unsupported[p] != why {
				t.Errorf("%s: %s's reason %q, want %q", tt.name, p, unsupported[p], why)
			}
		}
	}
	// A race of providers that all cannot ends at once as no route, each
	// reason in the failure's details.
	outcomes, _ := e.Race(t.Context(), &quote.Request{ToAmount: big.NewInt(5)}, names(cannot, plain), nil)
	for _, o := range outcomes {
		if !o.Unsupported || o.Status() != quote.LegUnsupported {
			t.Errorf("%+v", o)
		}
	}
}

// refundProvider honours refund addresses.
type refundProvider struct{ *fakeProvider }

func (p *refundProvider) RefundToUnsupported(*quote.Request) string { return "" }

// TestRefundToRaceLeavesOutWhoCannot: a refund address other than
// fromAddress leaves out the providers that cannot pay refunds there; one
// equal to fromAddress, or none, races every provider.
func TestRefundToRaceLeavesOutWhoCannot(t *testing.T) {
	can := &refundProvider{&fakeProvider{name: "can", legs: []string{"t1"}}}
	plain := &fakeProvider{name: "plain", legs: []string{""}}
	e := start(t, Config{Deadline: 5 * time.Second}, can, plain)
	for _, tt := range []struct {
		name     string
		refundTo string
		absent   bool
	}{{"another address", "0xbbbb", true}, {"fromAddress", "0xaaaa", false}, {"none", "", false}} {
		req := &quote.Request{FromAmount: big.NewInt(5), FromAddress: "0xaaaa", RefundTo: tt.refundTo}
		outcomes, _ := e.Race(t.Context(), req, names(can, plain), nil)
		if len(outcomes) != 2 || outcomes[0].Route == nil || outcomes[1].Unsupported != tt.absent {
			t.Fatalf("%s: %+v", tt.name, outcomes)
		}
		if tt.absent {
			var nr *quote.NoRoute
			if !errors.As(outcomes[1].Err, &nr) || nr.Reason != quote.ReasonRefundToUnsupported {
				t.Errorf("%s: %v", tt.name, outcomes[1].Err)
			}
		}
	}
}

// shortProvider quotes exact outputs, and its "short" leg answers a route
// whose toAmountMin is one unit below the request's toAmount, ranked above
// the "enough" leg's route, which reaches it exactly.
type shortProvider struct{ legs []string }

func (p *shortProvider) Name() string                                 { return "aggregator" }
func (p *shortProvider) Legs(*quote.Request) []string                 { return p.legs }
func (p *shortProvider) ExactOutputUnsupported(*quote.Request) string { return "" }
func (p *shortProvider) QuoteLeg(_ context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	min, usd := new(big.Int).Set(req.ToAmount), 10.0
	if leg == "short" {
		min.Sub(min, big.NewInt(1))
		usd = 20
	}
	return &quote.Route{Provider: p.Name(), Tool: leg, FromAmount: big.NewInt(7), ToAmount: new(big.Int).Add(min, big.NewInt(3)),
		ToAmountMin: min, ToAmountUSD: usd}, nil
}

// TestExactOutputShortRouteIsNeverAnswered: a route whose toAmountMin is
// below an exact-output request's toAmount is answered by none of
// /v1/quote (Quote), /v1/quote/stream (Stream) and /v1/routes (Routes),
// though it ranks first: its leg is dropped, with the reason in the
// timing, and the quote is the route that reaches toAmount; a race whose
// only route is short is NO_ROUTE_FOUND naming EXACT_OUTPUT_SHORT.
func TestExactOutputShortRouteIsNeverAnswered(t *testing.T) {
	q, _ := testQuoter(t, Config{Deadline: 5 * time.Second}, &shortProvider{legs: []string{"short", "enough"}})
	exact := func() *quote.Request {
		req := evmRequest()
		req.FromToken, req.ToToken = &registry.Token{ChainID: 42161, Address: "0xa"}, &registry.Token{ChainID: 8453, Address: "0xb"}
		req.ToAmount = big.NewInt(1_000_000)
		return req
	}
	checkTiming := func(t *testing.T, tm *quote.Timing) {
		t.Helper()
		for _, l := range tm.Legs {
			want := "won"
			if l.Tool == "short" {
				want = "dropped"
				if !strings.Contains(l.Reason, "999999") || !strings.Contains(l.Reason, "1000000") {
					t.Errorf("dropped leg's reason %q names neither figure", l.Reason)
				}
			}
			if l.Status.String() != want {
				t.Errorf("leg %s: %s, want %s", l.Tool, l.Status, want)
			}
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T) (answered []*quote.Route, tm *quote.Timing)
	}{
		{"quote", func(t *testing.T) ([]*quote.Route, *quote.Timing) {
			is, err := q.Quote(t.Context(), exact(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return []*quote.Route{is.Route}, is.Timing
		}},
		{"stream", func(t *testing.T) ([]*quote.Route, *quote.Timing) {
			var passed []*quote.Route
			is, err := q.Stream(t.Context(), exact(), nil, func(r *quote.Route) { passed = append(passed, r) })
			if err != nil {
				t.Fatal(err)
			}
			return append(passed, is.Route), is.Timing
		}},
		{"routes", func(t *testing.T) ([]*quote.Route, *quote.Timing) {
			rs, tm, err := q.Routes(t.Context(), exact(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return rs, tm
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answered, tm := tt.run(t)
			for _, r := range answered {
				if r.Tool != "enough" || r.ToAmountMin.Cmp(big.NewInt(1_000_000)) < 0 {
					t.Errorf("answered %s with toAmountMin %s, below toAmount 1000000", r.Tool, r.ToAmountMin)
				}
			}
			checkTiming(t, tm)
		})
	}
	t.Run("only a short route", func(t *testing.T) {
		q, _ := testQuoter(t, Config{Deadline: 5 * time.Second}, &shortProvider{legs: []string{"short"}})
		is, err := q.Quote(t.Context(), exact(), nil)
		ae := apierr.From(err)
		if is != nil || ae.Code != apierr.NoRouteFound || !strings.Contains(fmt.Sprint(ae.Details["reasons"]), "EXACT_OUTPUT_SHORT") {
			t.Fatalf("Quote = %+v, %v (details %v); want NO_ROUTE_FOUND naming EXACT_OUTPUT_SHORT", is, err, ae.Details)
		}
	})
}
