// Package relay is the real adapter of Relay (relay.link), a second
// upstream of the "aggregator" provider raced with LI.FI: it quotes with
// Relay's POST /quote/v2, maps the quote's steps onto a route (the
// approval and the one transaction a wallet signs), follows a swap with
// Relay's intents status, and lists the chains Relay serves for the tool
// catalog, over the pooled JSON transport of routing/adapters/httpjson and
// its boundary checks.
//
// The protocol facts it relies on, from Relay's public API reference
// (docs.relay.link) and its SDK (relay-kit):
//
//   - Base URL https://api.relay.link (testnets
//     https://api.testnets.relay.link). An API key, when the integrator has
//     one, goes in the x-api-key header.
//   - Quote: POST /quote/v2 (POST /quote is deprecated, /quote/v3 needs a
//     key) with a JSON body of user, recipient, originChainId,
//     destinationChainId, originCurrency, destinationCurrency, amount (base
//     units, a decimal string), tradeType (EXACT_INPUT, EXPECTED_OUTPUT or
//     EXACT_OUTPUT: amount is then the output), refundTo, slippageTolerance
//     (basis points, a string) and appFees ([{recipient, fee}], fee in basis
//     points as a string). A currency is its address; a chain's native coin
//     on EVM is the zero address.
//   - The quote's answer: steps[] (id such as "approve", "deposit" or
//     "swap"; kind "transaction" or "signature"; requestId; items[] each
//     with status, data, the transaction {from, to, data, value, chainId,
//     gas, maxFeePerGas, maxPriorityFeePerGas}, and check.endpoint, its
//     status), fees (gas, relayer, relayerGas, relayerService, app, each
//     with currency, amount, amountUsd), details (operation, timeEstimate in
//     seconds, currencyIn and currencyOut, each with currency {chainId,
//     address, symbol, decimals}, amount, amountFormatted, amountUsd and
//     minimumAmount).
//   - Status: GET /intents/status/v3?requestId= answers status, one of
//     waiting, depositing, pending, submitted, success, delayed, refund and
//     failure, with inTxHashes (origin), txHashes (destination) and
//     updatedAt.
//   - Chains: GET /chains answers chains[] with id, name, disabled,
//     vmType, …. Currencies: POST /currencies/v2.
//   - Errors: a refused quote answers {message, errorCode}; the codes that
//     mean no route for the request include AMOUNT_TOO_LOW,
//     INSUFFICIENT_LIQUIDITY, NO_QUOTES, NO_SWAP_ROUTES_FOUND,
//     CHAIN_DISABLED and UNSUPPORTED_CURRENCY (see errors.go for the list
//     read as such).
//   - An ERC-20 approve step's item is the token's approve(spender,
//     amount) transaction; the step after it (deposit or swap) is the one
//     that moves the funds, its check.endpoint naming the request id.
//
// How the adapter maps them is stated where it does (QuoteLeg,
// SwapStatus, Chains).
package relay
