package prices

import "time"

// Snapshot is every price of one chain at one version. It is immutable once
// published: readers share it without locks and must not modify the map.
type Snapshot struct {
	// Version increases by one each time any price of the chain changes, and
	// only then, so that a reader can keep a response encoded per version.
	Version uint64
	// ByAddress maps the lower-case token address to its USD price.
	ByAddress map[string]float64
	// UpdatedAt is when these values were first observed: a refresh that
	// finds nothing changed leaves the snapshot, time included, as it is.
	UpdatedAt time.Time
}
