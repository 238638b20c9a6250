package edge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// QuoteStreamer is the quote engine's race as the streamed quote sees it:
// Stream races like QuoteService.Quote and calls onRoute, on the calling
// goroutine, once per candidate route as its leg answers, already built
// (the route /v1/routes would list; a route whose build fails is not
// passed), then returns the chosen quote exactly as Quote does: recorded in
// the partner's ledger, its ticket kept.
type QuoteStreamer interface {
	Stream(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error)
}

// The events of GET /v1/quote/stream, in the order they come: a route per
// candidate, then best or error, then done, always last.
const (
	EventRoute = "route"
	EventBest  = "best"
	EventError = "error"
	EventDone  = "done"
)

var (
	contentTypeEventStream = []byte("text/event-stream")
	headerCacheControl     = []byte("Cache-Control")
	valueNoCache           = []byte("no-cache")
	// headerAccelBuffering asks a reverse proxy (nginx and the proxies
	// that read the same header) not to buffer the stream.
	headerAccelBuffering = []byte("X-Accel-Buffering")
	valueNo              = []byte("no")
)

// errClientGone is the cause of a streamed race cancelled because its
// client went away.
var errClientGone = errors.New("edge: the stream's client went away")

// quoteStream answers GET /v1/quote/stream: the quote's race as
// Server-Sent Events. Everything decided before the race — authentication,
// the rate limit (one heavy request), a repeated or invalid parameter — is
// refused by the handler chain as on /v1/quote, in the JSON envelope with
// its status; once the parameters are valid the answer is 200
// text/event-stream, and what the quote engine decides from there (the fee
// policy, the race, the record of the quote) comes as events: a route
// event per candidate as its leg answers (one /v1/routes item, without
// tags, which rank the whole set), then either best (the /v1/quote data of
// the quote recorded and issued) or error (the envelope's error object,
// whose code says what /v1/quote would have answered), then done
// ({routes, meta}, the envelope's meta). A client that goes away cancels
// the race: nothing is recorded for it.
//
// The handler returns once the stream is set up; fasthttp then runs the
// stream writer on a goroutine of its own, after the handler chain has put
// the pooled Request back, so the writer keeps copies of what it needs (the
// parsed request, the partner, the request id, time and rate-limit
// decision, the connection).
func (s *Server) quoteStream(r *Request) error {
	req, ctx, cancel, err := s.quoteRequest(r)
	if err != nil {
		return err
	}
	st := &streamedQuote{s: s, req: req, partner: r.Partner, ctx: ctx, cancel: cancel,
		meta: Request{ID: r.ID, Now: r.Now, Rate: r.Rate}, start: r.start, conn: watchable(r.Ctx.Conn())}
	beginEventStream(r, st.run)
	return nil
}

// beginEventStream answers r with 200 and an event stream that write
// produces on its own goroutine once the handler returns.
func beginEventStream(r *Request, write fasthttp.StreamWriter) {
	r.Ctx.SetStatusCode(statusOK)
	h := &r.Ctx.Response.Header
	h.SetContentTypeBytes(contentTypeEventStream)
	h.SetBytesKV(headerRequestID, r.ID[:])
	h.SetBytesKV(headerCacheControl, valueNoCache)
	h.SetBytesKV(headerAccelBuffering, valueNo)
	// Nothing else is read from the connection once the stream starts (the
	// client watch reads it for its end), so it closes after the stream.
	h.SetConnectionClose()
	// The headers go out at once: the client knows the stream started.
	r.Ctx.Response.ImmediateHeaderFlush = true
	r.streaming = true
	r.Ctx.SetBodyStreamWriter(write)
}

// streamedQuote is one stream's state, owned by its writer goroutine.
type streamedQuote struct {
	s       *Server
	req     *quote.Request
	partner *account.Partner
	ctx     context.Context
	cancel  context.CancelFunc
	// meta holds the request's id, time and rate-limit decision, for the
	// done event's meta.
	meta  Request
	start time.Time
	// conn is the client's connection when it can be watched (see
	// watchable), nil otherwise.
	conn net.Conn

	w   *bufio.Writer
	buf []byte
	// routes counts the route events sent.
	routes int
	// lost is set once a write failed or the watch saw the connection end:
	// nothing more is written.
	lost bool
	gone context.CancelCauseFunc
}

