// Package apierr defines the errors a client of Swapgate can be shown: the
// machine-readable codes of the specification's Errors table, the HTTP status
// each maps to, and a value type that carries code, message and details from
// the domain to the one envelope writer in the edge.
package apierr

import (
	"errors"
	"fmt"
	"slices"
)

// Codes of the specification's Errors table, plus NOT_FOUND and
// METHOD_NOT_ALLOWED, which it does not list: an unknown path answers 404
// and a wrong method 405, both in the envelope with these codes.
const (
	InvalidParams              = "INVALID_PARAMS"
	ValidationError            = "VALIDATION_ERROR"
	InvalidBody                = "INVALID_BODY"
	SlippageError              = "SLIPPAGE_ERROR"
	PartnerFeeExceedsMax       = "PARTNER_FEE_EXCEEDS_MAX"
	PartnerWalletNotRegistered = "PARTNER_WALLET_NOT_REGISTERED"
	EcosystemNotConfigured     = "ECOSYSTEM_NOT_CONFIGURED"
	Unauthorized               = "UNAUTHORIZED"
	NoRouteFound               = "NO_ROUTE_FOUND"
	RateLimit                  = "RATE_LIMIT"
	TransactionBuildFailed     = "TRANSACTION_BUILD_FAILED"
	Internal                   = "INTERNAL_ERROR"
	UpstreamError              = "UPSTREAM_ERROR"
	RPCFailure                 = "RPC_FAILURE"
	UpstreamMaintenance        = "UPSTREAM_MAINTENANCE"
	ServiceUnavailable         = "SERVICE_UNAVAILABLE"
	Timeout                    = "TIMEOUT"
	UpstreamTimeout            = "UPSTREAM_TIMEOUT"
	NotFound                   = "NOT_FOUND"
	MethodNotAllowed           = "METHOD_NOT_ALLOWED"
	// PriceChanged refuses an execute whose quote's price moved past the
	// request's maxPriceDriftBps; its details carry the new quote.
	PriceChanged = "PRICE_CHANGED"
)

// The HTTP statuses the codes map to, as RFC 9110 numbers them. They are
// written here rather than taken from net/http so that the domain imports
// nothing that dials (the import rules hold it to that).
const (
	statusBadRequest          = 400
	statusUnauthorized        = 401
	statusNotFound            = 404
	statusMethodNotAllowed    = 405
	statusConflict            = 409
	statusTooManyRequests     = 429
	statusInternalServerError = 500
	statusBadGateway          = 502
	statusServiceUnavailable  = 503
	statusGatewayTimeout      = 504
)

var statusByCode = map[string]int{
	InvalidParams:              statusBadRequest,
	ValidationError:            statusBadRequest,
	InvalidBody:                statusBadRequest,
	SlippageError:              statusBadRequest,
	PartnerFeeExceedsMax:       statusBadRequest,
	PartnerWalletNotRegistered: statusBadRequest,
	EcosystemNotConfigured:     statusBadRequest,
	Unauthorized:               statusUnauthorized,
	NoRouteFound:               statusNotFound,
	RateLimit:                  statusTooManyRequests,
	TransactionBuildFailed:     statusInternalServerError,
	Internal:                   statusInternalServerError,
	UpstreamError:              statusBadGateway,
	RPCFailure:                 statusBadGateway,
	UpstreamMaintenance:        statusServiceUnavailable,
	ServiceUnavailable:         statusServiceUnavailable,
	Timeout:                    statusGatewayTimeout,
	UpstreamTimeout:            statusGatewayTimeout,
	NotFound:                   statusNotFound,
	MethodNotAllowed:           statusMethodNotAllowed,
	PriceChanged:               statusConflict,
}

// Error is an error a client may see. The zero Status means the status of
// the code in the specification's table; a few cases (deleting a missing fee
// wallet: 404 with INVALID_PARAMS) set it explicitly.
type Error struct {
	Code    string
	Message string
	Details map[string]any
	Status  int
	// Cause is kept for logs and errors.Is; it is never shown to clients.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// HTTPStatus is the status the edge answers with.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	if s, ok := statusByCode[e.Code]; ok {
		return s
	}
	return statusInternalServerError
}

// New builds an error with a code and a message.
func New(code, message string) *Error { return &Error{Code: code, Message: message} }

// Param builds an INVALID_PARAMS error naming the offending parameter in
// details.param, as the specification asks.
func Param(param, message string) *Error {
	return &Error{Code: InvalidParams, Message: message, Details: map[string]any{"param": param}}
}

// With returns a copy of e with one more detail.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// Wrap attaches an internal cause, kept out of the response.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// From turns any error into an *Error: an *Error found with errors.As is
// returned as is, anything else becomes INTERNAL_ERROR with the cause kept.
func From(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return &Error{Code: Internal, Message: "internal error", Cause: err}
}

// Codes returns every code a client can be shown, sorted, so that the API
// document's list of codes and their statuses can be held to this one.
func Codes() []string {
	out := make([]string, 0, len(statusByCode))
	for c := range statusByCode {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}
