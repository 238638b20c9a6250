package lifi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/standin/kit"
	adapter "github.com/swapgate/swapgate/routing/adapters/lifi"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

const (
	usdcArb  = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	wethArb  = "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"
	wallet   = "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0"
)

// table is a small price table with round prices, so the expected amounts
// are plain arithmetic.
func table() *kit.Table {
	return kit.NewTable([]kit.Token{
		{ChainID: 42161, Address: "0x0000000000000000000000000000000000000000", Symbol: "ETH", Name: "ETH", Decimals: 18, CoinKey: "ETH", PriceUSD: 2000},
		{ChainID: 42161, Address: usdcArb, Symbol: "USDC", Name: "USD Coin", Decimals: 6, CoinKey: "USDC", PriceUSD: 1},
		{ChainID: 42161, Address: wethArb, Symbol: "WETH", Name: "Wrapped Ether", Decimals: 18, CoinKey: "ETH", PriceUSD: 2000},
		{ChainID: 8453, Address: usdcBase, Symbol: "USDC", Name: "USD Coin", Decimals: 6, CoinKey: "USDC", PriceUSD: 1},
	})
}

func start(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Prices == nil {
		cfg.Prices = table()
	}
	s, srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func client(t *testing.T, url string) (*adapter.Client, *registry.Registry) {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := adapter.New(adapter.Config{BaseURL: url, Timeout: 5 * time.Second, Integrator: "swapgate"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c, reg
}

func request(t *testing.T, reg *registry.Registry, from, to uint64, fromTok, toTok string, amount int64, feeBps int) *quote.Request {
	t.Helper()
	fc, _ := reg.Chain(from)
	tc, _ := reg.Chain(to)
	ft, ok1 := reg.Token(from, fromTok)
	tt, ok2 := reg.Token(to, toTok)
	if fc == nil || tc == nil || !ok1 || !ok2 {
		t.Fatalf("registry lacks %d/%s or %d/%s", from, fromTok, to, toTok)
	}
	return &quote.Request{ID: "q1", From: fc, To: tc, FromToken: ft, ToToken: tt, FromAmount: big.NewInt(amount),
		FromAddress: wallet, ToAddress: wallet, Slippage: 0.005, FeeBps: feeBps, Now: time.Now()}
}

// The adapter maps the stand-in's quote: amounts from the price table less
// the tool's 0.1% and the integrator's fee, the router's transaction, the
// approval address, gas and fee costs.
func TestQuoteThroughAdapter(t *testing.T) {
	const approval = "0x9999999999999999999999999999999999999999"
	router := "0x1111111111111111111111111111111111111111"
	cases := []struct {
		name               string
		from, to           uint64
		fromTok, toTok     string
		amount             int64
		feeBps             int
		wantTool, wantType string
		wantTo, wantToMin  int64
		wantPartnerFee     int64
		wantValue          int64
		wantApproval       string
	}{
		// 100 USDC: 0.1 tool fee, 0.3 integrator fee, 99.6 bought; min 0.5% less.
		{"bridge with fee", 42161, 8453, usdcArb, usdcBase, 100_000_000, 30, ToolAcross, "lifi", 99_600_000, 99_102_000, 300_000 * 99_600_000 / 99_700_000, 0, approval},
		{"bridge without fee", 42161, 8453, usdcArb, usdcBase, 100_000_000, 0, ToolAcross, "lifi", 99_900_000, 99_400_500, 0, 0, approval},
		// 1 ETH native at 2000: 1998 USDC after the tool fee; value carries the amount, no approval.
		{"native swap", 42161, 42161, "0x0000000000000000000000000000000000000000", usdcArb, 1_000_000_000_000_000_000, 0, ToolOneInch, "lifi", 1_998_000_000, 1_988_010_000, 0, 1_000_000_000_000_000_000, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, url := start(t, Config{Router: router, ApprovalAddress: approval, Record: true})
			c, reg := client(t, url)
			route, err := c.QuoteLeg(context.Background(), request(t, reg, tc.from, tc.to, tc.fromTok, tc.toTok, tc.amount, tc.feeBps), "")
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(route.Tool, "sbx-") || route.Tool != tc.wantTool || route.StepType != tc.wantType {
				t.Errorf("tool %q type %q, want %q %q", route.Tool, route.StepType, tc.wantTool, tc.wantType)
			}
			if route.ToAmount.Int64() != tc.wantTo || route.ToAmountMin.Int64() != tc.wantToMin {
				t.Errorf("toAmount %s min %s, want %d %d", route.ToAmount, route.ToAmountMin, tc.wantTo, tc.wantToMin)
			}
			if route.PartnerFee.Int64() != tc.wantPartnerFee {
				t.Errorf("partner fee %s, want %d", route.PartnerFee, tc.wantPartnerFee)
			}
			if route.ApprovalAddress != tc.wantApproval {
				t.Errorf("approval %q, want %q", route.ApprovalAddress, tc.wantApproval)
			}
			if route.Tx == nil || !strings.EqualFold(route.Tx.To, router) || route.Tx.ChainID != tc.from || route.Tx.Value.Int64() != tc.wantValue || len(route.Tx.Data) != 36 {
				t.Fatalf("transaction %+v", route.Tx)
			}
			if len(route.GasCosts) != 1 || route.GasCosts[0].Amount.Int64() != gasPriceWei*gasEstimate {
				t.Errorf("gas costs %+v", route.GasCosts)
			}
			if route.FromAmountUSD <= 0 || route.ToAmountUSD <= 0 {
				t.Errorf("USD figures %v %v", route.FromAmountUSD, route.ToAmountUSD)
			}
			if qs := s.Quotes(); len(qs) != 1 || qs[0].Get("toAddress") != wallet || qs[0].Get("integrator") != "swapgate" {
				t.Errorf("recorded queries %v", qs)
			}
			again, err := c.QuoteLeg(context.Background(), request(t, reg, tc.from, tc.to, tc.fromTok, tc.toTok, tc.amount, tc.feeBps), "")
			if err != nil || string(again.Tx.Data) != string(route.Tx.Data) {
				t.Errorf("the same request answered different calldata (%v)", err)
			}
		})
	}
}

// Refusals come in LI.FI's error shapes, which the adapter maps to a reasoned
// no-route or a bad request.
func TestQuoteRefusals(t *testing.T) {
	_, base := start(t, Config{})
	cases := []struct {
		name, query string
		status      int
		code        int
	}{
		{"unknown token", "fromChain=42161&toChain=8453&fromToken=0xdead&toToken=" + usdcBase + "&fromAmount=1&fromAddress=" + wallet, 404, 1002},
		{"bad amount", "fromChain=42161&toChain=8453&fromToken=" + usdcArb + "&toToken=" + usdcBase + "&fromAmount=-5&fromAddress=" + wallet, 400, 1011},
		{"bad chain", "fromChain=arb&toChain=8453", 400, 1011},
		{"denied bridges", "fromChain=42161&toChain=8453&fromToken=" + usdcArb + "&toToken=" + usdcBase + "&fromAmount=100&fromAddress=" + wallet + "&denyBridges=across,stargateV2", 404, 1002},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body struct{ Code int }
			if st := getJSON(t, base+"/v1/quote?"+tc.query, &body); st != tc.status || body.Code != tc.code {
				t.Errorf("HTTP %d code %d, want %d %d", st, body.Code, tc.status, tc.code)
			}
		})
	}
	c, reg := client(t, base)
	_, err := c.QuoteLeg(context.Background(), request(t, reg, 42161, 8453, usdcArb, usdcBase, 1, 0), "")
	var nr *quote.NoRoute
	if !asNoRoute(err, &nr) {
		t.Errorf("1 base unit: %v, want a no-route", err)
	}
	// A test can take the route of a pair away.
	_, url2 := start(t, Config{NoRoute: func(q url.Values) bool { return q.Get("toChain") == "8453" }})
	c2, _ := client(t, url2)
	if _, err := c2.QuoteLeg(context.Background(), request(t, reg, 42161, 8453, usdcArb, usdcBase, 100_000_000, 0), ""); !asNoRoute(err, &nr) {
		t.Errorf("NoRoute: %v, want a no-route", err)
	}
	if _, err := c2.QuoteLeg(context.Background(), request(t, reg, 42161, 42161, usdcArb, wethArb, 100_000_000, 0), ""); err != nil {
		t.Errorf("NoRoute took another pair's route: %v", err)
	}
}

