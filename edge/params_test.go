package edge

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestTextParam(t *testing.T) {
	for v, ok := range map[string]bool{
		"usdc": true, "Ünïcode ok": true, "": true, strings.Repeat("a", 16): true,
		strings.Repeat("a", 17): false, "a\x00b": false, "a\nb": false, "\x7f": false, "a\xffb": false, "\u0085": false,
	} {
		err := textParam("p", v, 16)
		if (err == nil) != ok {
			t.Errorf("textParam(%q) = %v, want ok %v", v, err, ok)
		}
		if err != nil && (err.Code != "INVALID_PARAMS" || err.Details["param"] != "p") {
			t.Errorf("textParam(%q) = %+v, want INVALID_PARAMS naming p", v, err)
		}
	}
}

// TestTokensRefusals: the search term is bounded printable text and
// minPriceUSD a finite number.
func TestTokensRefusals(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	for uri, param := range map[string]string{
		"/v1/tokens?search=" + strings.Repeat("a", maxSearchLen+1): "search",
		"/v1/tokens?search=a%00":                                   "search",
		"/v1/tokens?search=a%0Ab":                                  "search",
		"/v1/tokens?search=%FF":                                    "search",
		"/v1/tokens?minPriceUSD=Inf":                               "minPriceUSD",
		"/v1/tokens?minPriceUSD=-Inf":                              "minPriceUSD",
		"/v1/tokens?minPriceUSD=NaN":                               "minPriceUSD",
		"/v1/tokens?minPriceUSD=1e400":                             "minPriceUSD",
		"/v1/tokens?search=usdc&minPriceUSD=0.5":                   "",
		"/v1/tokens?search=" + strings.Repeat("a", maxSearchLen):   "",
	} {
		ctx := serve(s, "GET", uri, "127.0.0.1:5000", nil)
		var env struct {
			Error *struct {
				Code    string
				Details map[string]any
			}
		}
		_ = json.Unmarshal(ctx.Response.Body(), &env)
		if param == "" {
			if ctx.Response.StatusCode() != 200 {
				t.Errorf("%s: %d %s", uri[:min(len(uri), 60)], ctx.Response.StatusCode(), ctx.Response.Body())
			}
			continue
		}
		if ctx.Response.StatusCode() != 400 || env.Error == nil || env.Error.Code != "INVALID_PARAMS" || env.Error.Details["param"] != param {
			t.Errorf("%s: %d %s, want INVALID_PARAMS naming %s", uri[:min(len(uri), 60)], ctx.Response.StatusCode(), ctx.Response.Body(), param)
		}
	}
}
