package webhook

import "time"

// Delivery states, as the partner sees them in a webhook's delivery
// history: pending until the first attempt, retrying after a failed attempt
// that will be repeated, delivered once the receiver answered 2xx, and dead
// once the last attempt the retry schedule allows has failed.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryRetrying  = "retrying"
	DeliveryDead      = "dead"
)

// deliveryIDPrefix starts generated delivery IDs, so that a delivery ID is
// told apart from a webhook ID at a glance.
const deliveryIDPrefix = "dlv_"

// NewDeliveryID returns a fresh random delivery ID, "dlv_" and 24 hex
// digits.
func NewDeliveryID() (string, error) {
	return newID(deliveryIDPrefix, "delivery")
}

// OutboxEntry is one delivery owed to one webhook. Body is the exact payload
// to sign and send, fixed when the event enters the outbox, so every attempt
// carries byte-identical content; DeliveryID stays the same across retries
// (it is the X-Service-Delivery header), which is what lets receivers
// deduplicate.
//
// The JSON field names are the stored encoding, as for Registration.
type OutboxEntry struct {
	DeliveryID string    `json:"deliveryId"`
	WebhookID  string    `json:"webhookId"`
	PartnerID  string    `json:"partnerId"`
	Event      string    `json:"event"`
	Body       []byte    `json:"body"`
	Attempt    int       `json:"attempt"` // attempts already made
	CreatedAt  time.Time `json:"createdAt"`
	Due        time.Time `json:"due"`
}

// DeliveryRecord is the history row of one delivery: the outcome of its
// latest attempt and its state, which is what the partner is shown.
//
// The JSON field names are the stored encoding, as for Registration.
type DeliveryRecord struct {
	ID         string    `json:"id"`
	WebhookID  string    `json:"webhookId"`
	Event      string    `json:"event"`
	Attempt    int       `json:"attempt"`
	StatusCode int       `json:"statusCode"`
	LatencyMs  int64     `json:"latencyMs"`
	Error      string    `json:"error,omitempty"`
	State      string    `json:"state"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// AttemptOutcome is the result of one attempt of Entry: Record is its new
// history row, and a non-zero RetryAt is when the next attempt is due. A
// zero RetryAt means the delivery is over (delivered or dead), and the entry
// leaves the outbox.
type AttemptOutcome struct {
	Entry   *OutboxEntry
	Record  *DeliveryRecord
	RetryAt time.Time
}
