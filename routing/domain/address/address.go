// Package address validates account and token addresses for every chain
// family Swapgate routes on. Each format has a real codec:
// checksums are verified, not just character sets, because a typo in a
// recipient address that passes a regex loses the user's funds.
package address

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is wrapped by every rejection, so callers map any validation
// failure to INVALID_PARAMS with errors.Is while the message keeps the reason.
var ErrInvalid = errors.New("invalid address")

// maxGenericLen bounds addresses of formats without a dedicated codec; no
// real account address on any chain Swapgate knows is longer.
const maxGenericLen = 128

// maxAddressLen bounds every address before its codec runs: the longest
// real form, a Zcash unified address, is under 1,700 characters, and base58
// decoding takes time quadratic in the length (a 60 kB body's worth took
// 20 ms and more per request).
const maxAddressLen = 2048

// invalid builds an error that wraps ErrInvalid with the format and reason.
func invalid(format, reason string) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, format, reason)
}

// Validate checks addr as an account address in the given format, a
// registry Chain.AddressFormat value. Formats with a dedicated codec: evm,
// solana, bitcoin, sui, near, ton, tron, xrp, doge, stellar, and, for the
// further intents chains, zec, ltc, bch, dash, aptos, cardano, starknet and
// aleo. Any other format gets a sanity check only (see validateGeneric).
func Validate(format, addr string) error {
	if addr == "" {
		return invalid(format, "empty")
	}
	if len(addr) > maxAddressLen {
		return invalid(format, "too long")
	}
	switch strings.ToLower(format) {
	case "evm":
		return validateEVM(addr)
	case "solana":
		return validateSolana(addr)
	case "bitcoin":
		return validateBitcoin(addr)
	case "sui":
		return validateSui(addr)
	case "near":
		return validateNEAR(addr)
	case "ton":
		return validateTON(addr)
	case "tron":
		return validateTron(addr)
	case "xrp":
		return validateXRP(addr)
	case "doge":
		return validateDoge(addr)
	case "stellar":
		return validateStellar(addr)
	case "zec":
		return validateZcash(addr)
	case "ltc":
		return validateLitecoin(addr)
	case "bch":
		return validateBitcoinCash(addr)
	case "dash":
		return validateDash(addr)
	case "aptos":
		return validateHexAccount("aptos", addr, 64)
	case "starknet":
		return validateHexAccount("starknet", addr, 64)
	case "cardano":
		return validateCardano(addr)
	case "aleo":
		return validateAleo(addr)
	default:
		return validateGeneric(format, addr)
	}
}

// ValidateToken checks a token address on a chain of the given format. The
// word "native" stands for the chain's coin and is always valid. EVM tokens
// are contract addresses; Solana tokens are mint accounts; Sui tokens are
// coin types (0x<hex>::module::NAME) or object ids. Other formats name
// tokens by an account of that chain (a NEAR contract, a TON jetton master,
// a Tron contract), so they are checked as accounts.
func ValidateToken(format, addr string) error {
	if strings.EqualFold(addr, "native") {
		return nil
	}
	if strings.EqualFold(format, "sui") {
		return validateSuiToken(addr)
	}
	return Validate(format, addr)
}

// validateGeneric is the sanity check for formats without a codec: the
// address must be non-empty, at most maxGenericLen characters, and printable
// ASCII without spaces, which is true of every chain's textual address form
// and catches pasted whitespace, control characters and truncated JSON.
func validateGeneric(format, addr string) error {
	if len(addr) > maxGenericLen {
		return invalid(format, "too long")
	}
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; c <= ' ' || c > '~' {
			return invalid(format, "non-printable or space character")
		}
	}
	return nil
}
