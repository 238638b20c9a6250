package edge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// WebhookService is what the webhook endpoints are given. Registrations and
// their delivery history live in the store; URL checks and test deliveries
// belong to the delivery pool, so that a URL is accepted at registration by
// the very policy the pool enforces when it dials. Both are required.
type WebhookService struct {
	Registrations WebhookRegistrations
	Delivery      WebhookDelivery
}

// WebhookRegistrations keeps partners' webhook registrations and their
// delivery history. The store satisfies it. Another partner's webhook is
// account.ErrNotFound, exactly like a missing one, so IDs cannot be probed.
type WebhookRegistrations interface {
	CreateWebhook(ctx context.Context, w *webhook.Registration) error
	Webhooks(ctx context.Context, partnerID string) ([]*webhook.Registration, error)
	DeleteWebhook(ctx context.Context, partnerID, id string) error
	Deliveries(ctx context.Context, partnerID, webhookID string, limit int) ([]*webhook.DeliveryRecord, error)
}

// WebhookDelivery is what the endpoints need of the delivery pool: its URL
// policy, and test deliveries sent through the same outbox and workers as
// real events. actors/webhook.Pool satisfies it.
type WebhookDelivery interface {
	CheckURL(ctx context.Context, rawURL string) error
	SendTest(ctx context.Context, partnerID, webhookID string) (string, error)
	// Resend owes a failed delivery again with its original payload; see
	// resendDelivery.
	Resend(ctx context.Context, partnerID, webhookID, deliveryID string) (*webhook.DeliveryRecord, bool, error)
}

// maxDeliveriesListed bounds GET .../deliveries.
const maxDeliveriesListed = 100

// urlCheckTimeout bounds the name resolution of a URL at registration.
const urlCheckTimeout = 5 * time.Second

// webhookRoutes registers the webhook endpoints. A registered URL must be
// HTTPS and must not resolve to a loopback, private, link-local or cloud
// metadata address; the secret is never returned; the delivery history shows
// each delivery's state (pending, delivered, retrying or dead), its latest
// attempt and the log of its attempts (see webhookDeliveries). Choices where
// the specification is silent:
//   - POST answers 201 Created: it creates a resource with a new id.
//   - An unknown webhook id, or another partner's, is 404 NOT_FOUND: unlike
//     fee wallets the specification names no code for it, and NOT_FOUND is
//     the envelope's code for "no such thing here".
//   - The eleventh webhook is 400 INVALID_PARAMS with details {param:
//     "webhooks", limit: 10}: the request is well-formed but exceeds an
//     account limit, which is about parameters, not the body's schema.
//   - The test event is swap.completed with data.test = true (see
//     routing/domain/webhook.TestEvent), sent through the same outbox and pool.
//   - The three POSTs create or send something (a registration; a test
//     delivery; a resend) and honour Idempotency-Key: a repeated test with
//     the same key sends no second delivery, and a repeated resend gets the
//     first answer (resent true) again, not the later state.
func (s *Server) webhookRoutes() {
	rt := func(name string) route { return route{bucket: BucketRead, auth: authRequired, name: name} }
	creates := func(name string) route { r := rt(name); r.idempotent = true; return r }
	s.Handle("POST", "/v1/partner/webhooks", creates("webhooks-create"), s.createWebhook)
	s.Handle("GET", "/v1/partner/webhooks", rt("webhooks-list"), s.listWebhooks)
	s.Handle("DELETE", "/v1/partner/webhooks/{id}", rt("webhooks-delete"), s.deleteWebhook)
	s.Handle("GET", "/v1/partner/webhooks/{id}/deliveries", rt("webhooks-deliveries"), s.webhookDeliveries)
	s.Handle("POST", "/v1/partner/webhooks/{id}/test", creates("webhooks-test"), s.testWebhook)
	s.Handle("POST", "/v1/partner/webhooks/{id}/deliveries/{deliveryId}/resend", creates("webhooks-resend"), s.resendDelivery)
}

type webhookBody struct {
	URL    *string  `json:"url"`
	Events []string `json:"events"`
	Secret *string  `json:"secret"`
}

type webhookView struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Active    bool     `json:"active"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt,omitempty"`
}

// viewWebhook shows a registration without its secret.
func viewWebhook(w *webhook.Registration, withUpdated bool) webhookView {
	v := webhookView{ID: w.ID, URL: w.URL, Events: w.Events, Active: w.Active,
		CreatedAt: w.CreatedAt.UTC().Format(time.RFC3339)}
	if withUpdated {
		v.UpdatedAt = w.UpdatedAt.UTC().Format(time.RFC3339)
	}
	return v
}

