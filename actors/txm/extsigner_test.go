package txm_test

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/internal/metricstest"
	"github.com/swapgate/swapgate/internal/standin/signer"
	"github.com/swapgate/swapgate/routing/adapters/extsigner"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// externalSigner starts the stand-in signer holding the operator's key in
// shape and returns it with an extsigner.Signer over it.
func externalSigner(t *testing.T, shape signer.Shape) (*signer.Server, *extsigner.Signer) {
	t.Helper()
	key, err := crypto.ToECDSA(operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	st, srv := signer.Start(key, shape)
	t.Cleanup(srv.Close)
	s, err := extsigner.Dial(t.Context(), srv.URL, st.Address())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st, s
}

// TestManagerSignsThroughAnExternalSigner: intents signed by an external
// signer over eth_signTransaction (both answer shapes) are sent and
// confirmed, each mined once, and the manager's metrics, counted from what
// it stores, say so.
func TestManagerSignsThroughAnExternalSigner(t *testing.T) {
	for _, shape := range []signer.Shape{signer.Web3Signer, signer.Clef} {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			e := newEnv(t)
			st, ext := externalSigner(t, shape)
			metrics := txm.NewMetrics()
			o := e.options(e.node, metrics.Store(e.store))
			o.Signer = ext
			m := e.start(o)
			if m.Account(chainID) != e.signer.Address() {
				t.Fatalf("account %s, want the operator's %s", m.Account(chainID), e.signer.Address())
			}
			var keys []string
			for i := range 12 {
				k := fmt.Sprintf("ext-%d", i)
				keys = append(keys, k)
				if _, err := m.Submit(e.ctx, pay(k, int64(1000+i))); err != nil {
					t.Fatal(err)
				}
			}
			ins := e.waitFinal(keys...)
			e.minedOnce(ins)
			if st.Signed() < len(keys) {
				t.Errorf("the external signer signed %d transactions for %d intents", st.Signed(), len(keys))
			}
			want := map[string]float64{
				`swapgate_txm_intents_final_total{state="confirmed"}`: 12,
				`swapgate_txm_intents_final_total{state="failed"}`:    0,
				`swapgate_txm_inclusion_seconds_count`:                12,
				`swapgate_txm_intents{state="queued"}`:                0,
				`swapgate_txm_intents{state="sent"}`:                  0,
			}
			// The metrics count a write once the store has taken it, so
			// they may trail the intents' final state a moment.
			var got map[string]float64
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				got = metricstest.Values(t, metrics.Collector(m.Stats, m.Account(chainID).Hex()))
				if equalAt(got, want) || time.Now().After(deadline) {
					break
				}
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

// TestManagerNeverSendsWhatTheSignerChanged: while the external signer
// returns another transaction than the one asked (a raised value, a key
// not the operator's), nothing is broadcast and the intent waits queued;
// once it signs what is asked the intent is sent and confirmed, once. The
// adapter's checks (routing/adapters/extsigner) and the manager's own both
// refuse such an answer; this holds the two together over HTTP.
func TestManagerNeverSendsWhatTheSignerChanged(t *testing.T) {
	other, _ := crypto.GenerateKey()
	for name, misbehave := range map[string]func(*signer.Server){
		"value": func(s *signer.Server) {
			s.Tamper(func(d *types.DynamicFeeTx) { d.Value = new(big.Int).Mul(d.Value, big.NewInt(1000)) })
		},
		"key": func(s *signer.Server) { s.SignWith(other) },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			st, ext := externalSigner(t, signer.Clef)
			misbehave(st)
			o := e.options(e.node, e.store)
			o.Signer = ext
			m := e.start(o)
			in, err := m.Submit(e.ctx, pay("tampered", 777))
			if err != nil {
				t.Fatal(err)
			}
			// Wait for the signer's first answer, refused by the checks.
			deadline := time.Now().Add(15 * time.Second)
			for st.Signed() < 1 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // a round to store what it would
			if st.Signed() < 1 {
				t.Fatal("the signer was never asked")
			}
			got, err := m.Intent(e.ctx, in.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != txintent.Queued || len(got.Txs) != 0 {
				t.Fatalf("after a changed signature the intent is %s with %d transactions", got.State, len(got.Txs))
			}
			if n, err := e.node.NonceAt(e.ctx, e.signer.Address(), nil); err != nil || n != 0 {
				t.Fatalf("the operator's account sent %d transactions (%v)", n, err)
			}
			st.Tamper(nil)
			st.SignWith((*ecdsa.PrivateKey)(nil))
			ins := e.waitFinal("tampered")
			e.minedOnce(ins)
			if e.balance() != 777 {
				t.Errorf("the recipient got %d wei, want 777", e.balance())
			}
		})
	}
}

// equalAt reports whether got holds want's value at each of want's keys.
func equalAt(got, want map[string]float64) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
