package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestEnvelopeAndPing(t *testing.T) {
	ts := startServer(t, nil)
	env := ts.get("/v1/ping")
	var ping struct {
		Status, Version, Mode string
		Timestamp             int64
	}
	env.decode(t, &ping)
	if env.Status != 200 || ping.Status != "ok" || ping.Version != "1.0.0" || ping.Mode != "sandbox" {
		t.Fatalf("ping: %d %s", env.Status, env.Raw)
	}
	if !uuidRE.MatchString(env.Meta.RequestID) || env.Header.Get("X-Request-Id") != env.Meta.RequestID {
		t.Fatalf("request id %q, header %q", env.Meta.RequestID, env.Header.Get("X-Request-Id"))
	}
	if d := time.Now().Unix() - env.Meta.Timestamp; d < -2 || d > 5 || ping.Timestamp != env.Meta.Timestamp {
		t.Fatalf("timestamp %d, data timestamp %d", env.Meta.Timestamp, ping.Timestamp)
	}
	if env.Meta.RateLimit != nil {
		t.Fatalf("anonymous ping counts against nothing, yet meta.rateLimit = %+v", env.Meta.RateLimit)
	}
	if env.Error != nil {
		t.Fatalf("error must be null on success: %s", env.Raw)
	}
	if other := ts.get("/v1/ping"); other.Meta.RequestID == env.Meta.RequestID {
		t.Fatal("request ids repeat")
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	ts := startServer(t, nil)
	if env := ts.get("/healthz"); env.Status != 200 {
		t.Fatalf("healthz: %s", env.Raw)
	}
	if env := ts.get("/readyz"); env.Status != 200 {
		t.Fatalf("readyz: %s", env.Raw)
	}
	ts.get("/v1/chains")
	m := ts.get("/metrics")
	if m.Status != 200 || !strings.Contains(string(m.Raw), `swapgate_http_requests_total{code="200",route="chains"}`) {
		t.Fatalf("metrics: %d %.400s", m.Status, m.Raw)
	}
}

func TestUnknownPathWrongMethodBigBody(t *testing.T) {
	ts := startServer(t, nil)
	ts.get("/v1/nope").wantError(t, 404, "NOT_FOUND", "")
	ts.do(http.MethodPost, "/v1/ping", []byte(`{}`)).wantError(t, 405, "METHOD_NOT_ALLOWED", "")
	// A body over 64 KiB is refused from its Content-Length, before it is
	// read; a raw connection sees the answer without racing the upload.
	conn, err := net.Dial("tcp", ts.app.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /v1/partner/me/fee-wallets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 70<<10)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	env := &envelope{Status: resp.StatusCode, Raw: raw}
	if err := json.Unmarshal(raw, env); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	env.wantError(t, 400, "INVALID_BODY", "")
}

func TestChains(t *testing.T) {
	ts := startServer(t, nil)
	var out struct {
		Chains []struct {
			ID          uint64
			Key, Name   string
			ChainType   string
			Mainnet     bool
			Providers   []string
			NativeToken struct {
				Address, Symbol, PriceUSD string
				Decimals                  int
			}
		}
	}
	ts.get("/v1/chains").decode(t, &out)
	types := map[uint64]string{}
	evm := 0
	for _, c := range out.Chains {
		types[c.ID] = c.ChainType
		if c.ChainType == "EVM" {
			evm++
		}
		if c.Name == "" || c.Key == "" || len(c.Providers) == 0 || c.NativeToken.Symbol == "" || c.NativeToken.PriceUSD == "" {
			t.Errorf("chain %d incomplete: %+v", c.ID, c)
		}
	}
	if evm < 30 {
		t.Errorf("%d EVM chains, want at least 30", evm)
	}
	want := map[uint64]string{1: "EVM", 10: "EVM", 56: "EVM", 100: "EVM", 137: "EVM", 369: "EVM", 8453: "EVM", 42161: "EVM",
		43114: "EVM", 59144: "EVM", 534352: "EVM", 324: "EVM", 81457: "EVM", 5000: "EVM", 42220: "EVM",
		1151111081099710: "SVM", 20000000000001: "UTXO", 9270000000000000: "MVM", 900000001: "INTENTS",
		900000002: "INTENTS", 900000003: "INTENTS", 900000004: "INTENTS", 900000005: "INTENTS", 900000006: "INTENTS",
		900000014: "INTENTS", 900000015: "INTENTS"}
	for id, ct := range want {
		if types[id] != ct {
			t.Errorf("chain %d: chainType %q, want %q", id, types[id], ct)
		}
	}
}

func TestTokens(t *testing.T) {
	ts := startServer(t, nil)
	type tok struct {
		Address, Symbol, Name, LogoURI, PriceUSD string
		Decimals                                 int
	}
	var out struct{ Tokens map[string][]tok }
	ts.get("/v1/tokens?chains=1,137").decode(t, &out)
	if len(out.Tokens) != 2 || len(out.Tokens["1"]) < 4 || len(out.Tokens["137"]) < 4 {
		t.Fatalf("tokens: %+v", out.Tokens)
	}
	var usdc *tok
	for i, tk := range out.Tokens["1"] {
		if p, err := strconv.ParseFloat(tk.PriceUSD, 64); err != nil || p <= 0 {
			t.Errorf("token %s price %q", tk.Symbol, tk.PriceUSD)
		}
		if tk.Symbol == "USDC" {
			usdc = &out.Tokens["1"][i]
		}
	}
	if usdc == nil || usdc.Address != "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" || usdc.Decimals != 6 {
		t.Fatalf("USDC on Ethereum: %+v", usdc)
	}
	// Its logo resolves, at this server: an SVG drawn by the service.
	if !strings.HasPrefix(usdc.LogoURI, ts.base+"/logos/") {
		t.Errorf("USDC's logoURI %q is not served by this server (%s)", usdc.LogoURI, ts.base)
	}
	logo, err := http.Get(usdc.LogoURI)
	if err != nil {
		t.Fatalf("GET its logoURI: %v", err)
	}
	svg, _ := io.ReadAll(logo.Body)
	logo.Body.Close()
	if logo.StatusCode != 200 || logo.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(svg), ">USDC</text>") {
		t.Errorf("GET %s: %d %q\n%s", usdc.LogoURI, logo.StatusCode, logo.Header.Get("Content-Type"), svg)
	}
	var pls struct{ Tokens map[string][]tok }
	ts.get("/v1/tokens?chains=369&search=usdch").decode(t, &pls)
	if l := pls.Tokens["369"]; len(l) != 1 || !strings.EqualFold(l[0].Address, "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D") {
		t.Fatalf("USDCh on 369: %+v", pls.Tokens)
	}
	var lim struct{ Tokens map[string][]tok }
	ts.get("/v1/tokens?chains=1&limit=2").decode(t, &lim)
	if len(lim.Tokens["1"]) != 2 {
		t.Fatalf("limit=2 gave %d tokens", len(lim.Tokens["1"]))
	}
	var svm struct{ Tokens map[string][]tok }
	ts.get("/v1/tokens?chainTypes=SVM").decode(t, &svm)
	if len(svm.Tokens) != 1 || len(svm.Tokens["1151111081099710"]) == 0 {
		t.Fatalf("chainTypes=SVM: %v", svm.Tokens)
	}
	var rich struct{ Tokens map[string][]tok }
	ts.get("/v1/tokens?chains=1&minPriceUSD=1000").decode(t, &rich)
	for _, tk := range rich.Tokens["1"] {
		if p, _ := strconv.ParseFloat(tk.PriceUSD, 64); p < 1000 {
			t.Errorf("minPriceUSD=1000 let %s at %s through", tk.Symbol, tk.PriceUSD)
		}
	}
	for _, c := range []struct{ q, param string }{
		{"chains=abc", "chains"}, {"chains=1,999999", "chains"}, {"limit=0", "limit"}, {"limit=x", "limit"},
		{"limit=-3", "limit"}, {"chainTypes=FOO", "chainTypes"}, {"minPriceUSD=-1", "minPriceUSD"},
	} {
		ts.get("/v1/tokens?"+c.q).wantError(t, 400, "INVALID_PARAMS", c.param)
	}
}

