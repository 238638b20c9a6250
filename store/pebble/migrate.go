package pebblestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// migrate brings a directory written with schema version from up to
// SchemaVersion, one version at a time, stamping each version once its
// step is committed. Every step can be re-run from where a crash left it.
func (s *Store) migrate(from uint32) error {
	for v := from; v < SchemaVersion; v++ {
		switch v {
		case 1:
			if err := s.migrateLedgerIntoActivity(); err != nil {
				return fmt.Errorf("pebblestore: migrate schema 1 to 2: %w", err)
			}
		case 2:
			if err := s.dropPebbleTickets(); err != nil {
				return fmt.Errorf("pebblestore: migrate schema 2 to 3: %w", err)
			}
		case 3:
			if err := s.sealWebhookSecrets(); err != nil {
				return fmt.Errorf("pebblestore: migrate schema 3 to 4: %w", err)
			}
		case 4:
			if _, err := s.migrateRecords(prefixSwap, s.indexSwapWallets); err != nil {
				return fmt.Errorf("pebblestore: migrate schema 4 to 5: %w", err)
			}
		}
		if err := s.stampSchema(v + 1); err != nil {
			return err
		}
	}
	return nil
}

// Schema 1 kept each ledger row as a record of its own, next to its quote's
// activity record, with a quote-id index:
//
//	ledger/p/<partnerID>/<ts:8><quoteID>   the row (legacyLedgerRecord)
//	ledger/q/<quoteID>                     partnerID
//	ledger/e/<ecosystem>/<seq:8><quoteID>  ledger/p key of a pending row
const (
	legacyPrefixLedgerRow   = "ledger/p/"
	legacyPrefixLedgerQuote = "ledger/q/"
)

// legacyLedgerRecord is a schema 1 ledger row.
type legacyLedgerRecord struct {
	V              int       `json:"v"`
	PartnerID      string    `json:"partnerId"`
	QuoteID        string    `json:"quoteId"`
	Ecosystem      string    `json:"ecosystem"`
	Provider       string    `json:"provider"`
	Tool           string    `json:"tool"`
	FromChain      uint64    `json:"fromChain"`
	ToChain        uint64    `json:"toChain"`
	FromToken      string    `json:"fromToken"`
	ToToken        string    `json:"toToken"`
	FromAmount     string    `json:"fromAmount"`
	ToAmount       string    `json:"toAmount"`
	FeeToken       string    `json:"feeToken"`
	FeeAmount      string    `json:"feeAmount"`
	FeeMicroUSD    int64     `json:"feeMicroUsd"`
	VolumeMicroUSD int64     `json:"volumeMicroUsd"`
	CreatedAt      time.Time `json:"createdAt"`
	State          string    `json:"state"`
	SettledBatch   string    `json:"settledBatch,omitempty"`
	SettledTo      string    `json:"settledTo,omitempty"`
	SettledAt      time.Time `json:"settledAt,omitzero"`
}

// migrateChunk bounds the rows one migration batch carries.
const migrateChunk = 1024

// migrateLedgerIntoActivity moves every schema 1 ledger row into its
// quote's activity record (made from the row where the quote had none) as
// its Earning, deletes the row and its quote-id index entry in the same
// batch, and then points the pending index at the activity records. A row
// and its record change together, so a crash part-way leaves rows either
// migrated or still waiting, and the next open finishes the job.
func (s *Store) migrateLedgerIntoActivity() error {
	if _, err := s.migrateRecords(legacyPrefixLedgerRow, s.migrateLedgerRow); err != nil {
		return err
	}
	return s.repointLedgerIndex()
}

// migrateRecords calls step for every record under prefix, in key order,
// with the batch that carries the record's migration; step reports whether
// it changed anything. The batch is committed, synced, each time
// migrateChunk records were changed, and at the end; the next chunk starts
// where the last one stopped. A crash part-way leaves the records of the
// committed chunks migrated and the rest waiting, so every step must pass
// over a record already migrated. It returns how many records were changed.
func (s *Store) migrateRecords(prefix string, step func(b *pebble.Batch, key, val []byte) (bool, error)) (int, error) {
	total := 0
	for lower := []byte(prefix); lower != nil; {
		n, next, err := s.migrateChunkFrom(lower, prefixUpperBound(prefix), step)
		if err != nil {
			return total, err
		}
		total += n
		lower = next
	}
	return total, nil
}

// migrateChunkFrom is one chunk of migrateRecords, from lower on: it
// returns the records it changed and the key of the first record it did
// not reach, nil when it reached the end.
func (s *Store) migrateChunkFrom(lower, upper []byte, step func(b *pebble.Batch, key, val []byte) (bool, error)) (int, []byte, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, nil, err
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	n := 0
	ok := it.First()
	for ; ok && n < migrateChunk; ok = it.Next() {
		changed, err := step(b, it.Key(), it.Value())
		if err != nil {
			return 0, nil, err
		}
		if changed {
			n++
		}
	}
	if err := it.Error(); err != nil {
		return 0, nil, err
	}
	var next []byte
	if ok {
		next = slices.Clone(it.Key())
	}
	if n == 0 {
		return 0, next, nil
	}
	return n, next, b.Commit(pebble.Sync)
}

