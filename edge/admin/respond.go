package admin

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// Error codes of the admin listener, shared by Server and Client.
const (
	codeInvalid      = "INVALID_REQUEST"
	codeNotFound     = "NOT_FOUND"
	codeConflict     = "CONFLICT"
	codeUnauthorized = "UNAUTHORIZED"
	codeInternal     = "INTERNAL"
)

// errorBody is the JSON shape of every admin error response.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// WriteJSON writes v as a JSON response with the given status. Handlers
// registered with Handle use it so that Client.Call can decode their answers.
func WriteJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErrorStatus(ctx, fasthttp.StatusInternalServerError, codeInternal, "encode response: "+err.Error())
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetBody(b)
}

// WriteError maps err to a status and code: ErrInvalid is 400,
// account.ErrNotFound 404, account.ErrExists 409, anything else 500.
func WriteError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, ErrInvalid):
		writeErrorStatus(ctx, fasthttp.StatusBadRequest, codeInvalid, err.Error())
	case errors.Is(err, account.ErrNotFound):
		writeErrorStatus(ctx, fasthttp.StatusNotFound, codeNotFound, err.Error())
	case errors.Is(err, account.ErrExists):
		writeErrorStatus(ctx, fasthttp.StatusConflict, codeConflict, err.Error())
	default:
		writeErrorStatus(ctx, fasthttp.StatusInternalServerError, codeInternal, err.Error())
	}
}

func writeErrorStatus(ctx *fasthttp.RequestCtx, status int, code, msg string) {
	b, _ := json.Marshal(errorBody{Error: msg, Code: code}) // strings always encode
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetBody(b)
}

// DecodeBody decodes the request body into v, refusing unknown fields and
// trailing data. An empty body leaves v untouched. Errors wrap ErrInvalid.
func DecodeBody(ctx *fasthttp.RequestCtx, v any) error {
	body := ctx.PostBody()
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidf("request body: %v", err)
	}
	if dec.More() {
		return invalidf("request body: trailing data after the JSON object")
	}
	return nil
}

// sentinelFor maps an error code back to the sentinel the Client wraps.
func sentinelFor(code string) error {
	switch code {
	case codeInvalid:
		return ErrInvalid
	case codeNotFound:
		return account.ErrNotFound
	case codeConflict:
		return account.ErrExists
	case codeUnauthorized:
		return ErrUnauthorized
	}
	return nil
}
