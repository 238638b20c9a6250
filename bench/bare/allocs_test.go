//go:build !race

package bare

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestHandlerAllocatesNothing is built only without the race detector,
// whose instrumentation allocates: make test runs it in a pass of its own
// without -race (the Makefile's NORACE_PKGS and NORACE_TESTS), so that
// the race pass has nothing to skip.
func TestHandlerAllocatesNothing(t *testing.T) {
	h := Handler(Config{Version: "1.0.0", Mode: "sandbox"})
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(fasthttp.MethodGet)
	ctx.Request.SetRequestURI("/v1/ping")
	allocs := testing.AllocsPerRun(200, func() { h(&ctx) })
	if allocs > 0 {
		t.Fatalf("%v allocations per ping", allocs)
	}
}
