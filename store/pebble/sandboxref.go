package pebblestore

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// prefixSimRef starts simref/<ref>: the transaction hash of a sandbox
// delivery (a bridge's destination side, a refund, a step-2 payment) by
// the reference of what it delivered, so that a repeated poll never
// delivers twice.
const prefixSimRef = "simref/"

// SandboxDelivery returns the hash of the delivery made for ref, or
// store.ErrNotFound.
func (s *Store) SandboxDelivery(ctx context.Context, ref string) (string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", err
	}
	v, err := s.get([]byte(prefixSimRef + ref))
	if err != nil {
		return "", fmt.Errorf("pebblestore: sandbox delivery %s: %w", ref, err)
	}
	return string(v), nil
}

// PutSandboxDelivery records the delivery made for ref, synced.
func (s *Store) PutSandboxDelivery(ctx context.Context, ref, txHash string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := s.db.Set([]byte(prefixSimRef+ref), []byte(txHash), pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: record sandbox delivery %s: %w", ref, err)
	}
	return nil
}
