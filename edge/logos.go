package edge

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Logos. Every logoURI the service answers with must load: the registry's
// own image addresses point at a domain nobody runs, so the edge draws a
// logo for each registry token, chain and tool itself (the symbol on a
// coloured disc, the colour a hash of the asset's key so that USDC is the
// same colour on every chain) and serves it under /logos/, outside /v1 and
// its document, like the checkout pages and the rendered reference:
//
//	GET /logos/tokens/{chainId}/{address}.svg
//	GET /logos/chains/{chainId}.svg
//	GET /logos/tools/{key}.svg
//
// The logoURI fields name these through Deps.PublicURL, the address users'
// browsers reach the service at. Where a live price source knows the
// token's own image (the aggregator's token list), the token's logoURI is
// that image instead.

// logoPrefix starts every logo path.
const logoPrefix = "/logos/"

// logoHeaders go on every logo: an SVG is a document that could carry
// script, so it may run none and load nothing, and may not be sniffed as
// anything else.
var logoHeaders = [...][2]string{
	{"Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Cache-Control", "public, max-age=86400"},
}

// logoSet is every logo the edge serves, drawn once at start, keyed by its
// path under /logos/.
type logoSet struct {
	byPath map[string][]byte
}

// newLogoSet draws the logos of the registry's tokens and chains and the
// catalog's tools.
func newLogoSet(reg *registry.Registry, cat *tools.Catalog) *logoSet {
	ls := &logoSet{byPath: map[string][]byte{}}
	for _, c := range reg.Chains() {
		ls.byPath[chainLogoPath(c.ID)] = drawLogo(strings.ToUpper(c.Key), "chain:"+c.Key)
		for _, t := range reg.Tokens(c.ID) {
			key := t.CoinKey
			if key == "" {
				key = strconv.FormatUint(t.ChainID, 10) + ":" + strings.ToLower(t.Address)
			}
			ls.byPath[tokenLogoPath(t)] = drawLogo(t.Symbol, "coin:"+key)
		}
	}
	if cat != nil {
		for _, t := range cat.All() {
			ls.byPath[toolLogoPath(t.Key)] = drawLogo(initials(t.Name, t.Key), "tool:"+t.Key)
		}
	}
	return ls
}

// tokenLogoPath, chainLogoPath and toolLogoPath are the logos' paths under
// /logos/. A token's address is taken in lower case (its EVM spellings
// agree) and escaped, since non-EVM addresses may hold any character.
func tokenLogoPath(t *registry.Token) string {
	return "tokens/" + strconv.FormatUint(t.ChainID, 10) + "/" + url.PathEscape(strings.ToLower(t.Address)) + ".svg"
}

func chainLogoPath(id uint64) string { return "chains/" + strconv.FormatUint(id, 10) + ".svg" }

func toolLogoPath(key string) string { return "tools/" + url.PathEscape(key) + ".svg" }

// logoURL is the absolute address of a logo path.
func (s *Server) logoURL(path string) string {
	base := ""
	if s.deps.PublicURL != nil {
		base = strings.TrimRight(s.deps.PublicURL(), "/")
	}
	return base + logoPrefix + path
}

// serverLogos names logos for the reference cache.
type serverLogos struct{ s *Server }

func (l serverLogos) tokenLogo(t *registry.Token, logos map[string]string) string {
	return l.s.tokenLogo(t, logos)
}
func (l serverLogos) chainLogo(id uint64) string { return l.s.logoURL(chainLogoPath(id)) }
func (l serverLogos) toolLogo(key string) string { return l.s.logoURL(toolLogoPath(key)) }

// tokenLogo is a token's logoURI: the live source's image where the price
// snapshot carries one, the edge's own drawing otherwise.
func (s *Server) tokenLogo(t *registry.Token, logos map[string]string) string {
	if u, ok := logos[lowerASCII(t.Address)]; ok {
		return u
	}
	return s.logoURL(tokenLogoPath(t))
}

