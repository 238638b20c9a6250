package prices

import "time"

// Snapshot is every servable price of one chain at one version. It is
// immutable once published: readers share it without locks and must not
// modify its maps.
type Snapshot struct {
	// Version rises each time any price of the chain changes, appears or
	// expires, and only then, so that a reader can keep a response encoded
	// per version.
	Version uint64
	// ByAddress maps the lower-case token address to its USD price.
	ByAddress map[string]float64
	// ObservedAt maps the lower-case token address to when its price was
	// observed.
	ObservedAt map[string]time.Time
	// Logos maps the lower-case token address to the source's image of the
	// token, where the source has one.
	Logos map[string]string
	// UpdatedAt is when these values were first published: a refresh that
	// finds nothing changed keeps the version and this time.
	UpdatedAt time.Time
	// ExpiresAt is when the oldest price in the snapshot becomes too old to
	// serve; zero when nothing in it expires.
	ExpiresAt time.Time
}

// Fresh reports whether the price observed at observed may still be served
// at now, prices older than maxAge being withheld. A maxAge of zero or less
// keeps every price.
func Fresh(observed, now time.Time, maxAge time.Duration) bool {
	return maxAge <= 0 || !now.After(observed.Add(maxAge))
}
