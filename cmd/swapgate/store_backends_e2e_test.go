package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/pgtest"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// One flow that touches every aggregate of the store, run on each backend
// the same way: the CLI reads SWAPGATE_STORE as `serve` reads --store, and
// every answer must be the same on both. A partner created by the CLI
// before the server starts (the store opened directly), another through
// the running server, a fee wallet, a webhook registered with an
// Idempotency-Key and replayed, a partner fee quote recorded in the
// ledger, an execute tracked to DONE with its webhooks delivered, an
// on-ramp order to COMPLETED, a settlement by the CLI; then a restart on
// the same store finds all of it.
func TestStoreBackendsEndToEnd(t *testing.T) {
	if suitePostgres != nil {
		t.Skip("runs on each backend itself")
	}
	backends := []struct {
		name string
		// url is the --store of the run; "" is Pebble under --data.
		url func(t *testing.T) string
	}{
		{"pebble", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return pgtest.Private(t).DSN(t) }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			storeURL := b.url(t)
			t.Setenv("SWAPGATE_STORE", storeURL)
			dir := t.TempDir()
			rc := newSignedReceiver(t)
			roots := x509.NewCertPool()
			roots.AddCert(rc.srv.Certificate())
			start := func() *testServer {
				return startServer(t, func(c *app.Config) {
					c.DataDir, c.Store = dir, storeURL
					c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
					c.AllowLoopbackWebhooks = true
					c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
					c.WebhookRetryBase = 50 * time.Millisecond
					c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
					c.SandboxBridgeScale = 0
					c.SandboxOnrampStep = onrampStep
				})
			}

			// The store opened by the CLI itself: no server yet.
			idA, keyA := createPartnerOffline(t, dir, "Acme")
			var fees struct{ ID string }
			cli(t, &fees, "partner", "set-fees", "--data", dir, "--id", idA, "--swap-fee-bps", "30", "--onramp-fee-bps", "50")
			ts := start()
			// Through the running server.
			idB, keyB := ts.createPartner("Beta")
			var partners []struct{ ID string }
			cli(t, &partners, "partner", "list", "--data", dir)
			if len(partners) != 2 || partners[0].ID == partners[1].ID || (partners[0].ID != idA && partners[1].ID != idA) {
				t.Fatalf("partners %+v, want %s and %s", partners, idA, idB)
			}
			if env := ts.putWallet(keyA, "evm", realWallets[0].addr); env.Status != http.StatusOK {
				t.Fatalf("put wallet: %d %s", env.Status, env.Raw)
			}

			// A webhook registered with an Idempotency-Key; the repeat is
			// the first answer replayed.
			hook := hookBody(t, rc.srv.URL+"/hook", webhook.Events(), e2eSecret)
			register := func(ts *testServer) *envelope {
				return ts.do(http.MethodPost, "/v1/partner/webhooks", hook, withKey(keyA), withHeader("Idempotency-Key", "hook-1"))
			}
			first := register(ts)
			if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("register: %d %s", first.Status, first.Raw)
			}
			if again := register(ts); !bytes.Equal(again.Raw, first.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %s, want %s", again.Status, again.Raw, first.Raw)
			}

			// A partner fee quote, in the ledger before its answer, then
			// executed and tracked to DONE.
			var q anyQuote
			ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
				"fromAmount", "200000000", "fromAddress", wallet, "toAddress", receiverAddr, "tools", "sbx-arcbridge"), withKey(keyA)).decode(t, &q)
			earnings := func(ts *testServer, key string) string {
				var e earningsView
				ts.get("/v1/partner/me/earnings", withKey(key)).decode(t, &e)
				return e.summary()
			}
			if got := earnings(ts, keyA); !strings.HasPrefix(got, "pending: evm=") || !strings.HasSuffix(got, "/1 settled:") {
				t.Fatalf("earnings after a fee quote: %s", got)
			}
			ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(200000000))
			tx := ts.broadcast(t, 42161, wallet, q.tx(t))
			if tx.Status != "success" {
				t.Fatalf("broadcast %+v", tx)
			}
			var ex struct{ Status *statusBody }
			ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": tx.TxHash}, withKey(keyA)).decode(t, &ex)
			var st statusBody
			waitUntil(t, "the swap is DONE", func() bool {
				ts.get("/v1/status?txHash="+tx.TxHash).decode(t, &st)
				return st.Status == swap.StatusDone
			})

			// An on-ramp order paid and completed.
			co := ts.onrampCheckout(t, keyA, onrampCheckoutBody("shop-1", nil))
			if p := ts.onrampAct(t, co.OrderUID, ts.onrampCSRF(t, co.OrderUID), onramp.Pay); p.status != http.StatusSeeOther {
				t.Fatalf("pay: %d %s", p.status, p.body)
			}
			waitUntil(t, "the order is COMPLETED", func() bool { return ts.onrampStatus(t, co.OrderUID).Status == onramp.Completed })
			// swap.pending and swap.completed, then the order's three.
			waitUntil(t, "five webhooks delivered", func() bool { return rc.count() >= 5 })

			// Settled by the CLI (on PostgreSQL directly, on Pebble through
			// the server holding the directory).
			var out settleOut
			cli(t, &out, "settle", "--data", dir, "--ecosystem", "evm")
			if out.ID == "" || len(out.Payouts) != 1 || out.Payouts[0].PartnerID != idA || out.Payouts[0].Wallet != realWallets[0].addr {
				t.Fatalf("settle: %+v", out)
			}
			// Paid by a transfer the transaction manager sends: settled once
			// it is confirmed.
			if len(out.Transfers) != 1 || out.Transfers[0].State != "planned" || out.Transfers[0].ChainID != 8453 {
				t.Fatalf("settle transfers: %+v", out.Transfers)
			}
			var settled string
			waitUntil(t, "the payout confirmed", func() bool {
				settled = earnings(ts, keyA)
				return strings.HasPrefix(settled, "pending: settled: evm=")
			})

			// A key rotated by the CLI stops working at once: on either
			// backend the command goes through the running server, which
			// drops its cached copy.
			if env := ts.get("/v1/partner/me", withKey(keyB)); env.Status != http.StatusOK {
				t.Fatalf("B's key before its rotation: %d %s", env.Status, env.Raw)
			}
			var rotated struct{ APIKey string }
			cli(t, &rotated, "partner", "rotate-key", "--data", dir, "--id", idB)
			ts.get("/v1/partner/me", withKey(keyB)).wantError(t, http.StatusUnauthorized, "UNAUTHORIZED", "")
			keyB = rotated.APIKey

			// A restart on the same store finds all of it.
			ts.stop()
			ts = start()
			if got := earnings(ts, keyA); got != settled {
				t.Fatalf("earnings after a restart: %s, want %s", got, settled)
			}
			if got := earnings(ts, keyB); got != "pending: settled:" {
				t.Fatalf("B's earnings: %s", got)
			}
			if again := register(ts); !bytes.Equal(again.Raw, first.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay after a restart: %d %s, want %s", again.Status, again.Raw, first.Raw)
			}
			ts.get("/v1/status?txHash="+tx.TxHash).decode(t, &st)
			if st.Status != swap.StatusDone {
				t.Fatalf("status after a restart %+v", st)
			}
			if got := ts.onrampStatus(t, co.OrderUID).Status; got != onramp.Completed {
				t.Fatalf("order after a restart: %s", got)
			}
			// On PostgreSQL the data directory holds the local files alone:
			// no Pebble store was opened beside the database.
			if manifests, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*")); (len(manifests) > 0) != (storeURL == "") {
				t.Fatalf("Pebble manifests in the data directory: %v (store %q)", manifests, storeURL)
			}
			var again settleOut
			cli(t, &again, "settle", "--data", dir, "--ecosystem", "evm")
			if again.ID != "" || len(again.Payouts) != 0 {
				t.Fatalf("a second settlement paid again: %+v", again)
			}
		})
	}
}
