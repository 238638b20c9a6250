package httpjson

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// Response is what survives of an upstream response once its fasthttp
// object has been released: the status, the headers the client was told to
// keep, and a copy of the body.
type Response struct {
	Status  int
	Body    []byte
	headers map[string]string
}

// Header returns a kept response header, "" when the upstream did not send
// it or the client was not told to keep it. The name is case-insensitive.
func (r *Response) Header(name string) string {
	return r.headers[http.CanonicalHeaderKey(name)]
}

// Deadline is the earlier of ctx's deadline and now+timeout: the configured
// timeout bounds the upstream even when the caller is patient, and the
// caller's deadline wins when it is tighter.
func Deadline(ctx context.Context, timeout time.Duration) time.Time {
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// Do performs one exchange with the upstream: it asks for JSON, sends body
// as JSON when it is not nil, and adds the credentials. Any status is a
// Response; only a failure to exchange at all is an error, UPSTREAM_TIMEOUT
// or UPSTREAM_ERROR as Upstream.TransportError maps it.
//
// The fasthttp request and response are owned by the goroutine that runs
// the exchange and released there, so that a cancelled caller can return at
// once without leaving them in use; the exchange itself still ends by the
// deadline.
func (c *Client) Do(ctx context.Context, method, uri string, body []byte) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, c.up.TransportError(ctx, err)
	}
	dl := Deadline(ctx, c.timeout)
	type result struct {
		r   *Response
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
		if c.auth != nil {
			c.auth(req)
		}
		if err := c.hc.DoDeadline(req, resp, dl); err != nil {
			done <- result{err: err}
			return
		}
		done <- result{r: c.copyResponse(resp)}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, c.up.TransportError(ctx, res.err)
		}
		return res.r, nil
	case <-ctx.Done():
		return nil, c.up.TransportError(ctx, ctx.Err())
	}
}

// copyResponse keeps what callers read of a response before fasthttp
// reuses it.
func (c *Client) copyResponse(resp *fasthttp.Response) *Response {
	r := &Response{Status: resp.StatusCode(), Body: append([]byte(nil), resp.Body()...)}
	if len(c.keep) > 0 {
		r.headers = make(map[string]string, len(c.keep))
		for _, h := range c.keep {
			if v := resp.Header.Peek(h); len(v) > 0 {
				r.headers[h] = string(v)
			}
		}
	}
	return r
}

// TransportError maps a failure to reach the upstream: timeouts and expired
// deadlines are UPSTREAM_TIMEOUT, everything else UPSTREAM_ERROR.
func (u Upstream) TransportError(ctx context.Context, err error) *apierr.Error {
	var ne net.Error
	timedOut := errors.Is(err, fasthttp.ErrTimeout) ||
		errors.Is(err, fasthttp.ErrDialTimeout) ||
		errors.Is(err, fasthttp.ErrTLSHandshakeTimeout) ||
		errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) ||
		errors.Is(ctx.Err(), context.DeadlineExceeded)
	if timedOut {
		return apierr.New(apierr.UpstreamTimeout, u.Noun+" did not answer in time").
			With("provider", u.Provider).Wrap(fmt.Errorf("%s: %w", u.Prefix, err))
	}
	return apierr.New(apierr.UpstreamError, u.Noun+" could not be reached").
		With("provider", u.Provider).Wrap(fmt.Errorf("%s: %w", u.Prefix, err))
}
