package refdata

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/simgas"
)

// fakePrices answers every chain with a price per registry token that tests
// can change, fail or block.
type fakePrices struct {
	mu    sync.Mutex
	reg   *registry.Registry
	scale float64
	drop  string // lower-case address left out of the answer
	err   error
	block bool // wait for the context instead of answering
	calls atomic.Int64
}

func (f *fakePrices) Prices(ctx context.Context, chainID uint64) (map[string]prices.Price, error) {
	f.calls.Add(1)
	f.mu.Lock()
	scale, drop, err, block := f.scale, f.drop, f.err, f.block
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	out := map[string]prices.Price{}
	for i, t := range f.reg.Tokens(chainID) {
		if addr := strings.ToLower(t.Address); addr != drop {
			// Mixed case on purpose: the service must normalise keys.
			out[strings.ToUpper(addr[:2])+addr[2:]] = prices.Price{USD: scale * float64(i+1)}
		}
	}
	return out, nil
}

func (f *fakePrices) set(fn func(f *fakePrices)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// fakeGas answers EVM chains with a base fee tests can change or fail.
type fakeGas struct {
	mu          sync.Mutex
	base        int64
	lastUpdated int64
	err         error
	calls       atomic.Int64
}

func (f *fakeGas) GasPrice(_ context.Context, c *registry.Chain) (gas.Record, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.ChainType != registry.EVM {
		return gas.Record{}, gas.ErrUnsupportedChain
	}
	if f.err != nil {
		return gas.Record{}, f.err
	}
	var rec gas.Record
	rec.ChainID = c.ID
	rec.LastUpdated = f.lastUpdated
	rec.Speed.Standard = gas.Tier{GasPrice: strconv.FormatInt(f.base, 10), MaxFeePerGas: strconv.FormatInt(2*f.base, 10), MaxPriorityFeePerGas: "1", EstimatedTime: 36}
	return rec, nil
}

func (f *fakeGas) set(fn func(f *fakeGas)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// logCounter counts records per level.
type logCounter struct {
	mu     sync.Mutex
	counts map[slog.Level]int
}

func (h *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		h.counts = map[slog.Level]int{}
	}
	h.counts[r.Level]++
	return nil
}
func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCounter) WithGroup(string) slog.Handler      { return h }
func (h *logCounter) count(l slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[l]
}

type fixture struct {
	reg    *registry.Registry
	sys    *actor.ActorSystem
	prices *fakePrices
	gas    *fakeGas
	logs   *logCounter
	now    atomic.Int64
	svc    *Service
}

// start runs a Service over fakes with intervals long enough that only
// Refresh moves it, unless the test overrides them.
func start(t *testing.T, tweak func(*Config)) *fixture {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		reg:    reg,
		sys:    actors.NewSystemWithLogger(slog.New(&logCounter{})),
		prices: &fakePrices{reg: reg, scale: 1},
		gas:    &fakeGas{base: 100, lastUpdated: 1},
		logs:   &logCounter{},
	}
	f.now.Store(1_000)
	cfg := Config{
		PriceInterval: time.Hour,
		GasInterval:   time.Hour,
		Prices:        f.prices,
		Gas:           f.gas,
		Logger:        slog.New(f.logs),
		Now:           func() time.Time { return time.Unix(f.now.Load(), 0) },
	}
	if tweak != nil {
		tweak(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.svc, err = Start(ctx, f.sys, reg, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		f.svc.Stop()
		f.sys.Shutdown()
	})
	return f
}

func (f *fixture) refresh(t *testing.T, chainID uint64) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.svc.Refresh(ctx, chainID)
}

