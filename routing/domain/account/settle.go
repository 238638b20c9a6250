package account

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Payout is what one partner is paid in a settlement batch.
type Payout struct {
	PartnerID     string `json:"partnerId"`
	Wallet        string `json:"wallet"`
	RowCount      int    `json:"rowCount"`
	TotalMicroUSD int64  `json:"totalMicroUsd"`
}

// Unpaid is a partner whose pending earnings a settlement run left pending
// because no fee wallet was registered in the ecosystem.
type Unpaid struct {
	PartnerID     string `json:"partnerId"`
	RowCount      int    `json:"rowCount"`
	TotalMicroUSD int64  `json:"totalMicroUsd"`
}

// SettlementBatch is the result of one settlement run. ID is empty when
// nothing was recorded: a dry run, or a run with nothing to pay.
type SettlementBatch struct {
	ID        string    `json:"id,omitempty"`
	Ecosystem string    `json:"ecosystem"`
	CreatedAt time.Time `json:"createdAt"`
	DryRun    bool      `json:"dryRun"`
	Payouts   []Payout  `json:"payouts"`
	// Skipped lists partners left pending for want of a wallet. It is
	// reported, not stored.
	Skipped []Unpaid `json:"skipped,omitempty"`
	// Transfers are the payouts an on-chain run planned (see Transfer):
	// one per partner, chain and token.
	Transfers []Transfer `json:"transfers,omitempty"`
	// Failed are the transfers that failed, their earnings pending again,
	// each with its reason: reported by every run, not stored with it.
	Failed []Transfer `json:"failed,omitempty"`
}

// batchIDPrefix starts settlement batch IDs.
const batchIDPrefix = "stl_"

// NewBatchID returns "stl_", the run time in hex nanoseconds (so batch IDs
// sort by time) and 8 random hex digits.
func NewBatchID(now time.Time) (string, error) {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("account: generate batch id: %w", err)
	}
	return fmt.Sprintf("%s%016x%s", batchIDPrefix, uint64(now.UnixNano()), hex.EncodeToString(r[:])), nil
}

// Decision is what a settlement run does with one pending earning.
type Decision int

const (
	// Pay settles the earning to the partner's wallet: the record's
	// Earning has been marked settled and must be stored, and the earning
	// leaves the pending set.
	Pay Decision = iota + 1
	// Keep leaves the earning pending: its partner has no wallet in the
	// ecosystem. It settles in a later run, to whichever wallet is
	// registered then.
	Keep
	// Forget drops an entry of the pending set whose earning is already
	// settled (a stale entry): it is never paid twice.
	Forget
)

// Settlement is one settlement run of one ecosystem, deciding earning by
// earning. The rules: every pending earning settles to the partner's fee
// wallet registered at the moment of the run; a partner without one keeps
// its earnings pending until a wallet is registered; a wallet changed or
// deleted later does not touch what was already paid. A Settlement is
// plain computation: the store reads the pending earnings and the wallets,
// and applies the decisions in one atomic batch.
type Settlement struct {
	batch   SettlementBatch
	id      string
	wallets map[string]string
	payouts map[string]*Payout
	skipped map[string]*Unpaid
}

// NewSettlement starts a run of ecosystem at now, as batch id, paying to
// wallets (partner ID → the address registered at this moment; a partner
// without a wallet is absent).
func NewSettlement(ecosystem, id string, now time.Time, wallets map[string]string) *Settlement {
	return &Settlement{
		batch:   SettlementBatch{Ecosystem: ecosystem, CreatedAt: now.UTC(), Payouts: []Payout{}},
		id:      id,
		wallets: wallets,
		payouts: map[string]*Payout{},
		skipped: map[string]*Unpaid{},
	}
}

// Decide decides one record of the ecosystem's pending set, which must
// carry an Earning. On Pay, a.Earning is marked settled in place.
func (s *Settlement) Decide(a *Activity) Decision {
	e := a.Earning
	if e.State == EarningSettled {
		return Forget
	}
	wallet, ok := s.wallets[a.PartnerID]
	if !ok {
		u := s.skipped[a.PartnerID]
		if u == nil {
			u = &Unpaid{PartnerID: a.PartnerID}
			s.skipped[a.PartnerID] = u
		}
		u.RowCount++
		u.TotalMicroUSD += a.FeeMicroUSD
		return Keep
	}
	p := s.payouts[a.PartnerID]
	if p == nil {
		p = &Payout{PartnerID: a.PartnerID, Wallet: wallet}
		s.payouts[a.PartnerID] = p
	}
	p.RowCount++
	p.TotalMicroUSD += a.FeeMicroUSD
	e.State, e.SettledBatch, e.SettledTo, e.SettledAt = EarningSettled, s.id, wallet, s.batch.CreatedAt
	return Pay
}

// Batch is the run's result, payouts and skipped partners ordered by
// partner. It carries the batch ID when the run paid something and is not
// a dry run: only such a batch is recorded.
func (s *Settlement) Batch(dryRun bool) *SettlementBatch {
	b := s.batch
	b.DryRun = dryRun
	b.Payouts = []Payout{}
	for _, p := range s.payouts {
		b.Payouts = append(b.Payouts, *p)
	}
	slices.SortFunc(b.Payouts, func(x, y Payout) int { return strings.Compare(x.PartnerID, y.PartnerID) })
	for _, u := range s.skipped {
		b.Skipped = append(b.Skipped, *u)
	}
	slices.SortFunc(b.Skipped, func(x, y Unpaid) int { return strings.Compare(x.PartnerID, y.PartnerID) })
	if !dryRun && len(b.Payouts) > 0 {
		b.ID = s.id
	}
	return &b
}
