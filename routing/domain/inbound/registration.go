package inbound

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// Body fields of POST /v1/inbound-receiver/register, in the order they are
// checked and reported.
const (
	FieldTxHash            = "txHash"
	FieldFromAddress       = "fromAddress"
	FieldToAddress         = "toAddress"
	FieldOutputToken       = "outputToken"
	FieldDestinationDomain = "destinationDomain"
	FieldSignature         = "signature"
)

// DestinationDomain is the only destination of an inbound deposit: chain
// 369, whose Hyperlane domain equals its chain id.
const DestinationDomain uint32 = uint32(quote.PulseChainID)

// SignatureLength is the length of an EIP-712 signature: r, s and v.
const SignatureLength = 65

// Registration is a parsed registration body. It is comparable, so that two
// registrations can be told equal with ==; SameRegistration is the rule
// that decides a replay.
type Registration struct {
	TxHash            common.Hash
	FromAddress       common.Address
	ToAddress         common.Address
	OutputToken       common.Address // the zero address is native PLS
	DestinationDomain uint32
	Signature         [SignatureLength]byte // v as sent: 27/28 or 0/1
}

// Message is the RegisterDeposit message the signature covers. The
// signer, fromAddress, is not part of it: it is what recovery yields.
func (r Registration) Message() pulseroute.RegisterMessage {
	return pulseroute.RegisterMessage{
		TxHash:            r.TxHash,
		ToAddress:         r.ToAddress,
		OutputToken:       r.OutputToken,
		DestinationDomain: r.DestinationDomain,
	}
}

// fieldKind is the JSON type a body field must have.
type fieldKind int

const (
	kindString fieldKind = iota
	kindNumber
)

// bodyField is a field of the body and its JSON type.
type bodyField struct {
	name string
	kind fieldKind
}

var bodyFields = [...]bodyField{
	{FieldTxHash, kindString},
	{FieldFromAddress, kindString},
	{FieldToAddress, kindString},
	{FieldOutputToken, kindString},
	{FieldDestinationDomain, kindNumber},
	{FieldSignature, kindString},
}

func fieldIndex(name string) int {
	for i, f := range bodyFields {
		if f.name == name {
			return i
		}
	}
	return -1
}

// Parse reads a registration body: a JSON object with exactly the six fields
// txHash, fromAddress, toAddress, outputToken, destinationDomain and
// signature. It is total: every input gives a Registration or an error
// carrying the contract's code, which applies the body rules every endpoint
// of the edge applies, plus this endpoint's own:
//
//   - an empty body, malformed JSON or data after the object: INVALID_BODY;
//   - a key or a value that is not valid UTF-8: INVALID_BODY with
//     details.field naming the field;
//   - a body that is not an object: VALIDATION_ERROR;
//   - a field the endpoint does not know, a field given twice, or a field
//     of the wrong JSON type (the five strings and the number
//     destinationDomain): VALIDATION_ERROR with details.field naming it,
//     the first such field of the body. Names match exactly, case included
//     (encoding/json would also take "TXHASH");
//   - a field missing, null or the empty string: INVALID_PARAMS with
//     details.param naming it;
//   - a field with a malformed value: INVALID_PARAMS with details.param
//     naming it and details.value echoing it (the signature only by
//     length): txHash 0x and 64 hex digits; fromAddress, toAddress and
//     outputToken 0x and 40 hex digits, EIP-55 checked when in mixed case;
//     fromAddress and toAddress not the zero address (no key signs for it,
//     and funds sent to it are lost; outputToken may be zero, native PLS);
//     destinationDomain an integer literal within uint32 and equal to 369;
//     signature 0x and 130 hex digits.
//
// Missing and malformed fields are reported in the order of the list
// above, whatever their order in the body.
func Parse(body []byte) (Registration, *apierr.Error) {
	var reg Registration
	raw, err := splitObject(body)
	if err != nil {
		return reg, err
	}
	for i, f := range bodyFields {
		v := raw[i]
		if v == nil || string(v) == "null" || string(v) == `""` {
			return Registration{}, apierr.Param(f.name, f.name+" is required")
		}
		var e *apierr.Error
		switch f.name {
		case FieldTxHash:
			var b []byte
			if b, e = hexField(f.name, v, common.HashLength, "0x followed by 64 hex digits"); e == nil {
				reg.TxHash = common.BytesToHash(b)
			}
		case FieldFromAddress:
			reg.FromAddress, e = addressField(f.name, v, false)
		case FieldToAddress:
			reg.ToAddress, e = addressField(f.name, v, false)
		case FieldOutputToken:
			reg.OutputToken, e = addressField(f.name, v, true)
		case FieldDestinationDomain:
			reg.DestinationDomain, e = domainField(v)
		case FieldSignature:
			var b []byte
			if b, e = hexField(f.name, v, SignatureLength, "0x followed by 130 hex digits (r, s and v)"); e == nil {
				copy(reg.Signature[:], b)
			}
		}
		if e != nil {
			return Registration{}, e
		}
	}
	return reg, nil
}

