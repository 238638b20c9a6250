package quote

import "time"

// TTL is how long an issued quote stays valid: the expiresAt every quote
// response carries is its issue time plus TTL, and the issued quote can be
// referred to by id until then.
const TTL = 60 * time.Second

// Issued is a quote handed to a client, kept for its lifetime so later
// calls can refer to it by id. It is what AppendResponse renders.
type Issued struct {
	ID        string
	Request   *Request
	Route     *Route
	Provider  string
	FeeBps    int
	ExpiresAt time.Time
	// Preflight is the wallet's checks, approvals and calls (nil: the
	// route was not checked, and none of them is written); the edge sets
	// it on its copy once it has read the chain (see PlanPreflight).
	Preflight *Preflight
	// Timing is the race the quote came from, answered as data.timing
	// (nil: none is written).
	Timing *Timing
}
