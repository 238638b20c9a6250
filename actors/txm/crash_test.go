package txm_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// raisingNode raises the chain's base fee before the first broadcast, so
// that what the manager signed at the old one is stuck.
type raisingNode struct {
	txm.Node
	once  sync.Once
	raise func()
}

func (n *raisingNode) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	n.once.Do(n.raise)
	return n.Node.SendTransaction(ctx, tx)
}

var errKilled = errors.New("killed")

// killer stands between a manager and its store and node, and kills the
// manager at the n-th time a step happens: the step is done ("after") or
// not ("before"), and from then on every call fails as if the process were
// gone.
type killer struct {
	step   string
	after  bool
	n      int
	mu     sync.Mutex
	seen   int
	dead   bool
	killed chan struct{}
}

func newKiller(step string, after bool, n int) *killer {
	return &killer{step: step, after: after, n: n, killed: make(chan struct{})}
}

// at runs do as the step named, killing at the chosen occurrence.
func (k *killer) at(step string, do func() error) error {
	k.mu.Lock()
	if k.dead {
		k.mu.Unlock()
		return errKilled
	}
	hit := false
	if step == k.step {
		k.seen++
		hit = k.seen == k.n
	}
	if !hit {
		k.mu.Unlock()
		return do()
	}
	k.dead = true
	close(k.killed)
	k.mu.Unlock()
	if k.after {
		_ = do()
	}
	return errKilled
}

type killStore struct {
	txm.Store
	k *killer
}

// step names an update by what it stores: the first signing of intents,
// a replacement not yet sent, or anything else.
func updateStep(ins []*txintent.Intent) string {
	for _, in := range ins {
		last := in.Last()
		switch {
		case in.State == txintent.Signed && len(in.Txs) == 1:
			return "store signed"
		case in.State == txintent.Sent && len(in.Txs) > 1 && last.SentAt.IsZero():
			return "store replacement"
		case in.State == txintent.Sent && len(in.Txs) == 1:
			return "store sent"
		}
	}
	return "store other"
}

func (s killStore) PutTxIntent(ctx context.Context, in *txintent.Intent) (out *txintent.Intent, created bool, err error) {
	err = s.k.at("put", func() error {
		out, created, err = s.Store.PutTxIntent(ctx, in)
		return err
	})
	return out, created, err
}

func (s killStore) UpdateTxIntents(ctx context.Context, ins []*txintent.Intent) error {
	return s.k.at(updateStep(ins), func() error { return s.Store.UpdateTxIntents(ctx, ins) })
}

func (s killStore) MarkTxIntentHandled(ctx context.Context, id string) error {
	return s.k.at("mark handled", func() error { return s.Store.MarkTxIntentHandled(ctx, id) })
}

type killNode struct {
	txm.Node
	k *killer
}

func (n killNode) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	step := "send"
	if tx.GasFeeCap().Cmp(big.NewInt(100_000_000_000)) > 0 {
		step = "send replacement"
	}
	return n.k.at(step, func() error { return n.Node.SendTransaction(ctx, tx) })
}

func (n killNode) TransactionReceipt(ctx context.Context, h common.Hash) (r *types.Receipt, err error) {
	err = n.k.at("receipt", func() error {
		r, err = n.Node.TransactionReceipt(ctx, h)
		return err
	})
	return r, err
}

// TestManagerCrashScript kills the manager at each step of an intent's
// life, starts a new one on the same store and chain, submits the same
// requests again, and finds every intent confirmed with exactly one mined
// transaction and the recipient paid each amount once. The script is
// testdata/crash.txt: one line per kill, "step after|before n [stuck]"
// (stuck: the base fee is raised before the first broadcast, so that the
// steps of a replacement happen).
func TestManagerCrashScript(t *testing.T) {
	for _, line := range readScript(t, "testdata/crash.txt") {
		f := strings.Fields(line)
		t.Run(strings.Join(f, "_"), func(t *testing.T) {
			var n int
			if _, err := fmt.Sscan(f[2], &n); err != nil {
				t.Fatal(err)
			}
			stuck := len(f) > 3 && f[3] == "stuck"
			e := newEnv(t)
			k := newKiller(strings.ReplaceAll(f[0], "_", " "), f[1] == "after", n)
			var node txm.Node = e.node
			if stuck {
				node = &raisingNode{Node: e.node, raise: func() {
					if err := e.chains.SetBaseFee(e.ctx, chainID, big.NewInt(500_000_000_000)); err != nil {
						t.Error(err)
					}
				}}
			}
			o := e.options(killNode{Node: node, k: k}, killStore{Store: e.store, k: k})
			if stuck {
				o.BumpAfter = 30 * time.Millisecond
			}
			first := e.start(o)
			keys := []string{"a", "b", "c"}
			submit := func(m *txm.Manager) {
				for i, key := range keys {
					if _, err := m.Submit(e.ctx, pay(key, int64(1)<<i)); err != nil && !errors.Is(err, errKilled) {
						t.Fatal(err)
					}
				}
			}
			submit(first)
			select {
			case <-k.killed:
			case <-time.After(20 * time.Second):
				t.Fatalf("the step %q never happened %d times", k.step, n)
			}
			first.Stop()

			o.Store, o.Nodes = e.store, map[uint64]txm.Node{chainID: e.node}
			second := e.start(o)
			submit(second)
			ins := e.waitFinal(keys...)
			e.minedOnce(ins)
			if got := e.balance(); got != 7 {
				t.Fatalf("the recipient got %d wei, want 7 (each payment once)", got)
			}
		})
	}
}

// readScript returns a script's lines, comments and blank lines left out;
// an underscore in a step's name stands for a space.
func readScript(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}
