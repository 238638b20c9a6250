package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/bench/loadgen"
	"github.com/swapgate/swapgate/routing/adapters/evmnode"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// tx-throughput measures the transaction manager as the service runs it
// (actors/txm over a Pebble store, a local key, one confirmation) against
// a sandbox chain of the main Swapgate through its JSON-RPC node, POST
// /rpc/{chainId} over loopback HTTP: the same client code, store writes
// and node round trips as the service's own manager against a real node.
// The manager runs in a process of its own, `swapgate bench-tx` (the
// binary opens its store; the suite opens none), because the service takes
// intents from its own parts only (payouts, the next issue's step 2), not
// over an API; its account is a fresh key funded from the sandbox faucet,
// so the service's own operator is left alone.
//
// A run submits a fixed batch of intents (native transfers of 1 wei) from
// txSubmitters concurrent callers, as the service's parts submit, and
// waits until every one is confirmed. Its rate is intents confirmed per
// second from the first submit to the last confirmation; its latency, each
// intent's time to inclusion: from the intent stored (CreatedAt) to the
// manager recording its receipt with the one confirmation (the intent's
// last update), both on the manager's clock.

// TxChainID is the sandbox chain the scenario sends on (Arbitrum's).
const TxChainID = 42161

// txSubmitters is how many callers submit at once.
const txSubmitters = 32

// txPerMeasureSecond sizes a run's batch from Config.Measure: the quick
// preset's 1.6 s makes 400 intents, the full preset's 5 s 1,250.
const txPerMeasureSecond = 250

// TxLoad is one tx-throughput batch.
type TxLoad struct {
	// RPCURL is the chain's JSON-RPC node (chain TxChainID).
	RPCURL string
	// Fund tops the account up with native coin on TxChainID.
	Fund func(ctx context.Context, account common.Address) error
	// Intents is the batch.
	Intents int
	// Store is the manager's store, empty (the caller opens it).
	Store txm.Store
	// Poll is the manager's receipt poll (0: the service's default, 1 s).
	Poll time.Duration
	// Timeout bounds the wait for the batch.
	Timeout time.Duration
}

// TxResult is a batch's summary, in loadgen's shape for the table, and
// its figure: what `swapgate bench-tx` prints.
type TxResult struct {
	Summary *loadgen.Summary `json:"summary"`
	Figure  *TxFigure        `json:"figure"`
}

// TxFigure is what a tx-throughput run measured besides its summary.
type TxFigure struct {
	Intents   int     `json:"intents"`
	Confirmed int     `json:"confirmed"`
	Failed    int     `json:"failed"`
	Seconds   float64 `json:"seconds"`
	PerSec    float64 `json:"intentsPerSec"`
	// Bumps is the replacements the manager sent (none expected: the
	// sandbox chain mines every block).
	Bumps uint64 `json:"bumps"`
	// InclusionP50Us and InclusionP99Us are the time to inclusion.
	InclusionP50Us int64 `json:"inclusionP50Us"`
	InclusionP99Us int64 `json:"inclusionP99Us"`
}

// RunTx runs one batch; the summary carries the rate as RPS and the time
// to inclusion as its latency, so that the table shows them as it shows
// any scenario's.
func RunTx(ctx context.Context, l TxLoad) (*TxResult, error) {
	sum, f, err := runTx(ctx, l)
	if err != nil {
		return nil, err
	}
	return &TxResult{Summary: sum, Figure: f}, nil
}

