package main

import (
	"context"
	"crypto/ecdsa"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/standin/evmrpc"
	lifistandin "github.com/swapgate/swapgate/internal/standin/lifi"
	mpstandin "github.com/swapgate/swapgate/internal/standin/moonpay"
	oneclickstandin "github.com/swapgate/swapgate/internal/standin/oneclick"
	"github.com/swapgate/swapgate/internal/standin/signer"
	"github.com/swapgate/swapgate/routing/adapters/moonpay"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// Swapgate's own pulseroute contracts on Arbitrum, as an operator configures
// them in live mode (--pulse-sender-contract, --pulse-inbound-receiver):
// the inbound receiver is the operator account, which the external
// signer's stand-in holds (--signer-url, --signer-address).
const liveSender = "0x5ce0c2f6b6b33f36b17e4fd3dda2b1c16f0e3a01"

// liveReceiver is the operator account of the live stand-ins' signer.
var liveReceiver = crypto.PubkeyToAddress(liveOperatorKey().PublicKey).Hex()

func liveOperatorKey() *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/live-e2e-operator")))
	if err != nil {
		panic(err)
	}
	return k
}

// liveStandins are local stand-ins of every upstream live mode talks to.
type liveStandins struct {
	agg     *lifistandin.Server
	intents *oneclickstandin.Server
	node    *evmrpc.Server
	mp      *mpstandin.Server
	// signerURL is the operator's external signer, holding liveReceiver.
	signerURL string
	aggURL    string
	intURL    string
	nodeURL   string
}

