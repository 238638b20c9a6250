package httpjson

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// Upstream names a provider in the errors built for it. It is a plain value
// that adapters declare once and never change.
type Upstream struct {
	// Provider is the provider name clients see in details.provider.
	Provider string
	// Prefix starts the internal causes kept for logs, e.g. "lifi".
	Prefix string
	// Noun starts the messages clients see, e.g. "the aggregator upstream".
	Noun string
	// RateHeaders are the response headers copied into the details of a
	// rate-limit error, so that a client can tell when to come back.
	RateHeaders []RateHeader
}

// RateHeader copies one response header into an error detail.
type RateHeader struct {
	Header string
	Detail string
}

// Kind is the class of a non-success answer. Kinds are listed in order of
// precedence: when an adapter also derives a kind from the upstream's own
// error code and the two disagree, the earlier kind (the lower value) wins.
type Kind int

// Kinds of non-success answers.
const (
	// RateLimited is the upstream refusing our rate (429).
	RateLimited Kind = iota + 1
	// Maintenance is a 503 whose body says the upstream is under
	// maintenance; other 503s are Failed.
	Maintenance
	// TimedOut is the upstream's own gateway timing out (504).
	TimedOut
	// CredentialsRefused is our key being refused (401, 403). It is not the
	// client's fault, so it maps to UPSTREAM_ERROR, not UNAUTHORIZED.
	CredentialsRefused
	// Rejected is the upstream refusing the request as malformed (400).
	Rejected
	// Failed is any other server error (5xx).
	Failed
	// Other is any other status.
	Other
)

// Classify gives the kind of a non-success answer from its status, and for
// a 503 from whether its body mentions maintenance.
func Classify(status int, body []byte) Kind {
	switch {
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == http.StatusServiceUnavailable && bytes.Contains(bytes.ToLower(body), []byte("maintenance")):
		return Maintenance
	case status == http.StatusGatewayTimeout:
		return TimedOut
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return CredentialsRefused
	case status == http.StatusBadRequest:
		return Rejected
	case status >= 500:
		return Failed
	default:
		return Other
	}
}

// Failure is a non-success answer as an adapter has read it.
type Failure struct {
	Response *Response
	// Message is the upstream's own message, or the status text when the
	// body carried none.
	Message string
	// Details are details particular to the upstream (LI.FI's error code);
	// may be nil.
	Details map[string]any
	// Cause is the internal cause kept for logs.
	Cause error
}

// Error builds the client error of a failure with the given code and
// message, carrying the provider, the upstream status and message, the
// failure's own details and its cause.
func (u Upstream) Error(f *Failure, code, message string) *apierr.Error {
	e := apierr.New(code, message).With("provider", u.Provider).With("upstreamStatus", f.Response.Status)
	for k, v := range f.Details {
		e = e.With(k, v)
	}
	return e.With("upstreamMessage", f.Message).Wrap(f.Cause)
}

// StatusError builds the client error of a failure of the given kind, with
// the shared wording; a rate-limit error also carries the RateHeaders the
// upstream sent.
func (u Upstream) StatusError(f *Failure, k Kind) *apierr.Error {
	switch k {
	case RateLimited:
		e := u.Error(f, apierr.UpstreamError, u.Noun+" is rate limiting us")
		for _, h := range u.RateHeaders {
			if v := f.Response.Header(h.Header); v != "" {
				e = e.With(h.Detail, v)
			}
		}
		return e
	case Maintenance:
		return u.Error(f, apierr.UpstreamMaintenance, u.Noun+" is under maintenance")
	case TimedOut:
		return u.Error(f, apierr.UpstreamTimeout, u.Noun+" timed out")
	case CredentialsRefused:
		return u.Error(f, apierr.UpstreamError, u.Noun+" refused our credentials")
	case Rejected:
		return u.Error(f, apierr.UpstreamError, u.Noun+" refused the request: "+f.Message)
	case Failed:
		return u.Error(f, apierr.UpstreamError, u.Noun+" failed")
	default:
		return u.Error(f, apierr.UpstreamError, u.Noun+" answered "+f.Message)
	}
}

// BadAnswer is the error for an answer that does not follow the upstream's
// documented shape, or carries a value the service will not pass on (see
// answer.go): the upstream failed, not the client. The message says what
// was wrong, so that the leg's reason in data.timing and the failure
// answer's details.reasons tell a client why the leg was refused; it is
// bounded, the values it quotes being cut (Shown).
func (u Upstream) BadAnswer(format string, args ...any) *apierr.Error {
	cause := fmt.Errorf(u.Prefix+": "+format, args...)
	reason := clip(strings.TrimPrefix(cause.Error(), u.Prefix+": "), maxReason)
	return apierr.New(apierr.UpstreamError, u.Noun+" sent an invalid answer: "+reason).
		With("provider", u.Provider).Wrap(cause)
}

// maxReason bounds the reason a BadAnswer's message carries.
const maxReason = 300
