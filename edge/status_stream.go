package edge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"runtime/debug"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// GET /v1/status/stream pushes a status as Server-Sent Events instead of
// making the client poll: ?txHash= follows a tracked swap (the data of
// GET /v1/status; with &fromChain=, a transaction broadcast without
// execute is found on its source chain and tracked, as there),
// ?depositAddress= (&depositMemo=) an intents deposit (the data of
// GET /v1/execute/deposit/status), ?orderUid= an on-ramp order (the data
// of GET /v1/onramp/status). Exactly one of the three.
//
// How it is fed: the stream polls the same readers the polled endpoint
// reads, every StatusStreamConfig.Poll (500 ms by default), and sends the
// data whenever its JSON changed. Polling the store, rather than
// subscribing to the trackers' transitions, works on every node of a
// cluster sharing the store, whichever node tracks the swap; the cost is
// one store read per open stream per interval, a change shown up to one
// interval late, and a state that lasted less than one interval seen only
// through the next one (an on-ramp order's history lists every state it
// went through; a swap's intermediate PENDING substatuses may be skipped).
// The terminal state is always sent.
//
// The events, in order:
//
//	status  the polled endpoint's data, first at once, then on every change
//	error   the envelope's error object, when the status cannot be read any
//	        more (the store failed StatusStreamConfig.MaxReadFailures times
//	        in a row)
//	done    always last: {reason, meta}; reason is "terminal" (the last
//	        status was terminal: a swap DONE or FAILED, a deposit SUCCESS,
//	        REFUNDED or FAILED, an order COMPLETED, FAILED, REFUNDED or
//	        EXPIRED), "horizon" (tracking gave up, or the stream reached
//	        its horizon: see below), "shutdown" (the server is stopping:
//	        reconnect) or "error"
//
// A comment line (": keep-alive") is sent every Heartbeat while nothing
// changes, so that proxies keep the connection open.
//
// Horizons: a stream outlives no tracking. A tracked swap or deposit is
// followed for the trackers' horizon from its creation (6 hours unless the
// operator's schedule says otherwise; past it the tracker stops polling
// and nothing changes any more) and the stream ends there, or as soon as
// the status shows tracking gave up (PENDING with UNKNOWN_ERROR). An order
// still CREATED ends at its expiry (with the EXPIRED the desk then
// applies, when it does so within a poll or two); a paid order is followed
// for the same horizon from its creation. A hash or deposit address with
// nothing tracked yet (NOT_FOUND, PENDING_DEPOSIT) is watched for
// UntrackedWait (10 minutes), time to report it with POST /v1/execute or
// deposit/submit, and the stream then goes on with the tracked horizon.
//
// Everything decided before the stream (authentication, the rate limit:
// one heavy request for the whole stream, the parameters, an unknown
// deposit address or order: 404 as on the polled endpoints) is the JSON
// envelope with its status.
const (
	EventStatus = "status"
	// EventError and EventDone are shared with the quote stream.
)

// Reasons a status stream ends with, in its done event.
const (
	StreamEndTerminal = "terminal"
	StreamEndHorizon  = "horizon"
	StreamEndShutdown = "shutdown"
	StreamEndError    = "error"
)

// StatusStreamConfig tunes the status streams; zero fields take the
// defaults of DefaultStatusStreamConfig.
type StatusStreamConfig struct {
	// Poll is how often a stream reads the status.
	Poll time.Duration
	// Heartbeat is how often a comment line is sent while nothing changes.
	Heartbeat time.Duration
	// Horizon is how long trackers follow a swap or deposit after its
	// creation (the tracker schedule's Horizon).
	Horizon time.Duration
	// UntrackedWait is how long a stream waits for a hash or deposit with
	// nothing tracked yet to be reported.
	UntrackedWait time.Duration
	// ExpiryGrace is how long past an order's expiry its stream waits for
	// the desk to mark it EXPIRED.
	ExpiryGrace time.Duration
	// MaxReadFailures is how many failed reads in a row end a stream with
	// an error event.
	MaxReadFailures int
}

// DefaultStatusStreamConfig polls every 500 ms, beats every 15 s, follows
// the default tracking horizon and waits 10 minutes for an untracked hash.
func DefaultStatusStreamConfig() StatusStreamConfig {
	return StatusStreamConfig{Poll: 500 * time.Millisecond, Heartbeat: 15 * time.Second,
		Horizon: swap.DefaultSchedule().Horizon, UntrackedWait: 10 * time.Minute, ExpiryGrace: 5 * time.Second,
		MaxReadFailures: 20}
}