func TestStartServesEveryChainAtOnce(t *testing.T) {
	f := start(t, nil)
	for _, c := range f.reg.Chains() {
		snap, ok := f.svc.Prices(c.ID)
		if !ok || snap.Version != 1 || !snap.UpdatedAt.Equal(time.Unix(1_000, 0)) {
			t.Fatalf("chain %d: snapshot %+v ok=%v", c.ID, snap, ok)
		}
		for i, tok := range f.reg.Tokens(c.ID) {
			want := float64(i + 1)
			for _, addr := range []string{tok.Address, strings.ToLower(tok.Address), strings.ToUpper(tok.Address[:2]) + tok.Address[2:]} {
				if p, ok := f.svc.Price(c.ID, addr); !ok || p != want {
					t.Errorf("chain %d %s: price %v ok=%v, want %v", c.ID, addr, p, ok, want)
				}
			}
			if p := snap.ByAddress[strings.ToLower(tok.Address)]; p != want {
				t.Errorf("chain %d %s: snapshot price %v, want %v", c.ID, tok.Symbol, p, want)
			}
		}
		rec, ok := f.svc.Gas(c.ID)
		if c.ChainType != registry.EVM {
			if ok || f.svc.GasVersion(c.ID) != 0 {
				t.Errorf("chain %d (%s) has a gas record", c.ID, c.ChainType)
			}
			continue
		}
		if !ok || rec.ChainID != c.ID || rec.Speed.Standard.GasPrice != "100" || f.svc.GasVersion(c.ID) != 1 {
			t.Errorf("chain %d: gas %+v ok=%v version %d", c.ID, rec, ok, f.svc.GasVersion(c.ID))
		}
	}
	if _, ok := f.svc.Price(424242, "0x0"); ok {
		t.Error("price on an unknown chain")
	}
	if err := f.refresh(t, 424242); !errors.Is(err, ErrUnknownChain) {
		t.Errorf("refresh of unknown chain: %v", err)
	}
}

func TestVersionsBumpOnlyOnChange(t *testing.T) {
	f := start(t, nil)
	f.now.Store(2_000)
	f.gas.set(func(g *fakeGas) { g.lastUpdated = 2 })
	if err := f.refresh(t, 1); err != nil {
		t.Fatal(err)
	}
	snap, _ := f.svc.Prices(1)
	if snap.Version != 1 || !snap.UpdatedAt.Equal(time.Unix(1_000, 0)) {
		t.Fatalf("unchanged prices moved the snapshot: %+v", snap)
	}
	if v := f.svc.GasVersion(1); v != 1 {
		t.Fatalf("unchanged gas figures bumped the version to %d", v)
	}
	if rec, _ := f.svc.Gas(1); rec.LastUpdated != 1 {
		t.Fatalf("record changed without a version bump: lastUpdated %d", rec.LastUpdated)
	}

	f.prices.set(func(p *fakePrices) { p.scale = 2 })
	f.gas.set(func(g *fakeGas) { g.base = 150 })
	if err := f.refresh(t, 1); err != nil {
		t.Fatal(err)
	}
	snap, _ = f.svc.Prices(1)
	if snap.Version != 2 || !snap.UpdatedAt.Equal(time.Unix(2_000, 0)) {
		t.Fatalf("changed prices: snapshot %+v", snap)
	}
	native := f.reg.Tokens(1)[0].Address
	if p, _ := f.svc.Price(1, native); p != 2 {
		t.Fatalf("native price %v after change, want 2", p)
	}
	if rec, _ := f.svc.Gas(1); f.svc.GasVersion(1) != 2 || rec.Speed.Standard.GasPrice != "150" || rec.LastUpdated != 2 {
		t.Fatalf("changed gas: version %d record %+v", f.svc.GasVersion(1), rec)
	}
}

