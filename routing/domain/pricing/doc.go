// Package pricing holds the figures every provider that prices a route
// itself shares, so that the sandbox market and pulseroute (in sandbox and
// live mode alike) value amounts, list fees and price gas by one set of
// rules: the USD value of token amounts, basis-point fees, the partner fee
// and its cost entry, the refusals a priced leg answers with (an amount
// below a floor, gas above what the route delivers, and their
// LI.FI-style reasons), a chain's block time in seconds, and the gas side of
// a route (GasQuote: APPROVE and SEND costs with their 25% margin, the
// price and the send limit a transaction request carries).
//
// It is plain arithmetic on the registry's tokens and chains: it reads no
// price or gas source itself; callers pass the figures in.
package pricing
