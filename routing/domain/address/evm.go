package address

import (
	"sync"

	"github.com/ethereum/go-ethereum/crypto"
)

// checksumScratch is a Keccak-256 state with its input and output buffers,
// pooled because every quote checks two addresses: kept together, none of
// them escapes to the heap per call.
type checksumScratch struct {
	st    crypto.KeccakState
	lower [40]byte
	hash  [32]byte
}

var checksumPool = sync.Pool{New: func() any { return &checksumScratch{st: crypto.NewKeccakState()} }}

// validateEVM accepts 0x + 40 hex digits. All-lower and all-upper input
// carries no checksum and is accepted; mixed case must pass EIP-55, because
// a mixed-case address that fails it is almost surely mistyped.
func validateEVM(addr string) error {
	if len(addr) != 42 || addr[0] != '0' || (addr[1] != 'x' && addr[1] != 'X') {
		return invalid("evm", "want 0x followed by 40 hex digits")
	}
	sc := checksumPool.Get().(*checksumScratch)
	defer checksumPool.Put(sc)
	lower := &sc.lower
	hasLower, hasUpper := false, false
	for i := 0; i < 40; i++ {
		c := addr[2+i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f':
			hasLower = true
		case c >= 'A' && c <= 'F':
			hasUpper = true
			c += 'a' - 'A'
		default:
			return invalid("evm", "non-hex characters")
		}
		lower[i] = c
	}
	if !hasLower || !hasUpper {
		return nil
	}
	// EIP-55: a letter is upper case exactly when the matching nibble of
	// keccak256(lower-case hex) is 8 or more.
	sc.st.Reset()
	_, _ = sc.st.Write(lower[:])
	_, _ = sc.st.Read(sc.hash[:])
	h := &sc.hash
	for i := 0; i < 40; i++ {
		c := addr[2+i]
		if c <= '9' {
			continue
		}
		nibble := h[i/2] >> 4
		if i%2 == 1 {
			nibble = h[i/2] & 0x0f
		}
		if (nibble >= 8) != (c <= 'F') {
			return invalid("evm", "EIP-55 checksum mismatch")
		}
	}
	return nil
}
