package swap

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// SourceTx is what a source chain shows of a transaction that was
// broadcast without execute, as GET /v1/status?txHash=&fromChain= reads it
// back: enough to tell whether it is the transaction a quote asked the
// wallet to sign.
type SourceTx struct {
	ChainID uint64
	// From is the sender recovered from the signature, To the recipient,
	// both 0x hex (To empty for a contract creation).
	From, To string
	// Value is the native amount sent (nil: none).
	Value *big.Int
	// CallRef is keccak256 of the calldata (quote.CallRef), by which the
	// quote was found.
	CallRef [32]byte
	// Reverted says the receipt's status is failed: the transaction is
	// still the quote's, tracked, and its swap fails as the tracker
	// reports a failed source.
	Reverted bool
}

// MatchTicket reports whether tx is the transaction quote t handed the
// wallet: one of t's EVM transaction requests with tx's calldata, on tx's
// chain, sent to its "to" with its value, from the quote's sender (the
// request's "from", or the quote's fromAddress). The call reference alone
// found the quote; the rest makes sure that a transaction reusing a
// quote's calldata from another wallet, to another contract or with
// another value is not followed, and its webhooks not sent, as the
// quote's. why says, on a mismatch, what differs.
func MatchTicket(t *quote.Ticket, tx SourceTx) (ok bool, why string) {
	if t.Indicative {
		return false, "quote " + t.ID + " is indicative and carries no transaction"
	}
	for _, r := range t.Txs {
		if r.Encoding != "" {
			continue
		}
		data, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(r.Data, "0x"), "0X"))
		if err != nil || quote.CallRef(data) != tx.CallRef {
			continue
		}
		switch {
		case r.ChainID != tx.ChainID:
			return false, fmt.Sprintf("quote %s's transaction is on chain %d, not %d", t.ID, r.ChainID, tx.ChainID)
		case !strings.EqualFold(r.To, tx.To):
			return false, fmt.Sprintf("the transaction is sent to %s, quote %s's to %s", orNone(tx.To), t.ID, r.To)
		}
		want, ok := new(big.Int), true
		if r.Value != "" {
			want, ok = evmtx.ParseQuantity(r.Value)
		}
		if !ok {
			return false, fmt.Sprintf("quote %s's transaction value %q is not a number", t.ID, r.Value)
		}
		if got := tx.Value; (got == nil && want.Sign() != 0) || (got != nil && got.Cmp(want) != 0) {
			return false, fmt.Sprintf("the transaction sends %s wei, quote %s's %s", valueOf(got), t.ID, want)
		}
		sender := r.From
		if sender == "" {
			sender = t.FromAddress
		}
		if sender != "" && !strings.EqualFold(sender, tx.From) {
			return false, fmt.Sprintf("the transaction is sent from %s, quote %s is for %s", tx.From, t.ID, sender)
		}
		return true, ""
	}
	return false, "the transaction's calldata is not quote " + t.ID + "'s"
}

func valueOf(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}

func orNone(to string) string {
	if to == "" {
		return "no recipient (a contract creation)"
	}
	return to
}
