package txm

import (
	"context"
	"math/big"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// Metrics is the manager's figures for Prometheus. They are counted from
// what the manager stores, by a Store that wraps the manager's own
// (Metrics.Store): every intent the manager writes passes through it, so
// the figures follow the durable states exactly and the manager's code
// carries no counting. A scrape reads them (Collector) without touching
// the store or a node.
//
//   - swapgate_txm_intents{state}: intents not yet final, by state, as
//     this process last stored or read them;
//   - swapgate_txm_intents_final_total{state}: intents this process moved
//     to confirmed or failed;
//   - swapgate_txm_in_flight{chain,account}: intents signed or sent and
//     not yet mined, per account: nonces handed out that no block holds;
//   - swapgate_txm_bumps_total: replacements (a transaction with the same
//     nonce and higher fees) stored;
//   - swapgate_txm_inclusion_seconds: from an intent stored to its
//     transaction seen in a block;
//   - swapgate_txm_account_balance_wei{chain,account} and
//     swapgate_txm_balance_low{chain}: the operator's native balance as the
//     manager last read it (every Options.BalanceEvery), and 1 while it is
//     under --operator-min-balance (Options.MinBalance; the manager logs
//     the warning).
type Metrics struct {
	mu   sync.Mutex
	open map[string]tracked

	confirmed, failed atomic.Uint64
	bumps             atomic.Uint64
	inclusion         *actors.Histogram
}

// tracked is what the metrics remember of an intent not yet final.
type tracked struct {
	state   txintent.State
	txs     int
	chain   uint64
	from    string
	version uint64
}

// NewMetrics returns empty figures.
func NewMetrics() *Metrics {
	return &Metrics{
		open: map[string]tracked{},
		// 100 ms to about 55 min: a block or two on a fast chain, up to a
		// transaction stuck behind fees for many bump periods.
		inclusion: actors.NewDurationHistogram(100*time.Millisecond, 2, 16),
	}
}

// Store returns st counted: what the manager stores and reads through it
// becomes the figures. Hand the result to Options.Store.
func (m *Metrics) Store(st Store) Store { return &meteredStore{Store: st, m: m} }

// meteredStore counts the intents passing through a Store.
type meteredStore struct {
	Store
	m *Metrics
}

func (s *meteredStore) PutTxIntent(ctx context.Context, in *txintent.Intent) (*txintent.Intent, bool, error) {
	stored, created, err := s.Store.PutTxIntent(ctx, in)
	if err == nil && stored != nil {
		s.m.read(stored)
	}
	return stored, created, err
}

func (s *meteredStore) TxIntent(ctx context.Context, id string) (*txintent.Intent, error) {
	in, err := s.Store.TxIntent(ctx, id)
	if err == nil {
		s.m.read(in)
	}
	return in, err
}

func (s *meteredStore) TxIntentByKey(ctx context.Context, key string) (*txintent.Intent, error) {
	in, err := s.Store.TxIntentByKey(ctx, key)
	if err == nil {
		s.m.read(in)
	}
	return in, err
}

func (s *meteredStore) ListTxIntents(ctx context.Context, q txintent.Query) ([]*txintent.Intent, error) {
	list, err := s.Store.ListTxIntents(ctx, q)
	if err == nil {
		for _, in := range list {
			s.m.read(in)
		}
	}
	return list, err
}

func (s *meteredStore) UpdateTxIntents(ctx context.Context, ins []*txintent.Intent) error {
	if err := s.Store.UpdateTxIntents(ctx, ins); err != nil {
		return err
	}
	for _, in := range ins {
		s.m.wrote(in)
	}
	return nil
}

// read learns an intent as it is stored, counting nothing: a reading says
// where an intent stands, not that this process moved it (another process
// may have, or it moved before a restart).
func (m *Metrics) read(in *txintent.Intent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, known := m.open[in.ID]
	if known && in.Version < old.version {
		return
	}
	if in.Final() {
		delete(m.open, in.ID)
		return
	}
	m.open[in.ID] = trackedOf(in)
}

// wrote counts a move this process stored: a replacement added, a first
// inclusion, a final state.
func (m *Metrics) wrote(in *txintent.Intent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, known := m.open[in.ID]
	if known {
		if added := len(in.Txs) - max(old.txs, 1); added > 0 {
			m.bumps.Add(uint64(added))
		}
		if included(in.State) && !included(old.state) {
			if d := in.UpdatedAt.Sub(in.CreatedAt); d >= 0 {
				m.inclusion.ObserveDuration(d)
			}
		}
	}
	if !in.Final() {
		m.open[in.ID] = trackedOf(in)
		return
	}
	delete(m.open, in.ID)
	switch in.State {
	case txintent.Confirmed:
		m.confirmed.Add(1)
	case txintent.Failed:
		m.failed.Add(1)
	}
}

// included reports whether an intent in s has a transaction in a block.
func included(s txintent.State) bool { return s == txintent.Mined || s == txintent.Confirmed }

func trackedOf(in *txintent.Intent) tracked {
	return tracked{state: in.State, txs: len(in.Txs), chain: in.ChainID, from: in.From, version: in.Version}
}

var (
	intentsDesc = prometheus.NewDesc("swapgate_txm_intents",
		"Transaction intents not yet final, by state (queued, signed, sent, mined), as this process last stored or read them.",
		[]string{"state"}, nil)
	finalDesc = prometheus.NewDesc("swapgate_txm_intents_final_total",
		"Transaction intents this process moved to a final state (confirmed, failed).", []string{"state"}, nil)
	inFlightDesc = prometheus.NewDesc("swapgate_txm_in_flight",
		"Intents signed or sent and not yet mined, per chain and operator account.", []string{"chain", "account"}, nil)
	bumpsDesc = prometheus.NewDesc("swapgate_txm_bumps_total",
		"Replacement transactions stored (same nonce, fees raised) for intents not mined within --tx-bump-after.", nil, nil)
	inclusionDesc = prometheus.NewDesc("swapgate_txm_inclusion_seconds",
		"Time from an intent stored to its transaction seen in a block.", nil, nil)
	balanceDesc = prometheus.NewDesc("swapgate_txm_account_balance_wei",
		"The operator account's native balance on a chain, in wei, at its last reading.", []string{"chain", "account"}, nil)
	lowDesc = prometheus.NewDesc("swapgate_txm_balance_low",
		"1 while the operator's native balance on a chain is under its --operator-min-balance, 0 otherwise.", []string{"chain"}, nil)
)

// Collector exposes the figures; stats (nil: none) is the manager's
// Stats, whose balance readings are exposed for account.
func (m *Metrics) Collector(stats func() Stats, account string) prometheus.Collector {
	return metricsCollector{m: m, stats: stats, account: account}
}

type metricsCollector struct {
	m       *Metrics
	stats   func() Stats
	account string
}

func (c metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{intentsDesc, finalDesc, inFlightDesc, bumpsDesc, inclusionDesc, balanceDesc, lowDesc} {
		ch <- d
	}
}

func (c metricsCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	type acct struct {
		chain uint64
		from  string
	}
	byState := map[txintent.State]int{txintent.Queued: 0, txintent.Signed: 0, txintent.Sent: 0, txintent.Mined: 0}
	inFlight := map[acct]int{}
	m.mu.Lock()
	for _, t := range m.open {
		byState[t.state]++
		a := acct{t.chain, t.from}
		if t.state == txintent.Signed || t.state == txintent.Sent {
			inFlight[a]++
		} else if _, ok := inFlight[a]; !ok {
			inFlight[a] = 0
		}
	}
	m.mu.Unlock()
	for s, n := range byState {
		ch <- prometheus.MustNewConstMetric(intentsDesc, prometheus.GaugeValue, float64(n), string(s))
	}
	for a, n := range inFlight {
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(n), strconv.FormatUint(a.chain, 10), a.from)
	}
	ch <- prometheus.MustNewConstMetric(finalDesc, prometheus.CounterValue, float64(m.confirmed.Load()), string(txintent.Confirmed))
	ch <- prometheus.MustNewConstMetric(finalDesc, prometheus.CounterValue, float64(m.failed.Load()), string(txintent.Failed))
	ch <- prometheus.MustNewConstMetric(bumpsDesc, prometheus.CounterValue, float64(m.bumps.Load()))
	ch <- m.inclusion.Metric(inclusionDesc)
	if c.stats == nil {
		return
	}
	st := c.stats()
	for chain, b := range st.Balance {
		if b == nil {
			continue
		}
		id := strconv.FormatUint(chain, 10)
		wei, _ := new(big.Float).SetInt(b).Float64()
		ch <- prometheus.MustNewConstMetric(balanceDesc, prometheus.GaugeValue, wei, id, c.account)
		low := 0.0
		if st.Low[chain] {
			low = 1
		}
		ch <- prometheus.MustNewConstMetric(lowDesc, prometheus.GaugeValue, low, id)
	}
}
