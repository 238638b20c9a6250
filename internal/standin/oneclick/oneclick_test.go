package oneclick

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/standin/kit"
	adapter "github.com/swapgate/swapgate/routing/adapters/oneclick"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

const (
	usdcArb  = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	wallet   = "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0"
	solUSDC  = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	solChain = 1151111081099710
	solOwner = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
)

// assets prices the registry's tokens at round prices: USDC at 1, ETH at
// 2000, SOL at 100.
func assets(t *testing.T) (*registry.Registry, []Asset) {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	price := map[string]float64{"USDC": 1, "ETH": 2000, "SOL": 100}
	var rows []kit.Token
	for _, c := range []uint64{42161, 8453, solChain} {
		for _, tok := range reg.Tokens(c) {
			if p, ok := price[tok.CoinKey]; ok {
				rows = append(rows, kit.Token{ChainID: c, Address: tok.Address, Symbol: tok.Symbol, Name: tok.Name, Decimals: tok.Decimals, CoinKey: tok.CoinKey, PriceUSD: p})
			}
		}
	}
	return reg, RegistryAssets(reg, kit.NewTable(rows))
}

func start(t *testing.T, cfg Config) (*Server, *adapter.Client, *registry.Registry) {
	t.Helper()
	reg, list := assets(t)
	cfg.Assets = list
	s, srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := adapter.New(adapter.Config{BaseURL: srv.URL, APIKey: cfg.APIKey, Timeout: 5 * time.Second, Integrator: "swapgate"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.LoadAssets(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, c, reg
}

func request(t *testing.T, reg *registry.Registry, from, to uint64, fromTok, toTok string, amount int64, dry bool, toAddr string) *quote.Request {
	t.Helper()
	fc, _ := reg.Chain(from)
	tc, _ := reg.Chain(to)
	ft, ok1 := reg.Token(from, fromTok)
	tt, ok2 := reg.Token(to, toTok)
	if !ok1 || !ok2 {
		t.Fatalf("registry lacks %s or %s", fromTok, toTok)
	}
	return &quote.Request{ID: "q1", From: fc, To: tc, FromToken: ft, ToToken: tt, FromAmount: big.NewInt(amount),
		FromAddress: wallet, ToAddress: toAddr, Dry: dry, Slippage: 0.005, FeeBps: 30, FeeRecipient: wallet, Now: time.Now()}
}

// Quotes map through the adapter: 100 USDC less 0.15% for the solvers and
// the 0.3% app fee buys 99.55 USDC; a firm quote has a deposit address and
// an ERC-20 transfer to it, a dry one neither; a Solana token is found
// through /v0/tokens.
func TestQuoteThroughAdapter(t *testing.T) {
	_, c, reg := start(t, Config{APIKey: "jwt"})
	cases := []struct {
		name       string
		req        *quote.Request
		wantOut    int64
		wantMinOut int64
		firm       bool
	}{
		{"dry", request(t, reg, 42161, 8453, usdcArb, usdcBase, 100_000_000, true, wallet), 99_550_000, 99_052_250, false},
		{"firm", request(t, reg, 42161, 8453, usdcArb, usdcBase, 100_000_000, false, wallet), 99_550_000, 99_052_250, true},
		{"to solana", request(t, reg, 42161, solChain, usdcArb, solUSDC, 100_000_000, false, solOwner), 99_550_000, 99_052_250, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			route, err := c.QuoteLeg(context.Background(), tc.req, "")
			if err != nil {
				t.Fatal(err)
			}
			if route.ToAmount.Int64() != tc.wantOut || route.ToAmountMin.Int64() != tc.wantMinOut {
				t.Errorf("out %s min %s, want %d %d", route.ToAmount, route.ToAmountMin, tc.wantOut, tc.wantMinOut)
			}
			if route.ToAmountUSD <= 0 || route.FromAmountUSD != 100 {
				t.Errorf("USD %v %v", route.FromAmountUSD, route.ToAmountUSD)
			}
			if tc.firm != (route.DepositAddress != "") || tc.firm != (route.Tx != nil) {
				t.Fatalf("firm %v: deposit %q tx %+v", tc.firm, route.DepositAddress, route.Tx)
			}
			if tc.firm && !strings.EqualFold(route.Tx.To, usdcArb) {
				t.Errorf("deposit transaction to %s, want the USDC contract", route.Tx.To)
			}
		})
	}
}

func post(t *testing.T, url, auth string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// Refusals are 1Click's {"message"} bodies.
func TestQuoteRefusals(t *testing.T) {
	_, list := assets(t)
	_, srv, err := Start(Config{Assets: list, APIKey: "jwt"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	usdc := list[0].AssetID
	good := map[string]any{"swapType": "EXACT_INPUT", "dry": true, "originAsset": usdc, "destinationAsset": usdc, "amount": "1000000"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	cases := []struct {
		name   string
		auth   string
		body   any
		status int
	}{
		{"no jwt", "", good, 401},
		{"ok", "jwt", good, 201},
		{"unknown asset", "jwt", with("originAsset", "nep141:nope"), 400},
		{"bad amount", "jwt", with("amount", "abc"), 400},
		{"exact output", "jwt", with("swapType", "EXACT_OUTPUT"), 201},
		{"flex input", "jwt", with("swapType", "FLEX_INPUT"), 400},
		{"firm without recipient", "jwt", with("dry", false), 400},
		{"not json", "jwt", "[", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, body := post(t, srv.URL+"/v0/quote", tc.auth, tc.body)
			if st != tc.status {
				t.Errorf("HTTP %d %v, want %d", st, body, tc.status)
			}
			if st >= 400 && body["message"] == "" {
				t.Errorf("no message: %v", body)
			}
		})
	}
}

// The tokens list carries price and priceUpdatedAt, which the test can
// make stale.
func TestTokens(t *testing.T) {
	s, c, _ := start(t, Config{})
	stale := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.SetPriceUpdatedAt(stale)
	list, err := c.Tokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no tokens")
	}
	for _, tok := range list {
		if tok.Price <= 0 || tok.PriceUpdatedAt != "2026-01-01T00:00:00.000Z" || tok.AssetID == "" {
			t.Errorf("token %+v", tok)
		}
	}
}

// A deposit moves PENDING_DEPOSIT → KNOWN_DEPOSIT_TX (submitted) →
// PROCESSING → SUCCESS as the test sets it, and the adapter maps each.
func TestDepositLifecycle(t *testing.T) {
	s, c, reg := start(t, Config{Record: true})
	route, err := c.QuoteLeg(context.Background(), request(t, reg, 42161, 8453, usdcArb, usdcBase, 100_000_000, false, wallet), "")
	if err != nil {
		t.Fatal(err)
	}
	if qs := s.Quotes(); len(qs) != 1 || qs[0].Dry || qs[0].Recipient != wallet || len(qs[0].AppFees) != 1 || qs[0].AppFees[0].Fee != 30 {
		t.Errorf("recorded quotes %+v", qs)
	}
	sw := &swap.Swap{DepositAddress: route.DepositAddress, ToChain: 8453, ToToken: usdcBase}
	observe := func(want string) swap.Observation {
		t.Helper()
		o, err := c.SwapStatus(context.Background(), sw)
		if err != nil || o.Status != want {
			t.Fatalf("%+v %v, want %s", o, err, want)
		}
		return o
	}
	observe(swap.StatusNotFound) // PENDING_DEPOSIT
	if err := c.SubmitDeposit(context.Background(), "0xfeed", route.DepositAddress, ""); err != nil {
		t.Fatal(err)
	}
	if got := s.Submitted(); len(got) != 1 || got[0] != "0xfeed" {
		t.Errorf("submitted %v", got)
	}
	observe(swap.StatusNotFound) // KNOWN_DEPOSIT_TX
	if err := s.SetStatus(route.DepositAddress, StatusProcessing); err != nil {
		t.Fatal(err)
	}
	observe(swap.StatusPending)
	if err := s.SetStatus(route.DepositAddress, StatusSuccess); err != nil {
		t.Fatal(err)
	}
	o := observe(swap.StatusDone)
	if o.Receiving.TxHash == "" || o.Receiving.Amount != route.ToAmount.String() {
		t.Errorf("receiving %+v", o.Receiving)
	}
	if err := s.SetStatus("0xnobody", StatusSuccess); err == nil {
		t.Error("SetStatus of an unknown deposit succeeded")
	}
	if err := s.SetStatus(route.DepositAddress, "DONE"); err == nil {
		t.Error("SetStatus accepted an unknown status")
	}
}

// AutoAdvance moves a known deposit on by itself every n polls.
func TestAutoAdvance(t *testing.T) {
	_, c, reg := start(t, Config{AutoAdvance: 1})
	route, err := c.QuoteLeg(context.Background(), request(t, reg, 42161, 8453, usdcArb, usdcBase, 100_000_000, false, wallet), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SubmitDeposit(context.Background(), "0xfeed", route.DepositAddress, ""); err != nil {
		t.Fatal(err)
	}
	sw := &swap.Swap{DepositAddress: route.DepositAddress, ToChain: 8453}
	for i, want := range []string{swap.StatusNotFound, swap.StatusPending, swap.StatusDone} {
		o, err := c.SwapStatus(context.Background(), sw)
		if err != nil || o.Status != want {
			t.Fatalf("poll %d: %+v %v, want %s", i, o, err, want)
		}
	}
}

// An exact-output quote through the adapter: amountIn the deposit that buys
// toAmount plus the slippage on the input side, the exact output its
// minimum, the deposit transfer moving amountIn, and refundTo the quote's.
func TestExactOutputThroughAdapter(t *testing.T) {
	s, c, reg := start(t, Config{APIKey: "jwt", Record: true})
	const refund = "0x5b38da6a701c568545dcfcb03fcb875f56beddc4"
	req := request(t, reg, 42161, 8453, usdcArb, usdcBase, 1, false, wallet)
	req.FromAmount, req.ToAmount, req.RefundTo = nil, big.NewInt(99_550_000), refund
	r, err := c.QuoteLeg(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	// 100 USDC less 0.15% and the 0.3% app fee buys 99.55 USDC: the least
	// deposit is 100 USDC, and 0.5% more is asked for.
	if r.FromAmount.String() != "100500000" || r.ToAmount.String() != "99550000" || r.ToAmountMin.String() != "99550000" || r.Tx == nil {
		t.Fatalf("route from %s to %s min %s tx %v", r.FromAmount, r.ToAmount, r.ToAmountMin, r.Tx)
	}
	qs := s.Quotes()
	if sent := qs[len(qs)-1]; sent.SwapType != "EXACT_OUTPUT" || sent.Amount != "99550000" || sent.RefundTo != refund {
		t.Fatalf("sent %+v", sent)
	}
}
