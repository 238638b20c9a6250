package store

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// ticketRecord is the encoded form of a ticket; EncodeTicket appends the
// same JSON without reflection.
type ticketRecord struct {
	V int `json:"v"`
	quote.Ticket
}

// EncodedTicket is an issued quote's ticket encoded for the ticket log
// (TicketLog.PutTickets).
type EncodedTicket struct {
	ID  string
	val []byte
	// deposit is the deposit index key of an intents quote, nil otherwise.
	deposit []byte
	// ref is the reference of a multi-step quote (quote.Ref of its id),
	// which is all its step-1 transaction names it by; multiStep says there
	// is one.
	ref       [32]byte
	multiStep bool
	// callRef is keccak256 of the calldata of the first transaction the
	// wallet signs (hasCallRef: a quote with an EVM transaction; step 1 of
	// a multi-step quote), the second key QuoteByRef answers.
	callRef    [32]byte
	hasCallRef bool
}

// Record is the ticket's encoding (EncodeTicket's JSON), for another
// backend that stores it as it is; DecodeTicketRecord reads it back.
// Callers must not change it.
func (t EncodedTicket) Record() []byte { return t.val }

// RawTicket is the encoded ticket of quote id whose record (Record) was
// read back from storage, for a holder that hands it on as it is; it has
// no index keys.
func RawTicket(id string, record []byte) EncodedTicket { return EncodedTicket{ID: id, val: record} }

// DecodeTicketRecord decodes the stored encoding (Record) of quote id's
// ticket.
func DecodeTicketRecord(id string, b []byte) (*quote.Ticket, error) { return decodeTicket(id, b) }

// Deposit is the deposit index key of an intents quote's ticket (nil for
// another quote): what a ticket log indexes it by. Callers must not change
// it.
func (t EncodedTicket) Deposit() []byte { return t.deposit }

// IsMultiStep reports whether t is a multi-step quote's ticket, which
// PutQuoteRefs indexes by its reference (quote.Ref of its ID), for another
// backend's index of the same.
func (t EncodedTicket) IsMultiStep() bool { return t.multiStep }

// DepositKey is the deposit index key of an intents quote's ticket ("" for
// another quote), for a holder that serves tickets not yet stored.
func (t EncodedTicket) DepositKey() string { return string(t.deposit) }

// QuoteRef is the reference of a multi-step quote's ticket (keccak256 of
// its id, all its step-1 transaction carries), ok false for another quote:
// what a backend indexes for QuoteByRef.
func (t EncodedTicket) QuoteRef() (ref [32]byte, ok bool) {
	return t.ref, t.multiStep
}

// CallRef is keccak256 of the calldata of the transaction the quote hands
// the wallet (step 1 of a multi-step quote), ok false for a quote without
// an EVM transaction (an intents deposit, a non-EVM source's serialized
// transaction, an indicative quote). A live step 1 is the aggregator's
// transaction, which carries no quote reference, so a registration finds
// its quote by the calldata the user sent (quote.CallRef); a transaction
// broadcast without execute is found the same way by GET /v1/status with
// fromChain. Backends index it for QuoteByRef.
func (t EncodedTicket) CallRef() (ref [32]byte, ok bool) { return t.callRef, t.hasCallRef }

// DepositIndexKey is the deposit index key of a deposit target.
func DepositIndexKey(address, memo string) string { return string(depositKey(address, memo)) }

// ticketFrame is the header a ticket log writes before each record (its
// length and checksum), counted in Size.
const ticketFrame = 8

// Size is the size of the ticket's record in the ticket log (the record
// and its 8-byte frame), for callers that bound what they hold in memory.
func (t EncodedTicket) Size() int { return ticketFrame + len(t.val) }

