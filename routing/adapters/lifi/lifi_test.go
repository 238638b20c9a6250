package lifi

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// recorded is what the fake upstream saw of the last request.
type recorded struct {
	mu     sync.Mutex
	path   string
	query  url.Values
	header http.Header
}

func (r *recorded) get() (string, url.Values, http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path, r.query, r.header
}

// replay serves a recorded fixture with a status and optional headers.
func replay(t *testing.T, status int, fixture string, headers map[string]string) (*httptest.Server, *recorded) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.path, rec.query, rec.header = r.URL.Path, r.URL.Query(), r.Header.Clone()
		rec.mu.Unlock()
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func newClient(t *testing.T, base string, timeout time.Duration) (*Client, *registry.Registry) {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{BaseURL: base, APIKey: "test-key", Timeout: timeout, Integrator: "swapgate"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c, reg
}

// usdcArbToBase is the request behind the recorded quote.
func usdcArbToBase(t *testing.T, reg *registry.Registry) *quote.Request {
	t.Helper()
	arb, _ := reg.Chain(42161)
	base, _ := reg.Chain(8453)
	from, _ := reg.TokenBySymbol(42161, "USDC")
	to, _ := reg.TokenBySymbol(8453, "USDC")
	return &quote.Request{
		ID: "q1", From: arb, To: base, FromToken: from, ToToken: to,
		FromAmount:  big.NewInt(100_000_000),
		FromAddress: "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0",
		ToAddress:   "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0",
		Slippage:    0.005, Order: quote.Cheapest, FeeBps: 30,
		DenyTools:     map[string]bool{"hop": true},
		PreferredTool: "across",
		Now:           time.Now(),
	}
}

func TestQuoteLegMapsRecordedStep(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
	c, reg := newClient(t, srv.URL, 5*time.Second)
	c.SetTools([]Tool{{Key: "across", Type: TypeBridge}, {Key: "hop", Type: TypeBridge}, {Key: "1inch", Type: TypeDEX}})
	req := usdcArbToBase(t, reg)
	if legs := c.Legs(req); len(legs) != 1 || legs[0] != "" {
		t.Fatalf("Legs = %q", legs)
	}
	r, err := c.QuoteLeg(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}

	path, q, h := rec.get()
	if path != "/v1/quote" {
		t.Errorf("path %q", path)
	}
	wantQuery := map[string]string{
		"fromChain": "42161", "toChain": "8453",
		"fromToken":   "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
		"toToken":     "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"fromAmount":  "100000000",
		"fromAddress": req.FromAddress, "toAddress": req.ToAddress,
		"slippage": "0.005", "order": "CHEAPEST", "integrator": "swapgate", "fee": "0.003",
		"denyBridges": "hop", "denyExchanges": "", "preferBridges": "across", "preferExchanges": "",
		"allowBridges": "", "allowExchanges": "",
	}
	for k, v := range wantQuery {
		if got := q.Get(k); got != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
	if got := h.Get("x-lifi-api-key"); got != "test-key" {
		t.Errorf("api key header %q", got)
	}

	if r.Provider != "aggregator" || r.Tool != "across" || r.ToolName != "AcrossV3" || r.StepType != "lifi" {
		t.Errorf("identity: %+v", r)
	}
	checkInt(t, "FromAmount", r.FromAmount, "100000000")
	checkInt(t, "ToAmount", r.ToAmount, "99389123")
	checkInt(t, "ToAmountMin", r.ToAmountMin, "98892177")
	// Integrator fee of 300000 USDC(arb) converted at the route's rate:
	// 99389123 × 300000 / (100000000 − 300000).
	checkInt(t, "PartnerFee", r.PartnerFee, "299064")
	checkInt(t, "PreFeeToAmount", r.PreFeeToAmount, "99688187")
	if r.FromAmountUSD != 99.985 || r.ToAmountUSD != 99.3742 {
		t.Errorf("USD %v %v", r.FromAmountUSD, r.ToAmountUSD)
	}
	if r.ExecutionDuration != 52 {
		t.Errorf("ExecutionDuration %d", r.ExecutionDuration)
	}
	if r.ApprovalAddress != "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE" {
		t.Errorf("ApprovalAddress %q", r.ApprovalAddress)
	}
	if len(r.GasCosts) != 1 {
		t.Fatalf("gas costs %d", len(r.GasCosts))
	}
	g := r.GasCosts[0]
	if g.Type != "SEND" || g.Estimate != 370500 || g.Limit != 494000 || g.AmountUSD != 0.0125 {
		t.Errorf("gas cost %+v", g)
	}
	checkInt(t, "gas price", g.Price, "10000000")
	checkInt(t, "gas amount", g.Amount, "3705000000000")
	if native, _ := reg.Token(42161, "native"); g.Token != native {
		t.Errorf("gas token %+v", g.Token)
	}
	if len(r.FeeCosts) != 3 {
		t.Fatalf("fee costs %d", len(r.FeeCosts))
	}
	f := r.FeeCosts[1]
	if f.Name != "Integrator Fee" || f.Percentage != 0.003 || !f.Included || f.AmountUSD != 0.2999 || f.Token != req.FromToken {
		t.Errorf("integrator fee cost %+v", f)
	}
	checkInt(t, "fee amount", f.Amount, "300000")

	tx := r.Tx
	if tx == nil {
		t.Fatal("no tx")
	}
	if tx.To != "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE" || tx.From != req.FromAddress || tx.ChainID != 42161 || tx.GasLimit != 494000 {
		t.Errorf("tx %+v", tx)
	}
	checkInt(t, "tx value", tx.Value, "0")
	checkInt(t, "tx gasPrice", tx.GasPrice, "10000000")
	if len(tx.Data) != 68 || tx.Data[0] != 0x17 || tx.Data[1] != 0x94 {
		t.Errorf("tx data %x", tx.Data)
	}
}

func TestQuoteLegIndicativeHasNoTx(t *testing.T) {
	srv, _ := replay(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
	c, reg := newClient(t, srv.URL, 5*time.Second)
	req := usdcArbToBase(t, reg)
	req.Indicative = true
	r, err := c.QuoteLeg(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Tx != nil {
		t.Error("indicative route carries a transaction")
	}
}

func TestQuoteLegToolFilters(t *testing.T) {
	t.Run("unclassified keys go to both kinds", func(t *testing.T) {
		srv, rec := replay(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
		c, reg := newClient(t, srv.URL, 5*time.Second)
		req := usdcArbToBase(t, reg)
		req.AllowTools = map[string]bool{"across": true, "1inch": true}
		if _, err := c.QuoteLeg(context.Background(), req, ""); err != nil {
			t.Fatal(err)
		}
		_, q, _ := rec.get()
		if q.Get("allowBridges") != "1inch,across" || q.Get("allowExchanges") != "1inch,across" {
			t.Errorf("allow lists %q %q", q.Get("allowBridges"), q.Get("allowExchanges"))
		}
	})
	t.Run("classified keys go to their kind", func(t *testing.T) {
		srv, rec := replay(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
		c, reg := newClient(t, srv.URL, 5*time.Second)
		c.SetTools([]Tool{{Key: "across", Type: TypeBridge}, {Key: "1inch", Type: TypeDEX}})
		req := usdcArbToBase(t, reg)
		req.AllowTools = map[string]bool{"across": true, "1inch": true, "sbx-unknown": true}
		if _, err := c.QuoteLeg(context.Background(), req, ""); err != nil {
			t.Fatal(err)
		}
		_, q, _ := rec.get()
		if q.Get("allowBridges") != "across" || q.Get("allowExchanges") != "1inch" {
			t.Errorf("allow lists %q %q", q.Get("allowBridges"), q.Get("allowExchanges"))
		}
	})
	t.Run("route through a denied tool is refused", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
		c, reg := newClient(t, srv.URL, 5*time.Second)
		req := usdcArbToBase(t, reg)
		req.DenyTools = map[string]bool{"across": true}
		_, err := c.QuoteLeg(context.Background(), req, "")
		var nr *quote.NoRoute
		if !errors.As(err, &nr) || nr.Tool != "across" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no aggregator tool allowed: no call", func(t *testing.T) {
		srv, rec := replay(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
		c, reg := newClient(t, srv.URL, 5*time.Second)
		c.SetTools([]Tool{{Key: "across", Type: TypeBridge}})
		req := usdcArbToBase(t, reg)
		req.AllowTools = map[string]bool{"sbx-canal": true}
		_, err := c.QuoteLeg(context.Background(), req, "")
		if !errors.Is(err, quote.ErrNoRoute) {
			t.Fatalf("err = %v", err)
		}
		if p, _, _ := rec.get(); p != "" {
			t.Errorf("upstream called at %q", p)
		}
	})
}

func TestQuoteLegErrors(t *testing.T) {
	cases := []struct {
		name, fixture string
		status        int
		headers       map[string]string
		code          string // "" means a NoRoute
		reason, tool  string
		detail        string
	}{
		{name: "404 no quote", fixture: "error_404_no_quote.json", status: 404, reason: "AMOUNT_TOO_LOW", tool: "across"},
		{name: "1001 build failed", fixture: "error_1001_build_tx.json", status: 500, code: apierr.TransactionBuildFailed},
		{name: "500", fixture: "error_500.json", status: 500, code: apierr.UpstreamError},
		{name: "503 maintenance", fixture: "error_503_maintenance.json", status: 503, code: apierr.UpstreamMaintenance},
		{name: "503 other", fixture: "error_500.json", status: 503, code: apierr.UpstreamError},
		{name: "400 validation", fixture: "error_400_validation.json", status: 400, code: apierr.UpstreamError, detail: "upstreamMessage"},
		{name: "401", fixture: "error_401.json", status: 401, code: apierr.UpstreamError},
		{name: "429", fixture: "error_429.json", status: 429, headers: map[string]string{"ratelimit-reset": "12", "ratelimit-remaining": "0"}, code: apierr.UpstreamError, detail: "rateReset"},
		{name: "non-numeric amount", fixture: "quote_bad_amount.json", status: 200, code: apierr.UpstreamError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := replay(t, tc.status, tc.fixture, tc.headers)
			c, reg := newClient(t, srv.URL, 5*time.Second)
			_, err := c.QuoteLeg(context.Background(), usdcArbToBase(t, reg), "")
			if err == nil {
				t.Fatal("no error")
			}
			if tc.code == "" {
				var nr *quote.NoRoute
				if !errors.As(err, &nr) || !errors.Is(err, quote.ErrNoRoute) {
					t.Fatalf("err = %v, want NoRoute", err)
				}
				if nr.Reason != tc.reason || nr.Tool != tc.tool || nr.Provider != "aggregator" {
					t.Errorf("NoRoute %+v", nr)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("err %T %v", err, err)
			}
			if ae.Code != tc.code {
				t.Errorf("code %s, want %s (%v)", ae.Code, tc.code, err)
			}
			if ae.Cause == nil {
				t.Error("cause not wrapped")
			}
			if tc.detail != "" && ae.Details[tc.detail] == nil {
				t.Errorf("details %v lack %s", ae.Details, tc.detail)
			}
		})
	}
}

func TestQuoteLegTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(3 * time.Second):
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	c, reg := newClient(t, srv.URL, 150*time.Millisecond)
	start := time.Now()
	_, err := c.QuoteLeg(context.Background(), usdcArbToBase(t, reg), "")
	elapsed := time.Since(start)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.UpstreamTimeout {
		t.Fatalf("err = %v, want UPSTREAM_TIMEOUT", err)
	}
	if elapsed > 1500*time.Millisecond {
		t.Errorf("took %v with a 150ms timeout", elapsed)
	}

	// A tighter context deadline wins over the configured timeout.
	c2, _ := newClient(t, srv.URL, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = c2.QuoteLeg(ctx, usdcArbToBase(t, reg), "")
	if !errors.As(err, &ae) || ae.Code != apierr.UpstreamTimeout {
		t.Fatalf("err = %v, want UPSTREAM_TIMEOUT", err)
	}
	if time.Since(start) > 1500*time.Millisecond {
		t.Errorf("context deadline ignored: %v", time.Since(start))
	}
}

func TestTools(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "tools.json", nil)
	c, _ := newClient(t, srv.URL, 5*time.Second)
	tools, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := rec.get(); p != "/v1/tools" {
		t.Errorf("path %q", p)
	}
	want := []Tool{
		{Key: "across", Name: "AcrossV3", Type: "bridge", SupportedChains: []uint64{1, 8453, 42161}},
		{Key: "stargateV2", Name: "StargateV2 (Fast mode)", Type: "bridge", SupportedChains: []uint64{10, 8453}},
		{Key: "1inch", Name: "1inch", Type: "dex", SupportedChains: []uint64{1, 8453, 42161}},
		{Key: "sushiswap", Name: "SushiSwap", Type: "dex", SupportedChains: []uint64{137, 42161}},
	}
	if len(tools) != len(want) {
		t.Fatalf("tools %+v", tools)
	}
	for i := range want {
		g, w := tools[i], want[i]
		if g.Key != w.Key || g.Name != w.Name || g.Type != w.Type || len(g.SupportedChains) != len(w.SupportedChains) {
			t.Errorf("tool %d = %+v, want %+v", i, g, w)
			continue
		}
		for j := range w.SupportedChains {
			if g.SupportedChains[j] != w.SupportedChains[j] {
				t.Errorf("tool %s chains %v, want %v", g.Key, g.SupportedChains, w.SupportedChains)
			}
		}
	}
}

func TestTokens(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "tokens.json", nil)
	c, _ := newClient(t, srv.URL, 5*time.Second)
	toks, err := c.Tokens(context.Background(), []uint64{42161, 8453})
	if err != nil {
		t.Fatal(err)
	}
	p, q, _ := rec.get()
	if p != "/v1/tokens" || q.Get("chains") != "42161,8453" {
		t.Errorf("request %q %v", p, q)
	}
	if len(toks[42161]) != 2 || len(toks[8453]) != 1 {
		t.Fatalf("tokens %+v", toks)
	}
	u := toks[42161][1]
	if u.Symbol != "USDC" || u.Decimals != 6 || u.ChainID != 42161 || u.PriceUSD != "0.99985" || u.CoinKey != "USDC" {
		t.Errorf("token %+v", u)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{BaseURL: "li.quest"}, reg); err == nil {
		t.Error("base URL without scheme accepted")
	}
	if _, err := New(Config{Timeout: -1}, reg); err == nil {
		t.Error("negative timeout accepted")
	}
	if _, err := New(Config{}, nil); err == nil {
		t.Error("nil registry accepted")
	}
}

func checkInt(t *testing.T, name string, got *big.Int, want string) {
	t.Helper()
	if got == nil || got.String() != want {
		t.Errorf("%s = %v, want %s", name, got, want)
	}
}

// serveStep serves the recorded quote with one change made to it.
func serveStep(t *testing.T, change func(step map[string]any)) *httptest.Server {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "quote_usdc_arb_base.json"))
	if err != nil {
		t.Fatal(err)
	}
	var step map[string]any
	if err := json.Unmarshal(raw, &step); err != nil {
		t.Fatal(err)
	}
	change(step)
	body, err := json.Marshal(step)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestQuoteLegRefusesInvalidAnswer: an answer with one bad field is
// refused whole, as UPSTREAM_ERROR whose message names the field; no route
// (and so no transaction for a wallet) comes out of it.
func TestQuoteLegRefusesInvalidAnswer(t *testing.T) {
	set := func(obj string, key string, v any) func(map[string]any) {
		return func(step map[string]any) {
			if obj == "" {
				step[key] = v
				return
			}
			step[obj].(map[string]any)[key] = v
		}
	}
	del := func(obj, key string) func(map[string]any) {
		return func(step map[string]any) {
			if obj == "" {
				delete(step, key)
				return
			}
			delete(step[obj].(map[string]any), key)
		}
	}
	tooBig := "1" + strings.Repeat("0", 80) // 10^80 > 2^256 − 1
	cases := []struct {
		name   string
		change func(map[string]any)
		field  string
	}{
		{"to is a script", set("transactionRequest", "to", "javascript:alert(1)"), "transactionRequest.to"},
		{"to is short", set("transactionRequest", "to", "0x1234"), "transactionRequest.to"},
		{"to is not an address", set("transactionRequest", "to", "not-an-address"), "transactionRequest.to"},
		{"to is empty", set("transactionRequest", "to", ""), "transactionRequest.to"},
		{"to is absent", del("transactionRequest", "to"), "transactionRequest.to"},
		{"to fails its checksum", set("transactionRequest", "to", "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4Eae"), "transactionRequest.to"},
		{"to is the zero address", set("transactionRequest", "to", "0x0000000000000000000000000000000000000000"), "transactionRequest.to"},
		{"no transactionRequest", del("", "transactionRequest"), "transactionRequest"},
		{"null transactionRequest", set("", "transactionRequest", nil), "transactionRequest"},
		{"from is not an address", set("transactionRequest", "from", "0xnothex"), "transactionRequest.from"},
		{"transaction for another chain", set("transactionRequest", "chainId", 8453), "transactionRequest.chainId"},
		{"data is not hex", set("transactionRequest", "data", "0xnothex"), "transactionRequest.data"},
		{"data without 0x", set("transactionRequest", "data", "a9059cbb"), "transactionRequest.data"},
		{"data of an odd length", set("transactionRequest", "data", "0xa9059cb"), "transactionRequest.data"},
		{"data absent", del("transactionRequest", "data"), "transactionRequest.data"},
		{"value above 2^256-1", set("transactionRequest", "value", "0x1"+strings.Repeat("0", 64)), "transactionRequest.value"},
		{"gas price above 2^256-1", set("transactionRequest", "gasPrice", "0x1"+strings.Repeat("0", 64)), "transactionRequest.gasPrice"},
		{"toAmount 10^80", set("estimate", "toAmount", tooBig), "estimate.toAmount"},
		{"toAmountMin 10^80", set("estimate", "toAmountMin", tooBig), "estimate.toAmountMin"},
		{"fromAmount 10^80", set("estimate", "fromAmount", tooBig), "estimate.fromAmount"},
		{"toAmount negative", set("estimate", "toAmount", "-99389123"), "estimate.toAmount"},
		{"toAmount a fraction", set("estimate", "toAmount", "99389123.5"), "estimate.toAmount"},
		{"toAmount in words", set("estimate", "toAmount", "lots"), "estimate.toAmount"},
		{"toAmount absent", del("estimate", "toAmount"), "estimate.toAmount"},
		{"toAmountMin above toAmount", set("estimate", "toAmountMin", "99389124"), "estimate.toAmountMin"},
		{"approvalAddress is not an address", set("estimate", "approvalAddress", "javascript:alert(1)"), "estimate.approvalAddress"},
		{"approvalAddress is empty for a token", set("estimate", "approvalAddress", ""), "estimate.approvalAddress"},
		{"approvalAddress is the zero address", set("estimate", "approvalAddress", "0x0000000000000000000000000000000000000000"), "estimate.approvalAddress"},
		{"no tool", set("", "tool", ""), "tool"},
		{"fee cost 10^80", func(step map[string]any) {
			step["estimate"].(map[string]any)["feeCosts"].([]any)[0].(map[string]any)["amount"] = tooBig
		}, "feeCosts.amount"},
		{"gas cost negative", func(step map[string]any) {
			step["estimate"].(map[string]any)["gasCosts"].([]any)[0].(map[string]any)["amount"] = "-1"
		}, "gasCosts.amount"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveStep(t, tc.change)
			c, reg := newClient(t, srv.URL, 5*time.Second)
			r, err := c.QuoteLeg(context.Background(), usdcArbToBase(t, reg), "")
			if err == nil {
				t.Fatalf("accepted: route to %+v", r.Tx)
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError {
				t.Fatalf("err = %v, want UPSTREAM_ERROR", err)
			}
			if want := "the aggregator upstream sent an invalid answer: " + tc.field; !strings.HasPrefix(ae.Message, want) {
				t.Fatalf("message %q, want it to start %q", ae.Message, want)
			}
		})
	}
	t.Run("the recorded answer itself is valid", func(t *testing.T) {
		srv := serveStep(t, func(map[string]any) {})
		c, reg := newClient(t, srv.URL, 5*time.Second)
		if _, err := c.QuoteLeg(context.Background(), usdcArbToBase(t, reg), ""); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an indicative quote needs no transactionRequest", func(t *testing.T) {
		srv := serveStep(t, del("", "transactionRequest"))
		c, reg := newClient(t, srv.URL, 5*time.Second)
		req := usdcArbToBase(t, reg)
		req.Indicative = true
		if r, err := c.QuoteLeg(context.Background(), req, ""); err != nil || r.Tx != nil {
			t.Fatalf("route %+v, %v", r, err)
		}
	})
}
