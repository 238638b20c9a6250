package httpjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// FlexString accepts a JSON string or number and keeps its text: upstreams
// send most amounts as strings but some as numbers, and precision must not
// be lost through float64. JSON null is the empty string.
type FlexString string

// UnmarshalJSON implements json.Unmarshaler.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = FlexString(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want string or number, got %s", b)
		}
		*f = FlexString(n.String())
	}
	return nil
}

// Float reads a USD figure or percentage; absent or unreadable figures are
// zero, since they are informative and never move funds.
func (f FlexString) Float() float64 {
	v, err := strconv.ParseFloat(string(f), 64)
	if err != nil {
		return 0
	}
	return v
}

// USD reads an upstream's USD figure of an amount; one that is absent or
// unreadable is NaN, the quote package's NoUSD, so that the answer leaves
// it out rather than show a value of zero nobody observed.
func (f FlexString) USD() float64 {
	v, err := strconv.ParseFloat(string(f), 64)
	if err != nil || math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

// Uint64 reads an identifier such as a chain id; absent or unreadable ones
// are zero, which no chain uses.
func (f FlexString) Uint64() uint64 {
	v, err := strconv.ParseUint(string(f), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// Decimal parses a non-negative base-10 integer amount that fits 256 bits.
// Amounts that are not plain digits are refused as a bad answer rather
// than guessed at, and so are amounts no token or value field can hold.
func (u Upstream) Decimal(field string, s FlexString) (*big.Int, error) {
	str := string(s)
	if str == "" || strings.TrimLeft(str, "0123456789") != "" {
		return nil, u.BadAnswer("%s: %s is not a decimal amount", field, Shown(str))
	}
	v, ok := new(big.Int).SetString(str, 10)
	if !ok {
		return nil, u.BadAnswer("%s: %s is not a decimal amount", field, Shown(str))
	}
	if err := u.Uint256(field, v); err != nil {
		return nil, err
	}
	return v, nil
}

// OptDecimal is Decimal for fields that may be absent, zero then.
func (u Upstream) OptDecimal(field string, s FlexString) (*big.Int, error) {
	if s == "" {
		return new(big.Int), nil
	}
	return u.Decimal(field, s)
}

// HexBig parses a transaction number: 0x-prefixed hex, or plain decimal,
// which some upstream tools send instead. Empty, and a bare "0x", are zero.
// A number above 2^256 − 1 is refused, as Decimal refuses it.
func (u Upstream) HexBig(field string, s FlexString) (*big.Int, error) {
	str := string(s)
	if str == "" {
		return new(big.Int), nil
	}
	if h, ok := strings.CutPrefix(strings.ToLower(str), "0x"); ok {
		if h == "" {
			return new(big.Int), nil
		}
		v, ok := new(big.Int).SetString(h, 16)
		if !ok || v.Sign() < 0 {
			return nil, u.BadAnswer("%s: %s is not hex", field, Shown(str))
		}
		if err := u.Uint256(field, v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return u.Decimal(field, s)
}

// HexUint64 is HexBig for a number that must fit in 64 bits, such as a gas
// limit.
func (u Upstream) HexUint64(field string, s FlexString) (uint64, error) {
	v, err := u.HexBig(field, s)
	if err != nil {
		return 0, err
	}
	if !v.IsUint64() {
		return 0, u.BadAnswer("%s: %s overflows 64 bits", field, Shown(string(s)))
	}
	return v.Uint64(), nil
}

// HexBytes decodes calldata: 0x (or 0X) and an even number of hex digits,
// "0x" alone being empty calldata. Anything else (no prefix, an odd digit
// count, another character, nothing at all) is refused: a wallet would be
// asked to sign bytes nobody can tell were meant.
func (u Upstream) HexBytes(field, s string) ([]byte, error) {
	if s == "" {
		return nil, u.BadAnswer("%s: missing", field)
	}
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		h, ok = strings.CutPrefix(s, "0X")
	}
	if !ok {
		return nil, u.BadAnswer("%s: %s is not 0x-prefixed hex", field, Shown(s))
	}
	if len(h)%2 == 1 {
		return nil, u.BadAnswer("%s: %s has an odd number of hex digits", field, Shown(s))
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, u.BadAnswer("%s: %s is not hex", field, Shown(s))
	}
	return b, nil
}