// splitObject checks the body's shape and returns each known field's raw
// value by its index in bodyFields (nil when absent).
func splitObject(body []byte) ([len(bodyFields)]json.RawMessage, *apierr.Error) {
	var raw [len(bodyFields)]json.RawMessage
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return raw, apierr.New(apierr.InvalidBody, "request body is empty; a JSON object is required")
	}
	if !json.Valid(trimmed) {
		return raw, apierr.New(apierr.InvalidBody, "request body is not valid JSON")
	}
	if trimmed[0] != '{' {
		return raw, apierr.New(apierr.ValidationError, "request body must be a JSON object")
	}
	// json.Valid accepted the body as one value, so the decoder below meets
	// no syntax error and nothing after the object.
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return raw, apierr.New(apierr.InvalidBody, "request body is not valid JSON").Wrap(err)
	}
	for dec.More() {
		keyStart := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return raw, apierr.New(apierr.InvalidBody, "request body is not valid JSON").Wrap(err)
		}
		name, _ := tok.(string)
		rawKey := trimmed[keyStart:dec.InputOffset()]
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw, apierr.New(apierr.InvalidBody, "request body is not valid JSON").Wrap(err)
		}
		i := fieldIndex(name)
		switch {
		case !utf8.Valid(rawKey) || !utf8.Valid(v):
			// JSON text is UTF-8; encoding/json would quietly turn the
			// bytes into U+FFFD.
			return raw, apierr.New(apierr.InvalidBody, "field "+name+" is not valid UTF-8").With("field", name)
		case i < 0:
			return raw, apierr.New(apierr.ValidationError, "unknown field "+name).With("field", name)
		case raw[i] != nil:
			return raw, apierr.New(apierr.ValidationError, "field "+name+" is given more than once").With("field", name)
		}
		if got := jsonType(v); got != "null" && got != bodyFields[i].kindName() {
			return raw, apierr.New(apierr.ValidationError, "field "+name+" must be a "+bodyFields[i].kindName()+", not a JSON "+got).With("field", name)
		}
		raw[i] = v
	}
	return raw, nil
}

func (k fieldKind) String() string {
	if k == kindNumber {
		return "number"
	}
	return "string"
}

// kindName is the JSON type a field must have, as a client knows it.
func (f bodyField) kindName() string { return f.kind.String() }

