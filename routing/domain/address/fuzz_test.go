package address

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mr-tron/base58"
)

// The fuzz targets of the address codecs (see scripts/fuzz-targets), one per
// encoding family. Each checks, beside its codec's own round trip, what
// every codec owes its callers (checkCommon): no panic, a refusal wraps
// ErrInvalid, the same answer twice and whatever the case of the format
// name, and nothing over maxAddressLen or empty accepted.

// seedFixtures adds every fixture address of the given formats as seeds.
func seedFixtures(f *testing.F, formats []string, add func(i uint8, addr string)) {
	for _, fx := range loadFixtures(f) {
		for i, name := range formats {
			if fx.Format == name {
				add(uint8(i), fx.Address)
			}
		}
	}
}

// checkCommon checks the properties every codec shares and returns whether
// addr was accepted.
func checkCommon(t *testing.T, format, addr string) bool {
	t.Helper()
	err := Validate(format, addr)
	if err != nil && !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate(%s, %q) = %v, which does not wrap ErrInvalid", format, addr, err)
	}
	if again := Validate(strings.ToUpper(format), addr); (again == nil) != (err == nil) {
		t.Fatalf("Validate(%s, %q) = %v but %v with the format in upper case", format, addr, err, again)
	}
	if err == nil && (addr == "" || len(addr) > maxAddressLen) {
		t.Fatalf("Validate(%s) accepted %d characters", format, len(addr))
	}
	return err == nil
}

func isLowerHex(s string) bool { return s == strings.ToLower(s) }

// FuzzValidateEVM: an accepted address is 0x and 40 hex digits that
// go-ethereum reads as one; its lower-case and EIP-55 forms are accepted
// too, and a mixed-case one is accepted only in its EIP-55 form.
func FuzzValidateEVM(f *testing.F) {
	seedFixtures(f, []string{"evm"}, func(_ uint8, a string) { f.Add(a) })
	f.Add("0x" + strings.Repeat("g", 40))
	f.Fuzz(func(t *testing.T, addr string) {
		if !checkCommon(t, "evm", addr) {
			return
		}
		if !common.IsHexAddress(addr) || len(addr) != 42 {
			t.Fatalf("accepted %q, which go-ethereum does not read as an address", addr)
		}
		sum := common.HexToAddress(addr).Hex()
		lower := "0x" + strings.ToLower(addr[2:])
		if Validate("evm", lower) != nil || Validate("evm", sum) != nil {
			t.Fatalf("%q accepted but not its lower-case %s or EIP-55 %s form", addr, lower, sum)
		}
		digits := addr[2:]
		if digits != strings.ToLower(digits) && digits != strings.ToUpper(digits) && digits != sum[2:] {
			t.Fatalf("mixed-case %q accepted, but its EIP-55 form is %s", addr, sum)
		}
	})
}

// base58Formats are the formats whose accepted addresses are base58 text.
var base58Formats = []string{"solana", "tron", "xrp", "doge", "dash", "ltc", "zec", "bch", "bitcoin", "cardano"}

// FuzzValidateBase58: an accepted base58 address decodes and encodes back
// to itself in its alphabet (there is exactly one spelling of an address).
func FuzzValidateBase58(f *testing.F) {
	seedFixtures(f, base58Formats, func(i uint8, a string) { f.Add(i, a) })
	f.Add(uint8(0), strings.Repeat("1", 44))
	f.Add(uint8(2), "r"+strings.Repeat("p", 30))
	f.Fuzz(func(t *testing.T, which uint8, addr string) {
		format := base58Formats[int(which)%len(base58Formats)]
		if !checkCommon(t, format, addr) {
			return
		}
		alphabet := base58.BTCAlphabet
		if format == "xrp" {
			alphabet = rippleAlphabet
		}
		b, err := base58.DecodeAlphabet(addr, alphabet)
		if err != nil {
			return // a bech32 or CashAddr form of a format that has both
		}
		if back := base58.EncodeAlphabet(b, alphabet); back != addr {
			t.Fatalf("%s %q accepted, but its bytes encode as %q", format, addr, back)
		}
	})
}

// bech32Formats are the formats with bech32 (or CashAddr) forms.
var bech32Formats = []string{"bitcoin", "ltc", "zec", "aleo", "cardano", "bch"}

// FuzzValidateBech32: bech32 is case-insensitive but never mixed-case, so
// an accepted address written in one case is accepted in the other, and
// one written in both cases is refused.
func FuzzValidateBech32(f *testing.F) {
	seedFixtures(f, bech32Formats, func(i uint8, a string) { f.Add(i, a) })
	f.Add(uint8(0), "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4")
	f.Add(uint8(5), "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a")
	f.Fuzz(func(t *testing.T, which uint8, addr string) {
		format := bech32Formats[int(which)%len(bech32Formats)]
		if !checkCommon(t, format, addr) {
			return
		}
		if looksBech32(addr) {
			lower, upper := strings.ToLower(addr), strings.ToUpper(addr)
			if lower != addr && upper != addr {
				t.Fatalf("%s %q accepted in mixed case", format, addr)
			}
			if Validate(format, lower) != nil || Validate(format, upper) != nil {
				t.Fatalf("%s %q accepted, but not as %q or %q", format, addr, lower, upper)
			}
		}
	})
}

