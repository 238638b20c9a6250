package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/pgtest"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
	"github.com/swapgate/swapgate/store/postgres"
)

// TestCrashRecovery kills the real binary with SIGKILL at random moments
// under a concurrent load of the writes a partner and its users make, and
// restarts it on the same data directory each time. The load: fee-bearing
// partner quotes (30 bps, fee wallets registered), fee-wallet writes,
// webhook registrations (under an Idempotency-Key) and test events, sandbox
// executions (quote, approve, broadcast, execute), multi-step deposit
// registrations, and on-ramp checkouts (under an Idempotency-Key) paid on
// the checkout page. After every restart the acknowledged writes are read
// back through the API; after the last one the tracked swaps, deposits and
// paid orders are followed to their ends, the outbox to empty, and the
// stopped service's store is opened directly.
//
// It proves: every write answered 2xx is there after the restart (fee
// wallets, webhooks, the earnings rows of fee quotes, broadcasts,
// checkouts, tracked swaps, registered deposits, remembered idempotent
// answers, replayed as they were; a checkout whose payment the kill cut off
// can be paid after it); no quote is recorded twice (each quote id once
// among the partner's activity and once in the pending ledger index, which
// names nothing else); every event the store accepted into the outbox was
// delivered at least once (the receiver counts deliveries by
// X-Service-Delivery), nothing was delivered that the store did not
// accept, and no state change was published twice; tracked swaps, deposits
// and paid orders reach their terminal states after the restarts, with the
// funds delivered; and the store opens without repair (the service starts,
// the sandbox chains replay without divergence, Pebble's levels check, and
// no log line reports an error, corruption or a race).
//
// The kill times are the only randomness: seeded (CRASH_SEED to repeat a
// run), printed, and nothing asserted depends on them.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the service several times")
	}
	crashRecovery(t, "")
}

// TestCrashRecoveryPostgres is TestCrashRecovery with the store in
// PostgreSQL (serve --store, the partners created by the CLI with
// --store): the service is killed, the database is not, and every write
// the service acknowledged must be in it.
func TestCrashRecoveryPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the service several times")
	}
	crashRecovery(t, pgtest.Private(t).DSN(t))
}

// crashRecovery runs the crash rounds on the store storeURL names ("":
// Pebble in the data directory).
func crashRecovery(t *testing.T, storeURL string) {
	started := time.Now()
	rng := crashRNG(t, 0x5eed)

	work := t.TempDir()
	linkSwapgate(t, work)
	dir := filepath.Join(work, "data")
	rcv := crashStartReceiver(t)
	certFile := filepath.Join(work, "receiver.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rcv.srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}

	// The partners, provisioned before the service first starts: the one
	// whose keys quote, execute and sell (30 bps) with a webhook for every
	// event, one whose fee wallets are rewritten, and a few that register
	// webhooks (ten each at most).
	lim := []string{"--heavy", "100000000", "--read", "100000000"}
	if storeURL != "" {
		lim = append(lim, "--store", storeURL)
	}
	fee := crashPartner(t, dir, "CrashFee", append([]string{"--swap-fee-bps", "30"}, lim...)...)
	wallets := crashPartner(t, dir, "CrashWallets", lim...)
	var hookers []crashPartnerKey
	for i := range 4 {
		hookers = append(hookers, crashPartner(t, dir, fmt.Sprintf("CrashHooks%d", i), lim...))
	}

	st := &crashState{wallets: map[string]*crashWallet{}, hookCount: map[string]int{}, hookFull: map[string]bool{}}
	child := crashServe(t, work, dir, certFile, storeURL, 0)
	c := child.client()
	// Fee wallets of the fee partner, and its webhook for every event.
	for _, w := range []struct{ eco, addr string }{{"evm", crashEVMAddress("fee/evm")}, {"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}, {"near", "crash-fee.near"}} {
		if s, raw, err := c.do(http.MethodPut, "/v1/partner/me/fee-wallets", crashJSON(map[string]string{"ecosystem": w.eco, "address": w.addr}), fee.key); err != nil || s != http.StatusOK {
			t.Fatalf("fee wallet %s: %d %v %s", w.eco, s, err, raw)
		}
	}
	var hook struct{ ID string }
	if s, raw, err := c.doJSON(http.MethodPost, "/v1/partner/webhooks", crashHookBody(rcv.srv.URL+"/fee", webhook.Events()), fee.key, &hook); err != nil || s != http.StatusCreated {
		t.Fatalf("fee partner's webhook: %d %v %s", s, err, raw)
	}
	st.hooks = append(st.hooks, crashHook{id: hook.ID, partner: fee})
	c.close()

	const rounds = 4
	for round := 1; round <= rounds; round++ {
		load := time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
		t.Logf("round %d: load for %v, then SIGKILL", round, load.Round(time.Millisecond))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		c := child.client()
		workers := []func(context.Context, *crashClient){
			func(ctx context.Context, c *crashClient) { st.quoteLoad(ctx, c, fee, round) },
			func(ctx context.Context, c *crashClient) { st.walletLoad(ctx, c, wallets, round) },
			func(ctx context.Context, c *crashClient) { st.hookLoad(ctx, c, hookers, rcv.srv.URL, round) },
			func(ctx context.Context, c *crashClient) { st.execLoad(ctx, c, fee, round) },
			func(ctx context.Context, c *crashClient) { st.onrampLoad(ctx, c, fee, round) },
			func(ctx context.Context, c *crashClient) { st.multiStepLoad(ctx, c, fee, round) },
		}
		for w := range crashEventWorkers {
			workers = append(workers, func(ctx context.Context, c *crashClient) { st.testEventLoad(ctx, c, w) })
		}
		for _, w := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); w(ctx, c) }()
		}
		time.Sleep(load)
		child.kill(t)
		cancel()
		wg.Wait()
		c.close()

		child = crashServe(t, work, dir, certFile, storeURL, round)
		st.checkAcknowledged(t, child.client(), fee, wallets, round)
	}

	// After the last restart: everything in flight reaches its end and
	// every accepted event is delivered.
	c = child.client()
	st.checkTerminal(t, c)
	// On PostgreSQL the entries the killed process had claimed are
	// leased to it: they are delivered once its lease lapses.
	wait := 30 * time.Second
	if storeURL != "" {
		wait += postgres.DefaultOutboxLease
	}
	crashWaitOutboxEmpty(t, c, wait)
	child.stop(t)
	if err := child.logProblems(); err != nil {
		t.Error(err)
	}
	st.checkStore(t, dir, storeURL, rcv, fee, wallets, hookers)
	t.Logf("%s; %d rounds in %v", st.summary(rcv), rounds, time.Since(started).Round(time.Millisecond))
}

// crashPartnerKey is a partner provisioned for the test.
type crashPartnerKey struct{ id, key string }

// crashPartner creates a partner with the command line on a directory no
// server holds.
func crashPartner(t *testing.T, dir, name string, extra ...string) crashPartnerKey {
	t.Helper()
	var res struct {
		ID     string `json:"id"`
		APIKey string `json:"apiKey"`
	}
	cli(t, &res, append([]string{"partner", "create", "--data", dir, "--name", name, "--email", strings.ToLower(name) + "@example.com"}, extra...)...)
	if res.ID == "" || res.APIKey == "" {
		t.Fatalf("partner create %s: %+v", name, res)
	}
	return crashPartnerKey{id: res.ID, key: res.APIKey}
}

