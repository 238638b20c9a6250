// Package pulseroute is the pulseroute provider, which routes every swap to
// or from PulseChain (chain 369), with everything it is built from: the
// contract facts it relies on (the Hyperlane USDC warp route, PulseX v2,
// Swapgate's own sender and inbound-receiver contracts), calldata for those
// contracts, the RegisterDeposit EIP-712 message of the multi-step flow, the
// chain state it reads (ChainState: the deterministic SandboxChain, or
// RPCChain over JSON-RPC), and the construction of Shapes B and C of
// GET /v1/quote. It is free of actors and HTTP.
//
// # Variants
//
// Routes touching chain 369 come in four variants: direct inbound
// (warp-route USDC to 369, Shape B), multi-step inbound (any other source
// token, Shape C), the fallback (described in the multi-step instructions)
// and direct outbound (USDCh to canonical USDC, fee free, Shape B);
// same-chain swaps on 369 go through sbx-pulsex in Shape A.
//
// Direct inbound calls bridgeAndSwap on Swapgate's sender contract, not
// transferRemote on the warp router: the sender contract must take the
// partner fee and have the PulseX swap done on arrival, which a bare
// transferRemote to the user cannot. It pulls the USDC, so it is the
// approval address; msg.value is quoteGasPayment. The partner fee is taken
// in USDC from the input, and PartnerFee reports its cost in the destination
// token. Routes with no PulseX leg (USDC → USDCh, and the outbound bridge)
// are 1:1, so their ToAmountMin equals ToAmount. Multi-step step 1 is a
// sandbox router swap priced on sbx-uniflow; the interchain gas of step 2 is
// paid by the inbound receiver. Pairs across 369 that no variant serves are
// refused with UNSUPPORTED_ROUTE and the reason, and chain-state failures
// are RPC_FAILURE. Indicative requests get the figures in Shape A without a
// transaction or payload.
//
// # The sandbox market
//
// Prices, gas, amount floors, tool fees, injected tool behaviour and the
// sandbox router's calldata come from the sandbox market (Market, which
// *sandbox.Market satisfies), so that routes through 369 are priced like
// every other sandbox route. Chain state (Hyperlane gas payments, PulseX
// amounts) is the provider's own and is read through ChainState only.
//
// # On the sandbox chain
//
// contracts_sim.go holds the code the quotes' transactions run on the
// sandbox chain (package simchain): both sides of the warp route
// (WarpRouterContract: transferRemote pulls USDC on a collateral chain and
// burns USDCh on 369), the sender contract (bridgeAndSwap) and the inbound
// receiver, installed by DeploySandbox with the interchain gas payments of
// the same ChainState the quotes use.
package pulseroute
