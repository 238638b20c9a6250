package address

import (
	"bytes"
	"crypto/sha256"

	"github.com/mr-tron/base58"
)

// rippleAlphabet is the XRP Ledger's base58 alphabet, which orders the
// characters differently from Bitcoin's so that addresses start with 'r'.
var rippleAlphabet = base58.NewAlphabet("rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz")

// decodeBase58Check decodes s in the given alphabet and verifies the
// trailing 4-byte double-SHA-256 checksum. It returns the payload with the
// checksum removed (version bytes included).
func decodeBase58Check(s string, alphabet *base58.Alphabet) ([]byte, bool) {
	b, err := base58.DecodeAlphabet(s, alphabet)
	if err != nil || len(b) < 5 {
		return nil, false
	}
	payload, sum := b[:len(b)-4], b[len(b)-4:]
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	if !bytes.Equal(h2[:4], sum) {
		return nil, false
	}
	return payload, true
}

// validateVersioned checks a base58check address whose payload is one of
// the given version prefixes followed by a 20-byte hash.
func validateVersioned(format, addr string, alphabet *base58.Alphabet, versions ...[]byte) error {
	payload, ok := decodeBase58Check(addr, alphabet)
	if !ok {
		return invalid(format, "bad base58 or checksum")
	}
	for _, v := range versions {
		if len(payload) == len(v)+20 && bytes.HasPrefix(payload, v) {
			return nil
		}
	}
	return invalid(format, "wrong version byte or length")
}

// validateTron accepts a 34-character T… address: base58check of 0x41 and
// a 20-byte account hash.
func validateTron(addr string) error {
	if len(addr) != 34 || addr[0] != 'T' {
		return invalid("tron", "want 34 characters starting with T")
	}
	return validateVersioned("tron", addr, base58.BTCAlphabet, []byte{0x41})
}

// validateXRP accepts a classic r… address: base58check in Ripple's
// alphabet of version 0x00 and a 20-byte account id, 25 to 35 characters.
func validateXRP(addr string) error {
	if len(addr) < 25 || len(addr) > 35 || addr[0] != 'r' {
		return invalid("xrp", "want 25 to 35 characters starting with r")
	}
	return validateVersioned("xrp", addr, rippleAlphabet, []byte{0x00})
}

// validateDoge accepts Dogecoin P2PKH (version 0x1E, D…) and P2SH (0x16,
// 9… or A…) addresses.
func validateDoge(addr string) error {
	return validateVersioned("doge", addr, base58.BTCAlphabet, []byte{0x1E}, []byte{0x16})
}

// validateDash accepts Dash P2PKH (version 0x4C, X…) and P2SH (0x10, 7…).
func validateDash(addr string) error {
	return validateVersioned("dash", addr, base58.BTCAlphabet, []byte{0x4C}, []byte{0x10})
}