// jsonType names the JSON type of a valid value by its first byte.
func jsonType(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// str decodes a raw JSON string, escapes included.
func str(v json.RawMessage) string {
	var s string
	_ = json.Unmarshal(v, &s) // the type was checked by splitObject
	return s
}

func has0x(s string) bool { return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }

// hexField decodes 0x and exactly n bytes of hex digits, either case.
func hexField(name string, v json.RawMessage, n int, want string) ([]byte, *apierr.Error) {
	s := str(v)
	if has0x(s) && len(s) == 2+2*n {
		if b, err := hex.DecodeString(s[2:]); err == nil {
			return b, nil
		}
	}
	e := apierr.Param(name, name+" must be "+want)
	if n == SignatureLength {
		return nil, e.With("length", len(s))
	}
	return nil, e.With("value", s)
}

// addressField checks an EVM address with the codec every endpoint uses.
func addressField(name string, v json.RawMessage, zeroOK bool) (common.Address, *apierr.Error) {
	s := str(v)
	if err := address.Validate("evm", s); err != nil {
		return common.Address{}, apierr.Param(name, name+" is not a valid EVM address: "+err.Error()).With("value", s)
	}
	a := common.HexToAddress(s)
	if !zeroOK && a == (common.Address{}) {
		return common.Address{}, apierr.Param(name, name+" must not be the zero address").With("value", s)
	}
	return a, nil
}

// domainField accepts an integer literal within uint32 equal to 369.
func domainField(v json.RawMessage) (uint32, *apierr.Error) {
	s := string(v)
	d, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		// A sign, a fraction, an exponent or a value beyond 2^32-1.
		return 0, apierr.Param(FieldDestinationDomain, "destinationDomain must be an integer from 0 to 4294967295 (a uint32)").With("value", s)
	}
	if uint32(d) != DestinationDomain {
		return 0, apierr.Param(FieldDestinationDomain, "destinationDomain must be 369: chain 369 is the only destination of an inbound deposit").With("value", s)
	}
	return uint32(d), nil
}

// VerifySignature checks that the registration's signature is fromAddress's
// RegisterDeposit signature for the domain of sourceChainID. A refusal is
// INVALID_PARAMS naming signature; errors.Is finds pulseroute's sentinel.
func VerifySignature(reg Registration, sourceChainID uint64) *apierr.Error {
	if err := pulseroute.Verify(sourceChainID, reg.Message(), reg.Signature[:], reg.FromAddress); err != nil {
		return apierr.From(err)
	}
	return nil
}

// SourceChain finds the chain a registration was signed for: the first of
// candidates (the source chains of the multi-step flow,
// Contracts.SenderChains) whose RegisterDeposit domain recovers
// fromAddress. The body names no source chain, but the signature binds
// one, so this both verifies the signature and tells where to read txHash.
// None: INVALID_PARAMS naming signature.
func SourceChain(reg Registration, candidates []uint64) (uint64, *apierr.Error) {
	if len(candidates) == 0 {
		return 0, apierr.New(apierr.Internal, "no source chains to verify the registration against")
	}
	for _, id := range candidates {
		e := VerifySignature(reg, id)
		if e == nil {
			return id, nil
		}
		if !errors.Is(e, pulseroute.ErrSignerMismatch) {
			// A length or r, s, v refusal is the same on every chain.
			return 0, e
		}
	}
	return 0, apierr.Param(FieldSignature, "signature is not fromAddress's RegisterDeposit signature for any source chain; sign the message of the quote's afterStep1.eip712, whose domain chainId is the source chain").
		Wrap(pulseroute.ErrSignerMismatch)
}

// SameRegistration decides a registration for a txHash that is already
// registered: nil when fresh says what stored says (the same six fields,
// the signature's v compared as 27/28 whichever form was sent), so that the
// stored deposit is the answer and nothing is done again; otherwise
// INVALID_PARAMS naming txHash. The refusal does not say which field
// differs: the stored registration is someone's, and the outputToken of a
// deposit should not be learnt by probing.
func SameRegistration(stored, fresh Registration) *apierr.Error {
	if normalizeV(stored) == normalizeV(fresh) {
		return nil
	}
	return apierr.Param(FieldTxHash, "txHash "+fresh.TxHash.Hex()+" is already registered with a different body; a deposit is registered once").With("value", fresh.TxHash.Hex())
}

func normalizeV(r Registration) Registration {
	if v := &r.Signature[SignatureLength-1]; *v < 27 {
		*v += 27
	}
	return r
}
