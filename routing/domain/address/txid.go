package address

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/mr-tron/base58"
)

// ErrInvalidTxID means a transaction id is not one of its ecosystem.
var ErrInvalidTxID = errors.New("invalid transaction id")

// ValidateTxID checks a transaction id with the rules of the fee ecosystem
// it was made in: an EVM transaction hash is 0x and 64 hex digits; a
// Bitcoin txid is 64 hex digits; a Solana signature is base58 of 64 bytes;
// a Sui transaction digest and a NEAR transaction hash are base58 of 32
// bytes.
func ValidateTxID(ecosystem, id string) error {
	bad := func(reason string) error { return fmt.Errorf("%w: %s: %s", ErrInvalidTxID, ecosystem, reason) }
	switch ecosystem {
	case "evm":
		h, ok := strings.CutPrefix(id, "0x")
		if !ok || len(h) != 64 || !isHexDigits(h) {
			return bad("want 0x and 64 hex digits")
		}
	case "bitcoin":
		if len(id) != 64 || !isHexDigits(id) {
			return bad("want 64 hex digits")
		}
	case "solana":
		if b, err := base58.Decode(id); err != nil || len(b) != 64 || len(id) > 88 {
			return bad("want base58 of a 64-byte signature")
		}
	case "sui", "near":
		if b, err := base58.Decode(id); err != nil || len(b) != 32 || len(id) > 44 {
			return bad("want base58 of a 32-byte digest")
		}
	default:
		return bad("unknown ecosystem")
	}
	return nil
}

func isHexDigits(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
