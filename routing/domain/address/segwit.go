package address

import (
	"strings"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/mr-tron/base58"
)

// validateSegwit checks a BIP 173/350 segwit address with the given
// human-readable part: witness version 0 must use bech32 with a 20- or
// 32-byte program; versions 1 to 16 must use bech32m with 2 to 40 bytes.
func validateSegwit(format, hrp, addr string) error {
	gotHRP, data, ver, err := bech32.DecodeGeneric(addr)
	if err != nil {
		return invalid(format, "bad bech32: "+err.Error())
	}
	if gotHRP != hrp || len(data) < 1 {
		return invalid(format, "wrong prefix")
	}
	prog, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil {
		return invalid(format, "bad witness program")
	}
	switch w := data[0]; {
	case w == 0:
		if ver != bech32.Version0 || (len(prog) != 20 && len(prog) != 32) {
			return invalid(format, "bad v0 witness program")
		}
	case w <= 16:
		if ver != bech32.VersionM || len(prog) < 2 || len(prog) > 40 {
			return invalid(format, "bad witness program")
		}
	default:
		return invalid(format, "bad witness version")
	}
	return nil
}

// validateLitecoin accepts base58check P2PKH (0x30, L…), P2SH (0x32, M…,
// and the legacy 0x05, 3…) and ltc1… segwit addresses.
func validateLitecoin(addr string) error {
	if strings.HasPrefix(strings.ToLower(addr), "ltc1") {
		return validateSegwit("ltc", "ltc", addr)
	}
	return validateVersioned("ltc", addr, base58.BTCAlphabet, []byte{0x30}, []byte{0x32}, []byte{0x05})
}

// validateZcash accepts transparent t1… (P2PKH, version 0x1CB8) and t3…
// (P2SH, 0x1CBD) addresses, TEX addresses (tex1…, bech32m of a 20-byte
// hash), Sapling addresses (zs1…, bech32 of 43 bytes) and unified
// addresses (u1…, bech32m; their F4Jumble-encoded content is not unpacked).
func validateZcash(addr string) error {
	lower := strings.ToLower(addr)
	switch {
	case strings.HasPrefix(lower, "t"):
		return validateVersioned("zec", addr, base58.BTCAlphabet, []byte{0x1C, 0xB8}, []byte{0x1C, 0xBD})
	case strings.HasPrefix(lower, "tex1"):
		return validateBech32Payload("zec", "tex", addr, bech32.VersionM, 20, 20)
	case strings.HasPrefix(lower, "zs1"):
		return validateBech32Payload("zec", "zs", addr, bech32.Version0, 43, 43)
	case strings.HasPrefix(lower, "u1"):
		return validateBech32Payload("zec", "u", addr, bech32.VersionM, 48, 1024)
	default:
		return invalid("zec", "unknown address kind")
	}
}

// validateBech32Payload decodes a bech32 or bech32m string of any length,
// checks its prefix and checksum variant, and checks the byte length of the
// 8-bit payload.
func validateBech32Payload(format, hrp, addr string, want bech32.Version, minLen, maxLen int) error {
	gotHRP, data, ver, err := bech32.DecodeNoLimitWithVersion(addr)
	if err != nil {
		return invalid(format, "bad bech32: "+err.Error())
	}
	if gotHRP != hrp {
		return invalid(format, "wrong prefix")
	}
	if ver != want {
		return invalid(format, "wrong bech32 checksum variant")
	}
	b, err := bech32.ConvertBits(data, 5, 8, false)
	if err != nil || len(b) < minLen || len(b) > maxLen {
		return invalid(format, "wrong payload length")
	}
	return nil
}

// validateAleo accepts aleo1… addresses: bech32m of a 32-byte key.
func validateAleo(addr string) error {
	return validateBech32Payload("aleo", "aleo", addr, bech32.VersionM, 32, 32)
}

// validateCardano accepts Shelley mainnet addresses (addr1…, bech32 without
// length limit; header type 0–7, network id 1) and, as a sanity check only,
// Byron base58 addresses (Ae2… or DdzFF…), whose CBOR/CRC32 body is not
// unpacked.
func validateCardano(addr string) error {
	if strings.HasPrefix(addr, "Ae2") || strings.HasPrefix(addr, "DdzFF") {
		b, err := base58.Decode(addr)
		if err != nil || len(b) < 40 || len(b) > 200 {
			return invalid("cardano", "bad Byron address")
		}
		return nil
	}
	gotHRP, data, ver, err := bech32.DecodeNoLimitWithVersion(addr)
	if err != nil {
		return invalid("cardano", "bad bech32: "+err.Error())
	}
	if gotHRP != "addr" || ver != bech32.Version0 {
		return invalid("cardano", "want a mainnet addr1… address")
	}
	b, err := bech32.ConvertBits(data, 5, 8, false)
	if err != nil || len(b) < 29 {
		return invalid("cardano", "payload too short")
	}
	kind, network := b[0]>>4, b[0]&0x0F
	if network != 1 {
		return invalid("cardano", "not a mainnet address")
	}
	switch {
	case kind <= 3 && len(b) == 57, kind == 6 || kind == 7:
		if kind >= 6 && len(b) != 29 {
			return invalid("cardano", "wrong enterprise address length")
		}
	case kind == 4 || kind == 5:
		// Pointer addresses carry variable-length integers after the key.
	default:
		return invalid("cardano", "unsupported address type")
	}
	return nil
}
