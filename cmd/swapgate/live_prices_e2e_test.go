package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// The stand-ins below answer only what live mode's price sources and the
// adapters' start-up reads ask: the aggregator's GET /v1/tokens?chains=<id>
// ({tokens: {"<chainId>": [Token]}}, Token with priceUSD a decimal string)
// and GET /v1/tools, the intents provider's GET /v0/tokens ([{assetId,
// decimals, blockchain, symbol, price, priceUpdatedAt, contractAddress}]).

const (
	liveArbUSDC = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	liveArbWETH = "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"
	liveUSDCImg = "https://static.example/usdc.png"
)

// priceStandIns are the two upstreams. While frozen, the aggregator fails
// every token-list read and the intents provider keeps answering with the
// prices it had, stamped when it last updated them.
type priceStandIns struct {
	frozen    atomic.Bool
	updatedAt atomic.Pointer[time.Time]
	lifiReads atomic.Int32
}

func (p *priceStandIns) lifi(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/tools":
			_, _ = w.Write([]byte(`{"bridges":[],"exchanges":[]}`))
		case "/v1/tokens":
			p.lifiReads.Add(1)
			if p.frozen.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"message":"maintenance","code":1000}`))
				return
			}
			chain := r.URL.Query().Get("chains")
			list := "[]"
			if chain == "42161" {
				list = `[{"chainId":42161,"address":"` + liveArbUSDC + `","symbol":"USDC","decimals":6,"name":"USD Coin","coinKey":"USDC","logoURI":"` + liveUSDCImg + `","priceUSD":"0.99985"}]`
			}
			_, _ = w.Write([]byte(`{"tokens":{"` + chain + `":` + list + `}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (p *priceStandIns) oneclick(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v0/tokens" {
			http.NotFound(w, r)
			return
		}
		if !p.frozen.Load() {
			now := time.Now().UTC()
			p.updatedAt.Store(&now)
		}
		at := p.updatedAt.Load().Format(time.RFC3339Nano)
		w.Header().Set("Content-Type", "application/json")
		// USDC on Arbitrum is listed by both: the aggregator's price wins.
		_, _ = w.Write([]byte(`[
 {"assetId":"nep141:wrap.near","decimals":24,"blockchain":"near","symbol":"wNEAR","price":2.71,"priceUpdatedAt":"` + at + `","contractAddress":"wrap.near"},
 {"assetId":"nep141:arb-0xaf88d065e77c8cc2239327c5edb3a432268e5831.omft.near","decimals":6,"blockchain":"arb","symbol":"USDC","price":1.0001,"priceUpdatedAt":"` + at + `","contractAddress":"0xaf88d065e77c8cc2239327c5edb3a432268e5831"}
]`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// liveToken is a token of GET /v1/tokens with its priceUSD's presence.
type liveToken struct {
	Address  string
	LogoURI  string
	PriceUSD *string
}

func liveTokens(t *testing.T, ts *testServer, chain string) map[string]liveToken {
	t.Helper()
	var out struct{ Tokens map[string][]liveToken }
	ts.get("/v1/tokens?chains="+chain).decode(t, &out)
	m := map[string]liveToken{}
	for _, tk := range out.Tokens[chain] {
		m[strings.ToLower(tk.Address)] = tk
	}
	return m
}

// TestLivePricesFromUpstreamsAndTheirExpiry runs the real server in live
// mode against the stand-ins: /v1/tokens shows the aggregator's prices (and
// its image of the token), the intents provider's for what only it lists,
// and no price for a token neither lists; then, both stand-ins frozen and
// the maximum age short, every price vanishes, never served stale.
func TestLivePricesFromUpstreamsAndTheirExpiry(t *testing.T) {
	p := &priceStandIns{}
	lifi, oneclick := p.lifi(t), p.oneclick(t)
	const maxAge = 2500 * time.Millisecond
	ts := startServer(t, func(c *app.Config) {
		c.Mode = app.ModeLive
		c.Quote.AggregatorURL, c.Quote.IntentsURL = lifi.URL, oneclick.URL
		c.PriceInterval, c.PriceMaxAge = 100*time.Millisecond, maxAge
		c.AnonReadPerMin = 100_000
	})

	usdc, weth := strings.ToLower(liveArbUSDC), strings.ToLower(liveArbWETH)
	arb := liveTokens(t, ts, "42161")
	if tk := arb[usdc]; tk.PriceUSD == nil || *tk.PriceUSD != "0.99985" || tk.LogoURI != liveUSDCImg {
		t.Errorf("USDC on Arbitrum: %+v, want the aggregator's price and image", tk)
	}
	if tk, ok := arb[weth]; !ok || tk.PriceUSD != nil || !strings.HasPrefix(tk.LogoURI, ts.base+"/logos/tokens/42161/") {
		t.Errorf("WETH on Arbitrum, listed by neither: %+v, want no price and the served logo", tk)
	}
	near := liveTokens(t, ts, "900000001")
	if tk := near["native"]; tk.PriceUSD == nil || *tk.PriceUSD != "2.71" {
		t.Errorf("NEAR, listed only by the intents provider: %+v, want its price", tk)
	}
	// The sandbox's walk prices every token; live mode's sources price
	// none of Ethereum's here.
	for addr, tk := range liveTokens(t, ts, "1") {
		if tk.PriceUSD != nil {
			t.Errorf("chain 1 %s: price %s from no upstream", addr, *tk.PriceUSD)
		}
	}

	// Still fresh after several intervals: the stand-ins are polled.
	reads := p.lifiReads.Load()
	time.Sleep(maxAge + 300*time.Millisecond)
	if p.lifiReads.Load() == reads {
		t.Fatal("the aggregator's token list was not polled again")
	}
	if tk := liveTokens(t, ts, "42161")[usdc]; tk.PriceUSD == nil {
		t.Fatal("a price polled every interval expired")
	}

	p.frozen.Store(true)
	frozenAt := time.Now()
	deadline := frozenAt.Add(maxAge + 5*time.Second)
	for {
		arb, near = liveTokens(t, ts, "42161"), liveTokens(t, ts, "900000001")
		if arb[usdc].PriceUSD == nil && near["native"].PriceUSD == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prices still served %v after the upstreams stopped updating: USDC %+v, NEAR %+v",
				time.Since(frozenAt), arb[usdc], near["native"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	if held := time.Since(frozenAt); held < maxAge-200*time.Millisecond {
		t.Errorf("prices withdrawn %v after the freeze, before they were %v old", held, maxAge)
	}
	if tk := arb[usdc]; !strings.HasPrefix(tk.LogoURI, ts.base+"/logos/tokens/42161/") {
		t.Errorf("USDC's logoURI %q once its price expired, want the served logo", tk.LogoURI)
	}
	// The raw answer carries no priceUSD at all for them: omitted, not
	// empty or zero.
	raw := string(ts.get("/v1/tokens?chains=42161").Raw)
	if strings.Contains(raw, `"priceUSD"`) {
		t.Errorf("an expired answer still names priceUSD: %s", truncate([]byte(raw), 600))
	}
}