func startLiveStandins(t *testing.T) *liveStandins {
	t.Helper()
	var s liveStandins
	var err error
	var aggSrv, intSrv, nodeSrv *httptest.Server
	if s.agg, aggSrv, err = lifistandin.Start(lifistandin.Config{StatusPolls: 1, Record: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(aggSrv.Close)
	if s.intents, intSrv, err = oneclickstandin.Start(oneclickstandin.Config{APIKey: "jwt-live-e2e", AutoAdvance: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(intSrv.Close)
	if s.node, nodeSrv, err = evmrpc.Start(evmrpc.Config{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nodeSrv.Close)
	_, signerSrv := signer.Start(liveOperatorKey(), signer.Web3Signer)
	t.Cleanup(signerSrv.Close)
	s.signerURL = signerSrv.URL
	s.mp = mpstandin.Start(mpstandin.Config{APIKey: "pk_live_e2e", SecretKey: "sk_live_e2e", WebhookKey: "wk_live_e2e"})
	t.Cleanup(s.mp.Close)
	s.aggURL, s.intURL, s.nodeURL = aggSrv.URL, intSrv.URL, nodeSrv.URL
	return &s
}

// configure points a live-mode server at the stand-ins.
func (s *liveStandins) configure(c *app.Config) {
	c.Mode = app.ModeLive
	c.Quote.AggregatorURL = s.aggURL
	c.Quote.IntentsURL, c.Quote.IntentsKey = s.intURL, "jwt-live-e2e"
	c.Quote.PulseRPC = map[uint64]string{369: evmrpc.URL(s.nodeURL, 369), 42161: evmrpc.URL(s.nodeURL, 42161)}
	c.Quote.Pulse = app.PulseContracts{Senders: map[uint64]string{42161: liveSender}, Receivers: map[uint64]string{42161: liveReceiver}}
	c.Operator = app.OperatorConfig{SignerURL: s.signerURL, SignerAddress: liveReceiver}
	c.OnrampProvider = app.OnrampMoonPay
	c.MoonPay = moonpay.Config{APIURL: s.mp.URL(), WidgetURL: s.mp.WidgetURL(), APIKey: "pk_live_e2e", SecretKey: "sk_live_e2e", WebhookKey: "wk_live_e2e"}
	c.OnrampLookupInterval = time.Minute
	c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
}

// TestLiveModeEndToEnd runs the real server in live mode against local
// stand-ins of LI.FI, 1Click, a JSON-RPC node of chains 369 and 42161 and
// MoonPay, and drives what a user does: token prices from the aggregator's
// list, a quote of every shape (A from the aggregator, B direct in and out
// and C from the real contracts, C's step 1 the aggregator's transaction to
// the inbound receiver), an execute followed to DONE, an intents deposit
// followed to SUCCESS, and an on-ramp order moved to COMPLETED by MoonPay's
// signed webhooks, with the partner's webhooks for each. No answer carries
// a sandbox tool, price or contract.
func TestLiveModeEndToEnd(t *testing.T) {
	up := startLiveStandins(t)
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, up.configure)
	up.mp.SetWebhookURL(ts.base + app.MoonPayWebhookPath)
	_, key := ts.createPartner("LiveCo", "--swap-fee-bps", "0", "--onramp-fee-bps", "120")
	if env := ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", webhook.Events(), e2eSecret), withKey(key)); env.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", env.Status, env.Raw)
	}
	noSandbox := func(t *testing.T, e *envelope) {
		t.Helper()
		if raw := string(e.Raw); strings.Contains(raw, "sbx-") || strings.Contains(raw, "swapgate.dev") {
			t.Fatalf("a sandbox tool or address in a live answer: %s", raw)
		}
	}

	// Prices: the aggregator's priceUSD, and its logos.
	t.Run("tokens", func(t *testing.T) {
		var tok struct {
			Tokens map[string][]struct{ Address, Symbol, PriceUSD, LogoURI string }
		}
		e := ts.get("/v1/tokens?chains=42161")
		e.decode(t, &tok)
		noSandbox(t, e)
		want, ok := up.agg.Prices().Lookup(42161, usdcArb)
		if !ok {
			t.Fatal("the stand-in does not price USDC on Arbitrum")
		}
		found := false
		for _, tk := range tok.Tokens["42161"] {
			if !strings.EqualFold(tk.Address, usdcArb) {
				continue
			}
			found = true
			got, err := strconv.ParseFloat(tk.PriceUSD, 64)
			if err != nil || math.Abs(got-want.PriceUSD) > 1e-6*want.PriceUSD {
				t.Fatalf("USDC priceUSD %q, the aggregator lists %v", tk.PriceUSD, want.PriceUSD)
			}
			if !strings.HasPrefix(tk.LogoURI, up.aggURL) {
				t.Fatalf("USDC logoURI %q is not the aggregator's", tk.LogoURI)
			}
		}
		if !found {
			t.Fatalf("no USDC on Arbitrum in %v", tok.Tokens)
		}
	})

	// Shape A from the aggregator, executed and followed to DONE.
	t.Run("shape A executed to DONE", func(t *testing.T) {
		var q shapeA
		e := ts.get(arbToBase(), withKey(key))
		e.decode(t, &q)
		noSandbox(t, e)
		if q.Provider != "aggregator" || q.Quote.TransactionRequest == nil ||
			!strings.EqualFold(q.Quote.TransactionRequest.To, lifistandin.DefaultRouter) ||
			!strings.EqualFold(q.Quote.Estimate.ApprovalAddress, lifistandin.DefaultRouter) {
			t.Fatalf("shape A %+v", q)
		}
		hash := "0x" + strings.Repeat("a1", 32)
		up.agg.MarkSent(hash, lifistandin.Sent{FromChain: 42161, ToChain: 8453, FromToken: usdcArb, ToToken: usdcBase,
			FromAmount: q.Quote.Estimate.FromAmount, ToAmount: q.Quote.Estimate.ToAmount, Tool: q.Quote.Tool})
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": hash}, withKey(key)).decode(t, new(map[string]any))
		var st struct{ Status, Substatus string }
		waitUntil(t, "the swap is DONE", func() bool {
			ts.get("/v1/status?txHash="+hash).decode(t, &st)
			return st.Status == "DONE"
		})
		if st.Substatus != "COMPLETED" {
			t.Fatalf("status %+v", st)
		}
	})

	// An intents deposit, reported and followed to SUCCESS.
	t.Run("intents deposit", func(t *testing.T) {
		var q struct {
			Quote    struct{ ID, DepositAddress, Tool string }
			Provider string
		}
		e := ts.get(quotePath("fromChain", "1", "toChain", "900000002", "fromToken", usdcEth, "toToken", "native",
			"fromAmount", "250000000", "fromAddress", wallet, "toAddress", tonAddress), withKey(key))
		e.decode(t, &q)
		noSandbox(t, e)
		if q.Provider != "intents" || q.Quote.DepositAddress == "" {
			t.Fatalf("intents quote %+v", q)
		}
		var ex struct{ Kind string }
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID}, withKey(key)).decode(t, &ex)
		if ex.Kind != "deposit" {
			t.Fatalf("execute %+v", ex)
		}
		hash := "0x" + strings.Repeat("b2", 32)
		var st struct{ Status string }
		ts.post("/v1/execute/deposit/submit", map[string]string{"txHash": hash, "depositAddress": q.Quote.DepositAddress}, withKey(key)).decode(t, &st)
		if got := up.intents.Submitted(); !slices.Contains(got, hash) {
			t.Fatalf("1Click was told of %v", got)
		}
		waitUntil(t, "the deposit succeeds", func() bool {
			ts.get("/v1/execute/deposit/status?depositAddress="+q.Quote.DepositAddress).decode(t, &st)
			return st.Status == "SUCCESS"
		})
	})

	// Shape B, both directions, from the real contracts.
	t.Run("shape B direct inbound and outbound", func(t *testing.T) {
		var in struct {
			Quote struct {
				Provider, Tool, SenderContract string
				TransactionRequest             struct{ To, Value string }
			}
		}
		e := ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", usdch,
			"fromAmount", "100000000", "fromAddress", wallet, "toAddress", wallet), withKey(key))
		e.decode(t, &in)
		noSandbox(t, e)
		if in.Quote.Provider != "pulseroute" || in.Quote.Tool != pulseroute.LiveToolWarp ||
			!strings.EqualFold(in.Quote.SenderContract, liveSender) || !strings.EqualFold(in.Quote.TransactionRequest.To, liveSender) {
			t.Fatalf("direct inbound %+v", in.Quote)
		}
		if v, ok := new(big.Int).SetString(strings.TrimPrefix(in.Quote.TransactionRequest.Value, "0x"), 16); !ok || v.Sign() <= 0 {
			t.Fatalf("direct inbound carries no interchain gas payment: %q", in.Quote.TransactionRequest.Value)
		}
		if up.node.Calls("eth_call") == 0 {
			t.Fatal("the node was never asked")
		}
		var out struct {
			Quote struct {
				Provider, Tool     string
				TransactionRequest struct{ To string }
			}
		}
		e = ts.get(quotePath("fromChain", "369", "toChain", "42161", "fromToken", usdch, "toToken", usdcArb,
			"fromAmount", "100000000", "fromAddress", wallet, "toAddress", wallet), withKey(key))
		e.decode(t, &out)
		noSandbox(t, e)
		warp369 := pulseroute.DefaultContracts().USDCh()
		if out.Quote.Provider != "pulseroute" || !strings.EqualFold(out.Quote.TransactionRequest.To, warp369.Router.Hex()) {
			t.Fatalf("direct outbound %+v, want a call to the warp router %s", out.Quote, warp369.Router.Hex())
		}
	})

	// Shape C: step 1 is the aggregator's transaction to the inbound
	// receiver.
	t.Run("shape C step 1 from the aggregator", func(t *testing.T) {
		var c struct {
			Quote struct {
				Provider string
				Steps    []struct {
					Step               int
					Automated          bool
					TransactionRequest *struct{ To, Data string }
				}
			}
		}
		before := len(up.agg.Quotes())
		e := ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", pulseroute.WPLSAddress,
			"fromAmount", "1000000000000000000", "fromAddress", wallet, "toAddress", wallet), withKey(key))
		e.decode(t, &c)
		noSandbox(t, e)
		if c.Quote.Provider != "pulseroute" || len(c.Quote.Steps) != 2 || c.Quote.Steps[0].TransactionRequest == nil ||
			!strings.EqualFold(c.Quote.Steps[0].TransactionRequest.To, lifistandin.DefaultRouter) || !c.Quote.Steps[1].Automated {
			t.Fatalf("shape C %+v", c.Quote)
		}
		asked := up.agg.Quotes()[before:]
		ok := false
		for _, q := range asked {
			if q.Get("fromChain") == "42161" && q.Get("toChain") == "42161" && strings.EqualFold(q.Get("toToken"), usdcArb) &&
				strings.EqualFold(q.Get("toAddress"), liveReceiver) && strings.EqualFold(q.Get("fromToken"), wethArb) {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("the aggregator was not asked for WETH → USDC to the inbound receiver: %v", asked)
		}
	})

	// The on-ramp: MoonPay's quote and signed widget, and its signed
	// webhooks moving the order to COMPLETED.
	t.Run("on-ramp to COMPLETED through MoonPay's webhook", func(t *testing.T) {
		var co onrampCheckoutAnswer
		ts.post("/v1/onramp/checkout", onrampCheckoutBody("live-1", nil), withKey(key)).decode(t, &co)
		if err := up.mp.VerifyWidgetURL(co.CheckoutURL); err != nil {
			t.Fatalf("checkout URL %s: %v", co.CheckoutURL, err)
		}
		ctx := context.Background()
		for _, m := range []struct{ status, tx string }{{"pending", ""}, {"completed", "0x" + strings.Repeat("c3", 32)}} {
			if st, err := up.mp.Move(ctx, co.OrderUID, m.status, m.tx, ""); err != nil || st != http.StatusOK {
				t.Fatalf("webhook %s: %d %v", m.status, st, err)
			}
		}
		onrampCheckHistory(t, ts.onrampStatus(t, co.OrderUID), []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed})
	})

	// The partner heard every flow.
	want := []string{webhook.SwapCompleted, webhook.DepositCompleted, webhook.OnrampCompleted}
	waitUntil(t, "the partner hears every flow's end", func() bool {
		heard := eventNames(rc.events(t))
		for _, ev := range want {
			if !slices.Contains(heard, ev) {
				return false
			}
		}
		return true
	})
}
