package account

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/address"
)

// Fee ecosystems: where a partner's fees settle, each to one fee wallet.
// EVM sources settle in evm, Solana in solana, Sui in sui, Bitcoin in
// bitcoin, and the chains reached only through the intents provider (TON,
// Tron, XRP, Doge, Stellar, NEAR and the rest) in near.
const (
	EcosystemEVM     = "evm"
	EcosystemSolana  = "solana"
	EcosystemBitcoin = "bitcoin"
	EcosystemSui     = "sui"
	EcosystemNEAR    = "near"
)

// Ecosystems returns the fee ecosystems in their canonical order, the order
// of every listing. It returns a fresh slice each call.
func Ecosystems() []string {
	return []string{EcosystemEVM, EcosystemSolana, EcosystemBitcoin, EcosystemSui, EcosystemNEAR}
}

// ValidEcosystem reports whether e is a fee ecosystem. Names are
// case-sensitive, as the interface lists them.
func ValidEcosystem(e string) bool { return slices.Contains(Ecosystems(), e) }

// EcosystemRank orders ecosystems canonically; an unknown name sorts last.
func EcosystemRank(e string) int {
	if i := slices.Index(Ecosystems(), e); i >= 0 {
		return i
	}
	return len(Ecosystems())
}

// compareEcosystems orders by canonical rank, then by name.
func compareEcosystems(a, b string) int {
	if d := EcosystemRank(a) - EcosystemRank(b); d != 0 {
		return d
	}
	return strings.Compare(a, b)
}

// ErrUnknownEcosystem is returned for a name that is not a fee ecosystem.
var ErrUnknownEcosystem = errors.New("unknown fee ecosystem")

// ValidateFeeWallet checks a fee-wallet address for its ecosystem with that
// ecosystem's real codec (EIP-55 checksums on mixed-case EVM addresses,
// base58 for Solana, mainnet Bitcoin types, 64-hex Sui). NEAR fee wallets
// must moreover be named accounts ending in .near or .testnet: an implicit
// account or another top-level name is refused, since the fee settles
// through the NEAR intents contract to a named account.
func ValidateFeeWallet(ecosystem, addr string) error {
	switch ecosystem {
	case EcosystemEVM, EcosystemSolana, EcosystemBitcoin, EcosystemSui:
		return address.Validate(ecosystem, addr)
	case EcosystemNEAR:
		if err := address.Validate(ecosystem, addr); err != nil {
			return err
		}
		if !strings.HasSuffix(addr, ".near") && !strings.HasSuffix(addr, ".testnet") {
			return fmt.Errorf("%w: near: fee wallet must end in .near or .testnet", address.ErrInvalid)
		}
		return nil
	default:
		return fmt.Errorf("%w: %q", ErrUnknownEcosystem, ecosystem)
	}
}
