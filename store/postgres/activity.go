package postgres

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// activityChunk is how many rows a read of activity fetches at a time:
// filters are applied here, by the domain's own ActivityQuery.Match, so a
// page may need more rows than it holds.
const activityChunk = 256

// Activities returns one page of a partner's activity, newest first, and the
// cursor of the next page ("" on the last page). The cursor is the Pebble
// store's: the position (creation time, 8 bytes big-endian Unix
// nanoseconds, then the id) of the page's last record inside the partner's
// history, which the next page starts strictly before; it can never reach
// another partner's records, and a cursor from either backend reads the
// same on the other.
func (s *Store) Activities(ctx context.Context, partnerID string, q account.ActivityQuery) ([]*account.Activity, string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, "", err
	}
	out := []*account.Activity{}
	if !account.ValidID(partnerID) {
		return out, "", nil
	}
	if q.Wallet != "" && (!utf8.ValidString(q.Wallet) || strings.ContainsRune(q.Wallet, 0)) {
		// No address is such text, and the database would not take it.
		return out, "", nil
	}
	limit := q.PageSize()
	// before is the exclusive upper bound (created_ns, id); the first
	// page starts past every record (no bound).
	bounded, beforeNs, beforeID := false, int64(0), ""
	if q.Cursor != "" {
		pos, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		// Every cursor this store hands out holds a valid id; another is
		// refused here rather than sent to the database as text it may
		// not take (invalid UTF-8, NUL).
		if err != nil || len(pos) <= 8 || !account.ValidID(string(pos[8:])) {
			return nil, "", fmt.Errorf("postgres: %w: %q", account.ErrBadCursor, q.Cursor)
		}
		bounded, beforeNs, beforeID = true, int64(binary.BigEndian.Uint64(pos)), string(pos[8:])
	}
	var last *account.Activity
	for {
		sql, args := activitySQL(partnerID, q.Wallet, bounded, beforeNs, beforeID)
		rows, err := s.pool.Query(ctx, sql, args...)
		if err != nil {
			return nil, "", fmt.Errorf("postgres: list activity of %s: %w", partnerID, err)
		}
		n, full := 0, false
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				rows.Close()
				return nil, "", fmt.Errorf("postgres: list activity of %s: %w", partnerID, err)
			}
			n++
			a, err := store.DecodeActivity(raw)
			if err != nil {
				rows.Close()
				return nil, "", err
			}
			bounded, beforeNs, beforeID = true, nanos(a.CreatedAt), a.ID
			if !q.Match(a) {
				continue
			}
			if len(out) == limit {
				// One more match exists: the page is full and not the last.
				full = true
				break
			}
			out = append(out, a)
			last = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, "", fmt.Errorf("postgres: list activity of %s: %w", partnerID, err)
		}
		if full {
			return out, activityCursor(last), nil
		}
		if n < activityChunk {
			return out, "", nil
		}
	}
}

// activitySQL is the query of one chunk of a partner's history, newest
// first, strictly before (beforeNs, beforeID) when bounded, of wallet's
// lines only when wallet is set: those are found through the wallet
// indexes (migration 18), a BitmapOr of the two, rather than among every
// line of the partner.
func activitySQL(partnerID, wallet string, bounded bool, beforeNs int64, beforeID string) (string, []any) {
	where, args := `partner_id = $1`, []any{partnerID, activityChunk}
	if wallet != "" {
		where, args = where+` AND (from_wallet = $3 OR to_wallet = $3)`, append(args, wallet)
	}
	if bounded {
		n := len(args)
		where, args = where+` AND (created_ns, id) < ($`+strconv.Itoa(n+1)+`, $`+strconv.Itoa(n+2)+`)`, append(args, beforeNs, beforeID)
	}
	return `SELECT record FROM activity WHERE ` + where + ` ORDER BY created_ns DESC, id DESC LIMIT $2`, args
}

// activityCursor is the cursor of the page ending at a.
func activityCursor(a *account.Activity) string {
	pos := binary.BigEndian.AppendUint64(nil, uint64(nanos(a.CreatedAt)))
	return base64.RawURLEncoding.EncodeToString(append(pos, a.ID...))
}

// EachActivity calls fn for each of a partner's records created in [from,
// until), oldest first; a zero bound is open. fn returning false stops the
// scan.
func (s *Store) EachActivity(ctx context.Context, partnerID string, from, until time.Time, fn func(*account.Activity) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(partnerID) {
		return nil
	}
	// after is the exclusive lower bound (created_ns, id): "" sorts
	// before every id, so the first chunk starts at from itself.
	afterNs, afterID := int64(math.MinInt64), ""
	if !from.IsZero() {
		afterNs = nanos(from)
	}
	untilNs := int64(math.MaxInt64)
	if !until.IsZero() {
		untilNs = nanos(until)
	}
	for {
		rows, err := s.pool.Query(ctx, `SELECT record FROM activity
			WHERE partner_id = $1 AND (created_ns, id) > ($2, $3) AND created_ns < $4
			ORDER BY created_ns, id LIMIT $5`, partnerID, afterNs, afterID, untilNs, activityChunk)
		if err != nil {
			return fmt.Errorf("postgres: activity of %s: %w", partnerID, err)
		}
		n, stop := 0, false
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				rows.Close()
				return fmt.Errorf("postgres: activity of %s: %w", partnerID, err)
			}
			n++
			a, err := store.DecodeActivity(raw)
			if err != nil {
				rows.Close()
				return err
			}
			afterNs, afterID = nanos(a.CreatedAt), a.ID
			if !fn(a) {
				stop = true
				break
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: activity of %s: %w", partnerID, err)
		}
		if stop || n < activityChunk {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Stats aggregates a partner's records created in [from, to).
func (s *Store) Stats(ctx context.Context, partnerID string, from, to time.Time) (*account.Stats, error) {
	t := account.NewStatsTally(from, to)
	if from.Before(to) {
		if err := s.EachActivity(ctx, partnerID, from, to, t.Add); err != nil {
			return nil, fmt.Errorf("postgres: stats of %s: %w", partnerID, err)
		}
	} else if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	return t.Stats(), nil
}

// Earnings sums the partner's earnings over its whole history.
func (s *Store) Earnings(ctx context.Context, partnerID string) (*account.Earnings, error) {
	t := account.NewEarningsTally()
	if err := s.EachActivity(ctx, partnerID, time.Time{}, time.Time{}, t.Add); err != nil {
		return nil, fmt.Errorf("postgres: earnings of %s: %w", partnerID, err)
	}
	return t.Earnings(), nil
}
