package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// lifiToolsOnly is the smallest aggregator upstream a live server starts
// against: LI.FI's GET /v1/tools with one bridge between Ethereum and
// Arbitrum and one exchange on Arbitrum (the answer's shape is LI.FI's
// documented one), and LI.FI's "no quote" answer (404, code 1002) to every
// quote.
func lifiToolsOnly(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/tools":
			_, _ = io.WriteString(w, `{"bridges":[{"key":"across","name":"Across","logoURI":"https://raw.githubusercontent.com/lifinance/types/main/src/assets/icons/bridges/across.svg",`+
				`"supportedChains":[{"fromChainId":1,"toChainId":42161},{"fromChainId":42161,"toChainId":1}]}],`+
				`"exchanges":[{"key":"uniswap","name":"Uniswap V3","logoURI":"https://raw.githubusercontent.com/lifinance/types/main/src/assets/icons/exchanges/uniswap.png","supportedChains":[42161]}]}`)
		case "/v1/quote":
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"No available quotes for the requested transfer","code":1002}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"not found","code":1003}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// liveWithAggregator is a live-mode configuration whose only upstream is
// lifiToolsOnly.
func liveWithAggregator(t *testing.T) func(*app.Config) {
	url := lifiToolsOnly(t)
	return func(c *app.Config) {
		c.Mode = app.ModeLive
		c.Quote.AggregatorURL = url
	}
}

// TestLiveModeRefusesToStartWithoutUpstreams: live mode with nothing to
// quote through is refused at start, naming the flags, by the settings
// check and by the service itself.
func TestLiveModeRefusesToStartWithoutUpstreams(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.Mode = app.ModeLive
	cfg.Addr, cfg.DataDir = "127.0.0.1:0", t.TempDir()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	err := validateServeConfig(&cfg)
	if err == nil || !strings.Contains(err.Error(), "--mode") {
		t.Fatalf("settings check: %v", err)
	}
	for _, flag := range []string{"--aggregator-url", "--intents-url", "--pulse-rpc"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("the refusal does not name %s: %v", flag, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if a, err := app.Start(ctx, cfg); !errors.Is(err, app.ErrNoLiveUpstream) {
		if a != nil {
			_ = a.Close(ctx)
		}
		t.Fatalf("start: %v", err)
	}
	cfg.Quote.PulseRPC = map[uint64]string{42161: "http://127.0.0.1:1"}
	if err := validateServeConfig(&cfg); err == nil {
		t.Fatal("a node for chain 42161 alone made live mode acceptable: pulseroute needs chain 369's")
	}
}

// TestLiveModeRunsOnlyConfiguredUpstreams: with the aggregator alone
// configured, /v1/tools lists the aggregator's own tools and nothing of the
// sandbox, an aggregator pair is asked upstream, and a pair only the
// intents provider or pulseroute serves is NO_ROUTE_FOUND saying that the
// provider is not configured.
func TestLiveModeRunsOnlyConfiguredUpstreams(t *testing.T) {
	ts := startServer(t, liveWithAggregator(t))
	var tl struct {
		Tools []struct{ Key, Type, Status string }
	}
	ts.get("/v1/tools").decode(t, &tl)
	var keys []string
	for _, tool := range tl.Tools {
		keys = append(keys, tool.Key)
		if strings.HasPrefix(tool.Key, "sbx-") {
			t.Errorf("live /v1/tools lists %+v", tool)
		}
	}
	if strings.Join(keys, ",") != "across,uniswap" {
		t.Fatalf("live tools %v, want the upstream's across and uniswap", keys)
	}
	// The live catalog is what tool filters are checked against.
	base := "/v1/quote?fromChain=1&toChain=42161&fromToken=" + usdcEth + "&toToken=" + usdcArb + "&fromAmount=1000000&fromAddress=" + wallet
	ts.get(base+"&denyTools=sbx-canal").wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "denyTools")
	e := ts.get(base + "&denyTools=uniswap")
	e.wantError(t, http.StatusNotFound, "NO_ROUTE_FOUND", "")
	if strings.Contains(string(e.Raw), "sbx-") || strings.Contains(string(e.Raw), "not configured") {
		t.Fatalf("the aggregator's own no-route answer: %s", e.Raw)
	}

	for _, tc := range []struct {
		name, query, provider string
	}{
		{"bitcoin to ethereum: intents only", "fromChain=20000000000001&toChain=1&fromToken=bitcoin&toToken=" + zeroAddress +
			"&fromAmount=100000&fromAddress=bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4&toAddress=" + wallet, "intents"},
		{"to chain 369: pulseroute only", "fromChain=42161&toChain=369&fromToken=" + usdcArb + "&toToken=" + usdch +
			"&fromAmount=1000000&fromAddress=" + wallet, "pulseroute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ts.get("/v1/quote?" + tc.query)
			e.wantError(t, http.StatusNotFound, "NO_ROUTE_FOUND", "")
			reason, _ := e.Error.Details["reason"].(string)
			if !strings.Contains(reason, "not configured") || !strings.Contains(reason, tc.provider) {
				t.Fatalf("details.reason %q, want %s named as not configured", reason, tc.provider)
			}
			if strings.Contains(string(e.Raw), "sbx-") {
				t.Fatalf("a sandbox tool in a live answer: %s", e.Raw)
			}
		})
	}
}
