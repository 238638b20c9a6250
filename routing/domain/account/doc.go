// Package account is the partner account model and its rules: the partner
// and its fee tier and limits, fee wallets and their address rules, the
// activity record each partner quote leaves and the earning it may carry,
// and settlement, which decides which earnings are paid and to whom.
//
// It is plain Go: no storage, no actors, no HTTP. The store's backends store
// and load these types and apply what settlement decides; the edge and
// the actors call the rules here rather than restating them.
package account
