// Package pulsesim is pulseroute in the simulator: the sandbox market as
// pulseroute's Market (Market, NewProvider: tools sbx-warp and sbx-pulsex,
// step 1 of a multi-step quote a sandbox router swap priced on
// sbx-uniflow), the deterministic chain state of chain 369 and the warp
// routes (SandboxChain: constant-product PulseX pools at reference prices,
// a fixed interchain gas payment; the genesis state), and the code the
// quotes' transactions run on the sandbox chain (package simchain): both
// sides of the warp route (WarpRouterContract: transferRemote pulls USDC on
// a collateral chain and burns USDCh on 369; process, the sandbox
// relayer's delivery, mints or releases it on the destination, warp.go),
// the sender contract (bridgeAndSwap) and the inbound receiver, installed by DeploySandbox with
// the interchain gas payments of the same chain state the quotes use; and
// on chain 369 PulseX v2 (pulsex.go: PulseXFactoryCode, PulseXPairCode,
// PulseXRouterCode, DeployPulseX), whose pools start at SandboxChain's
// reserves and move with every swap, with the arbitrage that trades them
// back to their reference prices (Arbitrage, ArbitrageurAddress; run by
// actors/sandboxchain).
//
// A test moves a pool as anyone would on chain: a funded account (a
// faucet top-up) approves the PulseX router and sends a large
// swapExactTokensForTokens; getAmountsOut over the node then answers from
// the moved reserves until the arbitrage, or a swap the other way, brings
// them back. Only the composition root and the simulator's own packages
// import it.
package pulsesim
