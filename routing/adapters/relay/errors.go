package relay

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// noRouteCodes are Relay's documented quote error codes that mean "no
// route for this request" rather than a failure, and the NoRoute reason
// each is answered with.
var noRouteCodes = map[string]string{
	"AMOUNT_TOO_LOW":                "AMOUNT_TOO_LOW",
	"INSUFFICIENT_LIQUIDITY":        "INSUFFICIENT_LIQUIDITY",
	"NO_QUOTES":                     "NO_POSSIBLE_ROUTE",
	"NO_SWAP_ROUTES_FOUND":          "NO_POSSIBLE_ROUTE",
	"NO_INTERNAL_SWAP_ROUTES_FOUND": "NO_POSSIBLE_ROUTE",
	"SWAP_IMPACT_TOO_HIGH":          "NO_POSSIBLE_ROUTE",
	"ROUTE_TEMPORARILY_RESTRICTED":  "NO_POSSIBLE_ROUTE",
	"CHAIN_DISABLED":                ReasonUnsupportedRoute,
	"UNSUPPORTED_CHAIN":             ReasonUnsupportedRoute,
	"UNSUPPORTED_CURRENCY":          ReasonUnsupportedRoute,
	"UNSUPPORTED_ROUTE":             ReasonUnsupportedRoute,
	"INVALID_INPUT_CURRENCY":        ReasonUnsupportedRoute,
	"INVALID_OUTPUT_CURRENCY":       ReasonUnsupportedRoute,
}

// responseError maps a non-200 answer: a documented no-route code on a
// refusal is a reasoned no-route; anything else is the kind its HTTP
// status gives (httpjson.Classify), with Relay's code in the details.
func responseError(r *httpjson.Response) error {
	var we wireError
	_ = json.Unmarshal(r.Body, &we) // a body that is not JSON still has a status
	msg := we.Message
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	if reason, ok := noRouteCodes[we.ErrorCode]; ok && r.Status >= 400 && r.Status < 500 {
		return &quote.NoRoute{Provider: Name, Tool: Tool, Reason: reason, Message: "Relay: " + msg}
	}
	f := &httpjson.Failure{Response: r, Message: msg,
		Cause: fmt.Errorf("relay: HTTP %d %s: %s", r.Status, we.ErrorCode, msg)}
	if we.ErrorCode != "" {
		f.Details = map[string]any{"upstreamCode": we.ErrorCode}
	}
	return upstream.StatusError(f, httpjson.Classify(r.Status, r.Body))
}

// shown is an upstream value as a refusal quotes it.
func shown(s string) string { return httpjson.Shown(s) }
