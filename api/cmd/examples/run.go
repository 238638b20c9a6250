package main

import (
	"context"
	"crypto/ecdsa"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/internal/apitest"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// The tokens and addresses of the flows: real registry tokens, and a
// wallet whose key is derived from a fixed seed, so that it can sign the
// multi-step registration.
const (
	usdcArb  = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	usdcEth  = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
	usdcSol  = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	solana   = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
	wethArb  = "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"
	usdch    = "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D"
	plsx     = "0x95B303987A60C71504D99Aa1b13B4DA07b0790ab"
	secret   = "whsec_examples_0123456789"
	walletPK = "swapgate/api/examples"
)

// run starts the service, plays the flows and rewrites the document.
func run(ctx context.Context, docPath string) error {
	original, err := os.ReadFile(docPath)
	if err != nil {
		return fmt.Errorf("read the document (run from the repository root): %w", err)
	}
	contract, err := apitest.Parse(original)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "swapgate-examples-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	bin, err := buildSwapgate(ctx, dir)
	if err != nil {
		return err
	}

	// The webhook receiver, an HTTPS server on loopback whose certificate
	// the server trusts through SSL_CERT_FILE.
	rc := &receiver{secret: []byte(secret), contract: contract, seen: map[string]bool{}}
	hooks := httptest.NewTLSServer(rc)
	defer hooks.Close()
	certFile := filepath.Join(dir, "receiver.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hooks.Certificate().Raw}), 0o600); err != nil {
		return err
	}

	dataDir := filepath.Join(dir, "data")
	srv, err := startServe(ctx, bin, dataDir, certFile)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.stop()
		}
	}()
	s := &session{ctx: ctx, base: srv.base, contract: contract,
		client: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	ops, err := admin.Dial(dataDir)
	if err != nil {
		return fmt.Errorf("the admin listener: %w", err)
	}
	defer ops.Close()

	if err := s.play(ops, hooks.URL+"/hook", rc); err != nil {
		return err
	}
	stopped = true
	if err := srv.stop(); err != nil {
		return err
	}
	rc.mu.Lock()
	errs, got := rc.errs, rc.got
	rc.mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("deliveries the document refuses: %w", errors.Join(errs...))
	}
	for _, d := range got {
		if strings.HasSuffix(d.kind, "-test") {
			continue // the real swap.completed shows the payload better
		}
		s.examples = append(s.examples, example{name: "event-" + strings.NewReplacer(".", "-", "_", "-").Replace(d.kind),
			summary: "A delivery of " + d.event + kindNote(d.kind), event: d.event, response: d.body})
	}
	updated, err := rewrite(original, s.examples)
	if err != nil {
		return err
	}
	check, err := apitest.Parse(updated)
	if err == nil {
		err = check.Validate()
	}
	if err != nil {
		return fmt.Errorf("the rewritten document does not load, so it was not written: %w", err)
	}
	if err := os.WriteFile(docPath, updated, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "examples: wrote %d examples into %s\n", len(s.examples), docPath)
	return nil
}

// kindNote tells apart, in an example's summary, the two payloads deposit
// events carry.
func kindNote(kind string) string {
	switch {
	case strings.HasSuffix(kind, "-intents"):
		return " (an intents deposit)"
	case strings.HasSuffix(kind, "-multi-step"):
		return " (a multi-step deposit)"
	}
	return ""
}

