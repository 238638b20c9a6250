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
