// Package pulseroute is the pulseroute provider, which routes every swap to
// or from PulseChain (chain 369): the contract facts it relies on (the
// Hyperlane USDC warp route, PulseX v2, Swapgate's own sender and
// inbound-receiver contracts), calldata for those contracts, the
// RegisterDeposit EIP-712 message of the multi-step flow, the route
// variants and the construction of Shapes B and C of GET /v1/quote. It is
// free of actors, HTTP and the simulator; what it reads it reads through
// two interfaces it declares.
//
// # Variants
//
// Routes touching chain 369 come in four variants: direct inbound
// (warp-route USDC to 369, Shape B), multi-step inbound (any other source
// token, Shape C), the fallback (described in the multi-step instructions)
// and direct outbound (USDCh to canonical USDC, fee free, Shape B: the
// provider declares it so with FeeExempt); same-chain swaps on 369 go
// through PulseX in Shape A.
//
// Direct inbound calls bridgeAndSwap on Swapgate's sender contract, not
// transferRemote on the warp router: the sender contract must take the
// partner fee and have the PulseX swap done on arrival, which a bare
// transferRemote to the user cannot. It pulls the USDC, so it is the
// approval address; msg.value is quoteGasPayment. The partner fee is taken
// in USDC from the input, and PartnerFee reports its cost in the destination
// token. Routes with no PulseX leg (USDC → USDCh, and the outbound bridge)
// are 1:1, so their ToAmountMin equals ToAmount. Step 1 of a multi-step
// quote swaps into the source chain's USDC for the inbound receiver; step 2
// (the receiver bridging it and PulseX swapExactTokensForTokens on 369) is
// priced from the same getAmountsOut figures, and its interchain gas is
// paid by the receiver. Pairs across 369 that no variant serves are refused
// with UNSUPPORTED_ROUTE and the reason, and chain-state failures are
// RPC_FAILURE. Indicative requests get the figures in Shape A without a
// transaction or payload.
//
// # What it reads
//
// ChainState is the chain: Hyperlane gas payments (quoteGasPayment on the
// warp routes) and PulseX amounts (getAmountsOut on the router). Market is
// everything else: tools, USD prices, floors, gas, tool fees, step 1 of a
// multi-step quote and the transaction of a swap within 369. In sandbox
// mode both are the simulator's (routing/sim/pulsesim: the sandbox market,
// whose sandbox router builds step 1, and a deterministic chain), so that
// routes through 369 are priced like every other sandbox route. In live
// mode ChainState is the JSON-RPC reader of the real contracts
// (routing/adapters/pulserpc) and Market is LiveMarket: reference-data
// prices (a token without one has no USD figure), the gas oracle's gas
// prices, no floors, injected failures or tool fees, step 1 taken as it is
// from the aggregator's quote to the inbound receiver (no aggregator route,
// no multi-step route), and swaps within 369 on the PulseX router. Live
// tools are hyperlane-warp and pulsex; Swapgate's own contracts are only
// those configured (NewLiveContracts), and a chain whose node is not
// configured has no route (ErrNoNode).
package pulseroute
