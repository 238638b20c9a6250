package moonpay

import (
	"slices"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// asset is a registry asset: a chain id and a token symbol as the registry
// spells it.
type asset struct {
	chainID uint64
	symbol  string
}

// Registry chain ids of the non-EVM chains MoonPay sells on.
const (
	solanaID  = 1151111081099710
	bitcoinID = 20000000000001
)

// currencyCodes are MoonPay's currency codes of the registry assets it
// sells: the home chain's code bare, other networks with a suffix.
var currencyCodes = map[asset]string{
	{1, "ETH"}:         "eth",
	{1, "USDC"}:        "usdc",
	{1, "USDT"}:        "usdt",
	{10, "ETH"}:        "eth_optimism",
	{10, "USDC"}:       "usdc_optimism",
	{56, "BNB"}:        "bnb_bsc",
	{56, "USDT"}:       "usdt_bsc",
	{56, "USDC"}:       "usdc_bsc",
	{137, "POL"}:       "pol_polygon",
	{137, "USDC"}:      "usdc_polygon",
	{137, "USDT"}:      "usdt_polygon",
	{8453, "ETH"}:      "eth_base",
	{8453, "USDC"}:     "usdc_base",
	{42161, "ETH"}:     "eth_arbitrum",
	{42161, "USDC"}:    "usdc_arbitrum",
	{42161, "USDT"}:    "usdt_arbitrum",
	{43114, "AVAX"}:    "avax_cchain",
	{43114, "USDC"}:    "usdc_cchain",
	{42220, "CELO"}:    "celo",
	{324, "ETH"}:       "eth_zksync",
	{59144, "ETH"}:     "eth_linea",
	{solanaID, "SOL"}:  "sol",
	{solanaID, "USDC"}: "usdc_sol",
	{bitcoinID, "BTC"}: "btc",
}

// CurrencyCode is MoonPay's code of a registry asset (chain id and symbol,
// any case), false when MoonPay does not sell it.
func CurrencyCode(chainID uint64, symbol string) (string, bool) {
	c, ok := currencyCodes[asset{chainID, strings.ToUpper(symbol)}]
	return c, ok
}

// Catalogue is the on-ramp catalogue of live mode: the catalogue's
// currencies, methods and countries, with only the assets MoonPay has a
// code for, so that /v1/onramp/assets lists what can be bought and a
// request for another asset is refused by name before any call.
func Catalogue(reg *registry.Registry) *onramp.Catalogue {
	c := onramp.NewCatalogue(reg)
	c.Assets = slices.DeleteFunc(c.Assets, func(a onramp.Asset) bool {
		_, ok := CurrencyCode(a.ChainID, a.Symbol)
		return !ok
	})
	return c
}

// paymentMethod is MoonPay's paymentMethod for a catalogue method and
// currency; false for a bank transfer in a currency MoonPay has none for.
func paymentMethod(method, currency string) (string, bool) {
	switch method {
	case onramp.CreditCard, onramp.DebitCard:
		return "credit_debit_card", true
	case onramp.BankTransfer:
		switch strings.ToUpper(currency) {
		case "USD":
			return "ach_bank_transfer", true
		case "EUR":
			return "sepa_bank_transfer", true
		case "GBP":
			return "gbp_bank_transfer", true
		}
	}
	return "", false
}