// logoRoutes registers the logos. They count against no bucket: each is a
// map lookup of bytes drawn at start, and a page of token logos is dozens
// of requests from one browser.
func (s *Server) logoRoutes() {
	s.Handle("GET", "/logos/tokens/{chainId}/{file}", route{name: "logo"}, s.logo)
	s.Handle("GET", "/logos/chains/{file}", route{name: "logo"}, s.logo)
	s.Handle("GET", "/logos/tools/{file}", route{name: "logo"}, s.logo)
}

// logo answers one logo by its path; an unknown one is 404 NOT_FOUND.
func (s *Server) logo(r *Request) error {
	path := string(r.Ctx.Path())
	// The router matched the decoded path; the set is keyed by the escaped
	// one, as logoURI writes it.
	rel, ok := strings.CutPrefix(string(r.Ctx.Request.URI().PathOriginal()), logoPrefix)
	if !ok {
		rel = strings.TrimPrefix(path, logoPrefix)
	}
	b, ok := s.logos.byPath[rel]
	if !ok {
		b, ok = s.logos.byPath[escapeLogoPath(strings.TrimPrefix(path, logoPrefix))]
	}
	if !ok {
		return apierr.New(apierr.NotFound, "no such logo: "+path)
	}
	r.Ctx.SetStatusCode(statusOK)
	r.Ctx.Response.Header.SetContentType("image/svg+xml")
	r.Ctx.Response.Header.SetBytesKV(headerRequestID, r.ID[:])
	for _, h := range logoHeaders {
		r.Ctx.Response.Header.Set(h[0], h[1])
	}
	r.Ctx.Response.SetBodyRaw(b)
	return nil
}

// escapeLogoPath escapes each segment of a decoded path as logoURI does,
// lower-casing a token's address.
func escapeLogoPath(p string) string {
	segs := strings.Split(p, "/")
	if len(segs) == 3 && segs[0] == "tokens" {
		segs[2] = strings.ToLower(segs[2])
	}
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

// initials are up to three capitals from a tool's name ("Sandbox Canal
// Bridge" is SCB), or from its key when the name has none.
func initials(name, key string) string {
	var b strings.Builder
	for _, w := range strings.Fields(name) {
		r, _ := utf8.DecodeRuneInString(w)
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToUpper(r))
		}
		if b.Len() >= 3 {
			break
		}
	}
	if b.Len() == 0 {
		return strings.ToUpper(key)
	}
	return b.String()
}

// drawLogo draws a 64×64 SVG: label, at most five characters of it, in
// white on a disc whose colour is a hash of key. The label is escaped as
// XML text, so that no symbol can break out of the document.
func drawLogo(label, key string) []byte {
	runes := []rune(label)
	if len(runes) > 5 {
		runes = runes[:5]
	}
	size := 40
	switch n := len(runes); {
	case n == 4:
		size = 30
	case n >= 5:
		size = 24
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	sum := h.Sum32()
	hue := float64(sum % 360)
	var text bytes.Buffer
	_ = xml.EscapeText(&text, []byte(string(runes)))
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 100 100">`+
		`<circle cx="50" cy="50" r="50" fill="%s"/>`+
		`<text x="50" y="50" dy="0.35em" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-weight="bold" font-size="%d" fill="#ffffff">%s</text>`+
		`</svg>`+"\n", hslHex(hue, 0.55, 0.42), size, text.String())
	return b.Bytes()
}

// hslHex converts a colour from hue (degrees), saturation and lightness
// (fractions) to #rrggbb.
func hslHex(h, s, l float64) string {
	c := (1 - abs(2*l-1)) * s
	hp := h / 60
	x := c * (1 - abs(mod2(hp)-1))
	var r, g, b float64
	switch {
	case hp < 1:
		r, g = c, x
	case hp < 2:
		r, g = x, c
	case hp < 3:
		g, b = c, x
	case hp < 4:
		g, b = x, c
	case hp < 5:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	to := func(v float64) int { return int((v+m)*255 + 0.5) }
	return fmt.Sprintf("#%02x%02x%02x", to(r), to(g), to(b))
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// mod2 is v modulo 2 for v ≥ 0.
func mod2(v float64) float64 { return v - 2*float64(int(v/2)) }