func asNoRoute(err error, nr **quote.NoRoute) bool {
	for err != nil {
		if v, ok := err.(*quote.NoRoute); ok {
			*nr = v
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v: %s", url, err, b)
	}
	return resp.StatusCode
}

// Tokens and tools decode through the adapter; the logos resolve.
func TestTokensAndTools(t *testing.T) {
	_, url := start(t, Config{})
	c, _ := client(t, url)
	toks, err := c.Tokens(context.Background(), []uint64{42161})
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 1 || len(toks[42161]) != 3 {
		t.Fatalf("tokens %+v", toks)
	}
	for _, tok := range toks[42161] {
		if tok.PriceUSD == "" || !strings.HasPrefix(tok.LogoURI, url+"/logos/42161/") {
			t.Errorf("token %+v", tok)
		}
	}
	resp, err := http.Get(toks[42161][0].LogoURI)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("logo: %v %v", err, resp)
	}
	tools, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 4 {
		t.Fatalf("tools %+v", tools)
	}
	for _, tl := range tools {
		if strings.HasPrefix(tl.Key, "sbx-") || len(tl.SupportedChains) != 2 {
			t.Errorf("tool %+v", tl)
		}
	}
}

// A marked transaction is PENDING for the configured polls, then DONE with
// its receiving leg; an unmarked one is NOT_FOUND.
func TestStatus(t *testing.T) {
	s, url := start(t, Config{StatusPolls: 2})
	c, _ := client(t, url)
	const hash = "0xAB00000000000000000000000000000000000000000000000000000000000001"
	sw := &swap.Swap{FromChain: 42161, ToChain: 8453, Tool: ToolAcross}
	sw.Sending.TxHash = hash
	o, err := c.SwapStatus(context.Background(), sw)
	if err != nil || o.Status != swap.StatusNotFound {
		t.Fatalf("before MarkSent: %+v %v", o, err)
	}
	s.MarkSent(hash, Sent{FromChain: 42161, ToChain: 8453, FromToken: usdcArb, ToToken: usdcBase, FromAmount: "100", ToAmount: "99"})
	want := []string{swap.StatusPending, swap.StatusPending, swap.StatusDone, swap.StatusDone}
	for i, w := range want {
		o, err := c.SwapStatus(context.Background(), sw)
		if err != nil || o.Status != w {
			t.Fatalf("poll %d: %+v %v, want %s", i, o, err, w)
		}
		if w == swap.StatusDone && (o.Receiving.TxHash == "" || o.Receiving.Amount != "99" || o.Receiving.ChainID != 8453) {
			t.Errorf("receiving %+v", o.Receiving)
		}
	}
}