// crashSecret signs every webhook of the test.
const crashSecret = "crash-signing-secret-0123"

func crashHookBody(u string, events []string) []byte {
	return crashJSON(map[string]any{"url": u, "events": events, "secret": crashSecret})
}

func crashJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// crashEVMAddress is an EIP-55 address derived from a label, so that every
// wallet of the test is its own and starts with the sandbox's genesis
// balances.
func crashEVMAddress(label string) string {
	return common.BytesToAddress(crypto.Keccak256([]byte("swapgate/crash/" + label))[12:]).Hex()
}

// crashReceiver is the partners' HTTPS endpoint: it checks every
// signature and counts deliveries by X-Service-Delivery, and remembers
// which event reached it for which subject (a swap's quote id, an order's
// uid, a deposit's transaction).
type crashReceiver struct {
	srv        *httptest.Server
	mu         sync.Mutex
	deliveries map[string]int
	subjects   map[string]bool // event + " " + subject
	// published holds, for each path, event and subject of a state
	// change (test events aside), the delivery ids it came in: one
	// delivery is one publication, so a transition published twice shows
	// as two ids.
	published map[string]map[string]bool
	badSig    int
}

func crashStartReceiver(t *testing.T) *crashReceiver {
	rc := &crashReceiver{deliveries: map[string]int{}, subjects: map[string]bool{}, published: map[string]map[string]bool{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if !webhook.Verify([]byte(crashSecret), b, r.Header.Get(webhook.HeaderSignature)) {
			rc.badSig++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.deliveries[r.Header.Get(webhook.HeaderDelivery)]++
		var p struct {
			Event string
			Data  struct {
				TransactionID, OrderUID, TxHash string
				Test                            bool
			}
		}
		if json.Unmarshal(b, &p) == nil {
			subject := p.Data.TransactionID
			if subject == "" {
				subject = p.Data.OrderUID
			}
			if subject == "" {
				subject = strings.ToLower(p.Data.TxHash)
			}
			rc.subjects[p.Event+" "+subject] = true
			if !p.Data.Test {
				k := r.URL.Path + " " + p.Event + " " + subject
				if rc.published[k] == nil {
					rc.published[k] = map[string]bool{}
				}
				rc.published[k][r.Header.Get(webhook.HeaderDelivery)] = true
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	// A kill cuts TLS handshakes off: that is expected, not worth a line.
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *crashReceiver) got(deliveryID string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.deliveries[deliveryID]
}

func (rc *crashReceiver) deliveryIDs() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ids := make([]string, 0, len(rc.deliveries))
	for id := range rc.deliveries {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (rc *crashReceiver) badSignatures() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.badSig
}

// publishedTwice lists the state changes published more than once.
func (rc *crashReceiver) publishedTwice() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for k, ids := range rc.published {
		if len(ids) > 1 {
			out = append(out, fmt.Sprintf("%s (%d deliveries)", k, len(ids)))
		}
	}
	slices.Sort(out)
	return out
}

func (rc *crashReceiver) heard(event, subject string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.subjects[event+" "+subject]
}

// crashChild is one run of `swapgate serve` as a child process.
type crashChild struct {
	cmd    *exec.Cmd
	log    *crashBuffer
	exited chan struct{}
	err    error // set before exited closes
	base   string
}

// crashBuffer is a child's stderr, safe to read while it is written.
type crashBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *crashBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *crashBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// crashServe starts bin/swapgate serve on dir, on a free loopback port,
// trusting the receiver's certificate, and waits until it serves and is
// ready. Run 0 is the first start; every later one follows a SIGKILL, and
// its sandbox chains must replay without divergence.
func crashServe(t *testing.T, work, dir, certFile, storeURL string, run int, extra ...string) *crashChild {
	t.Helper()
	begin := time.Now()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir,
		"--store", storeURL,
		"--allow-loopback-webhooks", "--webhook-retry-base", "100ms", "--webhook-scan-interval", "100ms",
		"--sandbox-bridge-scale", "0.01", "--sandbox-onramp-step", "200ms",
		"--anon-heavy-per-min", "100000000", "--anon-read-per-min", "100000000"}, extra...)
	cmd := exec.Command(filepath.Join(work, "bin", "swapgate"), args...)
	cmd.Dir = work
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWAPGATE_") && !strings.HasPrefix(kv, "SSL_CERT_FILE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SSL_CERT_FILE="+certFile)
	c := &crashChild{cmd: cmd, log: &crashBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = io.Discard, c.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start swapgate serve: %v", err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = cmd.Process.Kill()
			<-c.exited
		}
		c.logWarnings(t, run)
	})
	deadline := time.Now().Add(60 * time.Second)
	var replayed, diverged int
	for c.base == "" {
		for _, line := range strings.Split(c.log.String(), "\n") {
			var l struct {
				Msg, Addr          string
				Replayed, Diverged int
			}
			if json.Unmarshal([]byte(line), &l) != nil {
				continue
			}
			switch l.Msg {
			case "sandbox chain ready":
				replayed, diverged = l.Replayed, l.Diverged
			case "swapgate serving":
				c.base = "http://" + l.Addr
			}
		}
		if c.base != "" {
			break
		}
		select {
		case <-c.exited:
			t.Fatalf("run %d: swapgate serve exited before serving: %v\n%s", run, c.err, c.log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d: swapgate serve did not serve within a minute\n%s", run, c.log.String())
		}
	}
	if diverged != 0 {
		t.Errorf("run %d: the sandbox chains replayed %d operations, %d of them diverged", run, replayed, diverged)
	}
	cl := c.client()
	defer cl.close()
	if s, raw, err := cl.do(http.MethodGet, "/readyz", nil, ""); err != nil || s != http.StatusOK {
		t.Fatalf("run %d: readyz %d %v %s", run, s, err, raw)
	}
	if err := c.logProblems(); err != nil {
		t.Errorf("run %d: %v", run, err)
	}
	t.Logf("run %d: serving at %s after %v (sandbox chains replayed %d operations)", run, c.base, time.Since(begin).Round(time.Millisecond), replayed)
	return c
}

// kill sends SIGKILL, waits for the process to be gone and checks the
// run's log, whole once the process is.
func (c *crashChild) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-c.exited
	if err := c.logProblems(); err != nil {
		t.Error(err)
	}
}

// stop sends SIGTERM, as an operator's stop would, and waits for a clean
// exit.
func (c *crashChild) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("swapgate serve did not stop within 30 s of SIGTERM\n%s", c.log.String())
	}
	if c.err != nil {
		t.Fatalf("swapgate serve exited with %v\n%s", c.err, c.log.String())
	}
}

// crashLogProblem matches what a run must never log: Pebble's error
// reports, corruption, a repair, a panic, a data race.
var crashLogProblem = regexp.MustCompile(`(?i)"component":"pebble"|corrupt|repair|panic|DATA RACE`)

