package address

import (
	"errors"
	"strings"
	"testing"

	"github.com/mr-tron/base58"
)

func TestValidateTxID(t *testing.T) {
	sol := base58.Encode(append([]byte{1}, make([]byte, 63)...))
	digest := base58.Encode(append([]byte{7}, make([]byte, 31)...))
	hex64 := strings.Repeat("ab", 32)
	for _, c := range []struct {
		eco, id string
		ok      bool
	}{
		{"evm", "0x" + hex64, true},
		{"evm", "0x" + strings.ToUpper(hex64), true},
		{"evm", hex64, false},
		{"evm", "0x" + hex64[:62], false},
		{"evm", "0x" + hex64[:62] + "zz", false},
		{"bitcoin", hex64, true},
		{"bitcoin", "0x" + hex64, false},
		{"solana", sol, true},
		{"solana", digest, false},
		{"solana", "0OIl", false},
		{"sui", digest, true},
		{"near", digest, true},
		{"near", sol, false},
		{"tron", hex64, false},
	} {
		err := ValidateTxID(c.eco, c.id)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidTxID)) {
			t.Errorf("ValidateTxID(%s, %s) = %v, want ok %v", c.eco, c.id, err, c.ok)
		}
	}
}
