package account

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// A settlement run that pays on-chain does not mark earnings settled: it
// plans transfers. Per partner, chain and fee token, the run's pending
// earnings become one Transfer (a payout) of their summed fee amounts to the
// partner's fee wallet, and the earnings leave the pending set in the same
// durable write that stores the transfer, so that a later run (after a
// kill at any moment) never plans them again. A transfer the operator's
// transaction manager can sign for is sent as one of its intents (key: the
// transfer's ID, purpose "payout"); the others wait for the operator to pay
// them by hand and record the transaction (`swapgate settle record`). An
// earning becomes settled only when its transfer is settled: confirmed
// on-chain, or recorded. A transfer that fails puts its earnings back in
// the pending set, for the next run, and keeps the reason.

// Transfer states. Planned and Manual are open; Settled and Failed are
// final and never change again.
const (
	// TransferPlanned: stored, its earnings out of the pending set; its
	// intent is (or is about to be) in the transaction manager's hands.
	TransferPlanned = "planned"
	// TransferManual: stored, its earnings out of the pending set; the
	// manager cannot sign on its chain, so the operator pays it and records
	// the transaction.
	TransferManual = "manual"
	// TransferSettled: mined with its confirmations, or recorded; its
	// earnings are settled.
	TransferSettled = "settled"
	// TransferFailed: its transaction failed (reverted, or could not be
	// sent); its earnings are pending again.
	TransferFailed = "failed"
)

// PayoutPurpose is the purpose of a transfer's intent in the transaction
// manager: its final intents of this purpose settle or fail transfers.
const PayoutPurpose = "payout"

