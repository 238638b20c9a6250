package main

import (
	"context"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/internal/standin/signer"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// TestExternalSignerE2E: a sandbox server started with --signer-url and
// --signer-address signs the operator's transactions through the external
// signer (the stand-in, answering as web3signer does): the account is the
// signer's, funded from the faucet, no sealed key is made, a payment is
// confirmed, operator-key show says so, and /metrics counts it with the
// account's balance, low under --operator-min-balance. A sealed key of
// another address beside --signer-url is a start error naming the flags
// and that address. On both stores.
func TestExternalSignerE2E(t *testing.T) {
	key, _ := crypto.GenerateKey()
	st, srv := signer.Start(key, signer.Web3Signer)
	defer srv.Close()
	dir := suiteDir(t)
	flags := func(c *app.Config) {
		c.DataDir = dir
		c.Operator = app.OperatorConfig{SignerURL: srv.URL, SignerAddress: st.Address().Hex()}
		c.Tx.MinBalance = 1e9 // coins: every chain is low
	}
	ts := startServer(t, flags)
	m := ts.app.TxManager()
	if m == nil || m.Account(42161) != st.Address() {
		t.Fatalf("the manager signs as %v, want the external signer's %s", m, st.Address().Hex())
	}
	payee := common.HexToAddress("0x00000000000000000000000000000000000fee02")
	in, err := m.Submit(context.Background(), txintent.Request{Purpose: "test", Key: "e2e/external", ChainID: 42161, To: payee,
		Value: big.NewInt(4321), GasLimit: 21_000})
	if err != nil {
		t.Fatal(err)
	}
	in = waitConfirmed(t, m, in.ID)
	if st.Signed() < 1 || in.From != st.Address().Hex() {
		t.Fatalf("signed %d times, intent from %s", st.Signed(), in.From)
	}

	// tx show gives the real intent with its mined transaction.
	var v admin.IntentView
	cli(t, &v, "tx", "show", in.ID, "--data", dir)
	if last := len(v.Txs) - 1; v.State != "confirmed" || last < 0 || v.Txs[last].State != admin.TxMined ||
		v.Txs[last].Hash != in.MinedTx().Hash || v.Txs[last].BlockNumber == 0 || v.Value != "4321" {
		t.Errorf("tx show %s: %+v", in.ID, v)
	}

	var shown admin.OperatorKeyView
	cli(t, &shown, "operator-key", "show", "--data", dir)
	if shown.Address != st.Address().Hex() || shown.Signer != "external" {
		t.Errorf("operator-key show with an external signer: %+v", shown)
	}

	account := st.Address().Hex()
	checks := map[string]func(float64) bool{
		`swapgate_txm_intents_final_total{state="confirmed"}`:                       func(v float64) bool { return v == 1 },
		`swapgate_txm_inclusion_seconds_count`:                                      func(v float64) bool { return v == 1 },
		`swapgate_txm_intents{state="sent"}`:                                        func(v float64) bool { return v == 0 },
		`swapgate_txm_account_balance_wei{account="` + account + `",chain="42161"}`: func(v float64) bool { return v > 0 },
		`swapgate_txm_balance_low{chain="42161"}`:                                   func(v float64) bool { return v == 1 },
	}
	// The manager's metrics count a write once the store has taken it, a
	// moment after the intent reads confirmed: scraped until they agree.
	var metrics map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		metrics = scrape(t, ts)
		agree := true
		for series, ok := range checks {
			v, found := metrics[series]
			agree = agree && found && ok(v)
		}
		if agree || time.Now().After(deadline) {
			break
		}
	}
	for series, ok := range checks {
		v, found := metrics[series]
		if !found || !ok(v) {
			t.Errorf("/metrics: %s = %v (found %v)", series, v, found)
		}
	}
	ts.stop()

	// The store gets a sealed key of its own: with --signer-url for
	// another address the server does not start.
	var created admin.OperatorKeyView
	cli(t, &created, "operator-key", "create", "--data", dir)
	cfg := app.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	flags(&cfg)
	if dsn, ok := suiteStores.Load(dir); ok {
		cfg.Store = dsn.(string)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, cfg)
	if err == nil {
		_ = a.Close(ctx)
		t.Fatal("the server started with a sealed key and an external signer of two addresses")
	}
	for _, want := range []string{"--signer-url", "--signer-address", created.Address} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the start error %q does not name %s", err, want)
		}
	}
}

// scrape reads the server's /metrics as series → value (histograms' and
// summaries' lines as they are written).
func scrape(t *testing.T, ts *testServer) map[string]float64 {
	t.Helper()
	resp, err := http.Get(ts.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
