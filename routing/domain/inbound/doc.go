// Package inbound is the domain of inbound deposit registration, the
// second half of a multi-step pulseroute quote: step 1, signed by the user,
// swaps into USDC on a source chain and delivers it to Swapgate's inbound
// receiver there; the client then posts POST /v1/inbound-receiver/register
// with {txHash, fromAddress, toAddress, outputToken, destinationDomain,
// signature}; step 2 is automatic: the USDC is bridged to chain 369 (as
// USDCh, the synthetic side of the warp route) and swapped on the DEX into
// outputToken for toAddress; should that DEX leg fail, the bridged USDCh
// goes to toAddress on 369 (the fallback), so the user ends with spendable
// funds. It is plain Go: no HTTP, no actors, no storage, and it dials
// nothing: a chain is read only through the interfaces it declares
// (TxReader, whose answers ReadEvidence in rpcevidence.go maps, connected
// to a node by routing/adapters/evidencerpc; EvidenceSource) or what the
// caller passes in.
//
// # Registering, step by step
//
// The edge and the deposit tracker call, in this order:
//
//  1. Parse the body (every refusal names its field).
//  2. If a deposit is stored under the txHash, SameRegistration decides:
//     the same registration is answered with the stored deposit and
//     nothing is done again; another body is refused. No chain is read.
//  3. SourceChain verifies the signature against the source chains
//     (Contracts.SenderChains): the body names no source chain, the
//     EIP-712 domain binds one, and the chain whose domain recovers
//     fromAddress is where txHash is looked up. VerifySignature checks one
//     chain, when the caller knows it.
//  4. Read the transaction on that chain into an Evidence (Mined for a
//     mined one; ReadFailed for a read that failed: RPC_FAILURE, or
//     UPSTREAM_TIMEOUT when the node did not answer within --rpc-timeout), and let
//     CheckDeposit accept it, or refuse it with INVALID_PARAMS naming
//     txHash and a details.reason.
//  5. NewDeposit makes the deposit in RECEIVED and its deposit.received
//     event, stored together in one batch. A transaction the chain does
//     not show with its confirmations yet (Awaiting: unknown to the node,
//     pending, or in fewer blocks than the confirmations) is not refused:
//     NewPendingDeposit makes the deposit in CONFIRMING, without an event,
//     and the runner reads the chain again until the deposit's horizon:
//     confirmed (CheckDeposit accepting it) → RECEIVED and
//     deposit.received; refused by CheckDeposit, or the horizon passed →
//     FAILED and deposit.failed.
//
// # The deposit's states
//
//	from      trigger          to              publishes
//	(none)      registered     RECEIVED        deposit.received
//	(none)      awaited        CONFIRMING
//	CONFIRMING  confirmed      RECEIVED        deposit.received
//	CONFIRMING  refused        FAILED          deposit.failed
//	RECEIVED  bridge_sent      BRIDGING
//	RECEIVED  bridge_failed    FAILED          deposit.failed
//	BRIDGING  bridged          SWAPPING
//	BRIDGING  delivered        COMPLETED       deposit.completed (outputToken USDCh: no DEX leg)
//	BRIDGING  bridge_failed    FAILED          deposit.failed
//	SWAPPING  swapped          COMPLETED       deposit.completed
//	SWAPPING  swap_failed      FALLBACK
//	FALLBACK  refunded         REFUNDED_USDCH  deposit.failed, fallback true
//	FALLBACK  fallback_failed  FAILED          deposit.failed, fallback true
//
// COMPLETED, REFUNDED_USDCH and FAILED are terminal; Transitions is this
// table in code. A deposit publishes exactly two events: deposit.received,
// and one final event; one refused out of CONFIRMING was never received
// and publishes deposit.failed alone. The fallback's is deposit.failed with data.fallback
// true, because the user holds USDCh, not the token asked for.
package inbound
