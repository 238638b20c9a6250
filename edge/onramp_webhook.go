package edge

import (
	"context"
	"errors"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
)

// OnrampWebhooks receives a live on-ramp provider's webhooks; the desk in
// live mode is one. ProviderWebhook verifies the signature (the raw value
// of the provider's signature header) over the raw body and applies what
// it reports: onramp.ErrBadSignature and onramp.ErrMalformedWebhook are
// the sender's fault and change nothing; any other error is the service's
// (the provider retries), and nil means accepted, a replay included.
type OnrampWebhooks interface {
	ProviderWebhook(ctx context.Context, signature string, body []byte) error
}

// ProviderWebhookRoute is where a live on-ramp provider posts its
// webhooks: the path, the header its signature travels in, and the
// receiver. The provider, not an integrator, calls it, so it lives outside
// /v1 and the API document: its caller authenticates with the signature,
// not an API key, and counts against no rate-limit bucket (a signature is
// checked with one HMAC before anything is read, and the body is bounded
// by MaxBodySize).
type ProviderWebhookRoute struct {
	Path            string
	SignatureHeader string
	Receiver        OnrampWebhooks
}

// providerWebhookRoutes registers the provider's webhook route.
func (s *Server) providerWebhookRoutes(pw *ProviderWebhookRoute) {
	if pw.Receiver == nil || !strings.HasPrefix(pw.Path, "/") || strings.HasPrefix(pw.Path, "/v1/") || pw.SignatureHeader == "" {
		if s.routeErr == nil {
			s.routeErr = errors.New("edge: a provider webhook route needs a receiver, a signature header and a path outside /v1")
		}
		return
	}
	s.Handle("POST", pw.Path, route{name: "onramp_provider_webhook"}, func(r *Request) error {
		sig := string(r.Ctx.Request.Header.Peek(pw.SignatureHeader))
		err := pw.Receiver.ProviderWebhook(r.Context(), sig, r.Ctx.PostBody())
		switch {
		case errors.Is(err, onramp.ErrBadSignature):
			return apierr.Param(pw.SignatureHeader, "the webhook's signature does not verify").With("reason", "signature").Wrap(err)
		case errors.Is(err, onramp.ErrMalformedWebhook):
			return apierr.New(apierr.InvalidBody, "the webhook's body cannot be read").Wrap(err)
		case err != nil:
			return apierr.From(err)
		}
		writeJSON(r, statusOK, map[string]bool{"received": true})
		return nil
	})
}
