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
	s.Handle("GET", "/logos/tokens/{chainId}/{file}", route{name: "logo"}, s.logo(logoToken))
	s.Handle("GET", "/logos/chains/{file}", route{name: "logo"}, s.logo(logoChain))
	s.Handle("GET", "/logos/tools/{file}", route{name: "logo"}, s.logo(logoTool))
}

// Kinds of logo.
const (
	logoToken = iota
	logoChain
	logoTool
)

// maxLogoStem bounds a logo's file name: longer than any address or tool
// key the registry holds.
const maxLogoStem = 200

// logo answers the logos of one kind. A file name that cannot name a logo
// (no .svg, a separator, a control character, invalid UTF-8, overlong) is
// INVALID_PARAMS naming it; a well-formed one that names none is 404
// NOT_FOUND.
func (s *Server) logo(kind int) handlerFunc {
	return func(r *Request) error {
		// The router hands the value as sent: escaped, as logoURI writes it.
		file, _ := r.Ctx.UserValue("file").(string)
		stem, ok := strings.CutSuffix(file, ".svg")
		if ok {
			var err error
			stem, err = url.PathUnescape(stem)
			ok = err == nil
		}
		if !ok || !logoStem(stem) {
			return apierr.Param("file", "a logo's file name: the token's address, chain's id or tool's key, then .svg").With("value", truncateValue(file))
		}
		var key string
		switch kind {
		case logoToken:
			raw, _ := r.Ctx.UserValue("chainId").(string)
			id, err := strconv.ParseUint(raw, 10, 64)
			if err != nil || id == 0 {
				return apierr.Param("chainId", "chainId must be a chain ID (a positive integer)").With("value", truncateValue(raw))
			}
			key = "tokens/" + strconv.FormatUint(id, 10) + "/" + url.PathEscape(strings.ToLower(stem)) + ".svg"
		case logoChain:
			id, err := strconv.ParseUint(stem, 10, 64)
			if err != nil || id == 0 {
				return apierr.Param("file", "a chain's logo is its chain ID (a positive integer), then .svg").With("value", truncateValue(file))
			}
			key = chainLogoPath(id)
		default:
			key = toolLogoPath(stem)
		}
		b, ok := s.logos.byPath[key]
		if !ok {
			return apierr.New(apierr.NotFound, "no such logo: "+truncateValue(string(r.Ctx.Path())))
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
}

// logoStem reports whether a file name's stem can name a logo: valid
// UTF-8, printable, no path separator, not starting with a dot, bounded.
func logoStem(stem string) bool {
	if stem == "" || len(stem) > maxLogoStem || stem[0] == '.' || !utf8.ValidString(stem) {
		return false
	}
	for _, c := range stem {
		if c == '/' || c == '\\' || !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// truncateValue bounds an echoed value.
func truncateValue(v string) string {
	if len(v) > 64 {
		return strings.ToValidUTF8(v[:64], "") + "…"
	}
	return strings.ToValidUTF8(v, "\uFFFD")
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
