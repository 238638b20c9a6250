package refdata

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// scriptedPrices answers chain 1 with whatever the test last set, or its
// error.
type scriptedPrices struct {
	mu  sync.Mutex
	m   map[string]prices.Price
	err error
}

func (s *scriptedPrices) Prices(_ context.Context, chainID uint64) (map[string]prices.Price, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if chainID != 1 {
		return map[string]prices.Price{}, nil
	}
	return s.m, s.err
}

func (s *scriptedPrices) set(m map[string]prices.Price, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m, s.err = m, err
}

// TestPriceMaxAge drives one token's price through observations and
// clock moves, with the clock injected: whether Price and Prices serve it,
// and whether the snapshot's version moved at each step.
func TestPriceMaxAge(t *testing.T) {
	const maxAge = 300 * time.Second
	t0 := time.Unix(1_000, 0)
	boom := errors.New("upstream down")
	obs := func(usd float64, at time.Time) map[string]prices.Price {
		return map[string]prices.Price{"0xa": {USD: usd, ObservedAt: at}}
	}
	type step struct {
		name    string
		now     time.Time
		answer  map[string]prices.Price // nil with err: the source fails
		err     error
		refresh bool // ask the actor to refresh (and drop what expired)
		want    float64
		served  bool
		bumped  bool // the version differs from the previous step's
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"served while fresh, withheld once old, dropped by the actor", []step{
			{name: "first observation", now: t0, answer: obs(2, t0), refresh: true, want: 2, served: true, bumped: true},
			{name: "at the limit", now: t0.Add(maxAge), want: 2, served: true},
			{name: "past the limit, not yet dropped", now: t0.Add(maxAge + time.Second), bumped: true},
			{name: "the source fails: dropped", now: t0.Add(maxAge + 2*time.Second), answer: nil, err: boom, refresh: true, bumped: true},
			{name: "a fresh observation returns", now: t0.Add(maxAge + 3*time.Second), answer: obs(3, t0.Add(maxAge+3*time.Second)), refresh: true, want: 3, served: true, bumped: true},
		}},
		{"an upstream stamp already too old is never served", []step{
			{name: "stale on arrival", now: t0, answer: obs(2, t0.Add(-maxAge-time.Second)), refresh: true},
			{name: "still stale", now: t0.Add(time.Second), answer: obs(2, t0.Add(-maxAge-time.Second)), refresh: true},
		}},
		{"a re-observation at the same value keeps the version", []step{
			{name: "first", now: t0, answer: obs(2, t0), refresh: true, want: 2, served: true, bumped: true},
			{name: "same value, newer stamp", now: t0.Add(200 * time.Second), answer: obs(2, t0.Add(200*time.Second)), refresh: true, want: 2, served: true},
			{name: "past the first stamp's age, fresh by the second", now: t0.Add(maxAge + 10*time.Second), want: 2, served: true},
		}},
		{"a failing source's prices stay until they are too old", []step{
			{name: "listed", now: t0, answer: obs(2, t0), refresh: true, want: 2, served: true, bumped: true},
			{name: "source down", now: t0.Add(time.Minute), err: boom, refresh: true, want: 2, served: true},
			{name: "too old", now: t0.Add(maxAge + time.Second), err: boom, refresh: true, bumped: true},
		}},
		{"a partial answer renews what it has and keeps the rest", []step{
			{name: "listed", now: t0, answer: obs(2, t0), refresh: true, want: 2, served: true, bumped: true},
			{name: "other token only, with an error", now: t0.Add(time.Minute), answer: map[string]prices.Price{"0xb": {USD: 1, ObservedAt: t0.Add(time.Minute)}}, err: boom, refresh: true, want: 2, served: true, bumped: true},
			{name: "too old", now: t0.Add(maxAge + time.Second), err: boom, refresh: true, bumped: true},
		}},
		{"a complete answer without the token unprices it", []step{
			{name: "listed", now: t0, answer: obs(2, t0), refresh: true, want: 2, served: true, bumped: true},
			{name: "left out", now: t0.Add(time.Minute), answer: map[string]prices.Price{}, refresh: true, bumped: true},
		}},
		{"an older stamp in a partial answer does not replace a newer one", []step{
			{name: "newer", now: t0, answer: obs(2, t0), refresh: true, want: 2, served: true, bumped: true},
			{name: "older arrives", now: t0.Add(time.Second), answer: obs(9, t0.Add(-time.Minute)), err: boom, refresh: true, want: 2, served: true},
		}},
		{"an answer without a stamp is stamped on arrival", []step{
			{name: "unstamped", now: t0, answer: map[string]prices.Price{"0xA": {USD: 4}}, refresh: true, want: 4, served: true, bumped: true},
			{name: "before the limit", now: t0.Add(maxAge), want: 4, served: true},
			{name: "past the limit", now: t0.Add(maxAge + time.Second), bumped: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptedPrices{m: map[string]prices.Price{}}
			var mu sync.Mutex
			now := t0
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			f := start(t, func(c *Config) { c.Prices, c.MaxAge, c.Now = src, maxAge, clock })
			var lastVersion uint64
			for _, st := range tc.steps {
				mu.Lock()
				now = st.now
				mu.Unlock()
				if st.refresh {
					src.set(st.answer, st.err)
					err := f.refresh(t, 1)
					if (err != nil) != (st.err != nil) {
						t.Fatalf("%s: refresh error %v, want %v", st.name, err, st.err)
					}
				}
				p, ok := f.svc.Price(1, "0xA")
				if ok != st.served || (ok && p != st.want) {
					t.Errorf("%s: Price = %v, %v; want %v, %v", st.name, p, ok, st.want, st.served)
				}
				snap, _ := f.svc.Prices(1)
				sp, sok := snap.ByAddress["0xa"]
				if sok != st.served || (sok && sp != st.want) {
					t.Errorf("%s: Prices has %v, %v; want %v, %v", st.name, sp, sok, st.want, st.served)
				}
				if bumped := snap.Version != lastVersion; bumped != st.bumped {
					t.Errorf("%s: version %d after %d: moved %v, want %v", st.name, snap.Version, lastVersion, bumped, st.bumped)
				}
				lastVersion = snap.Version
			}
		})
	}
}

// TestExpiredPricesDropWithoutARefresh runs the real clock: the chain's
// actor drops a price when it grows too old, moving the version, with no
// refresh in between (the source stopped updating, the interval is long).
func TestExpiredPricesDropWithoutARefresh(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	src := &scriptedPrices{m: map[string]prices.Price{"0xa": {USD: 2, ObservedAt: time.Now()}}}
	sys := actors.NewSystemWithLogger(slog.New(&logCounter{}))
	defer sys.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	svc, err := Start(ctx, sys, reg, Config{PriceInterval: time.Hour, GasInterval: time.Hour, MaxAge: 300 * time.Millisecond,
		Prices: src, Gas: &fakeGas{base: 1}, Logger: slog.New(&logCounter{})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	first, _ := svc.Prices(1)
	if _, ok := first.ByAddress["0xa"]; !ok {
		t.Fatal("fresh price not served")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The published snapshot itself, not the readers' filtered copy.
		if snap := svc.states[1].prices.Load(); snap != nil && snap.Version > first.Version {
			if _, ok := snap.ByAddress["0xa"]; ok {
				t.Fatalf("version %d still holds the expired price", snap.Version)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the actor never dropped the expired price")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok := svc.Price(1, strings.ToUpper("0xA")); ok {
		t.Error("Price still serves the expired price")
	}
}