// EncodeTicket encodes the compact record of an issued quote (see
// quote.Ticket): its identity, amounts, parties and the transactions the
// wallet signs, as the quote showed them. It runs on the quote path, so it
// appends field by field rather than building a Ticket and marshalling it.
func EncodeTicket(is *quote.Issued) (EncodedTicket, error) {
	if _, ok := quote.IssuedAt(is.ID); !ok {
		return EncodedTicket{}, fmt.Errorf("store: ticket: malformed quote id %q", is.ID)
	}
	req, r := is.Request, is.Route
	// Up to some 900 bytes of fields (ids, addresses, amounts, times and
	// their keys), and the calldata twice over as hex: sized so that the
	// buffer is never grown, which copied it whole on every quote.
	calldata := 0
	if r.Tx != nil {
		calldata = len(r.Tx.Data)
	}
	var t EncodedTicket
	o := jsonenc.Begin(make([]byte, 0, 1024+2*calldata))
	o.Int("v", 1)
	o.String("id", is.ID)
	o.StringOmitEmpty("partnerId", req.PartnerID)
	o.String("provider", is.Provider)
	o.String("tool", r.Tool)
	o.Uint("shape", uint64(r.Shape))
	o.Time("issuedAt", req.Now.UTC())
	o.Time("expiresAt", is.ExpiresAt.UTC())
	o.Uint("fromChain", req.From.ID)
	o.Uint("toChain", req.To.ID)
	o.String("fromToken", req.FromToken.Address)
	o.String("toToken", req.ToToken.Address)
	o.Decimal("fromAmount", r.FromAmount)
	o.Decimal("toAmount", r.ToAmount)
	o.Decimal("toAmountMin", r.ToAmountMin)
	o.String("fromAddress", req.FromAddress)
	o.String("toAddress", req.ToAddress)
	o.StringOmitEmpty("refundTo", req.RefundTo)
	if req.ExactOutput() {
		o.Decimal("exactToAmount", req.ToAmount)
	}
	o.Int("feeBps", int64(is.FeeBps))
	o.TrueOmitFalse("dry", req.Dry)
	o.TrueOmitFalse("indicative", req.Indicative)
	o.Int("executionDuration", int64(r.ExecutionDuration))
	o.StringOmitEmpty("approvalAddress", r.ApprovalAddress)
	if req.Slippage > 0 {
		// As a string: the appender writes no floats, and the ticket reads
		// it back with encoding/json's ",string" option, exactly.
		o.String("slippage", strconv.FormatFloat(req.Slippage, 'g', -1, 64))
	}
	o.StringOmitEmpty("scenario", string(req.Scenario))
	o.StringOmitEmpty("upstreamRef", r.UpstreamRef)
	if r.Shape == quote.ShapeMultiStep && r.Step1AmountMin != nil {
		o.Decimal("step1AmountMin", r.Step1AmountMin)
	}
	b, err := o.End()
	if err != nil {
		return EncodedTicket{}, fmt.Errorf("store: encode ticket %s: %w", is.ID, err)
	}
	// The transactions and the deposit target follow as members appended to
	// the closed object.
	b = b[:len(b)-1]
	switch {
	case r.Shape == quote.ShapeDirect && r.Direct != nil:
		tx := r.Direct.TransactionRequest
		if data, err := hex.DecodeString(strings.TrimPrefix(tx.Data, "0x")); err == nil {
			t.callRef, t.hasCallRef = quote.CallRef(data), true
		}
		b = appendTx(append(b, `,"txs":[`...), tx.To, "", tx.Data, nil, tx.Value, tx.ChainID, tx.GasLimit, "")
		b = append(b, ']')
	case r.Shape == quote.ShapeMultiStep && r.MultiStep != nil:
		b = append(b, `,"txs":[`...)
		n := 0
		for _, s := range r.MultiStep.Steps {
			if tx := s.TransactionRequest; tx != nil {
				if n > 0 {
					b = append(b, ',')
				}
				b = appendTx(b, tx.To, "", tx.Data, nil, tx.Value, tx.ChainID, "", "")
				n++
			}
		}
		b = append(b, ']')
	case r.Tx != nil && r.Tx.Encoding == quote.EncodingBase64:
		// A non-EVM source's serialized transaction, as TicketTx writes it.
		b = append(b, `,"txs":[{"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, r.Tx.Data)
		b = strconv.AppendUint(append(b, `","chainId":`...), r.Tx.ChainID, 10)
		b = append(b, `,"encoding":"base64"}]`...)
	case r.Tx != nil:
		tx := r.Tx
		t.callRef, t.hasCallRef = quote.CallRef(tx.Data), true
		gasPrice := ""
		if tx.GasPrice != nil {
			gasPrice = hexBig(tx.GasPrice)
		}
		b = appendTx(append(b, `,"txs":[`...), tx.To, tx.From, "", tx.Data, hexBig(tx.Value), tx.ChainID,
			"0x"+strconv.FormatUint(tx.GasLimit, 16), gasPrice)
		b = append(b, ']')
	}
	if r.DepositAddress != "" {
		b = jsonenc.AppendString(append(b, `,"depositAddress":`...), r.DepositAddress)
	}
	if r.DepositMemo != "" {
		b = jsonenc.AppendString(append(b, `,"depositMemo":`...), r.DepositMemo)
	}
	b = append(b, '}')
	t.ID, t.val = is.ID, b
	if r.DepositAddress != "" {
		t.deposit = depositKey(r.DepositAddress, r.DepositMemo)
	}
	if r.Shape == quote.ShapeMultiStep {
		t.ref, t.multiStep = quote.Ref(is.ID), true
		if r.MultiStep != nil && len(r.MultiStep.Steps) > 0 && r.MultiStep.Steps[0].TransactionRequest != nil {
			data, err := hex.DecodeString(strings.TrimPrefix(r.MultiStep.Steps[0].TransactionRequest.Data, "0x"))
			if err == nil {
				t.callRef, t.hasCallRef = quote.CallRef(data), true
			}
		}
	}
	// A transaction without calldata (a plain transfer of the native coin,
	// such as an intents quote's deposit) is told apart by nothing a call
	// reference could carry: every such quote would share keccak256 of
	// nothing, so none is indexed by it (an intents deposit is found by
	// its deposit address instead).
	if t.hasCallRef && t.callRef == emptyCallRef {
		t.callRef, t.hasCallRef = [32]byte{}, false
	}
	return t, nil
}

// emptyCallRef is the call reference of empty calldata.
var emptyCallRef = quote.CallRef(nil)

// appendTx appends one TicketTx object; calldata comes as a hex string
// (hexData) or as raw bytes (rawData).
func appendTx(b []byte, to, from, hexData string, rawData []byte, value string, chainID uint64, gasLimit, gasPrice string) []byte {
	b = jsonenc.AppendString(append(b, `{"to":`...), to)
	if from != "" {
		b = jsonenc.AppendString(append(b, `,"from":`...), from)
	}
	b = append(b, `,"data":`...)
	if rawData != nil || hexData == "" {
		b = append(b, `"0x`...)
		b = hex.AppendEncode(b, rawData)
		b = append(b, '"')
	} else {
		b = jsonenc.AppendString(b, hexData)
	}
	b = jsonenc.AppendString(append(b, `,"value":`...), value)
	b = strconv.AppendUint(append(b, `,"chainId":`...), chainID, 10)
	if gasLimit != "" {
		b = jsonenc.AppendString(append(b, `,"gasLimit":`...), gasLimit)
	}
	if gasPrice != "" {
		b = jsonenc.AppendString(append(b, `,"gasPrice":`...), gasPrice)
	}
	return append(b, '}')
}

// hexBig renders a quantity as the quote shows it: 0x-prefixed hex, "0x0"
// for zero or none.
func hexBig(v *big.Int) string {
	if v == nil || v.Sign() == 0 {
		return "0x0"
	}
	return "0x" + v.Text(16)
}

// DecodeTicket decodes an encoded ticket, for a reader that holds one not
// yet stored.
func DecodeTicket(t EncodedTicket) (*quote.Ticket, error) { return decodeTicket(t.ID, t.val) }

func decodeTicket(id string, val []byte) (*quote.Ticket, error) {
	var rec ticketRecord
	if err := json.Unmarshal(val, &rec); err != nil {
		return nil, fmt.Errorf("store: decode ticket %s: %w", id, err)
	}
	if rec.V != 1 {
		return nil, fmt.Errorf("store: ticket %s: record version %d unknown", id, rec.V)
	}
	return &rec.Ticket, nil
}

// depositKey is the key of an intents quote's deposit target (memo empty
// in SIMPLE mode) in the ticket log's index and the keeper's pending one.
// No address holds a NUL, so the key names one target.
func depositKey(address, memo string) []byte {
	return []byte(address + "\x00" + memo)
}