func (s *Server) createWebhook(r *Request) error {
	var body webhookBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	switch {
	case body.URL == nil || *body.URL == "":
		return apierr.Param("url", "url is required")
	case body.Events == nil:
		return apierr.Param("events", "events is required: an array of event names")
	case len(body.Events) == 0:
		return apierr.Param("events", "events must name at least one event")
	case body.Secret == nil || *body.Secret == "":
		return apierr.Param("secret", "secret is required")
	}
	seen := make(map[string]bool, len(body.Events))
	events := make([]string, 0, len(body.Events))
	for _, e := range body.Events {
		if !webhook.ValidEvent(e) {
			return apierr.Param("events", fmt.Sprintf("unknown event %q", e)).With("allowed", webhook.Events())
		}
		if !seen[e] {
			seen[e] = true
			events = append(events, e)
		}
	}
	if err := webhook.CheckSecret(*body.Secret); err != nil {
		return apierr.Param("secret", err.Error())
	}
	ctx, cancel := context.WithTimeout(r.Context(), urlCheckTimeout)
	defer cancel()
	if err := s.deps.Webhooks.Delivery.CheckURL(ctx, *body.URL); err != nil {
		return apierr.Param("url", "url refused: "+err.Error()).With("reason", urlReason(err))
	}
	w := &webhook.Registration{PartnerID: r.Partner.ID, URL: *body.URL, Events: events, Secret: *body.Secret, Active: true}
	if err := s.deps.Webhooks.Registrations.CreateWebhook(r.Context(), w); err != nil {
		if errors.Is(err, webhook.ErrLimit) {
			return apierr.Param("webhooks", fmt.Sprintf("at most %d webhooks per partner; delete one first", webhook.MaxPerPartner)).
				With("limit", webhook.MaxPerPartner)
		}
		return fmt.Errorf("edge: create webhook: %w", err)
	}
	writeJSON(r, http.StatusCreated, viewWebhook(w, false))
	return nil
}

// urlReason is a stable machine-readable word for a refused URL.
func urlReason(err error) string {
	switch {
	case errors.Is(err, webhook.ErrNotHTTPS):
		return "not_https"
	case errors.Is(err, webhook.ErrForbiddenAddress):
		return "forbidden_address"
	case errors.Is(err, webhook.ErrUnresolvable):
		return "unresolvable"
	}
	return "malformed"
}

func (s *Server) listWebhooks(r *Request) error {
	hooks, err := s.deps.Webhooks.Registrations.Webhooks(r.Context(), r.Partner.ID)
	if err != nil {
		return fmt.Errorf("edge: list webhooks: %w", err)
	}
	out := struct {
		Webhooks []webhookView `json:"webhooks"`
	}{Webhooks: make([]webhookView, 0, len(hooks))}
	for _, w := range hooks {
		out.Webhooks = append(out.Webhooks, viewWebhook(w, true))
	}
	writeJSON(r, statusOK, out)
	return nil
}

func webhookNotFound(id string) *apierr.Error {
	return apierr.New(apierr.NotFound, "no webhook "+id+" for this partner").With("param", "id")
}

func pathID(r *Request) string {
	id, _ := r.Ctx.UserValue("id").(string)
	return id
}

func (s *Server) deleteWebhook(r *Request) error {
	id := pathID(r)
	if err := s.deps.Webhooks.Registrations.DeleteWebhook(r.Context(), r.Partner.ID, id); err != nil {
		if errors.Is(err, account.ErrNotFound) {
			return webhookNotFound(id)
		}
		return fmt.Errorf("edge: delete webhook: %w", err)
	}
	writeJSON(r, statusOK, struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true})
	return nil
}

type deliveryView struct {
	ID         string        `json:"id"`
	Event      string        `json:"event"`
	Attempt    int           `json:"attempt"`
	StatusCode *int          `json:"statusCode"`
	LatencyMs  *int64        `json:"latencyMs"`
	Error      *string       `json:"error"`
	State      string        `json:"state"`
	CreatedAt  string        `json:"createdAt"`
	UpdatedAt  string        `json:"updatedAt"`
	Attempts   []attemptView `json:"attempts"`
}

type attemptView struct {
	Attempt    int     `json:"attempt"`
	StatusCode *int    `json:"statusCode"`
	LatencyMs  int64   `json:"latencyMs"`
	Error      *string `json:"error"`
	At         string  `json:"at"`
}

// attemptTimeFormat is RFC 3339 with milliseconds: retries of a short
// schedule can be less than a second apart.
const attemptTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// webhookDeliveries answers GET /v1/partner/webhooks/{id}/deliveries: the
// webhook's newest 100 deliveries, newest first, one item per delivery (its
// id is the X-Service-Delivery header every attempt carried). Each item
// keeps its summary fields with their meaning — attempt (how many were
// made), statusCode, latencyMs and error of the latest attempt (null before
// the first; statusCode null when no HTTP answer came), state, createdAt,
// updatedAt — and adds attempts[], the log of its attempts oldest first:
// {attempt, statusCode (null without an answer), latencyMs, error (null on
// success), at (when it was sent, RFC 3339 with milliseconds)}. The log
// holds every attempt of the default schedule; a schedule longer than
// webhook.MaxAttemptsKept (16) attempts shows its newest 16. A delivery recorded before attempts were
// logged lists its latest attempt alone, timed by its updatedAt.
func (s *Server) webhookDeliveries(r *Request) error {
	id := pathID(r)
	recs, err := s.deps.Webhooks.Registrations.Deliveries(r.Context(), r.Partner.ID, id, maxDeliveriesListed)
	if err != nil {
		if errors.Is(err, account.ErrNotFound) {
			return webhookNotFound(id)
		}
		return fmt.Errorf("edge: list deliveries: %w", err)
	}
	out := struct {
		Deliveries []deliveryView `json:"deliveries"`
	}{Deliveries: make([]deliveryView, 0, len(recs))}
	for _, d := range recs {
		out.Deliveries = append(out.Deliveries, viewDelivery(d))
	}
	writeJSON(r, statusOK, out)
	return nil
}

