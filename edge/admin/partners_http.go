package admin

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"
)

// Partner endpoint paths, shared by Server and Client.
const (
	pathPartners  = "/admin/partners"
	pathRotateKey = "/admin/partners/{id}/rotate-key"
	pathSetFees   = "/admin/partners/{id}/set-fees"
	pathSetLimits = "/admin/partners/{id}/set-limits"
	pathDisable   = "/admin/partners/{id}/disable"
	// pathSetOrigins replaces the partner's allowedOrigins.
	pathSetOrigins = "/admin/partners/{id}/set-origins"
)

// requestTimeout bounds one admin operation on the server side; fasthttp's
// ctx is not a per-request deadline.
const requestTimeout = 30 * time.Second

// setFeesBody is the body of POST .../set-fees.
type setFeesBody struct {
	SwapFeeBps   *int `json:"swapFeeBps"`
	OnrampFeeBps *int `json:"onrampFeeBps"`
}

// setLimitsBody is the body of POST .../set-limits.
type setLimitsBody struct {
	HeavyPerMin *int `json:"heavyPerMin"`
	ReadPerMin  *int `json:"readPerMin"`
}

// setOriginsBody is the body of POST .../set-origins: the whole list, []
// to clear it (a missing or null field is refused).
type setOriginsBody struct {
	AllowedOrigins []string `json:"allowedOrigins"`
}

// registerPartnerRoutes wires the partner operations to HTTP.
func (s *Server) registerPartnerRoutes() {
	p := s.partners
	s.router.POST(pathPartners, s.authenticated(func(ctx *fasthttp.RequestCtx) {
		var req CreateRequest
		if err := DecodeBody(ctx, &req); err != nil {
			WriteError(ctx, err)
			return
		}
		c, cancel := opContext()
		defer cancel()
		res, err := p.Create(c, req)
		respond(ctx, fasthttp.StatusCreated, res, err)
	}))
	s.router.GET(pathPartners, s.authenticated(func(ctx *fasthttp.RequestCtx) {
		c, cancel := opContext()
		defer cancel()
		list, err := p.List(c)
		respond(ctx, fasthttp.StatusOK, list, err)
	}))
	s.router.POST(pathRotateKey, s.authenticated(func(ctx *fasthttp.RequestCtx) {
		c, cancel := opContext()
		defer cancel()
		res, err := p.RotateKey(c, pathID(ctx))
		respond(ctx, fasthttp.StatusOK, res, err)
	}))
	s.router.POST(pathSetFees, s.authenticated(func(ctx *fasthttp.RequestCtx) {
		var body setFeesBody
		if err := DecodeBody(ctx, &body); err != nil {
			WriteError(ctx, err)
			return
		}
		c, cancel := opContext()
		defer cancel()
		v, err := p.SetFees(c, pathID(ctx), body.SwapFeeBps, body.OnrampFeeBps)
		respond(ctx, fasthttp.StatusOK, v, err)
	}))
	s.router.POST(pathSetLimits, s.authenticated(func(ctx *fasthttp.RequestCtx) {
		var body setLimitsBody
		if err := DecodeBody(ctx, &body); err != nil {
			WriteError(ctx, err)
			return
		}
		c, cancel := opContext()
		defer cancel()
		v, err := p.SetLimits(c, pathID(ctx), body.HeavyPerMin, body.ReadPerMin)
		respond(ctx, fasthttp.StatusOK, v, err)
	}))
	s.router.POST(pathSetOrigins, s.authenticated(func(ctx *fasthttp.RequestCtx) {
		var body setOriginsBody
		if err := DecodeBody(ctx, &body); err != nil {
			WriteError(ctx, err)
			return
		}
		c, cancel := opContext()
		defer cancel()
		v, err := p.SetOrigins(c, pathID(ctx), body.AllowedOrigins)
		respond(ctx, fasthttp.StatusOK, v, err)
	}))
	s.router.POST(pathDisable, s.authenticated(func(ctx *fasthttp.RequestCtx) {
		c, cancel := opContext()
		defer cancel()
		v, err := p.Disable(c, pathID(ctx))
		respond(ctx, fasthttp.StatusOK, v, err)
	}))
}

func opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), requestTimeout)
}

func pathID(ctx *fasthttp.RequestCtx) string {
	id, _ := ctx.UserValue("id").(string)
	return id
}

func respond(ctx *fasthttp.RequestCtx, status int, v any, err error) {
	if err != nil {
		WriteError(ctx, err)
		return
	}
	WriteJSON(ctx, status, v)
}
