package edge

import (
	"io/fs"
	"strings"

	"github.com/swapgate/swapgate/api"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// The rendered reference: GET /docs is a page that renders the document of
// /v1/openapi.json with Redoc, whose standalone bundle is vendored in
// api/docs (see its README for the package, its version and how to update
// it). Everything the page runs comes from this origin: the bundle and the
// page's own script are served under /docs/, and the page's
// Content-Security-Policy allows no other script, no inline script, and no
// connection but to this origin. Redoc inserts its styles as style elements
// and runs its search index in a worker it builds from a blob of its own
// code, so styles may be inline and workers may come from blob: URLs;
// nothing else is loosened. The page may not be framed.

// docsPage is the reference's HTML. Its links are relative to its own
// address, as the checkout page's are, so that it also works behind a proxy
// that serves the service under a path prefix.
const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Swapgate API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/docs.css">
</head>
<body>
<noscript>This reference is rendered with JavaScript. The document itself is at <a href="v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="redoc" data-spec-url="v1/openapi.json"></div>
<script src="docs/redoc.standalone.js"></script>
<script src="docs/docs.js"></script>
</body>
</html>
`

// docsHeaders go on the page and its assets.
var docsHeaders = [...][2]string{
	{"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"font-src 'self' data:; connect-src 'self'; worker-src blob:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "no-referrer"},
}

// docsAssets are the files served under /docs/, by name, with their types:
// the renderer, the page's script and stylesheet, and the renderer's
// licenses.
var docsAssets = map[string]string{
	"redoc.standalone.js":             "text/javascript; charset=utf-8",
	"docs.js":                         "text/javascript; charset=utf-8",
	"docs.css":                        "text/css; charset=utf-8",
	"redoc.standalone.js.LICENSE.txt": "text/plain; charset=utf-8",
	"LICENSE":                         "text/plain; charset=utf-8",
}

// docsRoutes registers the page and its assets in the read bucket. Their
// refusals (a rate limit, a refused key, an unknown file) are the JSON
// envelope, not pages: the checkout's refusal pages speak to a buyer, and
// this page's readers are developers.
func (s *Server) docsRoutes() {
	s.Handle("GET", "/docs", route{bucket: BucketRead, name: "docs"}, s.docsPage)
	s.Handle("GET", "/docs/{name}", route{bucket: BucketRead, name: "docs_asset"}, s.docsAsset)
}

func (s *Server) docsPage(r *Request) error {
	s.docsAnswer(r, contentTypeHTML, []byte(docsPage))
	r.Ctx.Response.Header.Set("Cache-Control", "no-cache")
	return nil
}

func (s *Server) docsAsset(r *Request) error {
	name, _ := r.Ctx.UserValue("name").(string)
	if !docsAssetName(name) {
		return apierr.Param("name", "not a file name: letters, digits, '.', '_' and '-', at most 64, not starting with '.'")
	}
	ct, ok := docsAssets[name]
	if !ok {
		return apierr.New(apierr.NotFound, "no such file: "+string(r.Ctx.Path()))
	}
	b, err := fs.ReadFile(api.Assets(), name)
	if err != nil {
		return apierr.New(apierr.Internal, "the reference's "+name+" is missing from the build").Wrap(err)
	}
	s.docsAnswer(r, ct, b)
	// The assets change only with a release; an hour spares a reader the
	// megabyte of the renderer on every visit.
	r.Ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
	return nil
}

func (s *Server) docsAnswer(r *Request, contentType string, body []byte) {
	r.Ctx.SetStatusCode(statusOK)
	r.Ctx.Response.Header.SetContentType(contentType)
	r.Ctx.Response.Header.SetBytesKV(headerRequestID, r.ID[:])
	for _, h := range docsHeaders {
		r.Ctx.Response.Header.Set(h[0], h[1])
	}
	if strings.HasPrefix(contentType, "text/html") {
		r.Ctx.Response.Header.Set("X-Frame-Options", "DENY")
	}
	r.Ctx.Response.SetBodyRaw(body)
}

// docsAssetName reports whether name can name a file of the reference: a
// plain name, so that anything else (a traversal, an encoded slash, a NUL)
// is refused as malformed rather than looked up.
func docsAssetName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
