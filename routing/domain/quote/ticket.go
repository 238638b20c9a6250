package quote

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// ErrExpired and ErrUnknown are why an issued quote cannot be executed:
// it is past its expiresAt, or it was never issued.
var (
	ErrExpired = errors.New("quote expired")
	ErrUnknown = errors.New("quote unknown")
)

// Ref is the bytes32 under which a quote id travels in calldata and
// events: keccak256 of the id, so that any id format fits and an executed
// transaction can be matched back to its quote. The sandbox router and
// pulseroute's sender contract name a quote alike.
func Ref(quoteID string) [32]byte { return crypto.Keccak256Hash([]byte(quoteID)) }

// CallRef is the other reference a multi-step quote is found by: keccak256
// of its step-1 transaction's calldata, which a registration reads back
// from the chain. A live step 1 is the aggregator's transaction and
// carries no quote reference; its calldata is the quote's own.
func CallRef(calldata []byte) [32]byte { return crypto.Keccak256Hash(calldata) }

// A quote id is "qt_", the issue time in Unix seconds as 10 hex digits, and
// 20 random hex digits (80 bits). Carrying its issue time lets a store key
// issued quotes by time, find one by id alone and drop expired ones by
// range, and lets anyone tell at a glance whether an id can still be live.
const (
	idPrefix    = "qt_"
	idTimeHex   = 10
	idRandomHex = 20
	// IDLength is the length of a quote id.
	IDLength = len(idPrefix) + idTimeHex + idRandomHex
)

// NewID returns a fresh quote id issued at now.
func NewID(now time.Time) string {
	var b [IDLength]byte
	n := copy(b[:], idPrefix)
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(now.Unix()))
	hex.Encode(b[n:], t[3:]) // 5 bytes: 10 hex digits, good until the year 36812
	var r [idRandomHex / 2]byte
	_, _ = rand.Read(r[:])
	hex.Encode(b[n+idTimeHex:], r[:])
	return string(b[:])
}

// IssuedAt returns the issue time a quote id carries, or false when id is
// not a well-formed quote id.
func IssuedAt(id string) (time.Time, bool) {
	if len(id) != IDLength || id[:len(idPrefix)] != idPrefix {
		return time.Time{}, false
	}
	for i := len(idPrefix); i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return time.Time{}, false
		}
	}
	sec, err := strconv.ParseUint(id[len(idPrefix):len(idPrefix)+idTimeHex], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(sec), 0).UTC(), true
}

// Ticket is the compact record of an issued quote: what executing it and
// following its swap need, a few hundred bytes, not the whole route. The
// engine keeps one per quote for the quote's lifetime, off the heap (see
// the store that keeps them), so that quotes stay resolvable by id at any
// quote rate within a fixed memory bound.
type Ticket struct {
	ID        string    `json:"id"`
	PartnerID string    `json:"partnerId,omitempty"`
	Provider  string    `json:"provider"`
	Tool      string    `json:"tool"`
	Shape     Shape     `json:"shape"`
	IssuedAt  time.Time `json:"issuedAt"`
	ExpiresAt time.Time `json:"expiresAt"`

	FromChain   uint64 `json:"fromChain"`
	ToChain     uint64 `json:"toChain"`
	FromToken   string `json:"fromToken"`
	ToToken     string `json:"toToken"`
	FromAmount  string `json:"fromAmount"`
	ToAmount    string `json:"toAmount"`
	ToAmountMin string `json:"toAmountMin"`
	FromAddress string `json:"fromAddress"`
	ToAddress   string `json:"toAddress"`
	// RefundTo is the quote's refund address on the source chain, ""
	// when the client gave none (refunds go to FromAddress).
	RefundTo string `json:"refundTo,omitempty"`
	// ExactToAmount is the toAmount of an exact-output quote, "" on a
	// quote for a given fromAmount.
	ExactToAmount string `json:"exactToAmount,omitempty"`
	FeeBps        int    `json:"feeBps"`
	Dry           bool   `json:"dry,omitempty"`
	// Indicative quotes carry no transaction: nothing can execute them.
	Indicative        bool `json:"indicative,omitempty"`
	ExecutionDuration int  `json:"executionDuration"`

	// ApprovalAddress is the ERC-20 spender of the source token ("" for
	// native inputs and routes without one).
	ApprovalAddress string `json:"approvalAddress,omitempty"`
	// Step1AmountMin is a multi-step quote's least USDC delivered by step 1
	// to the inbound receiver, base units ("" when not known, and in
	// tickets written before it was kept): a registered deposit below it
	// is refused.
	Step1AmountMin string `json:"step1AmountMin,omitempty"`
	// Txs are the transactions the wallet signs, in order, exactly as the
	// quote showed them: Shape A's and B's transactionRequest, or step 1 of
	// a multi-step quote.
	Txs []TicketTx `json:"txs,omitempty"`
	// DepositAddress and DepositMemo are an intents route's deposit target.
	DepositAddress string `json:"depositAddress,omitempty"`
	DepositMemo    string `json:"depositMemo,omitempty"`
	// UpstreamRef is the route's upstream reference (Route.UpstreamRef),
	// "" for routes without one and in tickets written before it was kept.
	UpstreamRef string `json:"upstreamRef,omitempty"`
	// Slippage is the quote's slippage as a fraction, so that an execute
	// prices the route again under the same tolerance (0 in tickets
	// written before it was kept: the default applies).
	Slippage float64 `json:"slippage,string,omitempty"`
	// Scenario is the sandbox scenario the quote plays; it is kept here so
	// that every later call (execute, status, tracking), on any node
	// sharing the store, plays the same outcome.
	Scenario scenario.Name `json:"scenario,omitempty"`
}

// TicketTx is a transaction request in its wire form: numbers as the
// quote rendered them (hex strings), calldata 0x-prefixed hex. A non-EVM
// source's serialized transaction has Encoding set and Data in it, with
// no To or Value (TxRequest.Encoding).
type TicketTx struct {
	To       string `json:"to,omitempty"`
	From     string `json:"from,omitempty"`
	Data     string `json:"data"`
	Value    string `json:"value,omitempty"`
	ChainID  uint64 `json:"chainId"`
	GasLimit string `json:"gasLimit,omitempty"`
	GasPrice string `json:"gasPrice,omitempty"`
	Encoding string `json:"encoding,omitempty"`
}

// RefundAddress is where a refund of the quote's swap goes: RefundTo, or
// FromAddress when the quote named none.
func (t *Ticket) RefundAddress() string {
	if t.RefundTo != "" {
		return t.RefundTo
	}
	return t.FromAddress
}
