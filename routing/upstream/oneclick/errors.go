package oneclick

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/quote"
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

// responseError maps a non-200 answer. 401 is our key being refused, which
// is not the client's fault, so it is an upstream error, not UNAUTHORIZED.
func responseError(r *reply) error {
	var we wireError
	_ = json.Unmarshal(r.body, &we) // a body that is not JSON still has a status
	msg := we.Message
	if msg == "" {
		msg = http.StatusText(r.status)
	}
	cause := fmt.Errorf("oneclick: HTTP %d: %s", r.status, msg)
	base := func(code, message string) *apierr.Error {
		return apierr.New(code, message).With("provider", Name).With("upstreamStatus", r.status).
			With("upstreamMessage", msg).Wrap(cause)
	}
	switch {
	case r.status == http.StatusBadRequest:
		lower := strings.ToLower(msg)
		for _, m := range noRouteMessages {
			if strings.Contains(lower, m.fragment) {
				return &quote.NoRoute{Provider: Name, Tool: Tool, Reason: m.reason, Message: msg}
			}
		}
		return base(apierr.UpstreamError, "the intents upstream refused the request: "+msg)
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
		return base(apierr.UpstreamError, "the intents upstream refused our credentials")
	case r.status == http.StatusTooManyRequests:
		e := base(apierr.UpstreamError, "the intents upstream is rate limiting us")
		if r.retryAfter != "" {
			e = e.With("retryAfter", r.retryAfter)
		}
		return e
	case r.status == http.StatusServiceUnavailable && bytes.Contains(bytes.ToLower(r.body), []byte("maintenance")):
		return base(apierr.UpstreamMaintenance, "the intents upstream is under maintenance")
	case r.status == http.StatusGatewayTimeout:
		return base(apierr.UpstreamTimeout, "the intents upstream timed out")
	case r.status >= 500:
		return base(apierr.UpstreamError, "the intents upstream failed")
	default:
		return base(apierr.UpstreamError, "the intents upstream answered "+msg)
	}
}

// badAnswer is the error for an answer that does not follow 1Click's
// documented shape: the upstream failed, not the client.
func badAnswer(format string, args ...any) *apierr.Error {
	err := fmt.Errorf("oneclick: "+format, args...)
	return apierr.New(apierr.UpstreamError, "the intents upstream sent an unreadable answer").
		With("provider", Name).Wrap(err)
}

// decimal parses a non-negative base-10 integer amount; anything else is
// refused rather than guessed at.
func decimal(field string, s flexString) (*big.Int, error) {
	str := string(s)
	if str == "" || strings.TrimLeft(str, "0123456789") != "" {
		return nil, badAnswer("%s: %q is not a decimal amount", field, str)
	}
	v, ok := new(big.Int).SetString(str, 10)
	if !ok {
		return nil, badAnswer("%s: %q is not a decimal amount", field, str)
	}
	return v, nil
}

// float parses a USD figure; absent or unreadable figures are zero, since
// they are informative and never move funds.
func float(s flexString) float64 {
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return 0
	}
	return f
}
