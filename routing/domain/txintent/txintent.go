// Package txintent is the transaction manager's words: an intent (a
// transaction the service means to send, durable before it is signed), its
// states and the rules between them, and the fee arithmetic of a
// replacement. Plain Go: it dials nothing and signs nothing; actors/txm
// does both and keeps intents in the store.
//
// The life of an intent:
//
//	queued → signed → sent → mined → confirmed
//	   ↘        ↘       ↘       ↘
//	                failed
//
// queued: durable, no nonce yet. signed: a nonce is allocated and the
// signed bytes are stored, not yet broadcast (after a crash they are sent
// again as they are, never signed afresh). sent: broadcast at least once;
// a replacement (same nonce, higher fees) adds a Tx and stays sent.
// mined: one of its Txs is in a block with a successful receipt, not yet
// deep enough. confirmed: that block has the configured confirmations.
// failed: a reverted receipt (the reason kept; never resent), or refused
// before broadcast. A mined intent may go back to sent when its block
// is reorganised away.
package txintent

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// State is where an intent stands.
type State string

const (
	Queued    State = "queued"
	Signed    State = "signed"
	Sent      State = "sent"
	Mined     State = "mined"
	Confirmed State = "confirmed"
	Failed    State = "failed"
)

// States lists every state in the order of an intent's life.
var States = []State{Queued, Signed, Sent, Mined, Confirmed, Failed}

// Valid reports whether s is one of the states.
func (s State) Valid() bool {
	for _, v := range States {
		if v == s {
			return true
		}
	}
	return false
}

// Final reports whether nothing more happens to an intent in s.
func (s State) Final() bool { return s == Confirmed || s == Failed }

// ErrTransition is a move the rules do not allow.
var ErrTransition = errors.New("txintent: transition not allowed")

// allowed is the transition table: from → the states it may move to.
// Staying in a state (sent → sent with a replacement added) is allowed
// for signed and sent only.
var allowed = map[State][]State{
	Queued: {Signed, Failed},
	Signed: {Signed, Sent, Mined, Failed},
	Sent:   {Sent, Mined, Failed},
	Mined:  {Confirmed, Sent, Failed},
}

