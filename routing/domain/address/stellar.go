package address

import "encoding/base32"

// StrKey version bytes (the high five bits of the first decoded byte).
const (
	strKeyAccount = 6 << 3  // G…: ed25519 public key
	strKeyMuxed   = 12 << 3 // M…: muxed account (key + 64-bit id)
)

// validateStellar accepts StrKey account ids: base32 (no padding) of a
// version byte, the payload and a CRC-16/XMODEM checksum stored little
// endian. G… accounts are 56 characters (32-byte key); muxed M… accounts
// are 69 characters (32-byte key and 8-byte id).
func validateStellar(addr string) error {
	var version byte
	var payload int
	switch {
	case len(addr) == 56 && addr[0] == 'G':
		version, payload = strKeyAccount, 32
	case len(addr) == 69 && addr[0] == 'M':
		version, payload = strKeyMuxed, 40
	default:
		return invalid("stellar", "want G… (56 characters) or M… (69 characters)")
	}
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	b, err := enc.DecodeString(addr)
	if err != nil || len(b) != 1+payload+2 {
		return invalid("stellar", "not base32 of the expected length")
	}
	// A muxed address has spare bits in its last character; the decoder
	// ignores them, so a non-canonical spelling is caught by re-encoding.
	if enc.EncodeToString(b) != addr {
		return invalid("stellar", "non-canonical encoding")
	}
	if b[0] != version {
		return invalid("stellar", "wrong version byte")
	}
	crc := crc16XModem(b[:1+payload])
	if b[1+payload] != byte(crc) || b[2+payload] != byte(crc>>8) {
		return invalid("stellar", "checksum mismatch")
	}
	return nil
}
