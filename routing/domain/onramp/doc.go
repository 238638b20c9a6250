// Package onramp is the fiat on-ramp's domain: what a user may buy with which
// money (the catalogue of currencies, payment methods, countries and
// assets), the price of a purchase with its fees, the order that a checkout
// opens and its state machine, and the interface a hosted-checkout provider
// implements.
//
// The arithmetic is exact. Fiat amounts are integer minor units (cents) of
// their currency; rates are exact decimals (math/big.Rat) rounded once, at
// a documented place, so that what the service answers adds up to the cent:
//
//	totalFee        = networkFee + processingFee + partnerFee
//	totalFiatAmount = fiatAmount + totalFee            (fees are paid on top)
//	cryptoAmount    = fiatAmount ÷ exchangeRate, truncated to the asset's
//	                  display precision (min(decimals, 8) places)
//
// exchangeRate is the price of one whole unit of the asset in the fiat
// currency, rounded to 8 significant digits. The partner and processing
// fees are basis points of fiatAmount rounded half up to the cent; the
// network fee is the gas of one transfer to the wallet at the chain's
// standard gas price, in fiat, rounded up to the cent.
//
// An order is CREATED by a checkout and moves through
// PAYMENT_RECEIVED → CRYPTO_SENT → COMPLETED; CREATED or PAYMENT_RECEIVED
// may end FAILED, PAYMENT_RECEIVED may end REFUNDED, and CREATED ends
// EXPIRED at its expiry. Every transition but EXPIRED publishes its
// onramp.* event. The partner fee enters the partner's ledger when the order
// completes, never at quote time.
package onramp