// CanMove reports whether an intent in from may move to to.
func CanMove(from, to State) bool {
	for _, s := range allowed[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Request is what a caller asks the manager to send.
type Request struct {
	// Purpose names the caller's kind of transaction ("payout",
	// "inbound.bridge"); OnFinal hooks are registered by purpose.
	Purpose string
	// Key is the idempotency key: one intent per key, ever. A second
	// request with the same key returns the first intent.
	Key      string
	ChainID  uint64
	To       common.Address
	Data     []byte
	Value    *big.Int
	GasLimit uint64
}

// Validate says which field of r is missing or wrong.
func (r *Request) Validate() error {
	switch {
	case r.Purpose == "":
		return fmt.Errorf("txintent: purpose is required")
	case r.Key == "":
		return fmt.Errorf("txintent: key is required")
	case len(r.Key) > 200:
		return fmt.Errorf("txintent: key is longer than 200 bytes")
	case r.ChainID == 0:
		return fmt.Errorf("txintent: chainId is required")
	case r.To == (common.Address{}):
		return fmt.Errorf("txintent: to is required")
	case r.Value != nil && r.Value.Sign() < 0:
		return fmt.Errorf("txintent: value is negative")
	case r.GasLimit == 0:
		return fmt.Errorf("txintent: gasLimit is required")
	}
	return nil
}

// Tx is one signed transaction of an intent: the first, or a
// replacement with the same nonce and higher fees.
type Tx struct {
	Hash                 string        `json:"hash"`
	Nonce                uint64        `json:"nonce"`
	MaxFeePerGas         string        `json:"maxFeePerGas"`
	MaxPriorityFeePerGas string        `json:"maxPriorityFeePerGas"`
	Raw                  hexutil.Bytes `json:"raw"`
	// SentAt is zero until the bytes were handed to the node once.
	SentAt time.Time `json:"sentAt,omitempty"`
	// BlockNumber, BlockHash and Status are set on the Tx that was mined.
	BlockNumber uint64 `json:"blockNumber,omitempty"`
	BlockHash   string `json:"blockHash,omitempty"`
	Status      uint64 `json:"status,omitempty"`
}

// Intent is a transaction the service means to send and everything sent
// for it.
type Intent struct {
	ID       string        `json:"id"`
	Purpose  string        `json:"purpose"`
	Key      string        `json:"key"`
	ChainID  uint64        `json:"chainId"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Data     hexutil.Bytes `json:"data"`
	Value    string        `json:"value"`
	GasLimit uint64        `json:"gasLimit"`
	State    State         `json:"state"`
	Reason   string        `json:"reason,omitempty"`
	// Nonce is nil until the intent is signed.
	Nonce     *uint64   `json:"nonce,omitempty"`
	Txs       []Tx      `json:"txs"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Version counts the intent's stored writes: an update names the
	// version it read, and a stale one is refused (store.ErrStale).
	Version uint64 `json:"version"`
	// Handled is set once the OnFinal hooks of a final intent returned.
	Handled bool `json:"handled,omitempty"`
}

// Final reports whether nothing more happens to the intent.
func (in *Intent) Final() bool { return in.State.Final() }

// Clone is a deep copy.
func (in *Intent) Clone() *Intent {
	c := *in
	c.Data = append(hexutil.Bytes(nil), in.Data...)
	if in.Nonce != nil {
		n := *in.Nonce
		c.Nonce = &n
	}
	c.Txs = make([]Tx, len(in.Txs))
	for i, t := range in.Txs {
		t.Raw = append(hexutil.Bytes(nil), t.Raw...)
		c.Txs[i] = t
	}
	return &c
}

// Move sets the intent's state when the rules allow it.
func (in *Intent) Move(to State, now time.Time) error {
	if !CanMove(in.State, to) {
		return fmt.Errorf("%w: %s → %s (intent %s)", ErrTransition, in.State, to, in.ID)
	}
	in.State = to
	in.UpdatedAt = now
	return nil
}

// Fail moves the intent to failed with reason.
func (in *Intent) Fail(reason string, now time.Time) error {
	if err := in.Move(Failed, now); err != nil {
		return err
	}
	in.Reason = reason
	return nil
}

// AddTx records a newly signed transaction (the first or a replacement):
// its nonce must be the intent's, and a replacement's both fees must be at
// least BumpPercent above the last one's.
func (in *Intent) AddTx(t Tx) error {
	if in.Nonce != nil && *in.Nonce != t.Nonce {
		return fmt.Errorf("txintent: intent %s has nonce %d, tx %s has %d", in.ID, *in.Nonce, t.Hash, t.Nonce)
	}
	if n := len(in.Txs); n > 0 {
		last := in.Txs[n-1]
		for _, p := range [][2]string{{last.MaxFeePerGas, t.MaxFeePerGas}, {last.MaxPriorityFeePerGas, t.MaxPriorityFeePerGas}} {
			old, ok1 := new(big.Int).SetString(p[0], 10)
			nw, ok2 := new(big.Int).SetString(p[1], 10)
			if !ok1 || !ok2 || nw.Cmp(MinBump(old)) < 0 {
				return fmt.Errorf("txintent: intent %s: replacement fee %s is under %s", in.ID, p[1], MinBump(old))
			}
		}
	}
	nonce := t.Nonce
	in.Nonce = &nonce
	in.Txs = append(in.Txs, t)
	return nil
}

// Tx returns the intent's transaction with hash, or nil.
func (in *Intent) Tx(hash string) *Tx {
	for i := range in.Txs {
		if in.Txs[i].Hash == hash {
			return &in.Txs[i]
		}
	}
	return nil
}

// Last is the intent's latest transaction, or nil.
func (in *Intent) Last() *Tx {
	if len(in.Txs) == 0 {
		return nil
	}
	return &in.Txs[len(in.Txs)-1]
}

// MinedTx is the transaction recorded as mined, or nil.
func (in *Intent) MinedTx() *Tx {
	for i := range in.Txs {
		if in.Txs[i].BlockNumber != 0 {
			return &in.Txs[i]
		}
	}
	return nil
}

// Query selects intents for List; empty fields match every intent.
type Query struct {
	State   State
	Purpose string
	ChainID uint64
	// Open selects intents not final; Unhandled final intents whose
	// completion hooks have not returned (both: either).
	Open, Unhandled bool
	// After continues a listing after the intent with this ID (IDs sort
	// by creation).
	After string
	Limit int
}

// Matches reports whether in is selected by q (After and Limit aside).
func (q Query) Matches(in *Intent) bool {
	if q.Open || q.Unhandled {
		open := q.Open && !in.Final()
		unhandled := q.Unhandled && in.Final() && !in.Handled
		if !open && !unhandled {
			return false
		}
	}
	return (q.State == "" || in.State == q.State) &&
		(q.Purpose == "" || in.Purpose == q.Purpose) &&
		(q.ChainID == 0 || in.ChainID == q.ChainID)
}