func TestConnectionsAndTools(t *testing.T) {
	ts := startServer(t, nil)
	var tools struct {
		Tools []struct {
			Key, Name, Type string
			SupportedChains []uint64
		}
	}
	ts.get("/v1/tools").decode(t, &tools)
	kinds := map[string]bool{}
	for _, tl := range tools.Tools {
		kinds[tl.Type] = true
		if !strings.HasPrefix(tl.Key, "sbx-") || len(tl.SupportedChains) == 0 {
			t.Errorf("tool %+v", tl)
		}
	}
	if !kinds["bridge"] || !kinds["dex"] || !kinds["intents"] {
		t.Fatalf("tool types %v", kinds)
	}
	var conns struct {
		Connections []struct {
			FromChainID, ToChainID uint64
			FromTokens, ToTokens   []struct{ Address, Symbol string }
			Tools                  []string
		}
	}
	ts.get("/v1/connections?fromChain=42161&toChain=8453").decode(t, &conns)
	if len(conns.Connections) != 1 || conns.Connections[0].FromChainID != 42161 || len(conns.Connections[0].Tools) == 0 {
		t.Fatalf("connections 42161→8453: %+v", conns)
	}
	ts.get("/v1/connections?fromChain=1&fromToken=0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48").decode(t, &conns)
	if len(conns.Connections) < 10 {
		t.Fatalf("USDC on Ethereum connects to %d chains", len(conns.Connections))
	}
	for _, c := range conns.Connections {
		if len(c.FromTokens) != 1 || c.FromTokens[0].Symbol != "USDC" {
			t.Fatalf("fromToken filter: %+v", c.FromTokens)
		}
	}
	ts.get("/v1/connections?fromChain=1&fromToken=0x123").wantError(t, 400, "INVALID_PARAMS", "fromToken")
	ts.get("/v1/connections?toChain=xyz").wantError(t, 400, "INVALID_PARAMS", "toChain")
}

