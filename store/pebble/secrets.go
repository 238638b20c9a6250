package pebblestore

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/local"
)

// keySecretCheck holds a check value of the sealing key (an HMAC of a fixed
// string under a key derived for that alone, revealing nothing of the key),
// written when the key is first used, so that a missing or swapped key file
// is told at open rather than at the first delivery.
var keySecretCheck = []byte("meta/secretkey")

// openSealer loads the data directory's sealing key, creating it if the
// directory has none and never had one, and checks it against the check
// value stored with the records.
func (s *Store) openSealer(dir string) error {
	stored, err := s.get(keySecretCheck)
	switch {
	case errors.Is(err, store.ErrNotFound):
		stored = nil
	case err != nil:
		return fmt.Errorf("pebblestore: read the secret key's check value: %w", err)
	}
	sl, err := local.LoadSecretSealer(dir, stored)
	if err != nil {
		return err
	}
	if stored == nil {
		if err := s.db.Set(keySecretCheck, sl.Check(), pebble.Sync); err != nil {
			return fmt.Errorf("pebblestore: write the secret key's check value: %w", err)
		}
	}
	s.seal = sl
	return nil
}