func (c StatusStreamConfig) withDefaults() StatusStreamConfig {
	d := DefaultStatusStreamConfig()
	if c.Poll <= 0 {
		c.Poll = d.Poll
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = d.Heartbeat
	}
	if c.Horizon <= 0 {
		c.Horizon = d.Horizon
	}
	if c.UntrackedWait <= 0 {
		c.UntrackedWait = d.UntrackedWait
	}
	if c.ExpiryGrace <= 0 {
		c.ExpiryGrace = d.ExpiryGrace
	}
	if c.MaxReadFailures <= 0 {
		c.MaxReadFailures = d.MaxReadFailures
	}
	return c
}

// routeStatusStream is the route's name in the metrics.
const routeStatusStream = "status-stream"

// statusSnapshot is one read of a streamed status: the data as the polled
// endpoint answers it, whether it is final, and until when the stream may
// wait for the next change.
type statusSnapshot struct {
	data []byte
	// end is the reason to end after this snapshot ("" to go on).
	end string
	// until is the stream's horizon as of this read.
	until time.Time
}

// statusReader reads the followed status once; opened is when the
// stream opened, the origin of an untracked wait.
type statusReader func(ctx context.Context, opened time.Time) (statusSnapshot, error)

// statusStreamParams are the three ways to name what is followed.
var statusStreamParams = []string{"txHash", "depositAddress", "orderUid"}

