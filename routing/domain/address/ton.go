package address

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// TON user-friendly address flag bits (first byte).
const (
	tonFlagBounceable    = 0x11
	tonFlagNonBounceable = 0x51
	tonFlagTestOnly      = 0x80
)

// validateTON accepts the raw form workchain:64hex (workchain 0 or -1) and
// the 48-character user-friendly form: base64url (or standard base64) of
// flag, workchain, 32-byte account id and a CRC-16/XMODEM over the first 34
// bytes. Test-only addresses are refused, since mainnet funds sent to them
// are lost by wallets that honour the flag.
func validateTON(addr string) error {
	if wc, hash, ok := strings.Cut(addr, ":"); ok {
		n, err := strconv.Atoi(wc)
		if err != nil || (n != 0 && n != -1) {
			return invalid("ton", "raw workchain must be 0 or -1")
		}
		if len(hash) != 64 || !IsHex(hash) {
			return invalid("ton", "raw account id must be 64 hex digits")
		}
		return nil
	}
	if len(addr) != 48 {
		return invalid("ton", "want workchain:hex or 48 base64 characters")
	}
	enc := base64.RawURLEncoding
	if strings.ContainsAny(addr, "+/") {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(addr)
	if err != nil || len(b) != 36 {
		return invalid("ton", "not base64 of 36 bytes")
	}
	if crc := crc16XModem(b[:34]); b[34] != byte(crc>>8) || b[35] != byte(crc) {
		return invalid("ton", "checksum mismatch")
	}
	if b[0]&tonFlagTestOnly != 0 {
		return invalid("ton", "test-only address")
	}
	if b[0] != tonFlagBounceable && b[0] != tonFlagNonBounceable {
		return invalid("ton", "unknown address flags")
	}
	if wc := int8(b[1]); wc != 0 && wc != -1 {
		return invalid("ton", "workchain must be 0 or -1")
	}
	return nil
}