func TestGasPrices(t *testing.T) {
	ts := startServer(t, nil)
	type rec struct {
		ChainID uint64
		Speed   map[string]struct {
			GasPrice, MaxFeePerGas, MaxPriorityFeePerGas string
			EstimatedTime                                int
		}
		LastUpdated int64
	}
	var one rec
	ts.get("/v1/gas-prices?chainId=1").decode(t, &one)
	if one.ChainID != 1 || len(one.Speed) != 3 || one.LastUpdated == 0 {
		t.Fatalf("gas for chain 1: %+v", one)
	}
	for _, tier := range []string{"slow", "standard", "fast"} {
		if _, err := strconv.ParseUint(one.Speed[tier].GasPrice, 10, 64); err != nil {
			t.Errorf("tier %s gasPrice %q", tier, one.Speed[tier].GasPrice)
		}
	}
	var many struct{ GasPrices []rec }
	ts.get("/v1/gas-prices?chainId=137,1").decode(t, &many)
	if len(many.GasPrices) != 2 || many.GasPrices[0].ChainID != 137 || many.GasPrices[1].ChainID != 1 {
		t.Fatalf("gas for 137,1: %+v", many)
	}
	ts.get("/v1/gas-prices").wantError(t, 400, "INVALID_PARAMS", "chainId")
	ts.get("/v1/gas-prices?chainId=12x").wantError(t, 400, "INVALID_PARAMS", "chainId")
	ts.get("/v1/gas-prices?chainId=424242424").wantError(t, 400, "INVALID_PARAMS", "chainId")
	ts.get("/v1/gas-prices?chainId=1151111081099710").wantError(t, 400, "INVALID_PARAMS", "chainId")
}

