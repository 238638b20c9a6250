package lifi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/quote"
)

// LI.FI error codes (REFERENCE.md, "Upstream APIs").
const (
	codeFailedToBuildTx = 1001
	codeNoQuote         = 1002
	codeRateLimit       = 1005
	codeTimeout         = 1009
	codeUnauthorized    = 1010
	codeValidation      = 1011
	codeRPCFailure      = 1012
)

// noRouteReasons are the per-tool error codes that mean "no route for this
// request" rather than a failure, in the order a reason is preferred when
// several tools disagree: the most actionable for the client first.
var noRouteReasons = []string{"AMOUNT_TOO_LOW", "AMOUNT_TOO_HIGH", "INSUFFICIENT_LIQUIDITY", "FEES_HIGHER_THAN_AMOUNT", "NO_POSSIBLE_ROUTE"}

// responseError maps a non-200 answer. LI.FI's own code decides where it is
// known; the HTTP status decides otherwise. 401 is our key being refused,
// which is not the client's fault, so it is an upstream error, not
// UNAUTHORIZED.
func responseError(r *reply) error {
	var we wireError
	_ = json.Unmarshal(r.body, &we) // a body that is not JSON still has a status
	msg := we.Message
	if msg == "" {
		msg = http.StatusText(r.status)
	}
	cause := fmt.Errorf("lifi: HTTP %d code %d: %s", r.status, we.Code, msg)
	base := func(code, message string) *apierr.Error {
		e := apierr.New(code, message).With("provider", Name).With("upstreamStatus", r.status)
		if we.Code != 0 {
			e = e.With("upstreamCode", we.Code)
		}
		return e.With("upstreamMessage", msg).Wrap(cause)
	}
	switch {
	case we.Code == codeNoQuote || r.status == http.StatusNotFound:
		return noRoute(&we, msg)
	case we.Code == codeFailedToBuildTx:
		return base(apierr.TransactionBuildFailed, "the aggregator could not build the transaction")
	case r.status == http.StatusTooManyRequests || we.Code == codeRateLimit:
		e := base(apierr.UpstreamError, "the aggregator upstream is rate limiting us")
		if r.rateLimit != "" {
			e = e.With("rateLimit", r.rateLimit)
		}
		if r.rateRemain != "" {
			e = e.With("rateRemaining", r.rateRemain)
		}
		if r.rateReset != "" {
			e = e.With("rateReset", r.rateReset)
		}
		return e
	case r.status == http.StatusServiceUnavailable && bytes.Contains(bytes.ToLower(r.body), []byte("maintenance")):
		return base(apierr.UpstreamMaintenance, "the aggregator upstream is under maintenance")
	case we.Code == codeTimeout || r.status == http.StatusGatewayTimeout:
		return base(apierr.UpstreamTimeout, "the aggregator upstream timed out")
	case we.Code == codeRPCFailure:
		return base(apierr.RPCFailure, "the aggregator upstream failed to reach a chain: "+msg)
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden || we.Code == codeUnauthorized:
		return base(apierr.UpstreamError, "the aggregator upstream refused our credentials")
	case r.status == http.StatusBadRequest || we.Code == codeValidation:
		return base(apierr.UpstreamError, "the aggregator upstream refused the request: "+msg)
	case r.status >= 500:
		return base(apierr.UpstreamError, "the aggregator upstream failed")
	default:
		return base(apierr.UpstreamError, "the aggregator upstream answered "+msg)
	}
}

// noRoute builds the reasoned refusal of a no-quote answer, naming the tool
// when a single tool is to blame.
func noRoute(we *wireError, msg string) *quote.NoRoute {
	nr := &quote.NoRoute{Provider: Name, Reason: "NO_POSSIBLE_ROUTE", Message: msg}
	errs := we.toolErrors()
	for _, reason := range noRouteReasons {
		for _, te := range errs {
			if te.Code == reason {
				nr.Reason, nr.Tool = reason, te.Tool
				if te.Message != "" {
					nr.Message = msg + ": " + te.Tool + ": " + te.Message
				}
				return nr
			}
		}
	}
	return nr
}
