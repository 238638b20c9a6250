package oneclick

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// noRouteMessages are fragments of 1Click 400 messages that mean "no route
// for this request" rather than a malformed request, with the NoRoute
// reason each stands for.
var noRouteMessages = []struct{ fragment, reason string }{
	{"too low", "AMOUNT_TOO_LOW"},
	{"too high", "AMOUNT_TOO_HIGH"},
	{"liquidity", "INSUFFICIENT_LIQUIDITY"},
	{"failed to get quote", "NO_POSSIBLE_ROUTE"},
	{"no quote", "NO_POSSIBLE_ROUTE"},
	{"no route", "NO_POSSIBLE_ROUTE"},
}

// responseError maps a non-2xx answer. A 400 whose message says the amount
// or liquidity is at fault is a reasoned refusal; every other answer is
// classified by its status alone, 1Click's error body having no code.
func responseError(r *httpjson.Response) error {
	var we wireError
	_ = json.Unmarshal(r.Body, &we) // a body that is not JSON still has a status
	msg := we.Message
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	if r.Status == http.StatusBadRequest {
		lower := strings.ToLower(msg)
		for _, m := range noRouteMessages {
			if strings.Contains(lower, m.fragment) {
				return &quote.NoRoute{Provider: Name, Tool: Tool, Reason: m.reason, Message: msg}
			}
		}
	}
	f := &httpjson.Failure{Response: r, Message: msg, Cause: fmt.Errorf("oneclick: HTTP %d: %s", r.Status, msg)}
	return upstream.StatusError(f, httpjson.Classify(r.Status, r.Body))
}