// statusStream answers GET /v1/status/stream.
func (s *Server) statusStream(r *Request) error {
	read, err := s.statusReaderOf(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	first, err := read(ctx, r.Now)
	cancel()
	if err != nil {
		return err
	}
	st := &statusStreamer{s: s, read: read, last: first, opened: r.Now,
		meta: Request{ID: r.ID, Now: r.Now, Rate: r.Rate}, start: r.start, conn: watchable(r.Ctx.Conn())}
	beginEventStream(r, st.run)
	return nil
}

// statusReaderOf validates the parameters as the polled endpoint of the
// one given does, and returns its reader.
func (s *Server) statusReaderOf(r *Request) (statusReader, error) {
	var given []string
	for _, p := range statusStreamParams {
		if r.Ctx.QueryArgs().Has(p) {
			given = append(given, p)
		}
	}
	switch {
	case len(given) == 0:
		return nil, apierr.Param("txHash", "give one of txHash, depositAddress or orderUid: what to follow").
			With("params", statusStreamParams)
	case len(given) > 1:
		return nil, apierr.Param(given[1], "give only one of txHash, depositAddress or orderUid; "+given[0]+" and "+given[1]+" were given").
			With("params", given)
	}
	if r.Ctx.QueryArgs().Has("depositMemo") && given[0] != "depositAddress" {
		return nil, apierr.Param("depositMemo", "depositMemo goes with depositAddress only")
	}
	if r.Ctx.QueryArgs().Has("fromChain") && given[0] != "txHash" {
		return nil, apierr.Param("fromChain", "fromChain goes with txHash only")
	}
	switch given[0] {
	case "txHash":
		h, _ := query(r, "txHash")
		switch {
		case h == "":
			return nil, apierr.Param("txHash", "txHash is required")
		case !isTxHash(h):
			return nil, apierr.Param("txHash", "txHash must be 0x and 64 hex digits").With("value", h)
		}
		from, err := s.sourceChainParam(r)
		if err != nil {
			return nil, err
		}
		return s.swapStatusReader(h, from), nil
	case "depositAddress":
		if s.deps.DepositSwaps == nil || s.deps.DepositQuotes == nil {
			return nil, apierr.Param("depositAddress", "this server follows no intents deposits")
		}
		addr, _ := query(r, "depositAddress")
		if addr == "" {
			return nil, apierr.Param("depositAddress", "depositAddress is required")
		}
		memo, _ := query(r, "depositMemo")
		if err := textParam("depositMemo", memo, maxDepositMemo); err != nil {
			return nil, err
		}
		return s.depositStatusReader(addr, memo), nil
	default:
		if s.deps.Onramp == nil {
			return nil, apierr.Param("orderUid", "this server has no on-ramp")
		}
		uid := string(r.Ctx.QueryArgs().Peek("orderUid"))
		switch {
		case uid == "":
			return nil, apierr.Param("orderUid", "orderUid is required")
		case !onramp.ValidUID(uid):
			return nil, apierr.Param("orderUid", "orderUid is not an order uid (ord_ and 26 characters)").With("value", uid)
		}
		return s.orderStatusReader(uid), nil
	}
}

// trackedEnd is the end reason and horizon of a tracked swap or deposit.
func (s *Server) trackedEnd(sw *swap.Swap) (end string, until time.Time) {
	until = sw.CreatedAt.Add(s.cfg.StatusStream.Horizon)
	switch {
	case sw.Terminal():
		return StreamEndTerminal, until
	case sw.Status == swap.StatusPending && sw.Substatus == swap.UnknownError:
		// The tracker gave up at its horizon: nothing changes any more.
		return StreamEndHorizon, until
	}
	return "", until
}

// swapStatusReader reads a swap as GET /v1/status does. With from, a
// hash nothing tracks yet is looked for on that chain at every read (a
// node's couple of calls per poll interval, until it is found or the
// untracked wait ends) and tracked once it is a quote's transaction, as
// GET /v1/status?fromChain= does.
func (s *Server) swapStatusReader(hash string, from *registry.Chain) statusReader {
	return func(ctx context.Context, opened time.Time) (statusSnapshot, error) {
		sw, err := s.deps.Swaps.Swap(ctx, hash)
		if errors.Is(err, account.ErrNotFound) {
			view := statusView{Status: swap.StatusNotFound, SubstatusMessage: notFollowed}
			err = nil
			if from != nil {
				sw, view.QuoteID, view.SubstatusMessage, err = s.trackFromChain(ctx, from.ID, hash)
			}
			if err != nil {
				return statusSnapshot{}, err
			}
			if sw == nil {
				data, err := json.Marshal(view)
				return statusSnapshot{data: data, until: opened.Add(s.cfg.StatusStream.UntrackedWait)}, err
			}
		}
		if err != nil {
			return statusSnapshot{}, apierr.From(err)
		}
		data, err := json.Marshal(statusOf(sw))
		end, until := s.trackedEnd(sw)
		return statusSnapshot{data: data, end: end, until: until}, err
	}
}

// depositStatusReader reads an intents deposit as
// GET /v1/execute/deposit/status does.
func (s *Server) depositStatusReader(addr, memo string) statusReader {
	return func(ctx context.Context, opened time.Time) (statusSnapshot, error) {
		sw, err := s.deps.DepositSwaps.SwapByDeposit(ctx, addr, memo)
		if err == nil {
			data, err := json.Marshal(depositStatusOf(sw))
			end, until := s.trackedEnd(sw)
			return statusSnapshot{data: data, end: end, until: until}, err
		}
		if !errors.Is(err, account.ErrNotFound) {
			return statusSnapshot{}, apierr.From(err)
		}
		id, err := s.deps.DepositQuotes.QuoteByDeposit(ctx, addr, memo)
		if errors.Is(err, account.ErrNotFound) {
			e := apierr.Param("depositAddress", "no intents deposit is known at this address (and memo)").With("depositAddress", addr)
			e.Status = 404
			return statusSnapshot{}, e
		}
		if err != nil {
			return statusSnapshot{}, apierr.From(err)
		}
		data, err := json.Marshal(depositStatusView{Status: swap.DepositPending, DepositAddress: addr, DepositMemo: memo, QuoteID: id,
			Message: "no deposit reported yet: send the amount, then POST /v1/execute/deposit/submit with its transaction"})
		return statusSnapshot{data: data, until: opened.Add(s.cfg.StatusStream.UntrackedWait)}, err
	}
}

// orderStatusReader reads an on-ramp order as GET /v1/onramp/status does.
func (s *Server) orderStatusReader(uid string) statusReader {
	return func(ctx context.Context, _ time.Time) (statusSnapshot, error) {
		o, err := s.deps.Onramp.Order(ctx, uid)
		if errors.Is(err, account.ErrNotFound) {
			return statusSnapshot{}, (&apierr.Error{Code: apierr.NotFound, Message: "no order " + uid}).With("param", "orderUid")
		}
		if err != nil {
			return statusSnapshot{}, apierr.From(err)
		}
		data, err := json.Marshal(orderView(o))
		snap := statusSnapshot{data: data, until: o.CreatedAt.Add(s.cfg.StatusStream.Horizon)}
		switch {
		case o.State.Terminal():
			snap.end = StreamEndTerminal
		case o.State == onramp.Created:
			snap.until = o.ExpiresAt.Add(s.cfg.StatusStream.ExpiryGrace)
		}
		return snap, err
	}
}

// statusStreamer is one status stream's state, owned by its writer
// goroutine (which fasthttp runs after the handler chain put the pooled
// Request back: it keeps copies of what it needs).
type statusStreamer struct {
	s      *Server
	read   statusReader
	last   statusSnapshot
	opened time.Time
	meta   Request
	start  time.Time
	conn   net.Conn

	w    *bufio.Writer
	buf  []byte
	lost bool
}

// run is the stream writer: the first status at once, then a read every
// poll interval until an end.
func (st *statusStreamer) run(w *bufio.Writer) {
	st.w = w
	ctx, gone := context.WithCancelCause(context.Background())
	defer func() {
		if p := recover(); p != nil {
			st.s.log.Error("panic in status stream", slog.String("requestId", string(st.meta.ID[:])),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			st.fail(apierr.New(apierr.Internal, "internal error"))
			st.done(StreamEndError)
		}
		gone(nil)
		st.s.metrics.observe(routeStatusStream, statusOK, time.Since(st.start))
	}()
	stopWatch := watchClient(st.conn, gone)
	defer stopWatch()
	st.event(EventStatus, st.last.data)
	if st.last.end != "" {
		st.done(st.last.end)
		return
	}
	cfg := st.s.cfg.StatusStream
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	beat := time.NewTicker(cfg.Heartbeat)
	defer beat.Stop()
	failures := 0
	for !st.lost {
		select {
		case <-ctx.Done():
			st.lost = true
		case <-st.s.closing:
			st.done(StreamEndShutdown)
			return
		case <-beat.C:
			st.comment()
		case <-poll.C:
			now := st.s.now()
			rctx, cancel := context.WithTimeout(ctx, cfg.Poll+5*time.Second)
			snap, err := st.read(rctx, st.opened)
			cancel()
			if err != nil {
				if st.lost || ctx.Err() != nil {
					st.lost = true
					break
				}
				failures++
				st.s.log.Warn("status stream: read failed", slog.String("requestId", string(st.meta.ID[:])),
					slog.Int("failures", failures), slog.Any("err", err))
				if failures >= cfg.MaxReadFailures {
					st.fail(apierr.New(apierr.ServiceUnavailable, "the status cannot be read; poll the status endpoint or stream again").Wrap(err))
					st.done(StreamEndError)
					return
				}
				break
			}
			failures = 0
			if !bytes.Equal(snap.data, st.last.data) {
				st.event(EventStatus, snap.data)
				beat.Reset(cfg.Heartbeat)
			}
			st.last = snap
			switch {
			case snap.end != "":
				st.done(snap.end)
				return
			case !now.Before(snap.until):
				st.done(StreamEndHorizon)
				return
			}
		}
	}
	st.s.log.Debug("status stream: the client went away", slog.String("requestId", string(st.meta.ID[:])))
}

// event sends one event whose data is one line of JSON.
func (st *statusStreamer) event(name string, data []byte) {
	b := append(st.buf[:0], "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	st.buf = append(b, data...)
	st.send()
}

// fail sends the error that ends the stream, as the envelope's error.
func (st *statusStreamer) fail(e *apierr.Error) {
	st.s.logFailure(st.meta.ID[:], routeStatusStream, e)
	st.event(EventError, appendErrorObject(nil, e))
}

// done ends the stream: why, and the meta an envelope would have carried.
func (st *statusStreamer) done(reason string) {
	b := append([]byte(`{"reason":"`), reason...)
	b = append(b, `","meta":`...)
	b = appendMeta(b, &st.meta)
	st.event(EventDone, append(b, '}'))
}

// comment sends a keep-alive comment line, which clients ignore.
func (st *statusStreamer) comment() {
	st.buf = append(st.buf[:0], ": keep-alive"...)
	st.send()
}

// send ends the event in the buffer and flushes it; a failed write means
// the client is gone.
func (st *statusStreamer) send() {
	if st.lost {
		return
	}
	st.buf = append(st.buf, "\n\n"...)
	if st.conn != nil && st.s.cfg.WriteTimeout > 0 {
		_ = st.conn.SetWriteDeadline(time.Now().Add(st.s.cfg.WriteTimeout))
	}
	if _, err := st.w.Write(st.buf); err == nil {
		if err = st.w.Flush(); err == nil {
			return
		}
	}
	st.lost = true
}
