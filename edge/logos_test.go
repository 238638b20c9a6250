package edge

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/prices"
)

// liveLogoRefData has one live price on chain 42161 with the source's own
// image of the token.
type liveLogoRefData struct{ addr, logo string }

func (l liveLogoRefData) Prices(id uint64) (prices.Snapshot, bool) {
	if id != 42161 {
		return prices.Snapshot{}, false
	}
	return prices.Snapshot{Version: 1, ByAddress: map[string]float64{l.addr: 0.99985}, Logos: map[string]string{l.addr: l.logo}}, true
}
func (liveLogoRefData) Gas(uint64) (gas.Record, bool) { return gas.Record{}, false }
func (liveLogoRefData) GasVersion(uint64) uint64      { return 0 }

// TestEveryLogoURIResolves reads every logoURI of /v1/chains, /v1/tokens
// and /v1/tools: each is under the public URL and answers an SVG image
// (well-formed XML) from the server itself, and nothing names the domain of
// the registry's data, which nobody runs.
func TestEveryLogoURIResolves(t *testing.T) {
	reg, cat := testCatalog(t)
	const public = "https://swap.example/base"
	s, err := New(DefaultConfig(), Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), PublicURL: func() string { return public + "/" }})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	collect := func(v any) {
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if k == "logoURI" {
						uris = append(uris, e.(string))
					}
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	}
	for _, path := range []string{"/v1/chains", "/v1/tokens", "/v1/tools"} {
		ctx := serve(s, "GET", path, "127.0.0.1:5000", nil)
		var body any
		if err := json.Unmarshal(ctx.Response.Body(), &body); err != nil || ctx.Response.StatusCode() != 200 {
			t.Fatalf("%s: %d %v", path, ctx.Response.StatusCode(), err)
		}
		collect(body)
	}
	if len(uris) < len(reg.Chains())+len(cat.All()) {
		t.Fatalf("only %d logoURIs", len(uris))
	}
	seen := map[string]bool{}
	for _, u := range uris {
		if seen[u] {
			continue
		}
		seen[u] = true
		rest, ok := strings.CutPrefix(u, public+"/logos/")
		if !ok {
			t.Errorf("%s is not a logo under the public URL", u)
			continue
		}
		ctx := serve(s, "GET", "/logos/"+rest, "127.0.0.1:5000", nil)
		if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.ContentType()) != "image/svg+xml" {
			t.Errorf("%s: %d %s", u, ctx.Response.StatusCode(), ctx.Response.Header.ContentType())
			continue
		}
		if err := xml.Unmarshal(ctx.Response.Body(), new(struct{})); err != nil || !strings.HasPrefix(string(ctx.Response.Body()), "<svg ") {
			t.Errorf("%s is not an SVG document: %v\n%s", u, err, ctx.Response.Body())
		}
		if csp := string(ctx.Response.Header.Peek("Content-Security-Policy")); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", u, csp)
		}
	}
}

func TestLogoRequests(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	usdc := "0xaf88d065e77c8cc2239327c5edb3a432268e5831"
	sui := "/logos/tokens/9270000000000000/" + url.PathEscape("0x2::sui::sui") + ".svg"
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"a token, lower case", "/logos/tokens/42161/" + usdc + ".svg", 200},
		{"a token, checksummed", "/logos/tokens/42161/0xaf88d065e77c8cC2239327C5EDb3A432268e5831.svg", 200},
		{"a non-EVM address, escaped", sui, 200},
		{"a chain", "/logos/chains/369.svg", 200},
		{"a tool", "/logos/tools/sbx-canal.svg", 200},
		{"an unknown token", "/logos/tokens/42161/0x0000000000000000000000000000000000000001.svg", 404},
		{"an unknown chain", "/logos/chains/424242.svg", 404},
		{"an unknown tool", "/logos/tools/sbx-nope.svg", 404},
		{"no .svg", "/logos/chains/1", 400},
		{"a chain that is not an id", "/logos/chains/eth.svg", 400},
		{"a chain id of 0", "/logos/tokens/0/native.svg", 400},
		{"a traversal", "/logos/tools/..%2F..%2Fv1%2Fping.svg", 400},
		{"an encoded slash", "/logos/tools/a%2Fb.svg", 400},
		{"a bad escape", "/logos/tools/a%zz.svg", 400},
	} {
		ctx := serve(s, "GET", tc.path, "127.0.0.1:5000", nil)
		if got := ctx.Response.StatusCode(); got != tc.status {
			t.Errorf("%s: %s answered %d, want %d: %s", tc.name, tc.path, got, tc.status, ctx.Response.Body())
		}
	}
}

// TestLiveTokenLogoIsTheSources: a token whose live price source has an
// image of it shows that image; the others keep the served drawing.
func TestLiveTokenLogoIsTheSources(t *testing.T) {
	reg, cat := testCatalog(t)
	usdc := "0xaf88d065e77c8cc2239327c5edb3a432268e5831"
	img := "https://static.example/usdc.png"
	s, err := New(DefaultConfig(), Deps{Registry: reg, Tools: cat, RefData: liveLogoRefData{addr: usdc, logo: img}, Partners: noPartners{},
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), PublicURL: func() string { return "http://sg.test" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := serve(s, "GET", "/v1/tokens?chains=42161", "127.0.0.1:5000", nil)
	var body struct {
		Data struct {
			Tokens map[string][]struct {
				Address, LogoURI, PriceUSD string
			} `json:"tokens"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ctx.Response.Body(), &body); err != nil {
		t.Fatal(err)
	}
	toks := body.Data.Tokens["42161"]
	if len(toks) == 0 {
		t.Fatalf("no tokens: %s", ctx.Response.Body())
	}
	for _, tok := range toks {
		if strings.EqualFold(tok.Address, usdc) {
			if tok.LogoURI != img || tok.PriceUSD != "0.99985" {
				t.Errorf("USDC: logo %q price %q, want the source's", tok.LogoURI, tok.PriceUSD)
			}
			continue
		}
		if !strings.HasPrefix(tok.LogoURI, "http://sg.test/logos/tokens/42161/") || tok.PriceUSD != "" {
			t.Errorf("%s: logo %q price %q, want the served drawing and no price", tok.Address, tok.LogoURI, tok.PriceUSD)
		}
	}
}

// TestDrawLogoEscapes: a symbol with markup in it stays text, and the same
// asset is drawn the same way every time.
func TestDrawLogoEscapes(t *testing.T) {
	for _, tc := range []struct{ label, want string }{
		{`<a&"b>`, `&lt;a&amp;&#34;b`},
		{"USDC", ">USDC<"},
		{"ABCDEFG", ">ABCDE<"},
		{"é✓\x01", ">é✓\uFFFD<"},
	} {
		svg := string(drawLogo(tc.label, "coin:X"))
		if !strings.Contains(svg, tc.want) {
			t.Errorf("drawLogo(%q) = %s, want it to hold %q", tc.label, svg, tc.want)
		}
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Errorf("drawLogo(%q) is not well-formed: %v", tc.label, err)
		}
		if string(drawLogo(tc.label, "coin:X")) != svg {
			t.Errorf("drawLogo(%q) is not deterministic", tc.label)
		}
	}
	if string(drawLogo("USDC", "coin:USDC")) == string(drawLogo("USDC", "coin:USDT")) {
		t.Error("two assets drawn in the same colour")
	}
}