// looksBech32 reports an address in a bech32-family form, by its
// human-readable prefix (CashAddr's may be left out: q… or p…).
func looksBech32(addr string) bool {
	s := strings.ToLower(addr)
	for _, p := range []string{"bc1", "ltc1", "tex1", "zs1", "u1", "aleo1", "addr1", "bitcoincash:"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return (s[0] == 'q' || s[0] == 'p') && strings.Trim(s, cashAddrCharset) == ""
}

// textFormats are the formats checked character by character.
var textFormats = []string{"near", "ton", "stellar", "sui", "aptos", "starknet", "unknownchain"}

// FuzzValidateText: the formats without a binary codec accept only their
// character sets and lengths, and TON's and Stellar's encoded forms round
// trip.
func FuzzValidateText(f *testing.F) {
	seedFixtures(f, textFormats, func(i uint8, a string) { f.Add(i, a) })
	f.Add(uint8(0), "a..b.near")
	f.Add(uint8(6), "hello world")
	f.Fuzz(func(t *testing.T, which uint8, addr string) {
		format := textFormats[int(which)%len(textFormats)]
		if !checkCommon(t, format, addr) {
			return
		}
		for i := 0; i < len(addr); i++ {
			if c := addr[i]; c <= ' ' || c > '~' {
				t.Fatalf("%s %q accepted with byte %#x", format, addr, c)
			}
		}
		switch format {
		case "near":
			if len(addr) < 2 || len(addr) > 64 || strings.Trim(addr, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" ||
				strings.ContainsAny(addr[:1]+addr[len(addr)-1:], ".-_") {
				t.Fatalf("near %q accepted", addr)
			}
		case "sui":
			if len(addr) != 66 || !strings.HasPrefix(addr, "0x") || !IsHex(addr[2:]) {
				t.Fatalf("sui %q accepted", addr)
			}
		case "aptos", "starknet":
			if len(addr) < 3 || len(addr) > 66 || !strings.HasPrefix(addr, "0x") || !IsHex(addr[2:]) {
				t.Fatalf("%s %q accepted", format, addr)
			}
		case "ton":
			if !strings.Contains(addr, ":") {
				enc := base64.RawURLEncoding
				if strings.ContainsAny(addr, "+/") {
					enc = base64.RawStdEncoding
				}
				b, err := enc.DecodeString(addr)
				if err != nil || enc.EncodeToString(b) != addr {
					t.Fatalf("ton %q accepted, but does not round trip", addr)
				}
			}
		case "unknownchain":
			if len(addr) > maxGenericLen {
				t.Fatalf("generic %d characters accepted", len(addr))
			}
		}
	})
}

// tokenFormats are formats whose tokens the quote and connections
// endpoints check.
var tokenFormats = []string{"evm", "solana", "sui", "near", "ton", "tron", "bitcoin", "stellar"}

// FuzzValidateToken: "native" in any case names the coin everywhere; a Sui
// token is an object id or a coin type 0x<hex>::module::NAME of Move
// identifiers; any other format's token is one of its accounts.
func FuzzValidateToken(f *testing.F) {
	seedFixtures(f, tokenFormats, func(i uint8, a string) { f.Add(i, a) })
	f.Add(uint8(2), "0x2::sui::SUI")
	f.Add(uint8(2), "0x2::sui::")
	f.Add(uint8(0), "NATIVE")
	f.Fuzz(func(t *testing.T, which uint8, addr string) {
		format := tokenFormats[int(which)%len(tokenFormats)]
		err := ValidateToken(format, addr)
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("ValidateToken(%s, %q) = %v, which does not wrap ErrInvalid", format, addr, err)
		}
		if strings.EqualFold(addr, "native") {
			if err != nil {
				t.Fatalf("ValidateToken(%s, %q) = %v", format, addr, err)
			}
			return
		}
		if format != "sui" {
			if (err == nil) != (Validate(format, addr) == nil) {
				t.Fatalf("ValidateToken(%s, %q) = %v disagrees with Validate", format, addr, err)
			}
			return
		}
		if err != nil {
			return
		}
		parts := strings.Split(addr, "::")
		switch {
		case len(parts) == 1 && Validate("sui", addr) == nil:
		case len(parts) == 3 && strings.HasPrefix(parts[0], "0x") && len(parts[0]) <= 66 && IsHex(parts[0][2:]) &&
			isMoveIdent(parts[1]) && isMoveIdent(parts[2]):
		default:
			t.Fatalf("sui token %q accepted", addr)
		}
	})
}
