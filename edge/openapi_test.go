package edge

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/swapgate/swapgate/api"
	"github.com/swapgate/swapgate/internal/apitest"
)

// TestOpenAPIDocumentServed checks that GET /v1/openapi.json answers the
// embedded document itself, anonymously, counted against the read bucket,
// and that what is served loads as a valid OpenAPI document.
func TestOpenAPIDocumentServed(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	ctx := serve(s, "GET", "/v1/openapi.json", "127.0.0.1:5000", nil)
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.ContentType()) != "application/json" ||
		len(ctx.Response.Header.Peek("X-Request-Id")) == 0 {
		t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Header.String())
	}
	body := ctx.Response.Body()
	var want bytes.Buffer
	if err := json.Compact(&want, api.Document()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want.Bytes()) {
		t.Fatal("the served document is not the embedded one")
	}
	c, err := apitest.Parse(body)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		t.Fatalf("the served document: %v", err)
	}
	tools := serve(s, "GET", "/v1/tools", "127.0.0.1:5000", nil)
	var env struct {
		Meta struct {
			RateLimit struct{ Limit, Remaining int }
		}
	}
	if err := json.Unmarshal(tools.Response.Body(), &env); err != nil {
		t.Fatal(err)
	}
	if rl := env.Meta.RateLimit; rl.Limit != 240 || rl.Remaining != 238 {
		t.Fatalf("the document counts against the anonymous read bucket: %+v after it and one read", rl)
	}
}
