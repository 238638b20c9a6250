package lifi

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/apierr"
)

// badAnswer is the error for an answer that does not follow LI.FI's
// documented shape: the upstream failed, not the client.
func badAnswer(format string, args ...any) *apierr.Error {
	err := fmt.Errorf("lifi: "+format, args...)
	return apierr.New(apierr.UpstreamError, "the aggregator upstream sent an unreadable answer").
		With("provider", Name).Wrap(err)
}

// decimal parses a non-negative base-10 integer amount. Amounts that are not
// plain digits are refused rather than guessed at.
func decimal(field string, s flexString) (*big.Int, error) {
	str := string(s)
	if str == "" || strings.TrimLeft(str, "0123456789") != "" {
		return nil, badAnswer("%s: %q is not a decimal amount", field, str)
	}
	v, ok := new(big.Int).SetString(str, 10)
	if !ok {
		return nil, badAnswer("%s: %q is not a decimal amount", field, str)
	}
	return v, nil
}

// optDecimal is decimal for fields that may be absent (zero then).
func optDecimal(field string, s flexString) (*big.Int, error) {
	if s == "" {
		return new(big.Int), nil
	}
	return decimal(field, s)
}

// float parses a USD figure or percentage; absent or unreadable figures are
// zero, since they are informative and never move funds.
func float(s flexString) float64 {
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return 0
	}
	return f
}

// hexBig parses a transaction number: 0x-prefixed hex as LI.FI documents,
// or plain decimal, which a few tools send. Empty is zero.
func hexBig(field string, s flexString) (*big.Int, error) {
	str := string(s)
	if str == "" {
		return new(big.Int), nil
	}
	if h, ok := strings.CutPrefix(strings.ToLower(str), "0x"); ok {
		if h == "" {
			return new(big.Int), nil
		}
		v, ok := new(big.Int).SetString(h, 16)
		if !ok {
			return nil, badAnswer("%s: %q is not hex", field, str)
		}
		return v, nil
	}
	return decimal(field, s)
}

// hexUint64 parses a transaction number that must fit in 64 bits.
func hexUint64(field string, s flexString) (uint64, error) {
	v, err := hexBig(field, s)
	if err != nil {
		return 0, err
	}
	if !v.IsUint64() {
		return 0, badAnswer("%s: %q overflows 64 bits", field, s)
	}
	return v.Uint64(), nil
}

// hexBytes decodes calldata.
func hexBytes(field, s string) ([]byte, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(h)%2 == 1 {
		h = "0" + h
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, badAnswer("%s: %w", field, err)
	}
	return b, nil
}

// chainID parses a chain id field; an absent one is zero.
func chainID(s flexString) uint64 {
	v, err := strconv.ParseUint(string(s), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
