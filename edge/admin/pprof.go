package admin

import (
	"fmt"

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
func RegisterPprof(s *Server) error {
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/{profile:*}"} {
		if err := s.Handle("GET", path, pprofhandler.PprofHandler); err != nil {
			return fmt.Errorf("admin: pprof: %w", err)
		}
	}
	return nil
}
