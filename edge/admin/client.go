package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// defaultCallTimeout bounds a Client call whose context has no deadline.
const defaultCallTimeout = 30 * time.Second

// Client performs partner operations through the admin listener of the
// process that holds the data directory.
type Client struct {
	ep Endpoint
	hc *fasthttp.HostClient
}

var _ PartnerAdmin = (*Client)(nil)

// Dial returns a client for the listener advertised in dataDir/admin.json.
// It does not connect; an unreachable listener shows up as ErrUnreachable
// on the first call. A missing file gives ErrNoListener.
func Dial(dataDir string) (*Client, error) {
	ep, err := ReadEndpoint(dataDir)
	if err != nil {
		return nil, fmt.Errorf("admin: dial: %w", err)
	}
	return NewClient(ep), nil
}

// NewClient returns a client for a known endpoint.
func NewClient(ep Endpoint) *Client {
	return &Client{
		ep: ep,
		hc: &fasthttp.HostClient{
			Addr:                ep.Addr,
			Name:                "swapgate-cli",
			MaxResponseBodySize: 16 << 20,
			MaxConnWaitTimeout:  time.Second,
		},
	}
}

// Addr returns the listener address the client calls.
func (c *Client) Addr() string { return c.ep.Addr }

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// remoteError is an error reported by the listener. Its message is the
// server's; it unwraps to the sentinel matching the error code, so callers
// can use errors.Is as with Local.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// Call sends in (nil for no body) as JSON to method path and decodes a
// successful answer into out (nil to discard it). It is exported so that
// operations added by later issues reuse the transport and error mapping.
func (c *Client) Call(ctx context.Context, method, path string, in, out any) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultCallTimeout)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + c.ep.Addr + path)
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+c.ep.Token)
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("admin: encode %s %s: %w", method, path, err)
		}
		req.Header.SetContentType("application/json")
		req.SetBody(b)
	}
	if err := c.hc.DoDeadline(req, resp, deadline); err != nil {
		if errors.Is(err, fasthttp.ErrTimeout) {
			return fmt.Errorf("admin: %s %s at %s: %w", method, path, c.ep.Addr, err)
		}
		return fmt.Errorf("admin: %w at %s: %v", ErrUnreachable, c.ep.Addr, err)
	}

	status := resp.StatusCode()
	if status < 200 || status > 299 {
		var eb errorBody
		if err := json.Unmarshal(resp.Body(), &eb); err != nil || eb.Error == "" {
			return fmt.Errorf("admin: %s %s: HTTP %d", method, path, status)
		}
		return &remoteError{msg: eb.Error, sentinel: sentinelFor(eb.Code)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Body(), out); err != nil {
		return fmt.Errorf("admin: decode %s %s response: %w", method, path, err)
	}
	return nil
}

// idPath fills the {id} placeholder of a partner path.
func idPath(pattern, id string) (string, error) {
	if err := validateID(id); err != nil {
		return "", err
	}
	return strings.Replace(pattern, "{id}", url.PathEscape(id), 1), nil
}

// Create implements PartnerAdmin.
func (c *Client) Create(ctx context.Context, req CreateRequest) (CreateResult, error) {
	var res CreateResult
	err := c.Call(ctx, fasthttp.MethodPost, pathPartners, req, &res)
	return res, err
}

// List implements PartnerAdmin.
func (c *Client) List(ctx context.Context) ([]PartnerView, error) {
	out := []PartnerView{}
	err := c.Call(ctx, fasthttp.MethodGet, pathPartners, nil, &out)
	return out, err
}

// RotateKey implements PartnerAdmin.
func (c *Client) RotateKey(ctx context.Context, id string) (CreateResult, error) {
	var res CreateResult
	p, err := idPath(pathRotateKey, id)
	if err != nil {
		return res, err
	}
	err = c.Call(ctx, fasthttp.MethodPost, p, nil, &res)
	return res, err
}

// SetFees implements PartnerAdmin.
func (c *Client) SetFees(ctx context.Context, id string, swapBps, onrampBps *int) (PartnerView, error) {
	return c.partnerCall(ctx, pathSetFees, id, setFeesBody{SwapFeeBps: swapBps, OnrampFeeBps: onrampBps})
}

// SetLimits implements PartnerAdmin.
func (c *Client) SetLimits(ctx context.Context, id string, heavy, read *int) (PartnerView, error) {
	return c.partnerCall(ctx, pathSetLimits, id, setLimitsBody{HeavyPerMin: heavy, ReadPerMin: read})
}

// Disable implements PartnerAdmin.
func (c *Client) Disable(ctx context.Context, id string) (PartnerView, error) {
	return c.partnerCall(ctx, pathDisable, id, nil)
}

// SetOrigins implements PartnerAdmin.
func (c *Client) SetOrigins(ctx context.Context, id string, origins []string) (PartnerView, error) {
	return c.partnerCall(ctx, pathSetOrigins, id, setOriginsBody{AllowedOrigins: origins})
}

func (c *Client) partnerCall(ctx context.Context, pattern, id string, body any) (PartnerView, error) {
	var v PartnerView
	p, err := idPath(pattern, id)
	if err != nil {
		return v, err
	}
	err = c.Call(ctx, fasthttp.MethodPost, p, body, &v)
	return v, err
}
