package oneclick

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// recorded is what the fake upstream saw of the last request.
type recorded struct {
	mu     sync.Mutex
	method string
	path   string
	header http.Header
	body   map[string]any
	n      int // requests seen
}

// count is how many requests the fake upstream has seen.
func (r *recorded) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *recorded) get() (string, string, http.Header, map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.method, r.path, r.header, r.body
}

// replay serves a recorded fixture with a status.
func replay(t *testing.T, status int, fixture string) (*httptest.Server, *recorded) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		rec.mu.Lock()
		rec.method, rec.path, rec.header, rec.body = r.Method, r.URL.Path, r.Header.Clone(), m
		rec.n++
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func loadRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func newClient(t *testing.T, base string, timeout time.Duration) (*Client, *registry.Registry) {
	t.Helper()
	reg := loadRegistry(t)
	c, err := New(Config{BaseURL: base, APIKey: "jwt-token", Timeout: timeout, Integrator: "swapgate"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c, reg
}

var (
	user    = "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0"
	feeWall = "0x9d3A5b7C1e2F4a6B8c0D2e4F6a8B0c2D4e6F8a0B"
	quoteAt = time.Date(2025, 9, 18, 10, 12, 3, 0, time.UTC)
)

func request(t *testing.T, reg *registry.Registry, fromChain uint64, fromSym string, toChain uint64, toSym string, amount int64) *quote.Request {
	t.Helper()
	from, ok1 := reg.Chain(fromChain)
	to, ok2 := reg.Chain(toChain)
	ft, ok3 := reg.TokenBySymbol(fromChain, fromSym)
	tt, ok4 := reg.TokenBySymbol(toChain, toSym)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("registry lacks %d/%s → %d/%s", fromChain, fromSym, toChain, toSym)
	}
	return &quote.Request{ID: "q1", From: from, To: to, FromToken: ft, ToToken: tt,
		FromAmount: big.NewInt(amount), FromAddress: user, ToAddress: user,
		Slippage: 0.005, Order: quote.Recommended, FeeBps: 30, FeeRecipient: feeWall, Now: quoteAt}
}

func TestQuoteLegDry(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "quote_dry_usdc.json")
	c, reg := newClient(t, srv.URL, 5*time.Second)
	req := request(t, reg, 42161, "USDC", 8453, "USDC", 100_000_000)
	req.Dry = true
	if legs := c.Legs(req); len(legs) != 1 || legs[0] != "" {
		t.Fatalf("Legs = %q", legs)
	}
	r, err := c.QuoteLeg(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	method, path, h, body := rec.get()
	if method != http.MethodPost || path != "/v0/quote" {
		t.Errorf("%s %s", method, path)
	}
	if got := h.Get("Authorization"); got != "Bearer jwt-token" {
		t.Errorf("Authorization %q", got)
	}
	want := map[string]any{
		"dry": true, "swapType": "EXACT_INPUT", "slippageTolerance": 50.0,
		"originAsset":      "nep141:arb-0xaf88d065e77c8cc2239327c5edb3a432268e5831.omft.near",
		"destinationAsset": "nep141:base-0x833589fcd6edb6e08f4c7c32d4f71b54bda02913.omft.near",
		"depositType":      "ORIGIN_CHAIN", "recipientType": "DESTINATION_CHAIN", "refundType": "ORIGIN_CHAIN",
		"amount": "100000000", "recipient": user, "refundTo": user,
		"deadline": "2025-09-18T10:22:03.000Z", "referral": "swapgate",
	}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("body %s = %v, want %v", k, body[k], v)
		}
	}
	if w, ok := body["quoteWaitingTimeMs"].(float64); !ok || w <= 0 || w > 3000 {
		t.Errorf("quoteWaitingTimeMs %v", body["quoteWaitingTimeMs"])
	}
	fees, _ := body["appFees"].([]any)
	if len(fees) != 1 {
		t.Fatalf("appFees %v", body["appFees"])
	}
	if f := fees[0].(map[string]any); f["recipient"] != feeWall || f["fee"] != 30.0 {
		t.Errorf("appFee %v", f)
	}
	if _, ok := body["depositMode"]; ok {
		t.Error("depositMode sent for an EVM origin")
	}

	if r.Provider != "intents" || r.Tool != "near-intents" || r.ToolName != "NEAR Intents" || r.StepType != "intents" {
		t.Errorf("identity %+v", r)
	}
	checkInt(t, "FromAmount", r.FromAmount, "100000000")
	checkInt(t, "ToAmount", r.ToAmount, "99650000")
	checkInt(t, "ToAmountMin", r.ToAmountMin, "99151750")
	// 99650000 × 30 / (10000 − 30)
	checkInt(t, "PartnerFee", r.PartnerFee, "299849")
	checkInt(t, "PreFeeToAmount", r.PreFeeToAmount, "99949849")
	if r.FromAmountUSD != 99.985 || r.ToAmountUSD != 99.635 || r.ExecutionDuration != 20 {
		t.Errorf("figures %v %v %d", r.FromAmountUSD, r.ToAmountUSD, r.ExecutionDuration)
	}
	if len(r.FeeCosts) != 1 || r.FeeCosts[0].Percentage != 0.003 || r.FeeCosts[0].Amount.Cmp(r.PartnerFee) != 0 ||
		r.FeeCosts[0].Token != req.ToToken || r.FeeCosts[0].AmountUSD <= 0.29 || r.FeeCosts[0].AmountUSD >= 0.31 {
		t.Errorf("fee costs %+v", r.FeeCosts)
	}
	if r.Tx != nil || r.DepositAddress != "" || r.ApprovalAddress != "" {
		t.Errorf("dry route carries deposit data: %+v", r)
	}
}

