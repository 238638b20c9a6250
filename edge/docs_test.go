package edge

import (
	"io"
	"regexp"
	"strings"
	"testing"
)

// TestDocsPageIsSameOrigin checks that GET /docs is an HTML page whose
// every script, stylesheet and link target is this origin's (relative, no
// scheme, no host; the empty data: icon aside), under a Content-Security-Policy that allows script only
// from this origin and no inline script, and that every asset it names is
// served with a JavaScript type.
func TestDocsPageIsSameOrigin(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	ctx := serve(s, "GET", "/docs", "127.0.0.1:5000", nil)
	if ctx.Response.StatusCode() != 200 || !strings.HasPrefix(string(ctx.Response.Header.ContentType()), "text/html") {
		t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Header.ContentType())
	}
	csp := string(ctx.Response.Header.Peek("Content-Security-Policy"))
	for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-eval") || strings.Contains(strings.SplitN(strings.SplitN(csp, "script-src", 2)[1], ";", 2)[0], "unsafe-inline") {
		t.Errorf("CSP %q allows inline or evaluated script", csp)
	}
	page := string(ctx.Response.Body())
	if strings.Contains(page, "<script>") || strings.Contains(page, "<style") || regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
		t.Errorf("the page has inline script or style:\n%s", page)
	}
	refs := regexp.MustCompile(`(?:src|href|data-spec-url)="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("the page names %d resources:\n%s", len(refs), page)
	}
	scripts := 0
	for _, m := range refs {
		ref := m[1]
		if ref == "data:," {
			continue // the empty icon, which spares a request for /favicon.ico
		}
		if strings.Contains(ref, "//") || strings.Contains(ref, ":") || strings.HasPrefix(ref, "/") {
			t.Errorf("the page refers to %q, which is not relative to its own origin", ref)
			continue
		}
		asset := serve(s, "GET", "/"+ref, "127.0.0.1:5000", nil)
		if asset.Response.StatusCode() != 200 {
			t.Errorf("%s: %d", ref, asset.Response.StatusCode())
			continue
		}
		if strings.HasSuffix(ref, ".js") {
			scripts++
			if ct := string(asset.Response.Header.ContentType()); !strings.HasPrefix(ct, "text/javascript") {
				t.Errorf("%s is served as %q", ref, ct)
			}
		}
	}
	if scripts != 2 {
		t.Errorf("the page loads %d scripts, want the renderer and its own", scripts)
	}
	if c := serve(s, "GET", "/docs/openapi.go", "127.0.0.1:5000", nil); c.Response.StatusCode() != 404 {
		t.Errorf("a file outside the reference's assets: %d", c.Response.StatusCode())
	}
}
