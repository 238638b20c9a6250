// Package sandbox is Swapgate's embedded upstream: a deterministic,
// in-process market that backs the aggregator and intents providers when no
// real upstream is configured, and on which the sandbox pulseroute provider
// (package pulsesim) prices its legs. Every figure it answers with is a pure
// function of the request, the tool catalog, the injected price and gas
// functions and the configuration, so that the same request always gets the
// same route and tests can predict it.
//
// # Market
//
// A Market holds the registry, the sandbox tool catalog (keys sbx-*), a price
// function (the live price cache; tests pass a fixed one), a gas-price
// function (standard tier, wei) and a Config of per-tool behaviour. It hands
// out two quote.Provider values: Aggregator ("aggregator") and Intents
// ("intents"). Legs lists the catalog tools of the provider that connect the
// request's chains, that the request's tool filters admit, and, for
// stable-only tools, only when both tokens are USD stablecoins; QuoteLeg
// prices one tool. The sandbox pulseroute provider is built on the market's
// exported facilities (Tool, Inject, TokenPrice, CheckFloor, PriceSwap,
// GasCosts, ToolFeeCost, SwapCall), so its sbx-* tools take the same prices,
// gas, floors and injected behaviour as every other tool. The arithmetic
// both share (USD values, basis points, the partner fee, gas costs and
// their margin, the refusals of a priced leg) is package pricing's.
//
// # Behaviour injection
//
// Each tool may be given latency, a failure rate, a hang or a panic
// (ToolConfig). Latency and failure are zero by default.
// Whether a leg fails is decided by hashing the quote id with the tool key
// and comparing the hash, mapped to [0,1), with FailureRate: a test that
// repeats a quote id sees the same failures, and a failure rate of 0.3 fails
// about 30% of distinct quotes. A hanging tool blocks until the context is
// done (a provider that never answers); a panicking tool panics, so that
// supervision can be tested.
//
// # Pricing
//
// A route's value is priced in USD from the price function. Every tool has a
// constant-product pool of LiquidityUSD depth (defaults: DEX $20M, bridge
// $50M, intents $30M), so that
//
//	out_USD = in_USD × (1 − feeBps/1e4) × L/(L + in_USD)
//
// and price impact grows with size. An aggregator bridge route whose two
// tokens are different assets (different coin keys) also pays a destination
// DEX hop of HopFeeBps (30 bps), as a real aggregator would swap after the
// bridge. The output is converted into the destination token's units from its
// price and decimals. Below a tool's MinAmountUSD (defaults: DEX $1, bridge
// $10, intents $5) the answer is a *quote.NoRoute with reason AMOUNT_TOO_LOW
// naming the floor; a route whose gas costs more than it delivers is
// FEES_HIGHER_THAN_AMOUNT; a token without a price is NO_POSSIBLE_ROUTE.
//
// The partner fee is split off the pre-fee output with quote.SplitFee, so
// ToAmount + PartnerFee == PreFeeToAmount exactly; ToAmountMin is
// quote.MinOut(ToAmount, slippage).
//
// # Gas
//
// Integrators complain that quoted gas limits are too low and transactions
// revert, so every limit the sandbox quotes is the tool's gas
// units times GasMargin (1.25), and the SEND cost is that limit times the
// standard gas price, in the source chain's native coin. ERC-20 sources of
// router routes add an APPROVE cost of ApproveGas (46,000) with the same
// margin. When the gas function has no figure for an EVM chain yet, the
// registry's reference base fee stands in. Solana and Sui have no gas price:
// their catalog gas units are the network fee in base units (lamports, MIST).
// Intents-only chains get no gas cost: the deposit is a plain transfer whose
// fee the user's wallet sets.
//
// # Transactions
//
// Nothing is built for indicative requests. Aggregator routes from EVM chains
// call the sandbox router, whose address is derived per chain from
// keccak256("swapgate-sandbox-router:<chainId>") and whose ABI is RouterABI:
// swap(...) within a chain, bridge(...) across chains, with the receiver as
// bytes so that Solana and Sui recipients fit, and the route's pre-fee
// output as one more word after the arguments. The value is fromAmount for
// native sources and 0 otherwise; the approval address is the router for
// ERC-20 sources. RouterContract is the router's code on the sandbox chain
// (package simchain): it pulls the input, delivers exactly the quoted
// output (swap) or announces what the destination owes (bridge), and
// charges gas so that the quoted limit covers it (DeployRouter installs it). Routes from Solana and Sui carry no transaction (Tx nil):
// the sandbox does not build non-EVM transactions, and it never returns
// placeholders that a wallet might try to sign.
//
// Intents routes pay into a deposit address derived from the quote id, in the
// source chain's format (EVM, Solana, Sui, NEAR implicit accounts); the
// transaction is a native transfer or an ERC-20 transfer(deposit, amount) on
// EVM sources, and nil elsewhere. Other chains get no deposit address.
package sandbox
