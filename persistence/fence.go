package persistence

import "errors"

// ErrStale is what a fenced write returns when the record it was to
// replace is no longer the one its writer read: another writer (another
// node, during a change of the cluster's topology) moved it first. The
// write changed nothing, so the transition it carried, its events and its
// activity line are not recorded twice; the writer reads the record again.
var ErrStale = errors.New("persistence: the stored record moved since it was read")
