package inbound

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/actors/cluster/clustertest"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/webhook"
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
	contracts := pulseroute.DefaultContracts()
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	cases := []struct {
		name string
		// on is the node the deposit is registered on; dies makes a die
		// once it bridges (the delivery on 369 held until then) and b own
		// it.
		on   string
		dies bool
	}{
		{name: "registered on a node that does not own it", on: "b"},
		{name: "owner dies while the bridge is under way", on: "a", dies: true},
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
			chain := &fakeChain{contracts: contracts, from: from}
			w := newWorld()
			w.deliver = !c.dies
			m := clustertest.New("a")
			start := func(name string) *Runner {
				o := stepOptions(contracts, w)
				o.Owner, o.RescanInterval, o.BridgeHorizon = m.Node(name), 10*time.Millisecond, time.Minute
				r, err := Start(ctx, store, chain, quoteTickets{}, o)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			runners := map[string]*Runner{"a": start("a"), "b": start("b")}
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
				w.deliverAll()
			}
			d := wait("the end", func(d *inbound.Record) bool { return d.Deposit.State.Terminal() })
			if d.Deposit.State != inbound.Completed {
				t.Fatalf("final %+v", d.Deposit)
			}
			if steps, twice := w.steps(); strings.Join(steps, " ") != "approve bridge swap-approve swap" || twice {
				t.Fatalf("steps %v (a key twice: %v), want each once", steps, twice)
			}
		})
	}
}
