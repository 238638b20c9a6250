package account

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/address"
)

// ErrBadWallet is wrapped by ParseWallet's refusals.
var ErrBadWallet = errors.New("invalid wallet")

// WalletKey is the form a wallet address is compared in and indexed by in
// a partner's history. A 0x-hex address (EVM, and the hex accounts of Sui,
// Aptos and Starknet) is lower-cased: the case of its digits means nothing
// (EVM's mixed case is EIP-55's checksum only), so 0xAbC… and 0xabc… are one
// wallet. Any other address (base58, bech32, base64, named accounts) is
// kept exactly as written, since its case is part of it.
func WalletKey(addr string) string {
	if len(addr) > 2 && addr[0] == '0' && (addr[1] == 'x' || addr[1] == 'X') && address.IsHex(addr[2:]) {
		return strings.ToLower(addr)
	}
	return addr
}

// ParseWallet checks a wallet address that names no chain (the wallet
// filter of a partner's history) and returns its WalletKey. It must be a
// valid account address in one of formats (the registry's chains'
// address formats), checked by that family's codec; an address of 0x and
// 40 hex digits is judged as an EVM address only, so that a mixed-case one
// must pass its EIP-55 checksum (a hex family that takes shorter accounts,
// Aptos or Starknet, would take a mistyped one). The error wraps
// ErrBadWallet and says why.
func ParseWallet(formats []string, s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("%w: empty", ErrBadWallet)
	}
	if len(s) == 42 && strings.HasPrefix(s, "0x") && address.IsHex(s[2:]) {
		if err := address.Validate("evm", s); err != nil {
			return "", fmt.Errorf("%w: %w", ErrBadWallet, err)
		}
		return WalletKey(s), nil
	}
	for _, f := range formats {
		if address.Validate(f, s) == nil {
			return WalletKey(s), nil
		}
	}
	return "", fmt.Errorf("%w: not an account address of any chain family Swapgate routes on", ErrBadWallet)
}

// Wallets is the distinct WalletKeys a record is listed under in its
// partner's history by wallet: its sender's and its receiver's (one when
// they are the same wallet, none before the record names them).
func (a *Activity) Wallets() []string {
	var out []string
	if a.FromAddress != "" {
		out = append(out, WalletKey(a.FromAddress))
	}
	if a.ToAddress != "" {
		if k := WalletKey(a.ToAddress); len(out) == 0 || out[0] != k {
			out = append(out, k)
		}
	}
	return out
}