func TestQuoteLegFirmERC20BuildsTransfer(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "quote_firm_usdc.json")
	c, reg := newClient(t, srv.URL, 5*time.Second)
	req := request(t, reg, 42161, "USDC", 8453, "USDC", 100_000_000)
	r, err := c.QuoteLeg(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, body := rec.get(); body["dry"] != false {
		t.Errorf("dry = %v", body["dry"])
	}
	if r.DepositAddress != "0x76b4c56085ED136a8744D52bE956396624a730E8" || r.ExecutionDuration != 19 || r.ApprovalAddress != "" {
		t.Errorf("route %+v", r)
	}
	tx := r.Tx
	if tx == nil {
		t.Fatal("no tx")
	}
	if tx.To != req.FromToken.Address || tx.From != user || tx.ChainID != 42161 || tx.Value.Sign() != 0 || tx.GasLimit != erc20TransferGas {
		t.Errorf("tx %+v", tx)
	}
	method, err := erc20.MethodById(tx.Data[:4])
	if err != nil || method.Name != "transfer" {
		t.Fatalf("selector %x: %v", tx.Data[:4], err)
	}
	args, err := method.Inputs.Unpack(tx.Data[4:])
	if err != nil {
		t.Fatal(err)
	}
	if to := args[0].(common.Address); to != common.HexToAddress(r.DepositAddress) {
		t.Errorf("transfer to %s", to.Hex())
	}
	if amt := args[1].(*big.Int); amt.String() != "100000000" {
		t.Errorf("transfer amount %s", amt)
	}
}

func TestQuoteLegFirmNativeAndNonEVM(t *testing.T) {
	t.Run("native ETH is a value transfer", func(t *testing.T) {
		srv, rec := replay(t, http.StatusOK, "quote_firm_eth_btc.json")
		c, reg := newClient(t, srv.URL, 5*time.Second)
		req := request(t, reg, 1, "ETH", 20000000000001, "BTC", 500_000_000_000_000_000)
		req.ToAddress = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
		req.FeeRecipient = ""
		r, err := c.QuoteLeg(context.Background(), req, "")
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, body := rec.get()
		if body["originAsset"] != "nep141:eth.omft.near" || body["destinationAsset"] != "nep141:btc.omft.near" {
			t.Errorf("assets %v %v", body["originAsset"], body["destinationAsset"])
		}
		if _, ok := body["appFees"]; ok {
			t.Error("appFees sent without a fee recipient")
		}
		if r.PartnerFee.Sign() != 0 || r.PreFeeToAmount.Cmp(r.ToAmount) != 0 || len(r.FeeCosts) != 0 {
			t.Errorf("fee without app fee: %v %v", r.PartnerFee, r.FeeCosts)
		}
		tx := r.Tx
		if tx == nil || tx.To != common.HexToAddress(r.DepositAddress).Hex() || len(tx.Data) != 0 ||
			tx.Value.String() != "500000000000000000" || tx.GasLimit != 21000 || tx.ChainID != 1 {
			t.Errorf("tx %+v", tx)
		}
	})
	t.Run("Solana source has no tx", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "quote_firm_sol.json")
		c, reg := newClient(t, srv.URL, 5*time.Second)
		req := request(t, reg, 1151111081099710, "SOL", 42161, "USDC", 2_000_000_000)
		req.FromAddress = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
		r, err := c.QuoteLeg(context.Background(), req, "")
		if err != nil {
			t.Fatal(err)
		}
		if r.Tx != nil || r.DepositAddress != "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU" {
			t.Errorf("route %+v", r)
		}
	})
}

