package httpjson

import (
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// The checks every adapter runs on an upstream's answer before any of it
// is used: an upstream answer is either valid in every field the service
// passes on, or the leg is refused with the reason (BadAnswer,
// UPSTREAM_ERROR), which the quote's data.timing and its failure answer
// show. A wallet is never handed an address, an amount or calldata that
// the service did not check itself.

// MaxUint256 is 2^256 − 1, the largest amount a chain's token or value
// field holds: an upstream amount above it cannot be a real one.
var MaxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// maxShown bounds how much of an upstream's value a refusal quotes, so that
// a huge or hostile field does not become a huge reason.
const maxShown = 80

// Shown is an upstream value as a refusal quotes it: Go-quoted, cut to
// maxShown bytes (on a rune boundary), an ellipsis marking the cut.
func Shown(s string) string {
	return fmt.Sprintf("%q", clip(s, maxShown))
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut with
// an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Required refuses an absent field.
func (u Upstream) Required(field, s string) *apierr.Error {
	if strings.TrimSpace(s) == "" {
		return u.BadAnswer("%s: missing", field)
	}
	return nil
}

// Address refuses an account or contract address that is not one on a
// chain of the given address format (a registry Chain.AddressFormat),
// checked with that chain's codec (EVM: 0x and 40 hex digits, EIP-55 when
// mixed case). An EVM zero address is refused too: no transaction, approval
// or deposit is meant for it, and an upstream that sends it is broken.
func (u Upstream) Address(field, format, s string) *apierr.Error {
	if s == "" {
		return u.BadAnswer("%s: missing", field)
	}
	if err := address.Validate(format, s); err != nil {
		return u.BadAnswer("%s: %s is not a valid %s address", field, Shown(s), format)
	}
	if strings.EqualFold(format, "evm") && strings.TrimLeft(strings.ToLower(s[2:]), "0") == "" {
		return u.BadAnswer("%s: %s is the zero address", field, Shown(s))
	}
	return nil
}

// Uint256 refuses an amount above 2^256 − 1 (parsers already refuse
// negative ones).
func (u Upstream) Uint256(field string, v *big.Int) *apierr.Error {
	if v.Sign() < 0 || v.Cmp(MaxUint256) > 0 {
		return u.BadAnswer("%s: %s does not fit 256 bits", field, Shown(v.String()))
	}
	return nil
}

// maxTxHash bounds a transaction id: a Solana signature, the longest
// common form, is under 90 base58 characters.
const maxTxHash = 128

// TxHash refuses a transaction id that is not one on any chain: ids are
// hex (0x-prefixed on EVM chains), base58 (Solana) or base64 (TON), so
// letters, digits and base64's +/=-_ after an optional 0x, at most
// maxTxHash of them. An absent id is the caller's to require.
func (u Upstream) TxHash(field, s string) *apierr.Error {
	h := strings.TrimPrefix(s, "0x")
	if h == "" || len(h) > maxTxHash {
		return u.BadAnswer("%s: %s is not a transaction id", field, Shown(s))
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && !strings.ContainsRune("+/=-_", rune(c)) {
			return u.BadAnswer("%s: %s is not a transaction id", field, Shown(s))
		}
	}
	return nil
}