// play is a partner's day through the public interface.
func (s *session) play(ops *admin.Client, hookURL string, rc *receiver) error {
	pk, err := crypto.ToECDSA(crypto.Keccak256([]byte(walletPK)))
	if err != nil {
		return err
	}
	wallet := crypto.PubkeyToAddress(pk.PublicKey).Hex()
	steps := []func() error{
		// Operations and reference data, anonymously.
		func() error {
			_, err := s.capture("healthz", "Up", "GET", "/healthz", nil, "", 200, nil)
			return err
		},
		func() error {
			_, err := s.capture("readyz", "Ready", "GET", "/readyz", nil, "", 200, nil)
			return err
		},
		func() error {
			_, err := s.capture("ping", "Anonymous ping: no rateLimit in meta", "GET", "/v1/ping", nil, "", 200, nil)
			return err
		},
		func() error {
			_, err := s.capture("chains", "The first three chains (of every chain)", "GET", "/v1/chains", nil, "", 200, trimArray(3, "chains"))
			return err
		},
		func() error {
			_, err := s.capture("tokens", "USDC on Ethereum and Base", "GET", query("/v1/tokens", "chains", "1,8453", "search", "usdc"), nil, "", 200, nil)
			return err
		},
		func() error {
			_, err := s.capture("connections", "Arbitrum to Base (the first three tokens of each side)", "GET",
				query("/v1/connections", "fromChain", "42161", "toChain", "8453"), nil, "", 200, func(v *node) {
					trimEach(3, "connections", "fromTokens")(v)
					trimEach(3, "connections", "toTokens")(v)
				})
			return err
		},
		func() error {
			_, err := s.capture("tools", "The first three tools", "GET", "/v1/tools", nil, "", 200, trimArray(3, "tools"))
			return err
		},
		func() error {
			_, err := s.capture("gas-prices-one", "One chain: the record", "GET", query("/v1/gas-prices", "chainId", "1"), nil, "", 200, nil)
			return err
		},
		func() error {
			_, err := s.capture("gas-prices-several", "Two chains: data.gasPrices", "GET", query("/v1/gas-prices", "chainId", "1,137"), nil, "", 200, nil)
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}

	// The partner, its fee wallet and its webhook.
	fee := 25
	p, err := ops.Create(s.ctx, admin.CreateRequest{Name: "Acme", Email: "ops@acme.example", SwapFeeBps: &fee})
	if err != nil {
		return fmt.Errorf("create the partner: %w", err)
	}
	key := p.APIKey
	if _, err := s.capture("partner-me", "The partner's profile", "GET", "/v1/partner/me", nil, key, 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("fee-wallet-put", "An EVM fee wallet", "PUT", "/v1/partner/me/fee-wallets",
		map[string]any{"ecosystem": "evm", "address": wallet}, key, 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("fee-wallets", "One wallet", "GET", "/v1/partner/me/fee-wallets", nil, key, 200, nil); err != nil {
		return err
	}
	hook, err := s.capture("webhook-create", "A webhook for every event", "POST", "/v1/partner/webhooks",
		map[string]any{"url": hookURL, "events": webhook.Events(), "secret": secret}, key, 201, nil)
	if err != nil {
		return err
	}
	hookID := str(hook.data(), "id")
	if _, err := s.capture("webhooks", "The partner's webhooks", "GET", "/v1/partner/webhooks", nil, key, 200, nil); err != nil {
		return err
	}

	if err := s.swapFlow(key, wallet); err != nil {
		return err
	}
	if err := s.intentsFlow(key, wallet); err != nil {
		return err
	}
	if err := s.pulserouteFlow(key, wallet, pk); err != nil {
		return err
	}
	if err := s.onrampFlow(key, wallet); err != nil {
		return err
	}

	// The partner's figures, after all that.
	if _, err := s.capture("earnings", "Fees pending on evm", "GET", "/v1/partner/me/earnings", nil, key, 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("stats", "The last 30 days", "GET", "/v1/partner/stats", nil, key, 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("transactions", "The newest three", "GET", query("/v1/partner/transactions", "limit", "3"), nil, key, 200, nil); err != nil {
		return err
	}
	test, err := s.call("POST", "/v1/partner/webhooks/"+hookID+"/test", nil, key, 202)
	if err != nil {
		return err
	}
	s.keep("webhook-test", "A test delivery queued", "POST", "/v1/partner/webhooks/{id}/test", nil, test, nil)
	waitFor := []string{"swap.pending", "swap.completed", "swap.failed", "deposit.received-intents", "deposit.completed-intents",
		"deposit.received-multi-step", "deposit.completed-multi-step", "onramp.payment_received", "onramp.crypto_sent",
		"onramp.completed", "onramp.failed", "swap.completed-test"}
	for !rc.has(waitFor...) {
		select {
		case <-s.ctx.Done():
			return fmt.Errorf("waiting for deliveries of %v: %w", waitFor, s.ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	a, err := s.call("GET", "/v1/partner/webhooks/"+hookID+"/deliveries", nil, key, 200)
	if err != nil {
		return err
	}
	s.keep("webhook-deliveries", "The newest two deliveries", "GET", "/v1/partner/webhooks/{id}/deliveries", nil, a, trimArray(2, "deliveries"))

	if err := s.refusals(ops, key); err != nil {
		return err
	}

	// Deletions last.
	other, err := s.call("POST", "/v1/partner/webhooks", map[string]any{"url": hookURL, "events": []string{"swap.failed"}, "secret": secret}, key, 201)
	if err != nil {
		return err
	}
	if a, err = s.call("DELETE", "/v1/partner/webhooks/"+str(other.data(), "id"), nil, key, 200); err != nil {
		return err
	}
	s.keep("webhook-delete", "Deleted", "DELETE", "/v1/partner/webhooks/{id}", nil, a, nil)
	if a, err = s.call("DELETE", "/v1/partner/me/fee-wallets/evm", nil, key, 200); err != nil {
		return err
	}
	s.keep("fee-wallet-delete", "Deleted", "DELETE", "/v1/partner/me/fee-wallets/{ecosystem}", nil, a, nil)
	return nil
}

// swapFlow quotes 100 USDC from Arbitrum to Base (Shape A), lists the
// candidates, approves, broadcasts, executes and follows the swap to DONE;
// then a second swap without an approval reverts and ends FAILED.
func (s *session) swapFlow(key, wallet string) error {
	params := []string{"fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "100000000", "fromAddress", wallet, "toAddress", wallet}
	q, err := s.capture("quote-shape-a", "Shape A: 100 USDC from Arbitrum to Base, with a partner key", "GET", query("/v1/quote", params...), nil, key, 200, nil)
	if err != nil {
		return err
	}
	if _, err := s.capture("routes", "Every candidate of the same request", "GET", query("/v1/routes", params...), nil, key, 200, nil); err != nil {
		return err
	}
	quote := at(q.data(), "quote")
	data, err := approveData(str(quote, "estimate", "approvalAddress"), big.NewInt(100000000))
	if err != nil {
		return err
	}
	approve := map[string]any{"chainId": 42161, "from": wallet,
		"transactionRequest": map[string]any{"to": usdcArb, "data": data}}
	if _, err := s.capture("sandbox-broadcast", "An ERC-20 approval, mined", "POST", "/v1/sandbox/broadcast", approve, "", 200, nil); err != nil {
		return err
	}
	tx := at(quote, "transactionRequest")
	sent, err := s.call("POST", "/v1/sandbox/broadcast", map[string]any{"chainId": 42161, "from": wallet, "transactionRequest": tx}, "", 200)
	if err != nil {
		return err
	}
	hash := str(sent.data(), "txHash")
	execute := map[string]any{"quoteId": str(quote, "id"), "txHash": hash}
	if _, err := s.capture("execute", "The swap's transaction reported: tracked from now on", "POST", "/v1/execute", execute, key, 200, nil); err != nil {
		return err
	}
	done, err := s.poll(query("/v1/status", "txHash", hash), key, func(d any) bool { return str(d, "status") == "DONE" })
	if err != nil {
		return err
	}
	s.keep("status-done", "A swap delivered", "GET", "/v1/status", nil, done, nil)
	if _, err := s.capture("status-not-found", "A transaction the service does not follow: HTTP 200", "GET",
		query("/v1/status", "txHash", "0x"+strings.Repeat("ab", 32)), nil, key, 200, nil); err != nil {
		return err
	}
	receipt, err := s.call("GET", "/v1/sandbox/tx/"+hash, nil, "", 200)
	if err != nil {
		return err
	}
	s.keep("sandbox-tx", "The swap's receipt, with the router's BridgeSent log", "GET", "/v1/sandbox/tx/{txHash}", nil, receipt, nil)
	faucet := map[string]any{"chainId": 8453, "address": wallet, "token": usdcBase, "amount": "5000000000"}
	if _, err := s.capture("sandbox-faucet", "5,000 USDC on Base", "POST", "/v1/sandbox/faucet", faucet, "", 200, nil); err != nil {
		return err
	}
	// A base fee below Base's gas price: the broadcasts after it pay as before.
	gas := map[string]any{"chainId": 8453, "baseFeePerGas": "1000000"}
	if _, err := s.capture("sandbox-gas", "Base's base fee at 0.001 gwei", "POST", "/v1/sandbox/gas", gas, "", 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("balances", "The wallet on Base (its first three assets)", "GET", query("/v1/balances", "address", wallet, "chains", "8453"), nil, "", 200,
		trimEach(3, "chains", "balances")); err != nil {
		return err
	}

	// Without an approval (the first one was spent), the swap reverts.
	q2, err := s.call("GET", query("/v1/quote", params...), nil, key, 200)
	if err != nil {
		return err
	}
	quote2 := at(q2.data(), "quote")
	body := map[string]any{"chainId": 42161, "from": wallet, "transactionRequest": at(quote2, "transactionRequest")}
	rev, err := s.call("POST", "/v1/sandbox/broadcast", body, "", 200)
	if err != nil {
		return err
	}
	s.keep("sandbox-broadcast-reverted", "A swap broadcast without its approval: mined, reverted", "POST", "/v1/sandbox/broadcast", body, rev, nil)
	if _, err := s.call("POST", "/v1/execute", map[string]any{"quoteId": str(quote2, "id"), "txHash": str(rev.data(), "txHash")}, key, 200); err != nil {
		return err
	}
	_, err = s.poll(query("/v1/status", "txHash", str(rev.data(), "txHash")), key, func(d any) bool { return str(d, "status") == "FAILED" })
	return err
}

// intentsFlow quotes 300 USDC from Ethereum to Solana through the intents
// tool (Shape A with a deposit address), sends the deposit and follows it.
func (s *session) intentsFlow(key, wallet string) error {
	q, err := s.capture("quote-shape-a-intents", "Shape A, intents: 300 USDC from Ethereum to Solana, to a deposit address", "GET",
		query("/v1/quote", "fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
			"fromAmount", "300000000", "fromAddress", wallet, "toAddress", solana, "tools", "sbx-intents"), nil, key, 200, nil)
	if err != nil {
		return err
	}
	quote := at(q.data(), "quote")
	sent, err := s.call("POST", "/v1/sandbox/broadcast", map[string]any{"chainId": 1, "from": wallet, "transactionRequest": at(quote, "transactionRequest")}, "", 200)
	if err != nil {
		return err
	}
	deposit := str(quote, "depositAddress")
	if _, err := s.capture("deposit-submit", "The deposit's transaction reported", "POST", "/v1/execute/deposit/submit",
		map[string]any{"txHash": str(sent.data(), "txHash"), "depositAddress": deposit}, key, 200, nil); err != nil {
		return err
	}
	done, err := s.poll(query("/v1/execute/deposit/status", "depositAddress", deposit), key, func(d any) bool { return str(d, "status") == "SUCCESS" })
	if err != nil {
		return err
	}
	s.keep("deposit-status", "A deposit swapped and delivered", "GET", "/v1/execute/deposit/status", nil, done, nil)
	return nil
}

// pulserouteFlow quotes the two direct variants (Shape B) and a multi-step
// one (Shape C), whose step 1 it broadcasts and registers, signed with the
// wallet's key, and follows to COMPLETED.
func (s *session) pulserouteFlow(key, wallet string, pk *ecdsa.PrivateKey) error {
	if _, err := s.capture("quote-shape-b", "Shape B, direct inbound: 1,000 USDC from Arbitrum to USDCh on 369", "GET",
		query("/v1/quote", "fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", usdch,
			"fromAmount", "1000000000", "fromAddress", wallet, "toAddress", wallet), nil, key, 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("quote-shape-b-outbound", "Shape B, the fee-free direct outbound bridge: 500 USDCh on 369 to USDC on Base", "GET",
		query("/v1/quote", "fromChain", "369", "toChain", "8453", "fromToken", usdch, "toToken", usdcBase,
			"fromAmount", "500000000", "fromAddress", wallet, "toAddress", wallet), nil, key, 200, nil); err != nil {
		return err
	}
	q, err := s.capture("quote-shape-c", "Shape C, multi-step: 0.2 WETH on Arbitrum to PLSX on 369", "GET",
		query("/v1/quote", "fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", plsx,
			"fromAmount", "200000000000000000", "fromAddress", wallet, "toAddress", wallet), nil, key, 200, nil)
	if err != nil {
		return err
	}
	step1 := at(q.data(), "quote", "steps", "0", "transactionRequest")
	data, err := approveData(str(step1, "to"), big.NewInt(200000000000000000))
	if err != nil {
		return err
	}
	approve := map[string]any{"chainId": 42161, "from": wallet,
		"transactionRequest": map[string]any{"to": wethArb, "data": data}}
	if _, err := s.call("POST", "/v1/sandbox/broadcast", approve, "", 200); err != nil {
		return err
	}
	sent, err := s.call("POST", "/v1/sandbox/broadcast", map[string]any{"chainId": 42161, "from": wallet, "transactionRequest": step1}, "", 200)
	if err != nil {
		return err
	}
	hash := str(sent.data(), "txHash")
	msg := pulseroute.RegisterMessage{TxHash: common.HexToHash(hash), ToAddress: common.HexToAddress(wallet),
		OutputToken: common.HexToAddress(plsx), DestinationDomain: 369}
	digest, err := pulseroute.Hash(pulseroute.TypedData(42161, msg))
	if err != nil {
		return err
	}
	sig, err := crypto.Sign(digest, pk)
	if err != nil {
		return err
	}
	sig[64] += 27
	register := map[string]any{"txHash": hash, "fromAddress": wallet, "toAddress": wallet, "outputToken": plsx,
		"destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)}
	if _, err := s.capture("inbound-register", "Step 1 registered, signed by its sender", "POST", "/v1/inbound-receiver/register", register, "", 200, nil); err != nil {
		return err
	}
	done, err := s.poll("/v1/inbound-receiver/deposits/"+hash, "", func(d any) bool { return str(d, "status") == "COMPLETED" })
	if err != nil {
		return err
	}
	s.keep("inbound-deposit", "Step 2 done: PLSX delivered on 369", "GET", "/v1/inbound-receiver/deposits/{txHash}", nil, done, nil)
	return nil
}

// csrfField is the checkout page's form token.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// onrampFlow reads the on-ramp's catalogue, prices and opens an order,
// pays it on its checkout page as a buyer's browser would, and follows it
// to COMPLETED; a second order is failed on its page.
func (s *session) onrampFlow(key, wallet string) error {
	if _, err := s.capture("onramp-config", "The sandbox on-ramp's catalogue", "GET", "/v1/onramp/config", nil, "", 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("onramp-assets", "The assets delivered on Base", "GET", query("/v1/onramp/assets", "chainId", "8453"), nil, "", 200, nil); err != nil {
		return err
	}
	if _, err := s.capture("onramp-quote", "100 EUR of USDC on Base by credit card", "POST", "/v1/onramp/quote",
		map[string]any{"fiatCurrency": "EUR", "fiatAmount": 100, "cryptoAsset": "USDC", "chainId": 8453, "paymentMethod": "credit_card"}, key, 200, nil); err != nil {
		return err
	}
	order := map[string]any{"fiatCurrency": "EUR", "fiatAmount": 100, "cryptoAsset": "USDC", "chainId": 8453, "walletAddress": wallet,
		"externalId": "cart-42", "redirectUrl": "https://shop.example/return?order=UID"}
	o, err := s.capture("onramp-checkout", "An order opened; send the buyer to checkoutUrl", "POST", "/v1/onramp/checkout", order, key, 200, nil)
	if err != nil {
		return err
	}
	uid := str(o.data(), "orderUid")
	if err := s.checkoutAct(uid, "pay"); err != nil {
		return err
	}
	done, err := s.poll(query("/v1/onramp/status", "orderUid", uid), "", func(d any) bool { return str(d, "status") == "COMPLETED" })
	if err != nil {
		return err
	}
	s.keep("onramp-status", "A paid order: crypto delivered", "GET", "/v1/onramp/status", nil, done, nil)
	failed, err := s.call("POST", "/v1/onramp/checkout", order, key, 200)
	if err != nil {
		return err
	}
	return s.checkoutAct(str(failed.data(), "orderUid"), "fail")
}

// checkoutAct presses a button of an order's checkout page, as the page's
// own form posts it: with the page's token, from the page's origin.
func (s *session) checkoutAct(uid, action string) error {
	page, err := s.page("GET", "/checkout/"+uid, nil)
	if err != nil {
		return err
	}
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		return fmt.Errorf("the checkout page of %s has no form token", uid)
	}
	_, err = s.page("POST", "/checkout/"+uid+"/"+action, url.Values{"csrf": {m[1]}})
	return err
}

// page requests a checkout page, outside the document, and returns its HTML.
func (s *session) page(method, path string, form url.Values) (string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(s.ctx, method, s.base+path, body)
	if err != nil {
		return "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", s.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode >= 400 {
		return "", fmt.Errorf("%s %s: %d", method, path, resp.StatusCode)
	}
	return string(b), nil
}

// refusals captures one answer of each refusal the sandbox can be made to
// give; they are shown with the shared response of their status.
func (s *session) refusals(ops *admin.Client, key string) error {
	type refusal struct {
		name, summary, method, path string
		body                        any
		key                         string
		status                      int
	}
	for _, r := range []refusal{
		{"error-invalid-params", "INVALID_PARAMS: a quote without fromAmount", "GET",
			query("/v1/quote", "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase, "fromAddress", "0x8ba1f109551bD432803012645Ac136ddd64DBA72"), nil, "", 400},
		{"error-validation", "VALIDATION_ERROR: an unknown body field", "POST", "/v1/execute", map[string]any{"quoteId": "qt_0", "tip": 1}, "", 400},
		{"error-unauthorized", "UNAUTHORIZED: a key that is not a partner's", "GET", "/v1/tools", nil, "pk_live_" + strings.Repeat("0", 32), 401},
		{"error-no-route", "NO_ROUTE_FOUND: one base unit of USDC, too little for every tool", "GET",
			query("/v1/quote", "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase, "fromAmount", "1", "fromAddress", "0x8ba1f109551bD432803012645Ac136ddd64DBA72"), nil, "", 404},
		{"error-not-found", "NOT_FOUND: no such path", "GET", "/v1/nothing-here", nil, "", 404},
		{"error-method-not-allowed", "METHOD_NOT_ALLOWED: a POST to a read endpoint", "POST", "/v1/chains", map[string]any{}, "", 405},
	} {
		a, err := s.call(r.method, r.path, r.body, r.key, r.status)
		if err != nil {
			return err
		}
		s.keep(r.name, r.summary, r.method, "", r.body, a, nil)
	}
	// A rate limit: a partner allowed one read a minute reads twice.
	one := 1
	p, err := ops.Create(s.ctx, admin.CreateRequest{Name: "Tight", Email: "ops@tight.example", ReadPerMin: &one})
	if err != nil {
		return err
	}
	if _, err := s.call("GET", "/v1/tools", nil, p.APIKey, 200); err != nil {
		return err
	}
	a, err := s.call("GET", "/v1/tools", nil, p.APIKey, 429)
	if err != nil {
		return err
	}
	s.keep("error-rate-limit", "RATE_LIMIT: the second read of a partner allowed one a minute", "GET", "", nil, a, nil)
	return nil
}

// approveData is the calldata of approve(spender, amount), in hex.
func approveData(spender string, amount *big.Int) (string, error) {
	data, err := simchain.ApproveCalldata(common.HexToAddress(spender), amount)
	return hexutil.Encode(data), err
}
