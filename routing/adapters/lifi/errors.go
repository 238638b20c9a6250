package lifi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// LI.FI error codes, as its API documents them.
const (
	codeFailedToBuildTx = 1001
	codeNoQuote         = 1002
	codeRateLimit       = 1005
	codeTimeout         = 1009
	codeUnauthorized    = 1010
	codeValidation      = 1011
	codeRPCFailure      = 1012
)

// codeKinds are the LI.FI codes that stand for a kind of failure the HTTP
// status may also express.
var codeKinds = map[int]httpjson.Kind{
	codeRateLimit:    httpjson.RateLimited,
	codeTimeout:      httpjson.TimedOut,
	codeUnauthorized: httpjson.CredentialsRefused,
	codeValidation:   httpjson.Rejected,
}

// noRouteReasons are the per-tool error codes that mean "no route for this
// request" rather than a failure, in the order a reason is preferred when
// several tools disagree: the most actionable for the client first.
var noRouteReasons = []string{"AMOUNT_TOO_LOW", "AMOUNT_TOO_HIGH", "INSUFFICIENT_LIQUIDITY", "FEES_HIGHER_THAN_AMOUNT", "NO_POSSIBLE_ROUTE"}

// responseError maps a non-200 answer. The no-quote and build-failure codes
// decide alone; otherwise LI.FI's code and the HTTP status each give a kind,
// and the kind of higher precedence wins (httpjson.Kind), with a chain RPC
// failure ranking just after a timeout.
func responseError(r *httpjson.Response) error {
	var we wireError
	_ = json.Unmarshal(r.Body, &we) // a body that is not JSON still has a status
	msg := we.Message
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	f := &httpjson.Failure{Response: r, Message: msg,
		Cause: fmt.Errorf("lifi: HTTP %d code %d: %s", r.Status, we.Code, msg)}
	if we.Code != 0 {
		f.Details = map[string]any{"upstreamCode": we.Code}
	}
	if we.Code == codeNoQuote || r.Status == http.StatusNotFound {
		return noRoute(&we, msg)
	}
	if we.Code == codeFailedToBuildTx {
		return upstream.Error(f, apierr.TransactionBuildFailed, "the aggregator could not build the transaction")
	}
	kind := httpjson.Classify(r.Status, r.Body)
	if we.Code == codeRPCFailure && kind > httpjson.TimedOut {
		return upstream.Error(f, apierr.RPCFailure, "the aggregator upstream failed to reach a chain: "+msg)
	}
	if k, ok := codeKinds[we.Code]; ok {
		kind = min(kind, k)
	}
	return upstream.StatusError(f, kind)
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