func (s *Server) testWebhook(r *Request) error {
	id := pathID(r)
	did, err := s.deps.Webhooks.Delivery.SendTest(r.Context(), r.Partner.ID, id)
	if err != nil {
		if errors.Is(err, account.ErrNotFound) {
			return webhookNotFound(id)
		}
		return fmt.Errorf("edge: send test event: %w", err)
	}
	writeJSON(r, http.StatusAccepted, struct {
		DeliveryID string `json:"deliveryId"`
		Event      string `json:"event"`
	}{did, webhook.TestEvent})
	return nil
}

// viewDelivery shows a delivery's history row as the delivery log lists it
// (see webhookDeliveries).
func viewDelivery(d *webhook.DeliveryRecord) deliveryView {
	v := deliveryView{ID: d.ID, Event: d.Event, Attempt: d.Attempt, State: d.State,
		CreatedAt: d.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: d.UpdatedAt.UTC().Format(time.RFC3339)}
	// Before the first attempt there is no status or latency to show;
	// null says so rather than a misleading 0.
	if d.Attempt > 0 {
		v.LatencyMs = &d.LatencyMs
		if d.StatusCode != 0 {
			v.StatusCode = &d.StatusCode
		}
	}
	if d.Error != "" {
		v.Error = &d.Error
	}
	v.Attempts = make([]attemptView, len(d.Attempts))
	for i := range d.Attempts {
		a := &d.Attempts[i]
		av := attemptView{Attempt: a.Attempt, LatencyMs: a.LatencyMs, At: a.At.UTC().Format(attemptTimeFormat)}
		if a.StatusCode != 0 {
			av.StatusCode = &a.StatusCode
		}
		if a.Error != "" {
			av.Error = &a.Error
		}
		v.Attempts[i] = av
	}
	return v
}

// resendDelivery answers POST /v1/partner/webhooks/{id}/deliveries/
// {deliveryId}/resend: a failed delivery (retrying or dead) is owed again
// with its original body and delivery ID, so it carries the same
// X-Service-Signature and receivers deduplicate it as any retry; a dead
// one gets one more attempt, a retrying one its next attempt now. The
// route is idempotent by its effect: a delivery already pending again (or
// delivered) is not sent twice, and the answer says resent false; with an
// Idempotency-Key a repeat replays the first answer instead. It
// answers 202 with {deliveryId, state, resent}. An unknown webhook or
// delivery, or another partner's, is 404 NOT_FOUND naming the parameter; a
// malformed deliveryId is the same 404 before anything is read; a dead
// delivery recorded before payloads were kept is 400 INVALID_PARAMS
// naming deliveryId with details.reason "payload_not_kept".
func (s *Server) resendDelivery(r *Request) error {
	id := pathID(r)
	did, _ := r.Ctx.UserValue("deliveryId").(string)
	if !webhook.WellFormedDeliveryID(did) {
		return apierr.New(apierr.NotFound, "no delivery "+did+": a delivery id is dlv_ and 24 hex digits").With("param", "deliveryId")
	}
	rec, resent, err := s.deps.Webhooks.Delivery.Resend(r.Context(), r.Partner.ID, id, did)
	switch {
	case errors.Is(err, account.ErrNotFound):
		if _, werr := s.deps.Webhooks.Registrations.Deliveries(r.Context(), r.Partner.ID, id, 1); errors.Is(werr, account.ErrNotFound) {
			return webhookNotFound(id)
		}
		return apierr.New(apierr.NotFound, "no delivery "+did+" of webhook "+id).With("param", "deliveryId")
	case errors.Is(err, webhook.ErrNotResendable):
		return apierr.Param("deliveryId", "delivery "+did+" was recorded before payloads were kept and cannot be resent").
			With("reason", "payload_not_kept")
	case err != nil:
		return fmt.Errorf("edge: resend delivery: %w", err)
	}
	writeJSON(r, http.StatusAccepted, struct {
		DeliveryID string `json:"deliveryId"`
		State      string `json:"state"`
		Resent     bool   `json:"resent"`
	}{rec.ID, rec.State, resent})
	return nil
}
