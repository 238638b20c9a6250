package admin

import (
	"fmt"
	"net/http/pprof"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
	"github.com/valyala/fasthttp/pprofhandler"
)

// RegisterPprof serves Go's profiles under /debug/pprof/ on the admin
// listener: loopback only and behind the admin token, never on the public
// listener, since a profile shows the service's internals and a CPU
// profile costs the service while it runs. Fetch one with the token from
// the data directory's admin.json, for example
//
//	curl -H "Authorization: Bearer $TOKEN" "http://$ADDR/debug/pprof/profile?seconds=10" > cpu.pprof
//
// Mutex and block profiles record only when their rates are set at start
// (--pprof-mutex-fraction, --pprof-block-rate).
//
// The index at /debug/pprof/ is net/http/pprof's own: fasthttp's handler
// (v1.74) answers 404 to every path ending in a slash, the index's
// included, so it serves only the named profiles.
func RegisterPprof(s *Server) error {
	for _, r := range []struct {
		path string
		h    fasthttp.RequestHandler
	}{
		{"/debug/pprof/", fasthttpadaptor.NewFastHTTPHandlerFunc(pprof.Index)},
		{"/debug/pprof/{profile:*}", pprofhandler.PprofHandler},
	} {
		if err := s.Handle("GET", r.path, r.h); err != nil {
			return fmt.Errorf("admin: pprof: %w", err)
		}
	}
	return nil
}
