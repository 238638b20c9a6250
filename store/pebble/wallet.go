package pebblestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/store"
)

// prefixWalletSwap starts walletswap/<partnerID>/<len:2><wallet><ts:8><id>:
// empty, one per wallet (account.WalletKey) of each of a partner's
// activity lines that became a swap, the line's position (its swapp/ key
// after the partner's prefix) last, so that a wallet's history is one
// reverse range scan in the partner's order. The wallet is length-prefixed
// rather than ended by '/', which some address forms (base64) contain.
const prefixWalletSwap = "walletswap/"

// walletPrefix is the key prefix of one wallet's lines in a partner's
// history.
func walletPrefix(partnerID, wallet string) []byte {
	k := append([]byte(prefixWalletSwap+partnerID+"/"), byte(len(wallet)>>8), byte(len(wallet)))
	return append(k, wallet...)
}

// putWalletIndex adds to b the walletswap/ entries of a, a line naming
// its wallets. Writing them again is harmless: a line's wallets never
// change once its swap names them.
func putWalletIndex(b *pebble.Batch, a *account.Activity) error {
	for _, w := range a.Wallets() {
		if len(w) > 0xffff {
			continue
		}
		k := binary.BigEndian.AppendUint64(walletPrefix(a.PartnerID, w), uint64(a.CreatedAt.UnixNano()))
		if err := b.Set(append(k, a.ID...), nil, nil); err != nil {
			return fmt.Errorf("pebblestore: batch wallet index of %s: %w", a.ID, err)
		}
	}
	return nil
}

// markActivity rewrites the quote's activity record as the swap now stands
// (swap.MarkLine: kind, status, wallets, transactions), with its wallets'
// index entries, in b (a quote that became a swap). A quote without a
// record (an anonymous one has none) is left alone.
func (s *Store) markActivity(b *pebble.Batch, t *swap.Swap) error {
	if t.QuoteID == "" || t.QuoteIssuedAt.IsZero() || !account.ValidID(t.PartnerID) {
		return nil
	}
	key := ActivityKey(t.PartnerID, t.QuoteIssuedAt, t.QuoteID)
	val, err := s.get(key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pebblestore: activity of swap %s: %w", t.ID, err)
	}
	a, err := store.DecodeActivity(val)
	if err != nil {
		return err
	}
	indexed := a.Kind == account.ActivitySwap && a.FromAddress != ""
	t.MarkLine(a)
	if err := s.PutActivity(b, a); err != nil {
		return err
	}
	if indexed {
		return nil
	}
	return putWalletIndex(b, a)
}

// walletActivities is Activities with q.Wallet: it scans the wallet's
// index entries newest first, from the cursor's position, and reads each
// line they name. The cursor is the same position in the partner's
// history that Activities hands out.
func (s *Store) walletActivities(ctx context.Context, partnerID string, q account.ActivityQuery) ([]*account.Activity, string, error) {
	if len(q.Wallet) > 0xffff {
		return []*account.Activity{}, "", nil
	}
	prefix := walletPrefix(partnerID, q.Wallet)
	// A wallet key is printable text, so its last byte is never 0xff.
	upper, err := pageUpper(prefix, q.Cursor)
	if err != nil {
		return nil, "", err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return nil, "", fmt.Errorf("pebblestore: wallet iterator: %w", err)
	}
	defer it.Close()
	lineKey := activityPrefix(partnerID)
	out, next, err := pageMatches(ctx, it, len(prefix), q, func(pos, _ []byte) (*account.Activity, error) {
		if len(pos) <= 8 {
			return nil, nil
		}
		val, err := s.get(append(lineKey[:len(lineKey):len(lineKey)], pos...))
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("wallet line: %w", err)
		}
		return store.DecodeActivity(val)
	})
	if err != nil {
		return nil, "", fmt.Errorf("pebblestore: list wallet %s of %s: %w", q.Wallet, partnerID, err)
	}
	return out, next, nil
}

// indexSwapWallets is the migration to schema 5: each tracked swap's
// activity line takes the swap's wallets and transactions, and the
// wallets' index entries, as a transition of the swap writes them now. A
// line already marked so is passed over, so a crash part-way is finished
// by the next open.
func (s *Store) indexSwapWallets(b *pebble.Batch, _, val []byte) (bool, error) {
	t, err := decodeSwap(val)
	if err != nil {
		return false, err
	}
	if t.QuoteID == "" || t.QuoteIssuedAt.IsZero() || !account.ValidID(t.PartnerID) {
		return false, nil
	}
	line, err := s.get(ActivityKey(t.PartnerID, t.QuoteIssuedAt, t.QuoteID))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	a, err := store.DecodeActivity(line)
	if err != nil {
		return false, err
	}
	if a.FromAddress != "" || a.Kind != account.ActivitySwap {
		return false, nil
	}
	return true, s.markActivity(b, t)
}