// run is the stream writer: it races, writing each event as it comes.
func (st *streamedQuote) run(w *bufio.Writer) {
	st.w = w
	ctx, gone := context.WithCancelCause(st.ctx)
	st.gone = gone
	defer func() {
		if p := recover(); p != nil {
			st.s.log.Error("panic in quote stream", slog.String("requestId", string(st.meta.ID[:])),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			st.fail(apierr.New(apierr.Internal, "internal error"))
			st.done()
		}
		gone(nil)
		st.cancel()
		st.s.metrics.observe(routeQuoteStream, statusOK, time.Since(st.start))
	}()
	stopWatch := watchClient(st.conn, gone)
	defer stopWatch()

	checksBy := time.Now().Add(st.s.deps.Quotes.Deadline())
	is, err := st.s.deps.QuoteStream.Stream(ctx, st.req, st.partner, st.route)
	if st.lost || errors.Is(context.Cause(ctx), errClientGone) {
		st.lost = true
		st.s.log.Debug("quote stream: the client went away", slog.String("requestId", string(st.meta.ID[:])),
			slog.Int("routes", st.routes))
		return
	}
	if err != nil {
		st.fail(apierr.From(err))
	} else {
		st.best(ctx, checksBy, is)
	}
	st.done()
}

// route sends one candidate as it comes: Shape A, as /v1/routes lists it.
func (st *streamedQuote) route(rt *quote.Route) {
	if st.lost {
		return
	}
	st.buf = quote.AppendShapeA(st.begin(EventRoute), st.s.livePrices, st.req, rt, st.req.Now.Add(quote.TTL).Unix())
	st.routes++
	st.send()
}

// best sends the quote recorded and issued, as /v1/quote's data, its
// wallet checked as /v1/quote's is (preflight) by the quote's deadline.
func (st *streamedQuote) best(ctx context.Context, checksBy time.Time, is *quote.Issued) {
	is = st.s.withPreflight(ctx, checksBy, st.req, is)
	b, err := quote.AppendResponse(st.begin(EventBest), st.s.livePrices, st.req, is)
	if err != nil {
		st.fail(apierr.From(err))
		return
	}
	st.buf = b
	st.send()
}

// fail sends the error that ended the stream, as the envelope's error.
func (st *streamedQuote) fail(e *apierr.Error) {
	st.s.logFailure(st.meta.ID[:], routeQuoteStream, e)
	st.buf = appendErrorObject(st.begin(EventError), e)
	st.send()
}

// done closes the stream: how many routes were sent and the meta an
// envelope would have carried.
func (st *streamedQuote) done() {
	b := append(st.begin(EventDone), `{"routes":`...)
	b = strconv.AppendInt(b, int64(st.routes), 10)
	b = append(b, `,"meta":`...)
	b = appendMeta(b, &st.meta)
	st.buf = append(b, '}')
	st.send()
}

// begin starts an event in the stream's buffer, positioned where its data
// goes. Data is always one line of JSON (the appenders escape line breaks
// in strings), so one data field carries it.
func (st *streamedQuote) begin(event string) []byte {
	b := append(st.buf[:0], "event: "...)
	b = append(b, event...)
	return append(b, "\ndata: "...)
}

// send ends the event in the buffer and flushes it to the client. A
// failed write means the client is gone: the race is cancelled.
func (st *streamedQuote) send() {
	if st.lost {
		return
	}
	st.buf = append(st.buf, "\n\n"...)
	if st.conn != nil && st.s.cfg.WriteTimeout > 0 {
		// The write timeout bounds each event's write, not the whole
		// stream, which may outlast it (a long quote deadline).
		_ = st.conn.SetWriteDeadline(time.Now().Add(st.s.cfg.WriteTimeout))
	}
	if _, err := st.w.Write(st.buf); err == nil {
		err = st.w.Flush()
		if err == nil {
			return
		}
	}
	st.lost = true
	st.gone(errClientGone)
}

// routeQuoteStream is the route's name in the metrics.
const routeQuoteStream = "quote-stream"

// watchable returns conn when it is a socket the stream can watch for its
// end, nil otherwise (a RequestCtx made without a connection, in tests).
func watchable(conn net.Conn) net.Conn {
	if _, ok := conn.(syscall.Conn); ok {
		return conn
	}
	return nil
}

// watchClient cancels the stream's race, with errClientGone, as soon as
// the client's connection ends, without waiting for the next event's write
// to fail: it reads from the connection, which fasthttp no longer reads
// once the request is in and the answer closes (net/http's background read
// does the same). Bytes a client sends meanwhile are dropped: the
// connection closes after the stream. The returned stop ends the watch and
// waits for it, so that it never reads past the stream.
func watchClient(conn net.Conn, gone context.CancelCauseFunc) (stop func()) {
	if conn == nil {
		return func() {}
	}
	var mu sync.Mutex
	stopped := false
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		var b [256]byte
		for {
			_, err := conn.Read(b[:])
			if err == nil {
				continue
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// fasthttp's read deadline for the request, which the
				// stream may outlast, or stop's.
				mu.Lock()
				if stopped {
					mu.Unlock()
					return
				}
				err = conn.SetReadDeadline(time.Time{})
				mu.Unlock()
				if err == nil {
					continue
				}
			}
			gone(fmt.Errorf("%w: %w", errClientGone, err))
			return
		}
	}()
	return func() {
		mu.Lock()
		stopped = true
		_ = conn.SetReadDeadline(aLongTimeAgo)
		mu.Unlock()
		<-exited
	}
}

// aLongTimeAgo is a deadline in the past: it unblocks a read at once.
var aLongTimeAgo = time.Unix(1, 0)
