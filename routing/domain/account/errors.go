package account

import "errors"

// Errors a store of accounts reports. They are declared here, with the
// model, so that callers above the store (the edge, the actors) recognise
// them without importing the store that produced them.
var (
	// ErrNotFound means the requested record does not exist, or belongs to
	// another partner (the two are indistinguishable on purpose, so that
	// identifiers cannot be probed).
	ErrNotFound = errors.New("not found")
	// ErrExists means a record with the same identity already exists.
	ErrExists = errors.New("already exists")
)

// ErrSettlementConflict means a settlement's decisions could not be applied
// because an earning they name left the pending set after it was read (a
// concurrent run settled it). Nothing of the decisions was applied; the run
// may be read and decided again.
var ErrSettlementConflict = errors.New("settlement conflict: an earning left the pending set while the run decided")
