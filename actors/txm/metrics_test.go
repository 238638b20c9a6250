package txm

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/metricstest"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// memIntents is a store for the metrics' tests: versions checked as the
// real ones check them.
type memIntents struct {
	Store // the methods the metrics do not wrap are never called here
	byID  map[string]*txintent.Intent
	stale bool
}

func (s *memIntents) PutTxIntent(_ context.Context, in *txintent.Intent) (*txintent.Intent, bool, error) {
	if old, ok := s.byID[in.ID]; ok {
		return old.Clone(), false, nil
	}
	c := in.Clone()
	c.Version = 1
	s.byID[in.ID] = c
	return c.Clone(), true, nil
}

func (s *memIntents) ListTxIntents(_ context.Context, q txintent.Query) ([]*txintent.Intent, error) {
	var out []*txintent.Intent
	for _, in := range s.byID {
		if q.Matches(in) {
			out = append(out, in.Clone())
		}
	}
	return out, nil
}

func (s *memIntents) UpdateTxIntents(_ context.Context, ins []*txintent.Intent) error {
	if s.stale {
		return errors.New("stale")
	}
	for _, in := range ins {
		in.Version++
		s.byID[in.ID] = in.Clone()
	}
	return nil
}

// step is one write of the script: the intent's state and transactions
// after it, at seconds after its creation.
type step struct {
	id    string
	state txintent.State
	txs   int
	at    int
}

// TestMetricsFollowTheStoredStates runs intents through their states as
// the manager stores them and reads the figures a scrape sees: intents by
// state, in flight per account, bumps, time to inclusion, final totals.
func TestMetricsFollowTheStoredStates(t *testing.T) {
	ctx := context.Background()
	m := NewMetrics()
	mem := &memIntents{byID: map[string]*txintent.Intent{}}
	st := m.Store(mem).(*meteredStore)
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, _, err := st.PutTxIntent(ctx, &txintent.Intent{ID: id, ChainID: 42161, From: "0xop", State: txintent.Queued, CreatedAt: t0, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	script := []step{
		{"a", txintent.Signed, 1, 0}, {"b", txintent.Signed, 1, 0}, {"c", txintent.Signed, 1, 0},
		{"a", txintent.Sent, 1, 1}, {"b", txintent.Sent, 1, 1},
		{"a", txintent.Mined, 1, 3},  // included after 3 s
		{"b", txintent.Sent, 2, 31},  // bumped
		{"b", txintent.Sent, 3, 61},  // bumped again
		{"b", txintent.Mined, 3, 70}, // included after 70 s
		{"a", txintent.Confirmed, 1, 20},
		{"c", txintent.Failed, 1, 5},
	}
	for _, s := range script {
		in := mem.byID[s.id].Clone()
		in.State = s.state
		in.UpdatedAt = t0.Add(time.Duration(s.at) * time.Second)
		for len(in.Txs) < s.txs {
			in.Txs = append(in.Txs, txintent.Tx{Hash: s.id + strings.Repeat("'", len(in.Txs))})
		}
		if err := st.UpdateTxIntents(ctx, []*txintent.Intent{in}); err != nil {
			t.Fatal(err)
		}
	}
	// A stale write counts nothing.
	mem.stale = true
	in := mem.byID["b"].Clone()
	in.State, in.Txs = txintent.Confirmed, append(in.Txs, txintent.Tx{Hash: "x"})
	if err := st.UpdateTxIntents(ctx, []*txintent.Intent{in}); err == nil {
		t.Fatal("the stale write went through")
	}

	got := metricstest.Values(t, m.Collector(nil, ""))
	want := map[string]float64{
		`swapgate_txm_intents{state="queued"}`:                 1, // d
		`swapgate_txm_intents{state="signed"}`:                 0,
		`swapgate_txm_intents{state="sent"}`:                   0,
		`swapgate_txm_intents{state="mined"}`:                  1, // b
		`swapgate_txm_in_flight{account="0xop",chain="42161"}`: 0,
		`swapgate_txm_intents_final_total{state="confirmed"}`:  1,
		`swapgate_txm_intents_final_total{state="failed"}`:     1,
		`swapgate_txm_bumps_total`:                             2,
		`swapgate_txm_inclusion_seconds_count`:                 2,
		`swapgate_txm_inclusion_seconds_sum`:                   73,
		`swapgate_txm_inclusion_seconds_bucket{le="3.2"}`:      1,
		`swapgate_txm_inclusion_seconds_bucket{le="51.2"}`:     1,
		`swapgate_txm_inclusion_seconds_bucket{le="102.4"}`:    2,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	// d is signed: in flight. An intent learnt by a reading (another
	// process stored it, or it moved before a restart) is counted where it
	// stands, with no move counted.
	d := mem.byID["d"].Clone()
	d.State, d.Txs = txintent.Signed, []txintent.Tx{{Hash: "d"}}
	mem.stale = false
	if err := st.UpdateTxIntents(ctx, []*txintent.Intent{d}); err != nil {
		t.Fatal(err)
	}
	mem.byID["e"] = &txintent.Intent{ID: "e", ChainID: 369, From: "0xop", State: txintent.Sent, Version: 4,
		Txs: []txintent.Tx{{Hash: "e"}, {Hash: "e'"}}, CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)}
	if _, err := st.ListTxIntents(ctx, txintent.Query{Open: true}); err != nil {
		t.Fatal(err)
	}
	got = metricstest.Values(t, m.Collector(nil, ""))
	for k, v := range map[string]float64{
		`swapgate_txm_in_flight{account="0xop",chain="42161"}`: 1,
		`swapgate_txm_in_flight{account="0xop",chain="369"}`:   1,
		`swapgate_txm_intents{state="sent"}`:                   1,
		`swapgate_txm_intents{state="queued"}`:                 0,
		`swapgate_txm_bumps_total`:                             2,
		`swapgate_txm_inclusion_seconds_count`:                 2,
	} {
		if got[k] != v {
			t.Errorf("after the reading: %s = %v, want %v", k, got[k], v)
		}
	}
}

// TestBalanceFromTheManagersReadings: the balance gauge and the low flag
// are the manager's last readings, per chain; a chain not read yet has
// none.
func TestBalanceFromTheManagersReadings(t *testing.T) {
	stats := Stats{Balance: map[uint64]*big.Int{1: big.NewInt(9e16), 369: big.NewInt(5e17), 10: nil}, Low: map[uint64]bool{1: true}}
	got := metricstest.Values(t, NewMetrics().Collector(func() Stats { return stats }, "0xop"))
	for k, v := range map[string]float64{
		`swapgate_txm_account_balance_wei{account="0xop",chain="1"}`:   9e16,
		`swapgate_txm_account_balance_wei{account="0xop",chain="369"}`: 5e17,
		`swapgate_txm_balance_low{chain="1"}`:                          1,
		`swapgate_txm_balance_low{chain="369"}`:                        0,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if _, ok := got[`swapgate_txm_balance_low{chain="10"}`]; ok {
		t.Error("a chain never read has a balance")
	}
}
