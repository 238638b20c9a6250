// Package pulserpc reads pulseroute's chain state from the real contracts
// over JSON-RPC with go-ethereum's client (one eth_call each, at the latest
// block): quoteGasPayment(uint32) (selector 0xf2ed8c53) on a Hyperlane
// warp-route router, the native payment a transferRemote to that domain
// needs, and getAmountsOut(uint256,address[]) (selector 0xd06ca61f) on the
// PulseX v2 router 0x165C3410fC91EF562C50559f7d2289fEbed552d9, what a swap
// along a path yields. A failed read is RPC_FAILURE; a reverted
// getAmountsOut is PulseX having no pair for the path
// (pulseroute.ErrNoPair); a chain without a node is pulseroute.ErrNoNode
// unless a fallback answers for it.
package pulserpc
