package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// prefixInbound starts inbound/<txHash>: a registered multi-step deposit
// (inbound.Deposit) by its step-1 transaction hash in lower case.
const prefixInbound = "inbound/"

// inboundRecord is the on-disk form of a registered deposit.
type inboundRecord struct {
	V int `json:"v"`
	inbound.Record
}

func inboundKey(txHash string) []byte { return []byte(prefixInbound + strings.ToLower(txHash)) }

func decodeInbound(b []byte) (*inbound.Record, error) {
	var r inboundRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode inbound deposit: %w", err)
	}
	if r.V != 1 {
		return nil, fmt.Errorf("pebblestore: inbound deposit record version %d unknown", r.V)
	}
	return &r.Record, nil
}

// InboundDepositByHash returns the deposit registered for a step-1
// transaction, or store.ErrNotFound.
func (s *Store) InboundDepositByHash(ctx context.Context, txHash string) (*inbound.Record, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	val, err := s.get(inboundKey(txHash))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: inbound deposit %s: %w", txHash, err)
	}
	return decodeInbound(val)
}

// CreateInboundDeposit stores a newly registered deposit with its
// deposit.received event in one synced batch, or returns the deposit
// already registered for that transaction (created false).
func (s *Store) CreateInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) (*inbound.Record, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	key := inboundKey(d.Deposit.Registration.TxHash.Hex())
	switch val, err := s.get(key); {
	case err == nil:
		old, err := decodeInbound(val)
		return old, false, err
	case !errors.Is(err, store.ErrNotFound):
		return nil, false, fmt.Errorf("pebblestore: inbound deposit: %w", err)
	}
	if err := s.commitInbound(d, events); err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// SaveInboundDeposit records a step of a deposit with the events it
// publishes in one synced batch.
func (s *Store) SaveInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	return s.commitInbound(d, events)
}

func (s *Store) commitInbound(d *inbound.Record, events []webhook.Event) error {
	val, err := json.Marshal(inboundRecord{V: 1, Record: *d})
	if err != nil {
		return fmt.Errorf("pebblestore: encode inbound deposit: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(inboundKey(d.Deposit.Registration.TxHash.Hex()), val, nil); err != nil {
		return err
	}
	if d.PartnerID != "" {
		for _, ev := range events {
			if err := s.EnqueueEvent(b, d.PartnerID, ev); err != nil {
				return err
			}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit inbound deposit: %w", err)
	}
	return nil
}

// EachOpenInboundDeposit calls fn for every deposit not in a terminal
// state, for the step-2 runner resuming after a start.
func (s *Store) EachOpenInboundDeposit(ctx context.Context, fn func(*inbound.Record) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixInbound), UpperBound: prefixUpperBound(prefixInbound)})
	if err != nil {
		return fmt.Errorf("pebblestore: inbound iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		d, err := decodeInbound(it.Value())
		if err != nil {
			return err
		}
		if d.Deposit.State.Terminal() {
			continue
		}
		if !fn(d) {
			break
		}
	}
	return it.Error()
}
