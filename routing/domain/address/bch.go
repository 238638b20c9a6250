package address

import (
	"strings"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/mr-tron/base58"
)

// cashAddrCharset is the 32-character alphabet of CashAddr (same as bech32).
const cashAddrCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// cashAddrPolymod is the BCH-code checksum of the CashAddr specification
// over 5-bit values; a valid address yields 0.
func cashAddrPolymod(values []byte) uint64 {
	c := uint64(1)
	for _, d := range values {
		c0 := byte(c >> 35)
		c = ((c & 0x07ffffffff) << 5) ^ uint64(d)
		if c0&0x01 != 0 {
			c ^= 0x98f2bc8e61
		}
		if c0&0x02 != 0 {
			c ^= 0x79b76d99e2
		}
		if c0&0x04 != 0 {
			c ^= 0xf33e5fb3c4
		}
		if c0&0x08 != 0 {
			c ^= 0xae2eabe2a8
		}
		if c0&0x10 != 0 {
			c ^= 0x1e4f43e470
		}
	}
	return c ^ 1
}

// validateBitcoinCash accepts CashAddr (with or without the bitcoincash:
// prefix; P2PKH or P2SH with a 20- or 32-byte hash) and legacy base58check
// P2PKH (0x00) and P2SH (0x05) addresses.
func validateBitcoinCash(addr string) error {
	if addr[0] == '1' || addr[0] == '3' {
		return validateVersioned("bch", addr, base58.BTCAlphabet, []byte{0x00}, []byte{0x05})
	}
	s := strings.ToLower(addr)
	if s != addr && strings.ToUpper(addr) != addr {
		return invalid("bch", "mixed case")
	}
	prefix, payload, found := strings.Cut(s, ":")
	if !found {
		prefix, payload = "bitcoincash", s
	}
	if prefix != "bitcoincash" {
		return invalid("bch", "wrong prefix")
	}
	if len(payload) < 9 {
		return invalid("bch", "too short")
	}
	values := make([]byte, 0, len(prefix)+1+len(payload))
	for i := 0; i < len(prefix); i++ {
		values = append(values, prefix[i]&0x1f)
	}
	values = append(values, 0)
	data := make([]byte, len(payload))
	for i := 0; i < len(payload); i++ {
		v := strings.IndexByte(cashAddrCharset, payload[i])
		if v < 0 {
			return invalid("bch", "character outside the CashAddr alphabet")
		}
		data[i] = byte(v)
	}
	if cashAddrPolymod(append(values, data...)) != 0 {
		return invalid("bch", "checksum mismatch")
	}
	b, err := bech32.ConvertBits(data[:len(data)-8], 5, 8, false)
	if err != nil || len(b) < 1 {
		return invalid("bch", "bad payload")
	}
	version, hash := b[0], b[1:]
	kind, size := version>>3, version&0x07
	if kind != 0 && kind != 1 {
		return invalid("bch", "unsupported address type")
	}
	if (size == 0 && len(hash) != 20) || (size == 3 && len(hash) != 32) || (size != 0 && size != 3) {
		return invalid("bch", "hash length does not match version")
	}
	return nil
}