func TestQuoteLegErrors(t *testing.T) {
	cases := []struct {
		name, fixture string
		status        int
		code          string // "" means a NoRoute
		reason        string
	}{
		{"400 validation", "error_400.json", 400, apierr.UpstreamError, ""},
		{"400 amount too low", "error_400_amount_low.json", 400, "", "AMOUNT_TOO_LOW"},
		{"401", "error_401.json", 401, apierr.UpstreamError, ""},
		{"429", "error_500.json", 429, apierr.UpstreamError, ""},
		{"500", "error_500.json", 500, apierr.UpstreamError, ""},
		{"503 maintenance", "error_503_maintenance.json", 503, apierr.UpstreamMaintenance, ""},
		{"non-numeric amount", "quote_bad_amount.json", 200, apierr.UpstreamError, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := replay(t, tc.status, tc.fixture)
			c, reg := newClient(t, srv.URL, 5*time.Second)
			_, err := c.QuoteLeg(context.Background(), request(t, reg, 42161, "USDC", 8453, "USDC", 100_000_000), "")
			if tc.code == "" {
				var nr *quote.NoRoute
				if !errors.As(err, &nr) || !errors.Is(err, quote.ErrNoRoute) || nr.Reason != tc.reason {
					t.Fatalf("err = %v, want NoRoute %s", err, tc.reason)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if ae.Cause == nil {
				t.Error("cause not wrapped")
			}
		})
	}
	t.Run("400 names the upstream message", func(t *testing.T) {
		srv, _ := replay(t, 400, "error_400.json")
		c, reg := newClient(t, srv.URL, 5*time.Second)
		_, err := c.QuoteLeg(context.Background(), request(t, reg, 42161, "USDC", 8453, "USDC", 1), "")
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Details["upstreamMessage"] != "tokenIn is not valid" {
			t.Fatalf("err = %v", err)
		}
	})
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
	_, err := c.QuoteLeg(context.Background(), request(t, reg, 42161, "USDC", 8453, "USDC", 100_000_000), "")
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.UpstreamTimeout {
		t.Fatalf("err = %v, want UPSTREAM_TIMEOUT", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("took %v with a 150ms timeout", d)
	}
}

func TestQuoteWaitIsBounded(t *testing.T) {
	if w := quoteWait(context.Background(), 10*time.Second); w != maxQuoteWait {
		t.Errorf("long budget: %v", w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if w := quoteWait(ctx, 10*time.Second); w <= 0 || w > time.Second {
		t.Errorf("1.5s budget: %v", w)
	}
	if w := quoteWait(context.Background(), 100*time.Millisecond); w != 0 {
		t.Errorf("tiny budget: %v", w)
	}
}

func TestAssetID(t *testing.T) {
	reg := loadRegistry(t)
	cases := []struct {
		chain   uint64
		token   string // symbol
		want    string
		wantErr bool
	}{
		{1, "ETH", "nep141:eth.omft.near", false},
		{1, "USDC", "nep141:eth-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48.omft.near", false},
		{42161, "USDC", "nep141:arb-0xaf88d065e77c8cc2239327c5edb3a432268e5831.omft.near", false},
		{42161, "ETH", "nep141:arb.omft.near", false},
		{8453, "USDC", "nep141:base-0x833589fcd6edb6e08f4c7c32d4f71b54bda02913.omft.near", false},
		{56, "BNB", "nep141:bsc.omft.near", false},
		{900000001, "NEAR", "nep141:wrap.near", false},
		{900000001, "wNEAR", "nep141:wrap.near", false},
		{900000001, "USDT", "nep141:usdt.tether-token.near", false},
		{900000001, "USDC", "nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1", false},
		{20000000000001, "BTC", "nep141:btc.omft.near", false},
		{1151111081099710, "SOL", "nep141:sol.omft.near", false},
		{900000005, "DOGE", "nep141:doge.omft.near", false},
		{1151111081099710, "USDC", "", true}, // SPL ids are not derivable
		{25, "CRO", "", true},                // chain not reached by 1Click
	}
	for _, tc := range cases {
		ch, _ := reg.Chain(tc.chain)
		tok, ok := reg.TokenBySymbol(tc.chain, tc.token)
		if ch == nil || !ok {
			t.Fatalf("registry lacks %d/%s", tc.chain, tc.token)
		}
		got, err := AssetID(ch, tok)
		if tc.wantErr {
			if !errors.Is(err, ErrUnknownAsset) {
				t.Errorf("%s/%s: err = %v, want ErrUnknownAsset", ch.Key, tc.token, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s/%s = %q, %v; want %q", ch.Key, tc.token, got, err, tc.want)
		}
	}
}

func TestTokensAndAssetTable(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "tokens.json")
	c, reg := newClient(t, srv.URL, 5*time.Second)
	list, err := c.Tokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m, p, h, _ := rec.get(); m != http.MethodGet || p != "/v0/tokens" || h.Get("Authorization") != "Bearer jwt-token" {
		t.Errorf("request %s %s %v", m, p, h)
	}
	if len(list) != 6 || list[2].Symbol != "USDC" || list[2].Decimals != 6 || list[2].Blockchain != "arb" {
		t.Fatalf("tokens %+v", list)
	}
	tab := NewAssetTable(list)
	if id, ok := tab.Lookup("arb", "0xAF88d065e77c8cC2239327C5EDb3A432268e5831"); !ok || id != list[2].AssetID {
		t.Errorf("hex lookup is case-sensitive: %q %v", id, ok)
	}
	if _, ok := tab.Lookup("sol", "epjfwdd5aufqssqem2qn1xzybapc8g4wegGkZwyTDt1v"); ok {
		t.Error("base58 lookup folded case")
	}

	// Without the table the Solana USDC has no id; with it, the listed one.
	sol, _ := reg.Chain(1151111081099710)
	usdc, _ := reg.TokenBySymbol(sol.ID, "USDC")
	if _, err := c.assetID(sol, usdc); !errors.Is(err, ErrUnknownAsset) {
		t.Errorf("before load: %v", err)
	}
	if err := c.LoadAssets(context.Background()); err != nil {
		t.Fatal(err)
	}
	if id, err := c.assetID(sol, usdc); err != nil || id != "nep141:sol-5ce3bf3a31af18be40ba30f721101b4341690186.omft.near" {
		t.Errorf("after load: %q %v", id, err)
	}
	solNative, _ := reg.Token(sol.ID, "native")
	if id, err := c.assetID(sol, solNative); err != nil || id != "nep141:sol.omft.near" {
		t.Errorf("native from table: %q %v", id, err)
	}
}

func TestUnknownAssetIsNoRoute(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "quote_dry_usdc.json")
	c, reg := newClient(t, srv.URL, 5*time.Second)
	req := request(t, reg, 1151111081099710, "USDC", 42161, "USDC", 1_000_000)
	_, err := c.QuoteLeg(context.Background(), req, "")
	if !errors.Is(err, quote.ErrNoRoute) {
		t.Fatalf("err = %v", err)
	}
	if _, p, _, _ := rec.get(); p != "" {
		t.Error("upstream called for an unmappable asset")
	}
}

func checkInt(t *testing.T, name string, got *big.Int, want string) {
	t.Helper()
	if got == nil || got.String() != want {
		t.Errorf("%s = %v, want %s", name, got, want)
	}
}

// serveQuote serves a recorded quote with one change made to its quote
// object.
func serveQuote(t *testing.T, fixture string, change func(q map[string]any)) *httptest.Server {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	change(resp["quote"].(map[string]any))
	body, err := json.Marshal(resp)
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

// TestQuoteLegRefusesInvalidAnswer: a 1Click quote with one bad field is
// refused whole, UPSTREAM_ERROR naming the field: the deposit address is
// checked with the source chain's codec, the amounts as 256-bit decimals.
func TestQuoteLegRefusesInvalidAnswer(t *testing.T) {
	set := func(k string, v any) func(map[string]any) { return func(q map[string]any) { q[k] = v } }
	tooBig := "1" + strings.Repeat("0", 80)
	evm := func(t *testing.T, reg *registry.Registry) *quote.Request {
		return request(t, reg, 42161, "USDC", 8453, "USDC", 100_000_000)
	}
	sol := func(t *testing.T, reg *registry.Registry) *quote.Request {
		req := request(t, reg, 1151111081099710, "SOL", 42161, "USDC", 2_000_000_000)
		req.FromAddress = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
		return req
	}
	cases := []struct {
		name, fixture string
		req           func(*testing.T, *registry.Registry) *quote.Request
		change        func(map[string]any)
		field         string
	}{
		{"deposit address is a script", "quote_firm_usdc.json", evm, set("depositAddress", "javascript:alert(1)"), "quote.depositAddress"},
		{"deposit address is short", "quote_firm_usdc.json", evm, set("depositAddress", "0x1234"), "quote.depositAddress"},
		{"deposit address fails its checksum", "quote_firm_usdc.json", evm, set("depositAddress", "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4Eae"), "quote.depositAddress"},
		{"deposit address is the zero address", "quote_firm_usdc.json", evm, set("depositAddress", "0x0000000000000000000000000000000000000000"), "quote.depositAddress"},
		{"deposit address of another chain", "quote_firm_usdc.json", evm, set("depositAddress", "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"), "quote.depositAddress"},
		{"firm quote without deposit address", "quote_firm_usdc.json", evm, func(q map[string]any) { delete(q, "depositAddress") }, "quote.depositAddress"},
		{"Solana deposit address is an EVM one", "quote_firm_sol.json", sol, set("depositAddress", "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE"), "quote.depositAddress"},
		{"Solana deposit address is not base58", "quote_firm_sol.json", sol, set("depositAddress", "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl"), "quote.depositAddress"},
		{"amountOut 10^80", "quote_firm_usdc.json", evm, set("amountOut", tooBig), "quote.amountOut"},
		{"amountIn negative", "quote_firm_usdc.json", evm, set("amountIn", "-100000000"), "quote.amountIn"},
		{"minAmountOut a fraction", "quote_firm_usdc.json", evm, set("minAmountOut", "99151750.5"), "quote.minAmountOut"},
		{"minAmountOut in words", "quote_firm_usdc.json", evm, set("minAmountOut", "some"), "quote.minAmountOut"},
		{"minAmountOut above amountOut", "quote_firm_usdc.json", evm, set("minAmountOut", "99650001"), "quote.minAmountOut"},
		{"dry quote amountOut 10^80", "quote_dry_usdc.json", func(t *testing.T, reg *registry.Registry) *quote.Request {
			req := evm(t, reg)
			req.Dry = true
			return req
		}, set("amountOut", tooBig), "quote.amountOut"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveQuote(t, tc.fixture, tc.change)
			c, reg := newClient(t, srv.URL, 5*time.Second)
			r, err := c.QuoteLeg(context.Background(), tc.req(t, reg), "")
			if err == nil {
				t.Fatalf("accepted: deposit %q, tx %+v", r.DepositAddress, r.Tx)
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError {
				t.Fatalf("err = %v, want UPSTREAM_ERROR", err)
			}
			if want := "the intents upstream sent an invalid answer: " + tc.field; !strings.HasPrefix(ae.Message, want) {
				t.Fatalf("message %q, want it to start %q", ae.Message, want)
			}
		})
	}
}