func runTx(ctx context.Context, l TxLoad) (*loadgen.Summary, *TxFigure, error) {
	if l.Intents < 1 || l.RPCURL == "" || l.Fund == nil || l.Store == nil {
		return nil, nil, fmt.Errorf("tx-throughput: a node, a funder, a store and at least one intent are needed")
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, nil, err
	}
	signer, err := txm.NewLocalSigner(crypto.FromECDSA(key))
	if err != nil {
		return nil, nil, err
	}
	account := crypto.PubkeyToAddress(key.PublicKey)
	if err := l.Fund(ctx, account); err != nil {
		return nil, nil, fmt.Errorf("funding the account: %w", err)
	}
	c, err := rpc.DialContext(ctx, l.RPCURL)
	if err != nil {
		return nil, nil, fmt.Errorf("the chain's node: %w", err)
	}
	defer c.Close()
	node := evmnode.New(c, 0)
	if err := node.Check(ctx, TxChainID); err != nil {
		return nil, nil, err
	}
	m, err := txm.New(txm.Options{Store: l.Store, Signer: signer, Nodes: map[uint64]txm.Node{TxChainID: node},
		Confirmations: 1, BumpAfter: 30 * time.Second, Poll: l.Poll, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, nil, err
	}
	defer m.Stop()
	recipient := common.Address{0xb0}
	keys := make([]string, l.Intents)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, txSubmitters)
	for w := range txSubmitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += txSubmitters {
				keys[i] = fmt.Sprintf("bench/%s/%d", account.Hex(), i)
				r := txintent.Request{Purpose: "bench", Key: keys[i], ChainID: TxChainID, To: recipient, Value: common.Big1, GasLimit: 21_000}
				if _, err := m.Submit(ctx, r); err != nil {
					errs <- fmt.Errorf("submit %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, nil, err
	}
	final, err := waitFinal(ctx, l.Store, keys, l.Timeout)
	elapsed := time.Since(start)
	if err != nil {
		return nil, nil, err
	}
	f := &TxFigure{Intents: l.Intents, Seconds: elapsed.Seconds(), Bumps: m.Stats().Bumps}
	var incl []int64
	for _, in := range final {
		if in.State != txintent.Confirmed {
			f.Failed++
			continue
		}
		f.Confirmed++
		incl = append(incl, in.UpdatedAt.Sub(in.CreatedAt).Microseconds())
	}
	f.PerSec = float64(f.Confirmed) / elapsed.Seconds()
	slices.Sort(incl)
	f.InclusionP50Us, f.InclusionP99Us = quantile(incl, 0.50), quantile(incl, 0.99)
	sum := &loadgen.Summary{Scenario: "tx-throughput", Mode: "batch", Workers: txSubmitters, ElapsedSec: elapsed.Seconds(),
		RPS: f.PerSec, Status: map[int]int64{}}
	sum.Requests, sum.Errors = int64(l.Intents), int64(f.Failed)
	sum.Class = map[string]int64{"2xx": int64(f.Confirmed)}
	sum.Latency = loadgen.Percentiles{P50: f.InclusionP50Us, P99: f.InclusionP99Us, Max: quantile(incl, 1)}
	if len(incl) > 0 {
		var total int64
		for _, v := range incl {
			total += v
		}
		sum.Latency.Mean = float64(total) / float64(len(incl))
	}
	return sum, f, nil
}

// txIntentReader is what waitFinal reads.
type txIntentReader interface {
	TxIntentByKey(ctx context.Context, key string) (*txintent.Intent, error)
}

// waitFinal waits until every intent of keys is confirmed or failed,
// reading them in key order (an intent not final stops the pass).
func waitFinal(ctx context.Context, st txIntentReader, keys []string, timeout time.Duration) ([]*txintent.Intent, error) {
	deadline := time.Now().Add(timeout)
	out := make([]*txintent.Intent, 0, len(keys))
	for len(out) < len(keys) {
		in, err := st.TxIntentByKey(ctx, keys[len(out)])
		if err == nil && in.Final() {
			out = append(out, in)
			continue
		}
		if time.Now().After(deadline) {
			state := "not stored"
			if in != nil {
				state = string(in.State)
			}
			return nil, fmt.Errorf("%d of %d intents final after %s (the next is %s)", len(out), len(keys), timeout, state)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return out, nil
}

// quantile is the q quantile of sorted (nearest rank; 0 when empty).
func quantile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// txPoll is the manager's receipt poll in the scenario. The service's
// manager polls every second (txm's default), which would add up to a
// second to every intent's measured time to inclusion and to the batch's
// end; the scenario polls every 20 ms so that its figures are the
// pipeline's (store, signing, the node's round trips), not the poll's.
const txPoll = 20 * time.Millisecond

// txRun runs one tx-throughput batch (`swapgate bench-tx`) against
// target's sandbox chain and records it like a fixed-rate run: Offered is
// 0, so the table shows no ratio to the bare ping for it.
func (env *environment) txRun(ctx context.Context, d scenarioDef, target string, round int) error {
	server := env.serverOf(d, target)
	a, ok := env.apis[server]
	if !ok {
		return fmt.Errorf("%s: no server %s", d.name, server)
	}
	n := max(1, int(env.cfg.Measure.Seconds()*txPerMeasureSecond))
	label := fmt.Sprintf("r%d %s@%s %d intents", round, d.name, target, n)
	env.stage("%s\n", label)
	dir := filepath.Join(env.tmp, fmt.Sprintf("txm-r%d-%s", round, target))
	defer os.RemoveAll(dir)
	pids := env.pids(d, target)
	srv0 := procsCPU(pids)
	start := time.Now()
	rec := RunRecord{Scenario: d.name, Target: target, Round: round, StartSec: env.since()}
	out, err := cli(ctx, env.cfg.Binary, nil, "bench-tx", "--url", a.base, "--intents", strconv.Itoa(n), "--data", dir, "--poll", txPoll.String())
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	var res TxResult
	if err := json.Unmarshal(out, &res); err != nil || res.Summary == nil || res.Figure == nil {
		return fmt.Errorf("%s: bench-tx printed %q (%v)", label, out, err)
	}
	wall := time.Since(start)
	rec.EndSec = env.since()
	srv1 := procsCPU(pids)
	f := res.Figure
	res.Summary.Target = target
	rec.Summary, rec.Tx = res.Summary, f
	// The manager's process is the generator here; its CPU is not the
	// suite's, so GenCPU stays 0.
	rec.ServerCPU = CPUShare(srv1-srv0, wall, env.cores)
	env.printf("  %-40s %d confirmed, %d failed in %.2fs: %.0f intents/s; time to inclusion p50 %s, p99 %s; %d bumps\n", label,
		f.Confirmed, f.Failed, f.Seconds, f.PerSec, fmtUs(float64(f.InclusionP50Us)), fmtUs(float64(f.InclusionP99Us)), f.Bumps)
	env.runs = append(env.runs, rec)
	return ctx.Err()
}

// FaucetFunder tops an account up with native coin on TxChainID from the
// sandbox faucet of the Swapgate at base (POST /v1/sandbox/faucet).
func FaucetFunder(base string) func(ctx context.Context, account common.Address) error {
	a := newAPI(base)
	return func(ctx context.Context, account common.Address) error {
		return a.do(ctx, http.MethodPost, "/v1/sandbox/faucet", "", map[string]any{
			"chainId": TxChainID, "address": account.Hex(), "token": "native", "amount": "1000000000000000000000"}, nil)
	}
}

// txNote sums the tx-throughput runs on target for the notes.
func (env *environment) txNote(target string) (string, bool) {
	var per, p50, p99 []float64
	failed, bumps := 0, uint64(0)
	for _, r := range env.runs {
		if r.Tx != nil && r.Target == target {
			per = append(per, r.Tx.PerSec)
			p50, p99 = append(p50, float64(r.Tx.InclusionP50Us)), append(p99, float64(r.Tx.InclusionP99Us))
			failed += r.Tx.Failed
			bumps += r.Tx.Bumps
		}
	}
	if len(per) == 0 {
		return "", false
	}
	rate := SpreadOf(per)
	return fmt.Sprintf("tx-throughput: one account's intents confirmed %.0f/s (%.0f–%.0f over %d rounds; target 500/s: %s), time to inclusion p50 %s, p99 %s (medians of the rounds, receipts polled every %s); %d failed, %d bumps.",
		rate.Median, rate.Min, rate.Max, len(per), verdictAtLeast(rate.Median, 500), fmtUs(SpreadOf(p50).Median), fmtUs(SpreadOf(p99).Median), txPoll, failed, bumps), true
}

// verdictAtLeast says whether v reaches target.
func verdictAtLeast(v, target float64) string {
	if v >= target {
		return "met"
	}
	return "missed"
}
