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

// WellFormedDeliveryID reports whether id has the shape NewDeliveryID
// draws: "dlv_" and 24 lower-case hex digits.
func WellFormedDeliveryID(id string) bool {
	if len(id) != len(deliveryIDPrefix)+24 || id[:len(deliveryIDPrefix)] != deliveryIDPrefix {
		return false
	}
	for _, c := range id[len(deliveryIDPrefix):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
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

// DeliveryRecord is the history row of one delivery, which is what the
// partner is shown: its state, the outcome of its latest attempt (Attempt,
// StatusCode, LatencyMs, Error), and the log of its attempts.
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
	// Attempts lists the delivery's attempts, oldest first: every one, or
	// the newest MaxAttemptsKept of a longer schedule (see AppendAttempt).
	Attempts []Attempt `json:"attempts,omitempty"`
	// Body is the payload every attempt sent (recorded from the first
	// attempt on), kept so that a failed delivery can be resent with the
	// very bytes, and so the very signature, of the original.
	Body []byte `json:"body,omitempty"`
	// NextAttemptAt is when a retrying delivery's next attempt is due
	// (zero otherwise): where its outbox entry waits.
	NextAttemptAt time.Time `json:"nextAttemptAt,omitzero"`
}

// ResendMargin is how far ahead a retrying delivery's next attempt must be
// for a resend to bring it forward: one due sooner may already be on its
// way to a worker, and is left to come.
const ResendMargin = 5 * time.Second

// Attempt is one try of a delivery: its number (1-based), the receiver's
// HTTP status (0 when no answer came), how long it took, why it failed
// (empty when it succeeded) and when it was sent.
//
// The JSON field names are the stored encoding, as for Registration.
type Attempt struct {
	Attempt    int       `json:"attempt"`
	StatusCode int       `json:"statusCode"`
	LatencyMs  int64     `json:"latencyMs"`
	Error      string    `json:"error,omitempty"`
	At         time.Time `json:"at"`
}

// MaxAttemptsKept bounds the attempts a delivery record keeps: twice the
// default schedule's attempts, so that every attempt of the default
// schedule, and of any schedule up to twice as long, is kept. A longer
// schedule keeps its newest ones; the record's Attempt still counts all.
const MaxAttemptsKept = 2 * DefaultMaxAttempts

// AppendAttempt returns the attempt log with a added, keeping the newest
// MaxAttemptsKept. It never modifies log's backing array, which may be
// shared with a record already handed out.
func AppendAttempt(log []Attempt, a Attempt) []Attempt {
	keep := log[max(0, len(log)-(MaxAttemptsKept-1)):]
	out := make([]Attempt, 0, len(keep)+1)
	out = append(out, keep...)
	return append(out, a)
}

// LatestAttempt is the attempt a record's latest-attempt fields describe,
// sent at at. It is how the log of a record kept before attempts were
// logged starts.
func (d *DeliveryRecord) LatestAttempt(at time.Time) Attempt {
	return Attempt{Attempt: d.Attempt, StatusCode: d.StatusCode, LatencyMs: d.LatencyMs, Error: d.Error, At: at}
}

// AttemptOutcome is the result of one attempt of Entry: Record is its new
// history row (its Attempts are filled in when it is recorded), At is when
// the attempt was sent, and a non-zero RetryAt is when the next attempt is
// due. A zero RetryAt means the delivery is over (delivered or dead), and
// the entry leaves the outbox.
type AttemptOutcome struct {
	Entry   *OutboxEntry
	Record  *DeliveryRecord
	At      time.Time
	RetryAt time.Time
}