// migrateLedgerRow adds to b the migration of one schema 1 ledger row.
func (s *Store) migrateLedgerRow(b *pebble.Batch, rowKey, val []byte) (bool, error) {
	var row legacyLedgerRecord
	if err := json.Unmarshal(val, &row); err != nil {
		return false, fmt.Errorf("decode ledger row %q: %w", rowKey, err)
	}
	if row.V != 1 {
		return false, fmt.Errorf("ledger row %q: version %d unknown", rowKey, row.V)
	}
	// Both families key a quote by <partnerID>/<ts:8><quoteID>.
	key := append([]byte(prefixActivity), rowKey[len(legacyPrefixLedgerRow):]...)
	a, err := s.legacyActivity(key, &row)
	if err != nil {
		return false, err
	}
	enc, err := store.EncodeActivity(a)
	if err != nil {
		return false, err
	}
	if err := errors.Join(b.Set(key, enc, nil), b.Delete(rowKey, nil),
		b.Delete([]byte(legacyPrefixLedgerQuote+row.QuoteID), nil)); err != nil {
		return false, err
	}
	return true, nil
}

// legacyActivity is the activity record at key (or, where the quote had
// none, one made from the row) with the row merged in as its Earning.
func (s *Store) legacyActivity(key []byte, r *legacyLedgerRecord) (*account.Activity, error) {
	a := &account.Activity{PartnerID: r.PartnerID, ID: r.QuoteID, Kind: account.ActivityQuote, Status: account.ActivityQuoted,
		Provider: r.Provider, Tool: r.Tool, FromChain: r.FromChain, ToChain: r.ToChain,
		FromToken: r.FromToken, ToToken: r.ToToken, FromAmount: r.FromAmount, ToAmount: r.ToAmount,
		VolumeMicroUSD: r.VolumeMicroUSD, CreatedAt: r.CreatedAt}
	switch val, err := s.get(key); {
	case err == nil:
		if a, err = store.DecodeActivity(val); err != nil {
			return nil, err
		}
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	a.FeeMicroUSD = r.FeeMicroUSD
	a.Earning = &account.Earning{Ecosystem: r.Ecosystem, FeeToken: r.FeeToken, FeeAmount: r.FeeAmount, State: r.State,
		SettledBatch: r.SettledBatch, SettledTo: r.SettledTo, SettledAt: r.SettledAt}
	return a, nil
}

// repointLedgerIndex rewrites pending index entries that still name a
// schema 1 row key to name the activity record instead.
func (s *Store) repointLedgerIndex() error {
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte(prefixLedgerEco), UpperBound: prefixUpperBound(prefixLedgerEco),
	})
	if err != nil {
		return err
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if v := it.Value(); bytes.HasPrefix(v, []byte(legacyPrefixLedgerRow)) {
			key := append([]byte(prefixActivity), v[len(legacyPrefixLedgerRow):]...)
			if err := b.Set(slices.Clone(it.Key()), key, nil); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if b.Empty() {
		return nil
	}
	return b.Commit(pebble.Sync)
}

// Schema 2 kept issued quotes' tickets in Pebble, with the deposit index of
// intents quotes:
//
//	quote/<issued:8><quoteID>          the ticket (JSON, as store.EncodeTicket encodes it)
//	deposit/<depositAddress>/<memo>    quote id by deposit target
//
// Schema 3 keeps both in the ticket log (ticketlog.go).
const (
	legacyPrefixTicket  = "quote/"
	legacyPrefixDeposit = "deposit/"
)

// dropPebbleTickets deletes the schema 2 tickets and deposit index by
// range, in one synced batch that compaction later reclaims. They are not
// carried into the ticket log: they live minutes, and the quotes whose
// tickets go are unknown to execute (their clients quote again), as after
// a crash. "deposit/" is no prefix of "depositswap/", whose records stay.
func (s *Store) dropPebbleTickets() error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, prefix := range []string{legacyPrefixTicket, legacyPrefixDeposit} {
		if err := b.DeleteRange([]byte(prefix), prefixUpperBound(prefix), nil); err != nil {
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

// Schema 3 kept each webhook's signing secret in clear in its record
// (webhook record version 1, the secret under "secret"); schema 4 seals it
// (version 2, see secrets.go).

// sealWebhookSecrets rewrites every version 1 webhook record as version 2,
// its secret sealed, in synced batches of migrateChunk records
// (migrateRecords); records already sealed are left alone, so a crash part-way is finished by the
// next open. Then it flushes the memtable and compacts the webhook range,
// so that the tables holding the clear records are rewritten without
// them and deleted (the logs that held them were replayed and dropped when
// the store opened). Copies of the directory made before the migration
// still hold the secrets in clear, as does free space the file system has
// not reused (see SECURITY.md).
func (s *Store) sealWebhookSecrets() error {
	n, err := s.migrateRecords(prefixWebhook, s.sealWebhookRecord)
	if err != nil || n == 0 {
		return err
	}
	if err := s.db.Flush(); err != nil {
		return fmt.Errorf("flush sealed webhooks: %w", err)
	}
	if err := s.db.Compact(context.Background(), []byte(prefixWebhook), prefixUpperBound(prefixWebhook), false); err != nil {
		return fmt.Errorf("compact sealed webhooks: %w", err)
	}
	return nil
}

// sealWebhookRecord adds to b the version 2 record of a version 1 one, and
// passes over a record already sealed.
func (s *Store) sealWebhookRecord(b *pebble.Batch, key, val []byte) (bool, error) {
	var rec webhookRecord
	if err := json.Unmarshal(val, &rec); err != nil {
		return false, fmt.Errorf("decode webhook %q: %w", key, err)
	}
	switch rec.V {
	case webhookVersion:
		return false, nil
	case 1:
	default:
		return false, fmt.Errorf("webhook %q: version %d unknown", key, rec.V)
	}
	w := rec.Registration
	w.Secret = rec.Secret
	enc, err := s.encodeWebhook(&w)
	if err != nil {
		return false, err
	}
	if err := b.Set(key, enc, nil); err != nil {
		return false, err
	}
	return true, nil
}
