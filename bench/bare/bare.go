// Package bare is the bare-server limit of the bench suite: a fasthttp
// server configured as Swapgate's edge is (same server name, timeouts and
// body limit) that answers GET /v1/ping with exactly the bytes Swapgate's
// ping answers (status, Server, Date, Content-Type, Content-Length and
// X-Request-Id headers, and the same envelope with a fresh request id and
// the current time) and does nothing else: no router, no authentication, no
// rate limit, no metrics. Whatever rate it sustains on a machine is the most
// any fasthttp service answering those bytes can sustain there, which is the
// yardstick the suite divides Swapgate's figures by.
//
// It is started as `swapgate bench-bare` (see cmd/swapgate), so that the
// suite runs it from the one binary it already builds, as a process of its
// own whose CPU and memory can be read from /proc like Swapgate's.
package bare

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/internal/uuid"
)

// Config is what the answers and the server settings copy from Swapgate.
type Config struct {
	// Version and Mode are the ping body's "version" and "mode" values,
	// Swapgate's edge.Version and its mode ("sandbox" or "live").
	Version, Mode string
	// ReadTimeout, WriteTimeout and IdleTimeout are the edge's; zero takes
	// its defaults (10 s, 10 s, 60 s).
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxRequestBodySize is the edge's body limit; zero takes 64 KiB.
	MaxRequestBodySize int
	// Now is the clock of the body's timestamps; nil means time.Now.
	Now func() time.Time
}

// ServerName is the Server header Swapgate answers with.
const ServerName = "swapgate"

// NewServer returns the fasthttp server, configured as edge.New configures
// Swapgate's, with Handler as its handler.
func NewServer(cfg Config) *fasthttp.Server {
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	if cfg.MaxRequestBodySize == 0 {
		cfg.MaxRequestBodySize = 64 << 10
	}
	return &fasthttp.Server{
		Handler:               Handler(cfg),
		Name:                  ServerName,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		MaxRequestBodySize:    cfg.MaxRequestBodySize,
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
	}
}

// The answer's constants; strings, so that nothing at package level can be
// changed.
const (
	contentTypeJSON = "application/json"
	headerRequestID = "X-Request-Id"
	pathPing        = "/v1/ping"
)

// Handler answers GET /v1/ping as Swapgate does for a caller without a key
// (no rateLimit in meta: the anonymous ping is not counted) and anything
// else with Swapgate's 404 envelope. It builds each answer in a stack
// buffer, so that it allocates nothing: the cost measured is fasthttp's and
// the socket's, plus the request id's 16 random bytes that Swapgate draws
// too.
func Handler(cfg Config) fasthttp.RequestHandler {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	prefix := `{"data":{"status":"ok","version":"` + cfg.Version + `","timestamp":`
	mode := `,"mode":"` + cfg.Mode + `"},"error":null,"meta":{"requestId":"`
	return func(ctx *fasthttp.RequestCtx) {
		var id [36]byte
		uuid.NewV4(&id)
		var buf [512]byte
		b := buf[:0]
		ts := now().Unix()
		ctx.Response.Header.SetContentType(contentTypeJSON)
		ctx.Response.Header.SetBytesV(headerRequestID, id[:])
		if !ctx.IsGet() || string(ctx.Path()) != pathPing {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			b = append(b, `{"data":null,"error":{"code":"NOT_FOUND","message":"no such path"},"meta":{"requestId":"`...)
		} else {
			b = append(b, prefix...)
			b = strconv.AppendInt(b, ts, 10)
			b = append(b, mode...)
		}
		b = append(b, id[:]...)
		b = append(b, `","timestamp":`...)
		b = strconv.AppendInt(b, ts, 10)
		b = append(b, "}}"...)
		ctx.Response.SetBody(b)
	}
}
