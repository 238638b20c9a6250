package oneclick

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/apierr"
)

// Pool limits of the upstream connection pool. A quote fans out to one call
// per request, so a few dozen connections carry the service's peak; a
// caller waits briefly for a free connection rather than failing at once
// (fasthttp answers ErrNoFreeConns immediately without MaxConnWaitTimeout).
const (
	maxConnsPerHost     = 64
	maxConnWaitTimeout  = 500 * time.Millisecond
	maxResponseBodySize = 8 << 20
	maxIdleConnDuration = 30 * time.Second
)

// newHTTPClient builds the pooled client. Read and write timeouts bound a
// single exchange even when a caller passes a distant deadline.
func newHTTPClient(timeout time.Duration) *fasthttp.Client {
	return &fasthttp.Client{
		Name:                "swapgate",
		MaxConnsPerHost:     maxConnsPerHost,
		MaxConnWaitTimeout:  maxConnWaitTimeout,
		ReadTimeout:         timeout,
		WriteTimeout:        timeout,
		MaxIdleConnDuration: maxIdleConnDuration,
		MaxResponseBodySize: maxResponseBodySize,
	}
}

// reply is what survives of an upstream response once its fasthttp object
// has been released: the status, the Retry-After header, and a copy of the
// body.
type reply struct {
	status     int
	body       []byte
	retryAfter string
}

// deadline is the earlier of ctx's deadline and now+timeout: the configured
// timeout bounds the upstream even when the caller is patient, and the
// caller's deadline wins when it is tighter.
func deadline(ctx context.Context, timeout time.Duration) time.Time {
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// do performs one exchange. The fasthttp request and response are owned by
// the goroutine that runs the exchange and released there, so that a
// cancelled caller can return at once without leaving them in use; the
// exchange itself still ends by the deadline.
func (c *Client) do(ctx context.Context, method, uri string, body []byte) (*reply, error) {
	if err := ctx.Err(); err != nil {
		return nil, c.transportError(ctx, err)
	}
	dl := deadline(ctx, c.cfg.Timeout)
	type result struct {
		r   *reply
		err error
	}
	done := make(chan result, 1)
	go func() {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(uri)
		req.Header.SetMethod(method)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.SetContentType("application/json")
			req.SetBody(body)
		}
		if c.cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
		}
		if err := c.hc.DoDeadline(req, resp, dl); err != nil {
			done <- result{err: err}
			return
		}
		done <- result{r: &reply{
			status:     resp.StatusCode(),
			body:       append([]byte(nil), resp.Body()...),
			retryAfter: string(resp.Header.Peek("Retry-After")),
		}}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, c.transportError(ctx, res.err)
		}
		return res.r, nil
	case <-ctx.Done():
		return nil, c.transportError(ctx, ctx.Err())
	}
}

// transportError maps a failure to reach the upstream: timeouts and expired
// deadlines are UPSTREAM_TIMEOUT, everything else UPSTREAM_ERROR.
func (c *Client) transportError(ctx context.Context, err error) *apierr.Error {
	var ne net.Error
	timedOut := errors.Is(err, fasthttp.ErrTimeout) ||
		errors.Is(err, fasthttp.ErrDialTimeout) ||
		errors.Is(err, fasthttp.ErrTLSHandshakeTimeout) ||
		errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) ||
		errors.Is(ctx.Err(), context.DeadlineExceeded)
	if timedOut {
		return apierr.New(apierr.UpstreamTimeout, "the intents upstream did not answer in time").
			With("provider", Name).Wrap(fmt.Errorf("oneclick: %w", err))
	}
	return apierr.New(apierr.UpstreamError, "the intents upstream could not be reached").
		With("provider", Name).Wrap(fmt.Errorf("oneclick: %w", err))
}