func TestPartnerAuthAndProfile(t *testing.T) {
	ts := startServer(t, nil)
	noKey := ts.get("/v1/partner/me")
	noKey.wantError(t, 401, "UNAUTHORIZED", "")
	if noKey.Meta.RateLimit == nil || noKey.Meta.RateLimit.Limit != 240 {
		t.Fatalf("a refused request counts against its IP's bucket: %s", noKey.Raw)
	}
	ts.get("/v1/partner/me", withKey("pk_live_notavalidkeynotavalidkeynotavalid")).wantError(t, 401, "UNAUTHORIZED", "")
	ts.get("/v1/chains", withKey("garbage")).wantError(t, 401, "UNAUTHORIZED", "")

	id, key := ts.createPartner("Acme", "--swap-fee-bps", "25", "--onramp-fee-bps", "120")
	var me struct {
		ID, Name, Email string
		FeeTier         struct{ SwapFeeBps, OnrampFeeBps int }
		RateLimit       struct{ RequestsPerMinute int }
		CreatedAt       string
		UpdatedAt       string
	}
	env := ts.get("/v1/partner/me", withKey(key))
	env.decode(t, &me)
	if me.ID != id || me.Name != "Acme" || me.Email != "acme@example.com" || me.FeeTier.SwapFeeBps != 25 ||
		me.FeeTier.OnrampFeeBps != 120 || me.RateLimit.RequestsPerMinute != 2000 {
		t.Fatalf("profile: %s", env.Data)
	}
	if _, err := time.Parse(time.RFC3339, me.CreatedAt); err != nil {
		t.Fatalf("createdAt %q: %v", me.CreatedAt, err)
	}
	if rl := env.Meta.RateLimit; rl == nil || rl.Limit != 6000 || rl.Remaining != 5999 {
		t.Fatalf("partner endpoints use the read bucket: %+v", rl)
	}

	var rotated struct{ ID, APIKey string }
	cli(t, &rotated, "partner", "rotate-key", "--data", ts.dir, "--id", id)
	ts.get("/v1/partner/me", withKey(key)).wantError(t, 401, "UNAUTHORIZED", "")
	ts.get("/v1/partner/me", withKey(rotated.APIKey)).decode(t, &me)

	cli(t, nil, "partner", "disable", "--data", ts.dir, "--id", id)
	ts.get("/v1/chains", withKey(rotated.APIKey)).wantError(t, 401, "UNAUTHORIZED", "")
}

func TestRateLimits(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonReadPerMin = 5 })
	for i := 0; i < 5; i++ {
		env := ts.get("/v1/tools")
		if env.Status != 200 || env.Meta.RateLimit == nil || env.Meta.RateLimit.Limit != 5 || env.Meta.RateLimit.Remaining != 4-i {
			t.Fatalf("request %d: %d %+v", i, env.Status, env.Meta.RateLimit)
		}
	}
	over := ts.get("/v1/chains")
	over.wantError(t, 429, "RATE_LIMIT", "")
	if over.Meta.RateLimit == nil || over.Meta.RateLimit.Remaining != 0 || over.Meta.RateLimit.Reset < time.Now().Unix() ||
		len(over.Error.Details) != 0 || !strings.Contains(string(over.Raw), `"details":{}`) {
		t.Fatalf("429: %s", over.Raw)
	}
	// Errors inside a bucket carry the figures too, and ping without a key counts against nothing.
	if env := ts.get("/v1/ping"); env.Status != 200 {
		t.Fatalf("anonymous ping is never limited: %s", env.Raw)
	}

	id, key := ts.createPartner("Loadtest")
	cli(t, nil, "partner", "set-limits", "--data", ts.dir, "--id", id, "--heavy", "7", "--read", "40")
	const workers = 100
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, ts.base+"/v1/tools", nil)
			req.Header.Set("X-API-Key", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Error(err)
				return
			}
			ts.check(req, resp.StatusCode, resp.Header, body)
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[200] != 40 || codes[429] != workers-40 {
		t.Fatalf("partner read limit 40 under %d concurrent requests: %v", workers, codes)
	}
}

func TestTrustedProxy(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonReadPerMin = 2; c.TrustedProxies = "127.0.0.1" })
	for i := 0; i < 2; i++ {
		if env := ts.get("/v1/tools", withHeader("X-Forwarded-For", "203.0.113.7")); env.Status != 200 {
			t.Fatalf("%s", env.Raw)
		}
	}
	ts.get("/v1/tools", withHeader("X-Forwarded-For", "203.0.113.7")).wantError(t, 429, "RATE_LIMIT", "")
	if env := ts.get("/v1/tools", withHeader("X-Forwarded-For", "203.0.113.8")); env.Status != 200 {
		t.Fatalf("another client behind the proxy has its own bucket: %s", env.Raw)
	}
}