// logProblems returns the lines of the run's log that report an error
// level event or match crashLogProblem.
func (c *crashChild) logProblems() error {
	var bad []string
	sc := bufio.NewScanner(strings.NewReader(c.log.String()))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		var l struct{ Level, Msg, Lib string }
		_ = json.Unmarshal([]byte(line), &l)
		if l.Lib == "protoactor" && peerDownLogs[l.Msg] {
			continue
		}
		if l.Level == "ERROR" || crashLogProblem.MatchString(line) {
			bad = append(bad, line)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("swapgate serve logged %d problem lines:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	return nil
}

// peerDownLogs are the cluster module's error lines about a peer that
// does not answer its health poll: what a node logs, every poll, while
// another starts or after it was killed, which the cluster tests do.
var peerDownLogs = map[string]bool{
	"Bad connection to the node health status": true,
	"Failure reaching nodes":                   true,
	// Logged at error level by every node's provider on a clean stop.
	"Automanaged server stopping..!": true,
	// The remote's connection to a peer that died or stopped: lost, then
	// redialled a few times. Any grain call sent to the peer before the
	// topology drops it (a partner's acquire, a chain's operation) starts
	// them.
	"EndpointWriter lost connection":                 true,
	"EndpointWriter failed to connect":               true,
	"EndpointWriter failed to create receive stream": true,
}

// logWarnings shows, for a failed test, the run's warnings and errors,
// each message once with its count and first line.
func (c *crashChild) logWarnings(t *testing.T, run int) {
	type seen struct {
		n     int
		first string
	}
	by := map[string]*seen{}
	var order []string
	for _, line := range strings.Split(c.log.String(), "\n") {
		var l struct{ Level, Msg string }
		if json.Unmarshal([]byte(line), &l) != nil {
			if strings.TrimSpace(line) != "" {
				l.Level, l.Msg = "RAW", line
			} else {
				continue
			}
		}
		if l.Level == "INFO" || l.Level == "DEBUG" {
			continue
		}
		if by[l.Msg] == nil {
			by[l.Msg] = &seen{first: line}
			order = append(order, l.Msg)
		}
		by[l.Msg].n++
	}
	for _, m := range order {
		t.Logf("run %d logged %d× %.600s", run, by[m].n, by[m].first)
	}
}

func (c *crashChild) client() *crashClient {
	return &crashClient{base: c.base, hc: &http.Client{Timeout: 20 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16},
		// The checkout page answers its forms with 303: that is the answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// crashClient talks to one run; an error is a request whose answer never
// came (the run was killed, or not yet started): its outcome is unknown.
type crashClient struct {
	base string
	hc   *http.Client
}

func (c *crashClient) close() { c.hc.CloseIdleConnections() }

func (c *crashClient) request(method, path string, body io.Reader, header http.Header) (int, []byte, http.Header, error) {
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, raw, resp.Header, nil
}

// do sends a JSON request with the partner key (none when empty) and
// extra headers, given as name, value pairs.
func (c *crashClient) do(method, path string, body []byte, key string, header ...string) (int, []byte, error) {
	s, raw, _, err := c.doHeader(method, path, body, key, header...)
	return s, raw, err
}

// doHeader is do, answering the response's headers too.
func (c *crashClient) doHeader(method, path string, body []byte, key string, header ...string) (int, []byte, http.Header, error) {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
		h.Set("Content-Type", "application/json")
	}
	if key != "" {
		h.Set("X-API-Key", key)
	}
	return c.request(method, path, rd, h)
}

// doJSON is do, decoding the envelope's data into v on a 2xx.
func (c *crashClient) doJSON(method, path string, body []byte, key string, v any, header ...string) (int, []byte, error) {
	s, raw, err := c.do(method, path, body, key, header...)
	if err != nil || s/100 != 2 {
		return s, raw, err
	}
	var env struct{ Data json.RawMessage }
	if err := json.Unmarshal(raw, &env); err != nil {
		return s, raw, fmt.Errorf("%s %s: not an envelope: %w", method, path, err)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		return s, raw, fmt.Errorf("%s %s: data: %w", method, path, err)
	}
	return s, raw, nil
}

// crashState is what the load was told: the acknowledged writes, and the
// outcome of each worker's one request in flight at the kill, unknown.
type crashState struct {
	mu        sync.Mutex
	feeQuotes []string // fee-bearing partner quotes answered 200
	timeouts  int      // quotes answered 504: every provider missed the deadline
	wallets   map[string]*crashWallet
	hooks     []crashHook    // webhooks answered 201
	hookCount map[string]int // webhooks registered (or maybe registered) per partner
	hookFull  map[string]bool
	tests     []string // test deliveries answered 200
	txs       []string // broadcasts answered 200
	swaps     []crashSwap
	orders    []crashOrder // checkouts answered 200, paid or not
	paid      []crashOrder // orders whose payment was answered (or found made)
	replays   []crashReplay
	replayed  int // replays already checked
	deposits  []crashDeposit
	refused   map[string]int // answers that were neither 2xx nor expected, by request and status
}

type crashWallet struct{ known, maybe string }

type crashHook struct {
	id      string
	partner crashPartnerKey
}

type crashSwap struct {
	quoteID, txHash string
	chain           crashChain // the destination
	to, toAmount    string
}

type crashOrder struct {
	uid          string
	chain        crashChain
	wallet       string
	cryptoAmount string // in whole units, a decimal
}

// crashReplay is a creating request answered 2xx under an Idempotency-Key:
// sent again after a restart, it must get the same answer, replayed.
type crashReplay struct {
	path, partnerKey, idemKey string
	body, answer              []byte
}

type crashDeposit struct{ txHash, from string }

// reportRefused fails the test with the unexpected answers counted so far.
func (s *crashState) reportRefused(t *testing.T, when string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.refused {
		t.Errorf("%s: %d× unexpected answer: %s", when, n, k)
	}
	s.refused = nil
}

// refuse counts an answer the load did not expect; the test fails on any.
func (s *crashState) refuse(what string, status int, raw []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]int{}
	}
	k := fmt.Sprintf("%s → %d %.300s", what, status, raw)
	s.refused[k]++
}

func (s *crashState) add(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// ok reports a 2xx answer; an unknown outcome (err) stops the worker, any
// other answer is counted as refused and stops it too.
func (s *crashState) ok(what string, status int, raw []byte, err error) bool {
	if err != nil {
		return false
	}
	if status/100 != 2 {
		s.refuse(what, status, raw)
		return false
	}
	return true
}

// crashQuote is what the load reads of a quote of any shape.
type crashQuote struct {
	Quote struct {
		ID, Type string
		Estimate struct {
			ToAmount        string
			ApprovalAddress *string
		}
		TransactionRequest json.RawMessage
		Steps              []struct{ TransactionRequest json.RawMessage }
	}
	FeeBps int
}

func crashQuotePath(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "/v1/quote?" + v.Encode()
}

const (
	crashUSDCArb  = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	crashUSDCBase = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	crashWETHArb  = "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"
	crashPLSX     = "0x95B303987A60C71504D99Aa1b13B4DA07b0790ab"
)

// crashChain is an EVM chain with its USDC (six decimals everywhere here).
type crashChain struct {
	id   uint64
	usdc string
}

// crashChains are where executions and on-ramp orders run, in turn. The
// sandbox mines one block per transaction, each stamped at least a second
// after its parent, so a chain that mines faster than a block a second
// runs ahead of the wall clock, and its bridges, which deliver once the
// source block's time plus the bridge's duration has passed, wait that
// much longer. Spreading the on-chain load over chains (Arbitrum is left
// to the multi-step deposits) and pacing it keeps each chain near the
// clock, so that swaps end within the test's time.
var crashChains = []crashChain{
	{1, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"},
	{10, "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85"},
	{137, "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"},
	{8453, crashUSDCBase},
	{43114, "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E"},
	{59144, "0x176211869cA2b568f2A7D4EE941E073a821EE1ff"},
	{534352, "0x06eFdBFf2a14a7c8E15944D1F4A48F9F95F663A4"},
}

// The paces of the load that mines blocks or fills a bounded list: one
// execution, order, deposit or webhook registration per interval at most.
// Test events go as fast as crashEventWorkers senders get answers.
const (
	crashExecEvery     = 300 * time.Millisecond
	crashOnrampEvery   = 400 * time.Millisecond
	crashDepositEvery  = 1500 * time.Millisecond
	crashRegisterEvery = 200 * time.Millisecond
	crashEventWorkers  = 3
)

// crashPace waits until the i-th step of a paced worker that started at
// start is due, and reports false once ctx is done.
func crashPace(ctx context.Context, start time.Time, i int, every time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(start.Add(time.Duration(i) * every))):
		return ctx.Err() == nil
	}
}

// quote asks for a partner quote; a fee-bearing one answered 200 is an
// acknowledged earnings row. A quote whose providers all missed the
// deadline (504, when the machine is starved) is no answer to check:
// q is nil and cont true, and the worker goes on.
func (s *crashState) quote(c *crashClient, key, path string) (q *crashQuote, cont bool) {
	q = &crashQuote{}
	st, raw, err := c.doJSON(http.MethodGet, path, nil, key, q)
	if err == nil && st == http.StatusGatewayTimeout && bytes.Contains(raw, []byte(`"UPSTREAM_TIMEOUT"`)) {
		s.add(func() { s.timeouts++ })
		return nil, true
	}
	if !s.ok("quote", st, raw, err) {
		return nil, false
	}
	if q.FeeBps <= 0 {
		s.refuse("quote without its partner fee", st, raw)
		return nil, false
	}
	s.add(func() { s.feeQuotes = append(s.feeQuotes, q.Quote.ID) })
	return q, true
}

// quoteLoad asks for fee-bearing quotes, one after the other.
func (s *crashState) quoteLoad(ctx context.Context, c *crashClient, p crashPartnerKey, round int) {
	for i := 0; ctx.Err() == nil; i++ {
		from := crashEVMAddress(fmt.Sprintf("quote/%d/%d", round, i))
		path := crashQuotePath("fromChain", "42161", "toChain", "8453", "fromToken", crashUSDCArb, "toToken", crashUSDCBase,
			"fromAmount", strconv.Itoa(50_000_000+i*1_000_000), "fromAddress", from, "toAddress", from)
		if _, cont := s.quote(c, p.key, path); !cont {
			return
		}
	}
}

// walletLoad rewrites the partner's fee wallets one after the other, in
// turn on three ecosystems, each with a new address.
func (s *crashState) walletLoad(ctx context.Context, c *crashClient, p crashPartnerKey, round int) {
	ecos := []string{"evm", "sui", "near"}
	for i := 0; ctx.Err() == nil; i++ {
		eco := ecos[i%len(ecos)]
		var addr string
		switch eco {
		case "evm":
			addr = crashEVMAddress(fmt.Sprintf("wallet/%d/%d", round, i))
		case "sui":
			addr = "0x" + common.Bytes2Hex(crypto.Keccak256([]byte(fmt.Sprintf("swapgate/crash/sui/%d/%d", round, i))))
		case "near":
			addr = fmt.Sprintf("crash-%d-%d.near", round, i)
		}
		s.add(func() {
			if s.wallets[eco] == nil {
				s.wallets[eco] = &crashWallet{}
			}
			s.wallets[eco].maybe = addr
		})
		st, raw, err := c.do(http.MethodPut, "/v1/partner/me/fee-wallets", crashJSON(map[string]string{"ecosystem": eco, "address": addr}), p.key)
		if !s.ok("PUT fee wallet", st, raw, err) {
			return
		}
		s.add(func() { s.wallets[eco].known, s.wallets[eco].maybe = addr, "" })
	}
}

// hookLoad registers webhooks (each with an Idempotency-Key and a test
// event) for the partners in turn until each has ten, the limit.
func (s *crashState) hookLoad(ctx context.Context, c *crashClient, ps []crashPartnerKey, receiver string, round int) {
	start := time.Now()
	for i := 0; crashPace(ctx, start, i, crashRegisterEvery); i++ {
		var p crashPartnerKey
		found := false
		s.add(func() {
			for j := range ps {
				q := ps[(i+j)%len(ps)]
				if s.hookCount[q.id] < 10 && !s.hookFull[q.id] {
					p, found = q, true
					s.hookCount[q.id]++ // counted before it is sent: its outcome may stay unknown
					return
				}
			}
		})
		if !found {
			return
		}
		body := crashHookBody(receiver+"/hooks", []string{webhook.SwapCompleted})
		key := fmt.Sprintf("crash-hook-%d-%d", round, i)
		var h struct{ ID string }
		st, raw, err := c.doJSON(http.MethodPost, "/v1/partner/webhooks", body, p.key, &h, "Idempotency-Key", key)
		if err == nil && st == http.StatusBadRequest && bytes.Contains(raw, []byte(`"param":"webhooks"`)) {
			// Registrations whose answer a kill cut off were made after all.
			s.add(func() { s.hookFull[p.id] = true })
			continue
		}
		if !s.ok("POST webhook", st, raw, err) {
			return
		}
		if st != http.StatusCreated {
			s.refuse("POST webhook", st, raw)
			return
		}
		s.add(func() {
			s.hooks = append(s.hooks, crashHook{id: h.ID, partner: p})
			s.replays = append(s.replays, crashReplay{path: "/v1/partner/webhooks", body: body, partnerKey: p.key, idemKey: key, answer: raw})
		})
		if !s.testEvent(c, crashHook{id: h.ID, partner: p}) {
			return
		}
	}
}

// testEventLoad sends test events to the registered webhooks (the fee
// partner's aside), one after the other, as fast as they are answered:
// each is a synced commit and a delivery, the most of both the load makes.
func (s *crashState) testEventLoad(ctx context.Context, c *crashClient, worker int) {
	for i := 0; ctx.Err() == nil; i++ {
		var h crashHook
		s.add(func() {
			if len(s.hooks) > 1 {
				h = s.hooks[1+(i*crashEventWorkers+worker)%(len(s.hooks)-1)]
			}
		})
		if h.id == "" {
			if !crashPace(ctx, time.Now(), 1, 20*time.Millisecond) {
				return
			}
			continue
		}
		if !s.testEvent(c, h) {
			return
		}
	}
}

// testEvent sends a webhook's test event; answered, its delivery is an
// event the outbox accepted.
func (s *crashState) testEvent(c *crashClient, h crashHook) bool {
	var sent struct{ DeliveryID string }
	st, raw, err := c.doJSON(http.MethodPost, "/v1/partner/webhooks/"+h.id+"/test", nil, h.partner.key, &sent)
	if !s.ok("POST webhook test", st, raw, err) {
		return false
	}
	s.add(func() { s.tests = append(s.tests, sent.DeliveryID) })
	return true
}

// broadcast sends a transaction from from on chainID.
func (s *crashState) broadcast(c *crashClient, key string, chainID uint64, from string, tx any) (string, bool) {
	var b struct{ TxHash, Status string }
	st, raw, err := c.doJSON(http.MethodPost, "/v1/sandbox/broadcast", crashJSON(map[string]any{"chainId": chainID, "from": from, "transactionRequest": tx}), key, &b)
	if !s.ok("broadcast", st, raw, err) {
		return "", false
	}
	s.add(func() { s.txs = append(s.txs, b.TxHash) })
	if b.Status != "success" {
		s.refuse("broadcast reverted", st, raw)
		return "", false
	}
	return b.TxHash, true
}

func crashApprove(spender string, amount *big.Int) map[string]string {
	return map[string]string{"data": approveData(spender, amount)}
}

// execLoad plays wallets one after the other: each quotes a bridge of
// USDC from Arbitrum to Base to an address of its own, approves, broadcasts
// and reports the swap with execute.
func (s *crashState) execLoad(ctx context.Context, c *crashClient, p crashPartnerKey, round int) {
	start := time.Now()
	for i := 0; crashPace(ctx, start, i, crashExecEvery); i++ {
		src, dst := crashChains[i%len(crashChains)], crashChains[(i+1+round)%len(crashChains)]
		if src == dst {
			dst = crashChains[(i+2+round)%len(crashChains)]
		}
		from, to := crashEVMAddress(fmt.Sprintf("exec/%d/%d/from", round, i)), crashEVMAddress(fmt.Sprintf("exec/%d/%d/to", round, i))
		amount := big.NewInt(100_000_000)
		q, ok := s.quote(c, p.key, crashQuotePath("fromChain", strconv.FormatUint(src.id, 10), "toChain", strconv.FormatUint(dst.id, 10),
			"fromToken", src.usdc, "toToken", dst.usdc, "fromAmount", amount.String(), "fromAddress", from, "toAddress", to, "tools", "sbx-arcbridge"))
		if !ok {
			return
		}
		if q == nil {
			continue
		}
		if q.Quote.Estimate.ApprovalAddress == nil {
			s.refuse("bridge quote without an approval address", 200, nil)
			return
		}
		approve := crashApprove(*q.Quote.Estimate.ApprovalAddress, amount)
		approve["to"] = src.usdc
		if _, ok := s.broadcast(c, p.key, src.id, from, approve); !ok {
			return
		}
		hash, ok := s.broadcast(c, p.key, src.id, from, q.Quote.TransactionRequest)
		if !ok {
			return
		}
		var ex struct{ Status *struct{ Status string } }
		st, raw, err := c.doJSON(http.MethodPost, "/v1/execute", crashJSON(map[string]string{"quoteId": q.Quote.ID, "txHash": hash}), p.key, &ex)
		if !s.ok("execute", st, raw, err) {
			return
		}
		s.add(func() {
			s.swaps = append(s.swaps, crashSwap{quoteID: q.Quote.ID, txHash: hash, chain: dst, to: to, toAmount: q.Quote.Estimate.ToAmount})
		})
	}
}

// onrampLoad opens checkouts (each with an Idempotency-Key) of 100 USD of
// USDC for wallets of their own, on the chains in turn, and pays each on
// its checkout page as the page's form posts.
func (s *crashState) onrampLoad(ctx context.Context, c *crashClient, p crashPartnerKey, round int) {
	start := time.Now()
	for i := 0; crashPace(ctx, start, i, crashOnrampEvery); i++ {
		o := crashOrder{wallet: crashEVMAddress(fmt.Sprintf("onramp/%d/%d", round, i)), chain: crashChains[(i+round)%len(crashChains)]}
		body := crashJSON(map[string]any{"fiatCurrency": "USD", "fiatAmount": 100, "cryptoAsset": "USDC", "chainId": o.chain.id,
			"walletAddress": o.wallet, "redirectUrl": "https://shop.example/done"})
		key := fmt.Sprintf("crash-checkout-%d-%d", round, i)
		var co struct {
			OrderUID string `json:"orderUid"`
			Quote    struct {
				CryptoAmount string `json:"cryptoAmount"`
			} `json:"quote"`
		}
		st, raw, err := c.doJSON(http.MethodPost, "/v1/onramp/checkout", body, p.key, &co, "Idempotency-Key", key)
		if !s.ok("checkout", st, raw, err) {
			return
		}
		o.uid, o.cryptoAmount = co.OrderUID, co.Quote.CryptoAmount
		s.add(func() {
			s.orders = append(s.orders, o)
			s.replays = append(s.replays, crashReplay{path: "/v1/onramp/checkout", body: body, partnerKey: p.key, idemKey: key, answer: raw})
		})
		if !s.pay(c, o) {
			return
		}
	}
}

var crashCSRFField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// pay presses the order's Pay button: its page's token, posted from its own
// origin. A 303 is the payment acknowledged.
func (s *crashState) pay(c *crashClient, o crashOrder) bool {
	st, page, _, err := c.request(http.MethodGet, onramp.CheckoutPath+o.uid, nil, nil)
	if !s.ok("checkout page", st, page, err) {
		return false
	}
	m := crashCSRFField.FindSubmatch(page)
	if m == nil {
		s.refuse("checkout page without its csrf field", st, page)
		return false
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("Origin", c.base)
	h.Set("Sec-Fetch-Site", "same-origin")
	st, raw, _, err := c.request(http.MethodPost, onramp.CheckoutPath+o.uid+"/"+string(onramp.Pay),
		strings.NewReader(url.Values{"csrf": {string(m[1])}}.Encode()), h)
	if err != nil {
		return false
	}
	if st != http.StatusSeeOther {
		s.refuse("pay", st, raw)
		return false
	}
	s.add(func() { s.paid = append(s.paid, o) })
	return true
}

// multiStepLoad plays depositors one after the other: each quotes 0.2
// WETH on Arbitrum to PLSX on 369, approves the router, broadcasts step 1
// and registers the deposit with its EIP-712 signature.
func (s *crashState) multiStepLoad(ctx context.Context, c *crashClient, p crashPartnerKey, round int) {
	amount := big.NewInt(200_000_000_000_000_000)
	start := time.Now()
	for i := 0; crashPace(ctx, start, i, crashDepositEvery); i++ {
		pk, err := crypto.ToECDSA(crypto.Keccak256([]byte(fmt.Sprintf("swapgate/crash/depositor/%d/%d", round, i))))
		if err != nil {
			panic(err)
		}
		from := crypto.PubkeyToAddress(pk.PublicKey).Hex()
		q, ok := s.quote(c, p.key, crashQuotePath("fromChain", "42161", "toChain", "369", "fromToken", crashWETHArb, "toToken", crashPLSX,
			"fromAmount", amount.String(), "fromAddress", from, "toAddress", from))
		if !ok {
			return
		}
		if q == nil {
			continue
		}
		if q.Quote.Type != "multi-step" || len(q.Quote.Steps) == 0 {
			s.refuse("multi-step quote of another type", 200, []byte(q.Quote.Type))
			return
		}
		var step1 struct{ To string }
		if err := json.Unmarshal(q.Quote.Steps[0].TransactionRequest, &step1); err != nil {
			s.refuse("multi-step quote's step 1", 200, q.Quote.Steps[0].TransactionRequest)
			return
		}
		approve := crashApprove(step1.To, amount)
		approve["to"] = crashWETHArb
		if _, ok := s.broadcast(c, p.key, 42161, from, approve); !ok {
			return
		}
		hash, ok := s.broadcast(c, p.key, 42161, from, q.Quote.Steps[0].TransactionRequest)
		if !ok {
			return
		}
		msg := pulseroute.RegisterMessage{TxHash: common.HexToHash(hash), ToAddress: common.HexToAddress(from),
			OutputToken: common.HexToAddress(crashPLSX), DestinationDomain: 369}
		digest, err := pulseroute.Hash(pulseroute.TypedData(42161, msg))
		if err != nil {
			panic(err)
		}
		sig, err := crypto.Sign(digest, pk)
		if err != nil {
			panic(err)
		}
		sig[64] += 27
		body := crashJSON(map[string]any{"txHash": hash, "fromAddress": from, "toAddress": from, "outputToken": crashPLSX,
			"destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)})
		st, raw, err := c.do(http.MethodPost, "/v1/inbound-receiver/register", body, "")
		if !s.ok("register", st, raw, err) {
			return
		}
		s.add(func() { s.deposits = append(s.deposits, crashDeposit{txHash: strings.ToLower(hash), from: from}) })
	}
}

// checkAcknowledged reads back, through the API of the restarted service,
// every write acknowledged so far: the fee wallets (the last one answered,
// or the one whose answer the kill cut off), the webhooks, the earnings
// rows of fee quotes (each once), broadcasts, checkouts, tracked swaps and
// registered deposits. It also fails on any answer the load did not expect.
func (s *crashState) checkAcknowledged(t *testing.T, c *crashClient, fee, wallets crashPartnerKey, round int) {
	t.Helper()
	defer c.close()
	s.reportRefused(t, fmt.Sprintf("round %d", round))
	s.mu.Lock()
	defer s.mu.Unlock()

	var list struct {
		Wallets []struct{ Ecosystem, Address string }
	}
	crashGet(t, c, "/v1/partner/me/fee-wallets", wallets.key, &list)
	got := map[string]string{}
	for _, w := range list.Wallets {
		got[w.Ecosystem] = w.Address
	}
	for eco, w := range s.wallets {
		if g := got[eco]; g != w.known && (w.maybe == "" || g != w.maybe) {
			t.Errorf("round %d: fee wallet %s is %q after the restart, want the acknowledged %q (or the unanswered %q)", round, eco, g, w.known, w.maybe)
		}
		w.known, w.maybe = got[eco], ""
	}

	byPartner := map[string][]string{}
	for _, h := range s.hooks {
		byPartner[h.partner.key] = append(byPartner[h.partner.key], h.id)
	}
	for key, ids := range byPartner {
		var hl struct{ Webhooks []struct{ ID string } }
		crashGet(t, c, "/v1/partner/webhooks", key, &hl)
		have := map[string]bool{}
		for _, h := range hl.Webhooks {
			have[h.ID] = true
		}
		for _, id := range ids {
			if !have[id] {
				t.Errorf("round %d: acknowledged webhook %s is missing after the restart", round, id)
			}
		}
	}

	rows := map[string]int{}
	for cursor := ""; ; {
		path := "/v1/partner/transactions?limit=500&minFeeUsd=0"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Transactions []struct{ ID string }
			NextCursor   *string
		}
		crashGet(t, c, path, fee.key, &page)
		for _, tx := range page.Transactions {
			rows[tx.ID]++
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	for id, n := range rows {
		if n > 1 {
			t.Errorf("round %d: quote %s is listed %d times among the partner's earnings", round, id, n)
		}
	}
	for _, id := range s.feeQuotes {
		if rows[id] == 0 {
			t.Errorf("round %d: the earnings row of acknowledged fee quote %s is missing after the restart", round, id)
		}
	}

	for _, h := range s.txs {
		if st, raw, err := c.do(http.MethodGet, "/v1/sandbox/tx/"+h, nil, ""); err != nil || st != http.StatusOK {
			t.Errorf("round %d: acknowledged broadcast %s: %d %v %s", round, h, st, err, raw)
		}
	}
	// Every checkout is there; one whose payment was not answered before
	// the kill is paid now (its page and token survived the restart),
	// unless the unanswered payment was made after all.
	paid := map[string]bool{}
	for _, o := range s.paid {
		paid[o.uid] = true
	}
	var unpaid []crashOrder
	for _, o := range s.orders {
		var status struct{ Status string }
		if st, raw, err := c.doJSON(http.MethodGet, "/v1/onramp/status?orderUid="+o.uid, nil, "", &status); err != nil || st != http.StatusOK {
			t.Errorf("round %d: acknowledged checkout %s: %d %v %s", round, o.uid, st, err, raw)
			continue
		}
		switch {
		case paid[o.uid]:
		case status.Status == string(onramp.Created):
			unpaid = append(unpaid, o)
		default: // the payment cut off by the kill was made
			s.paid = append(s.paid, o)
		}
	}
	// Creating requests answered under an Idempotency-Key replay their
	// answer: nothing is created again.
	for _, r := range s.replays[s.replayed:] {
		st, raw, h, err := c.doHeader(http.MethodPost, r.path, r.body, r.partnerKey, "Idempotency-Key", r.idemKey)
		if err != nil || st/100 != 2 || h.Get("Idempotent-Replayed") != "true" || !bytes.Equal(raw, r.answer) {
			t.Errorf("round %d: %s with Idempotency-Key %s again after the restart: %d %v replayed=%q\n%s\nfirst answer:\n%s",
				round, r.path, r.idemKey, st, err, h.Get("Idempotent-Replayed"), raw, r.answer)
		}
	}
	s.replayed = len(s.replays)
	s.mu.Unlock()
	for _, o := range unpaid {
		if !s.pay(c, o) {
			t.Errorf("round %d: paying order %s after the restart failed", round, o.uid)
		}
	}
	s.mu.Lock()
	for _, sw := range s.swaps {
		var status struct{ Status string }
		crashGet(t, c, "/v1/status?txHash="+sw.txHash, "", &status)
		if status.Status == "NOT_FOUND" || status.Status == "" {
			t.Errorf("round %d: the swap executed as %s is not tracked after the restart: %q", round, sw.txHash, status.Status)
		}
	}
	for _, d := range s.deposits {
		if st, raw, err := c.do(http.MethodGet, "/v1/inbound-receiver/deposits/"+d.txHash, nil, ""); err != nil || st != http.StatusOK {
			t.Errorf("round %d: registered deposit %s: %d %v %s", round, d.txHash, st, err, raw)
		}
	}
	t.Logf("round %d: %d fee quotes, %d fee-wallet ecosystems, %d webhooks, %d test events, %d broadcasts, %d swaps, %d checkouts (%d paid, %d of them after the restart), %d deposits, %d idempotent answers acknowledged so far, all there",
		round, len(s.feeQuotes), len(s.wallets), len(s.hooks), len(s.tests), len(s.txs), len(s.swaps), len(s.orders), len(s.paid), len(unpaid), len(s.deposits), len(s.replays))
}

// crashGet reads a 200 answer's data into v, failing the test otherwise.
func crashGet(t *testing.T, c *crashClient, path, key string, v any) {
	t.Helper()
	if st, raw, err := c.doJSON(http.MethodGet, path, nil, key, v); err != nil || st != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", path, st, err, raw)
	}
}

// checkTerminal follows every tracked swap, registered deposit and paid
// order to its end after the last restart: swaps DONE with the quoted
// amount delivered, deposits COMPLETED, orders COMPLETED with the crypto
// delivered, and each end heard by the partner's webhook.
func (s *crashState) checkTerminal(t *testing.T, c *crashClient) {
	t.Helper()
	defer c.close()
	s.reportRefused(t, "after the last restart")
	s.mu.Lock()
	swaps, deposits, paid := slices.Clone(s.swaps), slices.Clone(s.deposits), slices.Clone(s.paid)
	s.mu.Unlock()
	deadline := time.Now().Add(40 * time.Second)
	wait := func(what string, done func() (bool, string)) {
		for {
			ok, last := done()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not end after the last restart: %s", what, last)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	genesis := big.NewInt(1_000_000_000) // 1,000 USDC, every address's start on every chain
	for _, sw := range swaps {
		var st struct {
			Status, Substatus string
			Receiving         struct{ TxHash string }
		}
		wait("swap "+sw.txHash, func() (bool, string) {
			crashGet(t, c, "/v1/status?txHash="+sw.txHash, "", &st)
			return st.Status == "DONE" || st.Status == "FAILED", st.Status + " " + st.Substatus
		})
		if st.Status != "DONE" || st.Substatus != "COMPLETED" || st.Receiving.TxHash == "" {
			t.Errorf("swap %s ended %s %s", sw.txHash, st.Status, st.Substatus)
		}
		want := new(big.Int).Add(genesis, crashBig(t, sw.toAmount))
		if got := crashBalance(t, c, sw.chain.id, sw.to, sw.chain.usdc); got.Cmp(want) < 0 {
			t.Errorf("swap %s: its receiver holds %s USDC base units on chain %d, want at least %s", sw.txHash, got, sw.chain.id, want)
		}
	}
	for _, d := range deposits {
		var dep struct{ Status string }
		wait("deposit "+d.txHash, func() (bool, string) {
			crashGet(t, c, "/v1/inbound-receiver/deposits/"+d.txHash, "", &dep)
			return slices.Contains([]string{"COMPLETED", "REFUNDED_USDCH", "FAILED"}, dep.Status), dep.Status
		})
		if dep.Status != "COMPLETED" {
			t.Errorf("deposit %s ended %s", d.txHash, dep.Status)
		}
	}
	for _, o := range paid {
		var st struct{ Status string }
		wait("order "+o.uid, func() (bool, string) {
			crashGet(t, c, "/v1/onramp/status?orderUid="+o.uid, "", &st)
			return slices.Contains([]string{"COMPLETED", "FAILED", "REFUNDED", "EXPIRED"}, st.Status), st.Status
		})
		if st.Status != "COMPLETED" {
			t.Errorf("order %s ended %s", o.uid, st.Status)
		}
		amount, ok := new(big.Rat).SetString(o.cryptoAmount)
		if !ok {
			t.Fatalf("order %s: cryptoAmount %q", o.uid, o.cryptoAmount)
		}
		bought := new(big.Int).Quo(new(big.Int).Mul(amount.Num(), big.NewInt(1_000_000)), amount.Denom())
		want := new(big.Int).Add(genesis, bought)
		if got := crashBalance(t, c, o.chain.id, o.wallet, o.chain.usdc); got.Cmp(want) < 0 {
			t.Errorf("order %s: its wallet holds %s USDC base units on chain %d, want at least %s", o.uid, got, o.chain.id, want)
		}
	}
	t.Logf("after the last restart: %d swaps DONE, %d deposits COMPLETED, %d paid orders COMPLETED", len(swaps), len(deposits), len(paid))
}

func crashBig(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 0)
	if !ok {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

// crashBalance reads one balance with GET /v1/balances.
func crashBalance(t *testing.T, c *crashClient, chainID uint64, holder, token string) *big.Int {
	t.Helper()
	var b struct {
		Chains []struct {
			Balances []struct {
				Token  struct{ Address string }
				Amount string
			}
		}
	}
	crashGet(t, c, fmt.Sprintf("/v1/balances?address=%s&chains=%d", holder, chainID), "", &b)
	if len(b.Chains) != 1 {
		t.Fatalf("balances of %s on chain %d: %+v", holder, chainID, b)
	}
	for _, x := range b.Chains[0].Balances {
		if strings.EqualFold(x.Token.Address, token) {
			return crashBig(t, x.Amount)
		}
	}
	t.Fatalf("no %s in the balances of %s on chain %d", token, holder, chainID)
	return nil
}

// crashWaitOutboxEmpty waits until the service owes no delivery, as its
// metrics count the outbox.
func crashWaitOutboxEmpty(t *testing.T, c *crashClient, wait time.Duration) {
	t.Helper()
	defer c.close()
	deadline := time.Now().Add(wait)
	for {
		st, raw, err := c.do(http.MethodGet, "/metrics", nil, "")
		if err != nil || st != http.StatusOK {
			t.Fatalf("metrics: %d %v", st, err)
		}
		owed, seen := 0.0, false
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "swapgate_webhook_outbox_entries{") {
				f := strings.Fields(line)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil {
					t.Fatalf("metrics line %q", line)
				}
				owed += v
				seen = true
			}
		}
		if seen && owed == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outbox still owes %v deliveries %v after the last restart", owed, wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkStore opens the stopped service's store directly, as an operator's
// tool would, and checks what it keeps: on Pebble, its levels are
// consistent and it reports no error; the fee wallets and webhooks acknowledged; each fee
// quote's activity and earning once, and once in its ecosystem's pending
// index; every delivery the outbox accepted delivered and heard by the
// receiver, and the outbox empty; every tracked swap, deposit and paid
// order at its end.
func (s *crashState) checkStore(t *testing.T, dir, storeURL string, rcv *crashReceiver, fee, wallets crashPartnerKey, hookers []crashPartnerKey) {
	t.Helper()
	var pebbleLog crashBuffer
	stores, err := app.OpenStore(context.Background(), app.StoreConfig{URL: storeURL, DataDir: dir,
		Logger: slog.New(slog.NewJSONHandler(&pebbleLog, nil))})
	if err != nil {
		t.Fatalf("open the store after the last run: %v", err)
	}
	lister, ok := stores.Backend().(activityLister)
	if !ok {
		t.Fatalf("the store %T cannot list activity", stores.Backend())
	}
	// pb is the Pebble store, nil on PostgreSQL: its raw indexes are
	// checked as well.
	pb, _ := stores.Backend().(*pebblestore.Store)
	defer func() {
		if err := stores.Close(); err != nil {
			t.Errorf("close the store: %v", err)
		}
		if l := pebbleLog.String(); l != "" {
			t.Errorf("Pebble reported errors on the store:\n%s", l)
		}
	}()
	ctx := context.Background()
	if pb != nil {
		if err := pb.DB().CheckLevels(nil); err != nil {
			t.Errorf("Pebble's level check: %v", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	ws, err := stores.FeeWallets.FeeWallets(ctx, wallets.id)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range ws {
		got[w.Ecosystem] = w.Address
	}
	for eco, w := range s.wallets {
		if got[eco] != w.known {
			t.Errorf("store: fee wallet %s is %q, the service answered %q", eco, got[eco], w.known)
		}
	}

	// Activity and the pending index: each quote once.
	acts := map[string]*account.Activity{}
	err = lister.EachActivity(ctx, fee.id, time.Time{}, time.Now().Add(time.Hour), func(a *account.Activity) bool {
		if acts[a.ID] != nil {
			t.Errorf("store: quote %s has two activity records", a.ID)
		}
		acts[a.ID] = a
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]int{}
	if pb != nil {
		it, err := pb.DB().NewIter(&pebble.IterOptions{LowerBound: []byte("ledger/e/"), UpperBound: []byte("ledger/e0")})
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			rest := k[len("ledger/e/"):]
			slash := bytes.IndexByte(rest, '/')
			if slash < 0 || len(rest) < slash+1+8 {
				t.Errorf("store: malformed pending index key %q", k)
				continue
			}
			id := string(rest[slash+1+8:])
			pending[id]++
			if binary.BigEndian.Uint64(rest[slash+1:]) == 0 {
				t.Errorf("store: pending index entry %q without a sequence number", k)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		// The pending set as a settlement reads it, every ecosystem's.
		for _, eco := range account.Ecosystems() {
			if err := stores.Settlement.PendingEarnings(ctx, eco, func(a *account.Activity) error {
				pending[a.ID]++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id, n := range pending {
		if n != 1 {
			t.Errorf("store: quote %s is %d times in the pending ledger index", id, n)
		}
	}
	earnings := 0
	for id, a := range acts {
		if a.Earning == nil {
			continue
		}
		earnings++
		if a.Earning.State == account.EarningPending && pending[id] != 1 {
			t.Errorf("store: pending earning %s is %d times in the pending index", id, pending[id])
		}
	}
	for id := range pending {
		if a := acts[id]; a == nil || a.Earning == nil || a.Earning.State != account.EarningPending {
			t.Errorf("store: the pending index names %s, which has no pending earning", id)
		}
	}
	for _, id := range s.feeQuotes {
		if a := acts[id]; a == nil || a.Earning == nil {
			t.Errorf("store: acknowledged fee quote %s has no earnings row", id)
		}
	}

	// Webhooks and every delivery accepted.
	accepted := 0
	acceptedIDs := map[string]bool{}
	for _, p := range append([]crashPartnerKey{fee}, hookers...) {
		hooks, err := stores.Webhooks.Webhooks(ctx, p.id)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hooks {
			recs, err := stores.Webhooks.Deliveries(ctx, p.id, h.ID, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				accepted++
				acceptedIDs[r.ID] = true
				if r.State != webhook.DeliveryDelivered || rcv.got(r.ID) == 0 {
					t.Errorf("store: delivery %s (%s) of webhook %s is %s and reached the receiver %d times", r.ID, r.Event, h.ID, r.State, rcv.got(r.ID))
				}
			}
		}
	}
	ids := map[string]bool{}
	for _, p := range append([]crashPartnerKey{fee}, hookers...) {
		hooks, _ := stores.Webhooks.Webhooks(ctx, p.id)
		for _, h := range hooks {
			ids[h.ID] = true
		}
	}
	for _, h := range s.hooks {
		if !ids[h.id] {
			t.Errorf("store: acknowledged webhook %s is missing", h.id)
		}
	}
	// Nothing reached the receiver that the store did not accept: a
	// delivery the store has no row of announced a change it lost.
	for _, d := range rcv.deliveryIDs() {
		if !acceptedIDs[d] {
			t.Errorf("the receiver got delivery %s, which the store never accepted", d)
		}
	}
	for _, d := range s.tests {
		if rcv.got(d) == 0 {
			t.Errorf("acknowledged test delivery %s never reached the receiver", d)
		}
	}
	due, scheduled, err := stores.Webhooks.CountOutbox(ctx, time.Now().Add(24*time.Hour), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	left := due + scheduled
	if pb != nil {
		it, err := pb.DB().NewIter(&pebble.IterOptions{LowerBound: []byte("outbox/"), UpperBound: []byte("outbox0")})
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			left++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if left != 0 {
		t.Errorf("store: %d entries left in the outbox", left)
	}

	for _, k := range rcv.publishedTwice() {
		t.Errorf("a state change was published more than once: %s", k)
	}
	if n := rcv.badSignatures(); n > 0 {
		t.Errorf("the receiver refused %d deliveries whose signature did not verify", n)
	}

	// Ends, and the events that tell them.
	for _, sw := range s.swaps {
		rec, err := stores.Swaps.Swap(ctx, sw.txHash)
		if err != nil || rec.Status != "DONE" {
			t.Errorf("store: swap %s: %v %+v", sw.txHash, err, rec)
		}
		if a := acts[sw.quoteID]; a == nil || a.Kind != account.ActivitySwap || a.Status != "DONE" {
			t.Errorf("store: the partner's line of swap %s: %+v", sw.quoteID, a)
		}
		if !rcv.heard(webhook.SwapCompleted, sw.quoteID) {
			t.Errorf("the partner never heard swap.completed of %s", sw.quoteID)
		}
	}
	for _, o := range s.paid {
		rec, err := stores.Onramp.OnrampOrder(ctx, o.uid)
		if err != nil || rec.State != onramp.Completed {
			t.Errorf("store: order %s: %v %+v", o.uid, err, rec)
		}
		if a := acts[o.uid]; a == nil || a.Kind != account.ActivityOnramp || a.Status != string(onramp.Completed) || a.Earning == nil {
			t.Errorf("store: the partner's line of order %s: %+v", o.uid, a)
		}
		if !rcv.heard(webhook.OnrampCompleted, o.uid) {
			t.Errorf("the partner never heard onramp.completed of %s", o.uid)
		}
	}
	for _, d := range s.deposits {
		rec, err := stores.Inbound.InboundDepositByHash(ctx, d.txHash)
		if err != nil || string(rec.Deposit.State) != "COMPLETED" {
			t.Errorf("store: deposit %s: %v %+v", d.txHash, err, rec)
		}
		if !rcv.heard(webhook.DepositCompleted, d.txHash) {
			t.Errorf("the partner never heard deposit.completed of %s", d.txHash)
		}
	}
	t.Logf("store: %d activity records (%d earnings), %d pending index entries, %d deliveries accepted, all delivered", len(acts), earnings, len(pending), accepted)
}

// activityLister is what checkStore reads beside the service's stores:
// the partner's whole activity, which both backends list.
type activityLister interface {
	EachActivity(ctx context.Context, partnerID string, from, until time.Time, fn func(*account.Activity) bool) error
}

func (s *crashState) summary(rcv *crashReceiver) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	total, again := 0, 0
	for _, n := range rcv.deliveries {
		total += n
		if n > 1 {
			again++
		}
	}
	return fmt.Sprintf("%d quotes timed out; acknowledged: %d fee quotes, %d webhooks, %d test events, %d swaps, %d paid orders, %d deposits; the receiver got %d deliveries of %d events (%d delivered more than once)",
		s.timeouts, len(s.feeQuotes), len(s.hooks), len(s.tests), len(s.swaps), len(s.paid), len(s.deposits), total, len(rcv.deliveries), again)
}

// crashRNG is a crash test's source of kill times: seeded from the clock,
// or from CRASH_SEED to repeat a run, the seed logged either way; stream
// keeps each test's sequence its own.
func crashRNG(t *testing.T, stream uint64) *rand.Rand {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv("CRASH_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("CRASH_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("crash seed %d (CRASH_SEED=%d repeats these kill times)", seed, seed)
	return rand.New(rand.NewPCG(uint64(seed), stream))
}
