// Package kit is what the local upstream stand-ins share: the per-request
// latency that stands for the network and the upstream's own work, a
// loopback test server to run a stand-in on, and the price table the
// stand-ins quote from.
//
// The stand-ins (internal/standin/lifi, oneclick, evmrpc) answer the real
// upstreams' wire shapes, deterministically, from the request alone and what
// a test registered, so that end-to-end tests and the bench can run the
// server in live mode on one machine without the internet.
package kit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"
)

// Latency is a stand-in's answer delay: every request waits this long
// before it is answered, as a real upstream's round trip and work would
// take. It may be changed while the stand-in serves. The zero value is no
// delay.
type Latency struct{ ns atomic.Int64 }

// NewLatency returns a latency of d.
func NewLatency(d time.Duration) *Latency {
	l := &Latency{}
	l.Set(d)
	return l
}

// Set changes the delay of the requests that arrive from now on.
func (l *Latency) Set(d time.Duration) { l.ns.Store(int64(max(d, 0))) }

// Get returns the current delay.
func (l *Latency) Get() time.Duration { return time.Duration(l.ns.Load()) }

// Wait sleeps for the delay, or until ctx ends (the client gave up); it
// reports whether the whole delay passed.
func (l *Latency) Wait(ctx context.Context) bool {
	d := l.Get()
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Delayed wraps h so that every request waits for l first; a request whose
// client went away meanwhile is not answered.
func Delayed(l *Latency, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.Wait(r.Context()) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Start serves h on a fresh loopback port (httptest binds 127.0.0.1). The
// caller closes the server; its URL has no trailing slash.
func Start(h http.Handler) *httptest.Server {
	return httptest.NewServer(h)
}