func TestFailingSourcesKeepLastValuesAndLogOnce(t *testing.T) {
	f := start(t, nil)
	errPrices, errGas := errors.New("price feed down"), errors.New("rpc down")
	f.prices.set(func(p *fakePrices) { p.err, p.scale = errPrices, 5 })
	f.gas.set(func(g *fakeGas) { g.err, g.base = errGas, 999 })
	for range 3 {
		err := f.refresh(t, 1)
		if !errors.Is(err, errPrices) || !errors.Is(err, errGas) {
			t.Fatalf("refresh error %v should carry both failures", err)
		}
	}
	if p, _ := f.svc.Price(1, f.reg.Tokens(1)[0].Address); p != 1 {
		t.Fatalf("price %v after failures, want the last good 1", p)
	}
	if rec, ok := f.svc.Gas(1); !ok || rec.Speed.Standard.GasPrice != "100" {
		t.Fatalf("gas %+v after failures, want the last good record", rec)
	}
	if snap, _ := f.svc.Prices(1); snap.Version != 1 {
		t.Fatalf("failures bumped the version to %d", snap.Version)
	}
	if w := f.logs.count(slog.LevelWarn); w != 2 {
		t.Fatalf("%d warnings for two outages over three refreshes, want 2", w)
	}

	f.prices.set(func(p *fakePrices) { p.err = nil })
	f.gas.set(func(g *fakeGas) { g.err = nil })
	for range 2 {
		if err := f.refresh(t, 1); err != nil {
			t.Fatal(err)
		}
	}
	if i := f.logs.count(slog.LevelInfo); i != 2 {
		t.Fatalf("%d recovery lines, want 2", i)
	}
	if p, _ := f.svc.Price(1, f.reg.Tokens(1)[0].Address); p != 5 {
		t.Fatalf("price %v after recovery, want 5", p)
	}
}

func TestReadsNeverMissPublishedData(t *testing.T) {
	f := start(t, nil)
	// Whatever ristretto dropped or evicted, the published values answer.
	f.svc.priceCache.Clear()
	f.svc.gasCache.Clear()
	for i, tok := range f.reg.Tokens(1) {
		if p, ok := f.svc.Price(1, tok.Address); !ok || p != float64(i+1) {
			t.Fatalf("%s: %v ok=%v after the cache lost it", tok.Symbol, p, ok)
		}
	}
	if _, ok := f.svc.Gas(1); !ok {
		t.Fatal("gas record lost with the cache")
	}

	// A token the source stops pricing disappears from every read path.
	dropped := strings.ToLower(f.reg.Tokens(1)[0].Address)
	f.prices.set(func(p *fakePrices) { p.drop = dropped })
	if err := f.refresh(t, 1); err != nil {
		t.Fatal(err)
	}
	if p, ok := f.svc.Price(1, dropped); ok {
		t.Fatalf("dropped token still priced at %v", p)
	}
	if snap, _ := f.svc.Prices(1); snap.Version != 2 {
		t.Fatalf("dropping a token left version %d", snap.Version)
	}
}

func TestBackgroundRefreshAndConcurrentReads(t *testing.T) {
	f := start(t, func(c *Config) {
		c.PriceInterval = 5 * time.Millisecond
		c.GasInterval = 5 * time.Millisecond
	})
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, c := range f.reg.Chains() {
					for _, tok := range f.reg.Tokens(c.ID) {
						if _, ok := f.svc.Price(c.ID, tok.Address); !ok {
							t.Errorf("chain %d %s: no price during refreshes", c.ID, tok.Symbol)
							return
						}
					}
					f.svc.Prices(c.ID)
					f.svc.Gas(c.ID)
					f.svc.GasVersion(c.ID)
				}
			}
		}()
	}
	f.prices.set(func(p *fakePrices) { p.scale = 3 })
	f.gas.set(func(g *fakeGas) { g.base = 300 })
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, _ := f.svc.Price(1, f.reg.Tokens(1)[0].Address)
		rec, _ := f.svc.Gas(1)
		if p == 3 && rec.Speed.Standard.GasPrice == "300" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background refresh never picked up the change: price %v gas %s", p, rec.Speed.Standard.GasPrice)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Chain 1 seeing the change says nothing of the others: each chain is
	// refreshed on its own schedule, so wait for every one to be asked again.
	for f.prices.calls.Load() < int64(2*len(f.reg.Chains())) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d price calls for %d chains", f.prices.calls.Load(), len(f.reg.Chains()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	readers.Wait()
}

