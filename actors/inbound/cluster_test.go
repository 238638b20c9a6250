package inbound

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/actors/cluster/clustertest"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// fencedPebble gives the Pebble store the fenced write the PostgreSQL
// store has (the stored record compared with the one read, as JSON),
// under one lock, for runners sharing it as nodes share a database.
type fencedPebble struct {
	*pebblestore.Store
	mu sync.Mutex
}

func (f *fencedPebble) SaveInboundDepositFrom(ctx context.Context, prev, d *inbound.Record, events []webhook.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, err := f.InboundDepositByHash(ctx, d.Deposit.Registration.TxHash.Hex())
	if err != nil {
		return err
	}
	a, _ := json.Marshal(cur)
	b, _ := json.Marshal(prev)
	if !bytes.Equal(a, b) {
		return store.ErrStale
	}
	return f.SaveInboundDeposit(ctx, d, events)
}

// TestClusteredRunners runs two runners on one store as two nodes, node a
// owning every deposit: a deposit registered on node b is carried by a,
// and one whose owner dies while its bridge is under way is finished by b;
// each delivery on 369 is asked for once.
func TestClusteredRunners(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	dex, err := pulsesim.NewSandboxChain(reg)
	if err != nil {
		t.Fatal(err)
	}
	contracts := pulseroute.DefaultContracts()
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	cases := []struct {
		name string
		// aBridge is node a's bridge delay; on is the node the deposit is
		// registered on; dies makes a die once it bridges and b own it.
		aBridge time.Duration
		on      string
		dies    bool
	}{
		{name: "registered on a node that does not own it", aBridge: time.Millisecond, on: "b"},
		{name: "owner dies while the bridge is under way", aBridge: time.Hour, on: "a", dies: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pebble, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer pebble.Close()
			store := &fencedPebble{Store: pebble}
			tx := common.BigToHash(big.NewInt(int64(2000 + i)))
			b, from := body(t, 8453, tx, plsx)
			chain := &fakeChain{contracts: contracts, from: from, delivered: map[string]string{}}
			m := clustertest.New("a")
			start := func(name string, bridge time.Duration) *Runner {
				r, err := Start(ctx, store, chain, nil, Options{Contracts: contracts, DEX: dex, BridgeDelay: bridge,
					Owner: m.Node(name), RescanInterval: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			runners := map[string]*Runner{"a": start("a", c.aBridge), "b": start("b", time.Millisecond)}
			stopped := map[string]bool{}
			defer func() {
				for name, r := range runners {
					if !stopped[name] {
						r.Stop()
					}
				}
			}()
			if _, perr := runners[c.on].Register(ctx, b); perr != nil {
				t.Fatal(perr)
			}
			wait := func(what string, ok func(*inbound.Record) bool) *inbound.Record {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for {
					got, err := store.InboundDepositByHash(ctx, tx.Hex())
					if err == nil && ok(got) {
						return got
					}
					if time.Now().After(deadline) {
						t.Fatalf("waited for %s: %+v %v", what, got, err)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			if c.dies {
				wait("bridging", func(d *inbound.Record) bool { return d.Deposit.State == inbound.Bridging })
				runners["a"].Stop()
				stopped["a"] = true
				m.Set("b")
			}
			d := wait("the end", func(d *inbound.Record) bool { return d.Deposit.State.Terminal() })
			if d.Deposit.State != inbound.Completed {
				t.Fatalf("final %+v", d.Deposit)
			}
			chain.mu.Lock()
			defer chain.mu.Unlock()
			if _, ok := chain.delivered[tx.Hex()+"/swap"]; !ok || len(chain.delivered) != 1 {
				t.Fatalf("deliveries %v, want one /swap", chain.delivered)
			}
		})
	}
}