// The latency delays every answer, and can be changed while serving.
func TestLatency(t *testing.T) {
	s, url := start(t, Config{Latency: 150 * time.Millisecond})
	at := time.Now()
	var v map[string]any
	getJSON(t, url+"/v1/tools", &v)
	if d := time.Since(at); d < 150*time.Millisecond {
		t.Errorf("answered in %v, want at least 150ms", d)
	}
	s.SetLatency(0)
	at = time.Now()
	getJSON(t, url+"/v1/tools", &v)
	if d := time.Since(at); d > 100*time.Millisecond {
		t.Errorf("answered in %v after SetLatency(0)", d)
	}
}

// The exact-output quote (GET /v1/quote/toAmount), through the adapter:
// the least fromAmount whose toAmountMin reaches toAmount, the answer
// /v1/quote gives for that fromAmount, and one unit less falls short.
func TestQuoteToAmount(t *testing.T) {
	s, base := start(t, Config{Record: true})
	c, reg := client(t, base)
	for _, tt := range []struct {
		name     string
		to       uint64
		toTok    string
		toAmount int64
		feeBps   int
	}{
		{"bridge USDC, integrator fee", 8453, usdcBase, 250_000_000, 30},
		{"swap USDC to WETH", 42161, wethArb, 100_000_000_000_000_000, 0},
	} {
		req := request(t, reg, 42161, tt.to, usdcArb, tt.toTok, 1, tt.feeBps)
		req.FromAmount, req.ToAmount = nil, big.NewInt(tt.toAmount)
		r, err := c.QuoteLeg(context.Background(), req, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if r.ToAmountMin.Cmp(req.ToAmount) < 0 {
			t.Errorf("%s: toAmountMin %s below %s", tt.name, r.ToAmountMin, req.ToAmount)
		}
		qs := s.Quotes()
		if last := qs[len(qs)-1]; last.Get("toAmount") != req.ToAmount.String() || last.Has("fromAmount") {
			t.Errorf("%s: sent %v", tt.name, last)
		}
		fwd := request(t, reg, 42161, tt.to, usdcArb, tt.toTok, new(big.Int).Sub(r.FromAmount, big.NewInt(1)).Int64(), tt.feeBps)
		less, err := c.QuoteLeg(context.Background(), fwd, "")
		if err != nil || less.ToAmountMin.Cmp(req.ToAmount) >= 0 {
			t.Errorf("%s: %s is not the least input: %v %v", tt.name, r.FromAmount, less, err)
		}
	}
}

// TestTamper: a tampered Step reaches the client as the hook left it, and
// the adapter refuses it; without the hook the same query is a route again.
func TestTamper(t *testing.T) {
	s, url := start(t, Config{})
	c, reg := client(t, url)
	req := request(t, reg, 42161, 8453, usdcArb, usdcBase, 100_000_000, 0)
	s.SetTamper(func(step map[string]any) {
		step["transactionRequest"].(map[string]any)["to"] = "javascript:alert(1)"
	})
	if r, err := c.QuoteLeg(context.Background(), req, ""); err == nil || !strings.Contains(err.Error(), `transactionRequest.to: "javascript:alert(1)"`) {
		t.Fatalf("tampered step: route %+v, err %v", r, err)
	}
	s.SetTamper(nil)
	if r, err := c.QuoteLeg(context.Background(), req, ""); err != nil || r.Tx == nil || r.Tx.To != DefaultRouter {
		t.Fatalf("untampered step: route %+v, err %v", r, err)
	}
}

// A Solana or Sui source is answered as LI.FI answers it: the transaction
// serialized in base64 ({data} alone), no approval address; the adapter
// takes it as the source chain's serialized transaction. Before, the
// stand-in answered an EVM call there, which the adapter refused.
func TestSerializedSourcesThroughAdapter(t *testing.T) {
	prices := kit.NewTable([]kit.Token{
		{ChainID: 1151111081099710, Address: "11111111111111111111111111111111", Symbol: "SOL", Name: "Solana", Decimals: 9, CoinKey: "SOL", PriceUSD: 200},
		{ChainID: 9270000000000000, Address: "0x2::sui::SUI", Symbol: "SUI", Name: "Sui", Decimals: 9, CoinKey: "SUI", PriceUSD: 4},
		{ChainID: 1, Address: "0x0000000000000000000000000000000000000000", Symbol: "ETH", Name: "ETH", Decimals: 18, CoinKey: "ETH", PriceUSD: 2000},
	})
	for _, tc := range []struct {
		name   string
		chain  uint64
		native string
		from   string
	}{
		{"Solana", 1151111081099710, "11111111111111111111111111111111", "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"},
		{"Sui", 9270000000000000, "0x2::sui::SUI", "0x7d20dcdb2bca4f508ea9613994683eb4e76e9c4ed371169677c1be02aaf0b58e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base := start(t, Config{Router: "0x1111111111111111111111111111111111111111",
				ApprovalAddress: "0x9999999999999999999999999999999999999999", Prices: prices})
			// The raw answer: {data} alone, no approval address.
			res, err := http.Get(base + "/v1/quote?fromChain=" + strconv.FormatUint(tc.chain, 10) + "&toChain=1&fromToken=" +
				url.QueryEscape(tc.native) + "&toToken=0x0000000000000000000000000000000000000000&fromAmount=1000000000&fromAddress=" + tc.from)
			if err != nil {
				t.Fatal(err)
			}
			var step struct {
				Estimate           map[string]any    `json:"estimate"`
				TransactionRequest map[string]string `json:"transactionRequest"`
			}
			err = json.NewDecoder(res.Body).Decode(&step)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %v", res.StatusCode, err)
			}
			if _, ok := step.Estimate["approvalAddress"]; ok || len(step.TransactionRequest) != 1 || step.TransactionRequest["data"] == "" {
				t.Fatalf("approval %v, transactionRequest %v", step.Estimate["approvalAddress"], step.TransactionRequest)
			}

			c, reg := client(t, base)
			src, _ := reg.Chain(tc.chain)
			eth, _ := reg.Chain(1)
			in, _ := reg.Token(tc.chain, tc.native)
			out, _ := reg.Token(1, "0x0000000000000000000000000000000000000000")
			req := &quote.Request{ID: "q1", From: src, To: eth, FromToken: in, ToToken: out, FromAmount: big.NewInt(1_000_000_000),
				FromAddress: tc.from, ToAddress: wallet, Slippage: 0.005, Now: time.Now()}
			route, err := c.QuoteLeg(context.Background(), req, "")
			if err != nil {
				t.Fatal(err)
			}
			tx := route.Tx
			if tx == nil || tx.Encoding != quote.EncodingBase64 || tx.ChainID != tc.chain || tx.To != "" || len(tx.Data) == 0 {
				t.Fatalf("transaction %+v", tx)
			}
			if _, err := base64.StdEncoding.Strict().DecodeString(step.TransactionRequest["data"]); err != nil {
				t.Fatalf("raw data %q: %v", step.TransactionRequest["data"], err)
			}
			// The bytes are the request's: they end with the sender.
			if !strings.HasSuffix(string(tx.Data), tc.from) || route.ApprovalAddress != "" {
				t.Fatalf("data %x, approval %q", tx.Data, route.ApprovalAddress)
			}
			if len(route.GasCosts) != 1 || route.GasCosts[0].Token == nil || route.GasCosts[0].Token.ChainID != tc.chain {
				t.Fatalf("gas costs %+v", route.GasCosts)
			}
		})
	}
}
