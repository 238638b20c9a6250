package pebblestore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// prefixOnramp starts onramp/<orderUid>: an on-ramp order (onramp.Order)
// with its history.
const prefixOnramp = "onramp/"

// onrampRecord is the on-disk form of an order.
type onrampRecord struct {
	V int `json:"v"`
	onramp.Order
}

func onrampKey(uid string) []byte { return []byte(prefixOnramp + uid) }

func decodeOnramp(b []byte) (*onramp.Order, error) {
	var r onrampRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode on-ramp order: %w", err)
	}
	if r.V != 1 {
		return nil, fmt.Errorf("pebblestore: on-ramp order record version %d unknown", r.V)
	}
	return &r.Order, nil
}

// OnrampOrder returns an order by uid, or store.ErrNotFound.
func (s *Store) OnrampOrder(ctx context.Context, uid string) (*onramp.Order, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	val, err := s.get(onrampKey(uid))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: on-ramp order %s: %w", uid, err)
	}
	return decodeOnramp(val)
}

// SaveOnrampOrder writes an order as it now stands in one synced batch with
// what goes with it: the events its last transition publishes (to the
// order's partner's webhooks), the partner's activity line, and, the first
// time that line carries an earning (the order completed with a partner
// fee), the earning's entry in its ecosystem's pending index. A new order
// is saved the same way, with no events.
func (s *Store) SaveOnrampOrder(ctx context.Context, o *onramp.Order, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	val, err := json.Marshal(onrampRecord{V: 1, Order: *o})
	if err != nil {
		return fmt.Errorf("pebblestore: encode on-ramp order: %w", err)
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(onrampKey(o.UID), val, nil); err != nil {
		return err
	}
	if a := o.Activity(); a != nil {
		if err := s.putOnrampActivity(b, a); err != nil {
			return err
		}
		for _, ev := range events {
			if err := s.EnqueueEvent(b, o.PartnerID, ev); err != nil {
				return err
			}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit on-ramp order %s: %w", o.UID, err)
	}
	return nil
}

// putOnrampActivity adds an order's activity line to b and, when the line
// carries an earning the stored line did not, the earning's pending-index
// entry under the next ledger sequence number, so that settlement pays it
// like any quote's. A line already settled is left as it is. The caller
// holds partnerMu.
func (s *Store) putOnrampActivity(b *pebble.Batch, a *account.Activity) error {
	key := ActivityKey(a.PartnerID, a.CreatedAt, a.ID)
	var stored *account.Activity
	switch val, err := s.get(key); {
	case err == nil:
		if stored, err = store.DecodeActivity(val); err != nil {
			return err
		}
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("pebblestore: on-ramp activity %s: %w", a.ID, err)
	}
	if stored != nil && stored.Earning != nil {
		return nil
	}
	if err := s.PutActivity(b, a); err != nil {
		return err
	}
	if a.Earning == nil {
		return nil
	}
	seq, err := s.nextLedgerSeq(b)
	if err != nil {
		return err
	}
	ek := binary.BigEndian.AppendUint64(LedgerEcosystemPrefix(a.Earning.Ecosystem), seq)
	if err := b.Set(append(ek, a.ID...), key, nil); err != nil {
		return fmt.Errorf("pebblestore: batch ledger index %s: %w", a.ID, err)
	}
	return nil
}

// EachOpenOnrampOrder calls fn for every order not in a terminal state, for
// the on-ramp desk resuming after a start (expiries that fell while the
// service was down, deliveries under way).
func (s *Store) EachOpenOnrampOrder(ctx context.Context, fn func(*onramp.Order) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixOnramp), UpperBound: prefixUpperBound(prefixOnramp)})
	if err != nil {
		return fmt.Errorf("pebblestore: on-ramp iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		o, err := decodeOnramp(it.Value())
		if err != nil {
			return err
		}
		if o.State.Terminal() {
			continue
		}
		if !fn(o) {
			break
		}
	}
	return it.Error()
}