func TestStartIsBoundedByItsContext(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystemWithLogger(slog.New(&logCounter{}))
	defer sys.Shutdown()
	src := &fakePrices{reg: reg, block: true}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	begin := time.Now()
	svc, err := Start(ctx, sys, reg, Config{
		RefreshTimeout: time.Minute, // the context, not the timeout, must end the wait
		Prices:         src,
		Gas:            &fakeGas{base: 1},
		Logger:         slog.New(&logCounter{}),
	})
	if !errors.Is(err, context.DeadlineExceeded) || svc != nil {
		t.Fatalf("Start = %v, %v; want a deadline error", svc, err)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("Start took %v", took)
	}
}

// referencePrices prices every token at the registry's reference price,
// observed at a fixed time.
type referencePrices struct {
	reg *registry.Registry
	at  time.Time
}

func (r referencePrices) Prices(_ context.Context, chainID uint64) (map[string]prices.Price, error) {
	out := map[string]prices.Price{}
	for _, t := range r.reg.Tokens(chainID) {
		p, err := strconv.ParseFloat(t.PriceUSD, 64)
		if err != nil {
			return nil, err
		}
		out[strings.ToLower(t.Address)] = prices.Price{USD: p, ObservedAt: r.at}
	}
	return out, nil
}

func TestStartWithSandboxSources(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 17, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	src := referencePrices{reg: reg, at: at}
	oracle := simgas.NewSandbox(clock)
	f := start(t, func(c *Config) {
		c.Prices = src
		c.Gas = oracle
	})
	for _, c := range f.reg.Chains() {
		want, err := src.Prices(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		snap, _ := f.svc.Prices(c.ID)
		if len(snap.ByAddress) != len(want) {
			t.Fatalf("chain %d: %d prices, want %d", c.ID, len(snap.ByAddress), len(want))
		}
		for addr, p := range want {
			if got, _ := f.svc.Price(c.ID, addr); got != p.USD {
				t.Errorf("chain %d %s: %v, want %v", c.ID, addr, got, p)
			}
		}
		wantGas, err := oracle.GasPrice(context.Background(), c)
		got, ok := f.svc.Gas(c.ID)
		switch {
		case errors.Is(err, gas.ErrUnsupportedChain):
			if ok {
				t.Errorf("chain %d: unexpected gas record", c.ID)
			}
		case err != nil:
			t.Fatal(err)
		case got != wantGas:
			t.Errorf("chain %d: gas %+v, want %+v", c.ID, got, wantGas)
		}
	}
}

func TestStopIsIdempotentAndReadsSurviveIt(t *testing.T) {
	f := start(t, nil)
	f.svc.Stop()
	f.svc.Stop()
	if p, ok := f.svc.Price(1, f.reg.Tokens(1)[0].Address); !ok || p != 1 {
		t.Fatalf("price after Stop: %v ok=%v", p, ok)
	}
	if err := f.refresh(t, 1); !errors.Is(err, ErrStopped) {
		t.Fatalf("Refresh after Stop: %v", err)
	}
}

// TestCacheStats: reading a chain's gas record goes through the gas cache
// and counts there, a chain without a gas market as a miss.
func TestCacheStats(t *testing.T) {
	f := start(t, nil)
	read := func() map[string][2]uint64 {
		got := map[string][2]uint64{}
		f.svc.CacheStats(func(cache string, hits, misses uint64) { got[cache] = [2]uint64{hits, misses} })
		return got
	}
	var evm, other uint64
	for _, c := range f.reg.Chains() {
		if c.ChainType == registry.EVM && evm == 0 {
			evm = c.ID
		}
		if c.ChainType != registry.EVM && other == 0 {
			other = c.ID
		}
	}
	before := read()
	for range 3 {
		if _, ok := f.svc.Gas(evm); !ok {
			t.Fatalf("no gas on chain %d", evm)
		}
	}
	f.svc.Gas(other)
	after := read()
	if len(after) != 2 {
		t.Fatalf("caches reported: %v", after)
	}
	if hits, misses := after["refdata_gas"][0]-before["refdata_gas"][0], after["refdata_gas"][1]-before["refdata_gas"][1]; hits != 3 || misses != 1 {
		t.Fatalf("gas cache: %d hits and %d misses, want 3 and 1", hits, misses)
	}
}