// EarningRef names the activity record carrying an earning: its identity
// as the stores key it (partner, creation time, id).
type EarningRef struct {
	PartnerID string    `json:"partnerId"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
}

// Transfer is one payout: a sum of a partner's earnings in one token on one
// chain, paid to the partner's fee wallet in one transaction. Amount is
// the decimal sum of the earnings' FeeAmount in Token's base units; Token
// is the token's address on ChainID (the zero address for the chain's
// coin).
type Transfer struct {
	ID            string       `json:"id"`
	Batch         string       `json:"batch"`
	Ecosystem     string       `json:"ecosystem"`
	PartnerID     string       `json:"partnerId"`
	ChainID       uint64       `json:"chainId"`
	Token         string       `json:"token"`
	Wallet        string       `json:"wallet"`
	Amount        string       `json:"amount"`
	TotalMicroUSD int64        `json:"totalMicroUsd"`
	RowCount      int          `json:"rowCount"`
	State         string       `json:"state"`
	TxHash        string       `json:"txHash,omitempty"`
	Reason        string       `json:"reason,omitempty"`
	Earnings      []EarningRef `json:"earnings"`
	CreatedAt     time.Time    `json:"createdAt"`
	UpdatedAt     time.Time    `json:"updatedAt"`
}

// Final reports whether t's state never changes again.
func (t *Transfer) Final() bool { return t.State == TransferSettled || t.State == TransferFailed }

// ErrTransferState means a transfer cannot move as asked from the state it
// is in (a failed transfer recorded as paid, a settled one failed).
var ErrTransferState = errors.New("transfer is not in a state that allows this")

// Settle marks t settled by txHash at now. Settling a transfer settled by
// the same transaction again is a no-op (changed false), so that a hook
// called twice is harmless; any other move from a final state is
// ErrTransferState.
func (t *Transfer) Settle(txHash string, now time.Time) (changed bool, err error) {
	switch t.State {
	case TransferPlanned, TransferManual:
		t.State, t.TxHash, t.Reason, t.UpdatedAt = TransferSettled, txHash, "", now.UTC()
		return true, nil
	case TransferSettled:
		if strings.EqualFold(t.TxHash, txHash) {
			return false, nil
		}
		return false, fmt.Errorf("%w: %s is settled by %s", ErrTransferState, t.ID, t.TxHash)
	default:
		return false, fmt.Errorf("%w: %s is %s", ErrTransferState, t.ID, t.State)
	}
}

// Fail marks t failed for reason at now; failing a failed transfer again is
// a no-op, and a settled one cannot fail (ErrTransferState).
func (t *Transfer) Fail(reason string, now time.Time) (changed bool, err error) {
	switch t.State {
	case TransferPlanned, TransferManual:
		t.State, t.Reason, t.UpdatedAt = TransferFailed, reason, now.UTC()
		return true, nil
	case TransferFailed:
		return false, nil
	default:
		return false, fmt.Errorf("%w: %s is %s", ErrTransferState, t.ID, t.State)
	}
}

// SettleEarning marks e settled by t: paid to t's wallet in t's batch, on
// t's chain by t's transaction, at t's last change.
func SettleEarning(e *Earning, t *Transfer) {
	e.State, e.SettledBatch, e.SettledTo, e.SettledAt = EarningSettled, t.Batch, t.Wallet, t.UpdatedAt
	e.SettledChainID, e.SettledTx = t.ChainID, t.TxHash
}

// transferIDPrefix starts payout IDs.
const transferIDPrefix = "pay_"

// transferID derives a payout's ID from its run and what it pays, so that
// the plan of one run names each transfer the same way however often it
// is computed.
func transferID(batch, partner string, chain uint64, token string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%s", batch, partner, chain, strings.ToLower(token)))
	return transferIDPrefix + hex.EncodeToString(h[:12])
}

// ValidTransferID reports whether id has the form of a payout ID.
func ValidTransferID(id string) bool {
	h, ok := strings.CutPrefix(id, transferIDPrefix)
	if !ok || len(h) != 24 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// PayoutPlan is a settlement run that pays by transfers. It decides as
// Settlement does (a partner without a fee wallet keeps its earnings
// pending; an already settled entry of the pending set is forgotten), and
// gathers what it pays into transfers per partner, chain and token.
// CanSign says whether the transaction manager can sign on a chain: a
// transfer on any other chain is planned Manual.
type PayoutPlan struct {
	run       *Settlement
	canSign   func(chainID uint64) bool
	transfers map[transferKey]*Transfer
	order     []transferKey
	sums      map[transferKey]*big.Int
}

type transferKey struct {
	partner string
	chain   uint64
	token   string
}

// NewPayoutPlan starts a plan of ecosystem at now, as batch id, paying to
// wallets (partner ID → address) on the chains canSign accepts.
func NewPayoutPlan(ecosystem, id string, now time.Time, wallets map[string]string, canSign func(uint64) bool) *PayoutPlan {
	if canSign == nil {
		canSign = func(uint64) bool { return false }
	}
	return &PayoutPlan{
		run:       NewSettlement(ecosystem, id, now, wallets),
		canSign:   canSign,
		transfers: map[transferKey]*Transfer{},
		sums:      map[transferKey]*big.Int{},
	}
}

// Decide decides one pending record (which carries an Earning). On Pay the
// earning joins its transfer; the record's earning stays pending (it
// settles with its transfer). A record whose fee amount is not a
// non-negative decimal is an error: it cannot be summed.
func (p *PayoutPlan) Decide(a *Activity) (Decision, error) {
	saved := *a.Earning
	d := p.run.Decide(a)
	*a.Earning = saved
	if d != Pay {
		return d, nil
	}
	amt, ok := new(big.Int).SetString(a.Earning.FeeAmount, 10)
	if !ok || amt.Sign() < 0 {
		return 0, &RecordError{ID: a.ID, Reason: "fee amount " + a.Earning.FeeAmount + " is not a base-unit amount"}
	}
	k := transferKey{a.PartnerID, a.ToChain, strings.ToLower(a.Earning.FeeToken)}
	t := p.transfers[k]
	if t == nil {
		state := TransferManual
		if p.canSign(a.ToChain) {
			state = TransferPlanned
		}
		b := p.run.batch
		t = &Transfer{
			ID: transferID(p.run.id, a.PartnerID, a.ToChain, a.Earning.FeeToken), Batch: p.run.id,
			Ecosystem: b.Ecosystem, PartnerID: a.PartnerID, ChainID: a.ToChain, Token: a.Earning.FeeToken,
			Wallet: p.run.wallets[a.PartnerID], State: state, CreatedAt: b.CreatedAt, UpdatedAt: b.CreatedAt,
		}
		p.transfers[k] = t
		p.sums[k] = new(big.Int)
		p.order = append(p.order, k)
	}
	p.sums[k].Add(p.sums[k], amt)
	t.RowCount++
	t.TotalMicroUSD += a.FeeMicroUSD
	t.Earnings = append(t.Earnings, EarningRef{PartnerID: a.PartnerID, ID: a.ID, CreatedAt: a.CreatedAt})
	return Pay, nil
}

// Transfers are the plan's transfers, ordered by partner, chain and token.
func (p *PayoutPlan) Transfers() []*Transfer {
	out := make([]*Transfer, 0, len(p.order))
	for _, k := range p.order {
		t := *p.transfers[k]
		t.Amount = p.sums[k].String()
		t.Earnings = slices.Clone(t.Earnings)
		out = append(out, &t)
	}
	slices.SortFunc(out, func(x, y *Transfer) int {
		if c := strings.Compare(x.PartnerID, y.PartnerID); c != 0 {
			return c
		}
		if x.ChainID != y.ChainID {
			if x.ChainID < y.ChainID {
				return -1
			}
			return 1
		}
		return strings.Compare(strings.ToLower(x.Token), strings.ToLower(y.Token))
	})
	return out
}

// Batch is the run's report: the per-partner payouts and skipped partners
// as Settlement reports them, and the transfers. It carries the batch ID
// when the run planned something and is not a dry run.
func (p *PayoutPlan) Batch(dryRun bool) *SettlementBatch {
	b := p.run.Batch(dryRun)
	for _, t := range p.Transfers() {
		b.Transfers = append(b.Transfers, *t)
	}
	return b
}
