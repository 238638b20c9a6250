package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/routing/domain/account"
	hook "github.com/swapgate/swapgate/routing/domain/webhook"
)

// maxResponseDrain is how much of a receiver's answer is read (and thrown
// away) so the connection can be reused; a receiver sending more loses the
// connection, not the delivery.
const maxResponseDrain = 64 << 10

// worker makes one attempt at a time. Blocking in Receive is deliberate: the
// worker's mailbox is its queue, and the dispatcher only sends it a job when
// it is idle. The outcome goes to the committer, and the worker is free as
// soon as the attempt is over.
type worker struct {
	p         *Pool
	committer *actor.PID
}

func (w *worker) Receive(ctx actor.Context) {
	j, ok := ctx.Message().(*job)
	if !ok {
		return
	}
	out, ok := w.p.deliver(j.entry)
	if ok {
		ctx.Send(w.committer, &outcomeMsg{out: out})
	}
	ctx.Send(ctx.Parent(), &doneMsg{entry: j.entry, worker: ctx.Self(), settled: !ok})
}

// deliver makes the next attempt of e and returns its outcome for the
// committer to record, or false when there is nothing to record: the
// webhook is gone (the entry was dropped), the store failed, or the pool is
// stopping (the entry stays for the next process).
func (p *Pool) deliver(e *hook.OutboxEntry) (hook.AttemptOutcome, bool) {
	if !p.enter() {
		return hook.AttemptOutcome{}, false
	}
	defer p.leave()
	// Built only when something is logged: Logger.With copies the handler's
	// attributes, a cost every delivery would pay for nothing.
	log := func() *slog.Logger {
		return p.cfg.Logger.With(slog.String("delivery", e.DeliveryID), slog.String("webhook", e.WebhookID))
	}
	w, err := p.store.WebhookByID(p.ctx, e.WebhookID)
	switch {
	case errors.Is(err, account.ErrNotFound) || err == nil && !w.Active:
		if err := p.store.DropDelivery(p.ctx, e); err != nil && !p.isShutdown(err) {
			log().Error("drop delivery of removed webhook", slog.Any("err", err))
		}
		return hook.AttemptOutcome{}, false
	case err != nil:
		if !p.isShutdown(err) {
			log().Error("load webhook for delivery", slog.Any("err", err))
		}
		return hook.AttemptOutcome{}, false
	}
	n := e.Attempt + 1
	p.stats.Attempts.Add(1)
	sentAt := p.cfg.Now()
	start := time.Now()
	status, aerr := p.post(w, e)
	latency := time.Since(start)
	if p.ctx.Err() != nil {
		// Shutting down: the entry stays and the next process retries it.
		return hook.AttemptOutcome{}, false
	}
	rec := &hook.DeliveryRecord{Attempt: n, StatusCode: status, LatencyMs: latency.Milliseconds(), Body: e.Body}
	var retryAt time.Time
	switch wait, again := p.backoff.Next(n); {
	case aerr == nil:
		rec.State = hook.DeliveryDelivered
		p.stats.Delivered.Add(1)
	case again:
		rec.State, rec.Error = hook.DeliveryRetrying, aerr.Error()
		retryAt = p.cfg.Now().Add(wait)
		rec.NextAttemptAt = retryAt.UTC()
		p.stats.Retried.Add(1)
	default:
		rec.State, rec.Error = hook.DeliveryDead, aerr.Error()
		p.stats.Dead.Add(1)
		log().Warn("webhook delivery dead-lettered", slog.Int("attempts", n), slog.String("error", rec.Error))
	}
	// The committer gets a copy: recording a retry moves it in place, while
	// the dispatcher may still be reading the original.
	mine := *e
	return hook.AttemptOutcome{Entry: &mine, Record: rec, At: sentAt, RetryAt: retryAt}, true
}

// post sends e's body to w once and returns the response status (0 when
// there was none) and an error describing a failed attempt in words the
// partner can act on.
func (p *Pool) post(w *hook.Registration, e *hook.OutboxEntry) (int, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(e.Body))
	if err != nil {
		return 0, fmt.Errorf("invalid webhook URL: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "swapgate-webhooks/1")
	h.Set(hook.HeaderSignature, hook.Sign([]byte(w.Secret), e.Body))
	h.Set(hook.HeaderEvent, e.Event)
	h.Set(hook.HeaderDelivery, e.DeliveryID)
	h.Set(hook.HeaderTimestamp, strconv.FormatInt(p.cfg.Now().Unix(), 10))
	resp, err := p.client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, hook.ErrForbiddenAddress):
			return 0, fmt.Errorf("refused by the URL policy at delivery time: %w", err)
		case errors.Is(err, context.DeadlineExceeded) && p.ctx.Err() == nil:
			return 0, fmt.Errorf("timeout: no answer within %s", p.cfg.Timeout)
		}
		return 0, fmt.Errorf("request failed: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseDrain))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("receiver answered HTTP %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}
