package txm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// signBatch is the most queued intents a worker signs and stores in one
// write.
const signBatch = 512

type manager struct {
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	hooks map[string][]Hook

	mu      sync.Mutex
	workers map[uint64]*worker
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started bool
	stopped bool

	bumps atomic.Uint64
}

func newManager(opts Options) (*manager, error) {
	if opts.Store == nil || opts.Signer == nil {
		return nil, errors.New("txm: a store and a signer are required")
	}
	if opts.Confirmations == 0 {
		opts.Confirmations = 1
	}
	if opts.BumpAfter <= 0 {
		opts.BumpAfter = 30 * time.Second
	}
	if opts.BalanceEvery <= 0 {
		opts.BalanceEvery = time.Minute
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &manager{opts: opts, log: opts.Logger, now: opts.Now, hooks: map[string][]Hook{}, workers: map[uint64]*worker{}}
	for id, node := range opts.Nodes {
		if node == nil {
			return nil, fmt.Errorf("txm: chain %d has no node", id)
		}
		m.workers[id] = &worker{m: m, chainID: id, node: node, account: opts.Signer.Address(),
			wake: make(chan struct{}, 1), feeCap: opts.FeeCap[id], known: map[string]bool{}, unseen: map[string]time.Time{}}
	}
	return m, nil
}

func (m *manager) onFinal(purpose string, h Hook) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hooks[purpose] = append(m.hooks[purpose], h)
}

func (m *manager) start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return errors.New("txm: started twice")
	}
	m.started = true
	ctx, m.cancel = context.WithCancel(ctx)
	for _, w := range m.workers {
		if !w.owned() {
			continue // its owner works it; this node takes it over when it owns it
		}
		if err := w.resume(ctx); err != nil {
			m.cancel()
			return err
		}
	}
	for _, w := range m.workers {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			w.run(ctx)
		}()
	}
	return nil
}

func (m *manager) stop() {
	m.mu.Lock()
	m.stopped = true
	cancel := m.cancel
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	m.wg.Wait()
}

// newID is time-ordered (16 hex digits of Unix nanoseconds) so that IDs
// sort by creation, with 8 random hex digits against collisions between
// processes.
func (m *manager) newID() string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("tx_%016x%s", m.now().UnixNano(), hex.EncodeToString(r[:]))
}

func (m *manager) submit(ctx context.Context, r txintent.Request) (*txintent.Intent, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	w, ok := m.workers[r.ChainID]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrUnknownChain, r.ChainID)
	}
	m.mu.Lock()
	stopped := m.stopped
	m.mu.Unlock()
	if stopped {
		return nil, ErrStopped
	}
	value := "0"
	if r.Value != nil {
		value = r.Value.String()
	}
	now := m.now().UTC()
	in := &txintent.Intent{ID: m.newID(), Purpose: r.Purpose, Key: r.Key, ChainID: r.ChainID,
		From: w.account.Hex(), To: r.To.Hex(), Data: append([]byte(nil), r.Data...), Value: value,
		GasLimit: r.GasLimit, State: txintent.Queued, Txs: []txintent.Tx{}, CreatedAt: now, UpdatedAt: now}
	stored, created, err := m.opts.Store.PutTxIntent(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("txm: store intent %s: %w", r.Key, err)
	}
	if created {
		w.enqueue(stored.Clone())
	}
	return stored, nil
}

func (m *manager) wake() {
	for _, w := range m.workers {
		w.rescan.Store(true)
		w.poke()
	}
}

func (m *manager) balance(ctx context.Context, chainID uint64) (*big.Int, error) {
	w, ok := m.workers[chainID]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrUnknownChain, chainID)
	}
	b, err := w.node.BalanceAt(ctx, w.account, nil)
	if err != nil {
		return nil, fmt.Errorf("txm: balance on chain %d: %w", chainID, err)
	}
	return b, nil
}

func (m *manager) stats() Stats {
	s := Stats{InFlight: map[uint64]int{}, Bumps: m.bumps.Load(), Balance: map[uint64]*big.Int{}, Low: map[uint64]bool{}}
	for id, w := range m.workers {
		s.InFlight[id] = int(w.inFlight.Load())
		if b := w.balance.Load(); b != nil {
			s.Balance[id] = new(big.Int).Set(b)
			s.Low[id] = m.opts.MinBalance != nil && b.Cmp(m.opts.MinBalance) < 0
		}
	}
	return s
}

func (m *manager) hooksFor(purpose string) []Hook {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hooks[purpose]
}

// nodeSays reports whether a node's error is err's words (go-ethereum's
// pool errors reach a client as their text only).
func nodeSays(err error, words ...string) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	for _, w := range words {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

func parseWei(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return new(big.Int)
	}
	return n
}

func sortByNonce(ins []*txintent.Intent) {
	sort.SliceStable(ins, func(i, j int) bool { return *ins[i].Nonce < *ins[j].Nonce })
}
