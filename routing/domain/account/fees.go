package account

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// SwapFee is the fee policy of a quote. p is the calling partner (nil for
// the anonymous tier), ecosystem the fee ecosystem of the source chain, and
// feeFree whether the route is one that never carries a fee (the direct
// USDCh → USDC outbound bridge). It returns the fee in basis points and
// whether the quote needs the partner's fee wallet in that ecosystem (a
// non-zero partner fee settles there), or the refusal the contract names:
// PARTNER_FEE_EXCEEDS_MAX above the platform maximum, and
// ECOSYSTEM_NOT_CONFIGURED for an ecosystem the partner is not enabled in.
func SwapFee(p *Partner, ecosystem string, feeFree bool) (bps int, needsWallet bool, err *apierr.Error) {
	switch {
	case feeFree:
		return 0, false, nil
	case p == nil:
		return AnonymousSwapFeeBps, false, nil
	case p.SwapFeeBps > MaxFeeBps:
		return 0, false, &apierr.Error{Code: apierr.PartnerFeeExceedsMax,
			Message: fmt.Sprintf("partner fee of %d bps exceeds the platform maximum of %d bps", p.SwapFeeBps, MaxFeeBps),
			Details: map[string]any{"feeBps": p.SwapFeeBps, "maxFeeBps": MaxFeeBps}}
	case !p.Enabled(ecosystem):
		return 0, false, &apierr.Error{Code: apierr.EcosystemNotConfigured,
			Message: "the " + ecosystem + " ecosystem is not enabled for this partner",
			Details: map[string]any{"ecosystem": ecosystem}}
	}
	return p.SwapFeeBps, p.SwapFeeBps > 0, nil
}

// WalletNotRegistered is the refusal of a fee-bearing partner quote whose
// fee ecosystem has no fee wallet.
func WalletNotRegistered(ecosystem string) *apierr.Error {
	return &apierr.Error{Code: apierr.PartnerWalletNotRegistered,
		Message: "this swap's fee settles in the " + ecosystem + " ecosystem, where the partner has no fee wallet; register one with PUT /v1/partner/me/fee-wallets",
		Details: map[string]any{"ecosystem": ecosystem}}
}

// FeeMicroUSD values a fee paid in the output token at its share of the
// output's USD value, in integer micro-USD so that sums stay exact.
func FeeMicroUSD(fee, output *big.Int, outputUSD float64) int64 {
	if fee == nil || output == nil || fee.Sign() <= 0 || output.Sign() <= 0 {
		return 0
	}
	share, _ := new(big.Rat).SetFrac(fee, output).Float64()
	return MicroUSD(share * outputUSD)
}

// UnitPriceUSD is the USD price of one whole token that values amount base
// units (of a token with decimals) at amountUSD, as a decimal string: the
// price a fee valued by FeeMicroUSD was valued at. It is "" when the amount
// is not positive.
func UnitPriceUSD(amount *big.Int, decimals uint8, amountUSD float64) string {
	if amount == nil || amount.Sign() <= 0 {
		return ""
	}
	whole, _ := new(big.Rat).SetFrac(amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)).Float64()
	if whole <= 0 {
		return ""
	}
	return strconv.FormatFloat(amountUSD/whole, 'f', -1, 64)
}

// MicroUSD converts a USD figure to integer micro-USD, rounding half away
// from zero.
func MicroUSD(usd float64) int64 { return int64(math.Round(usd * 1e6)) }
