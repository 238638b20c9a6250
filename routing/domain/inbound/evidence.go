package inbound

import (
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// TxState is how far the source chain has taken a transaction.
type TxState uint8

const (
	// TxNotFound: the chain knows no transaction with the hash. It is the
	// zero value, so an Evidence nobody filled in proves nothing.
	TxNotFound TxState = iota
	// TxPending: the node holds the transaction but it is in no block yet.
	TxPending
	// TxMined: the transaction is in a block; the receipt fields are set.
	TxMined
)

// Transfer is one ERC-20 Transfer event: the emitting token contract and
// the event's from, to and amount.
type Transfer struct {
	Token  common.Address
	From   common.Address
	To     common.Address
	Amount *big.Int
}

// Evidence is what a source chain shows for a registration's txHash: all
// CheckDeposit needs, and nothing tied to one client library.
//
// From the sandbox chain (routing/sim/simchain): a receipt r found by
// Chain.Receipt gives Mined(chainID, r.From, r.Status, r.BlockNumber,
// r.Logs); no receipt gives Evidence{ChainID: chainID} (the sandbox chain
// mines on arrival, so nothing is ever pending there).
//
// From go-ethereum's ethclient: TransactionByHash answering
// ethereum.NotFound gives Evidence{ChainID: chainID}; isPending gives
// Evidence{ChainID: chainID, State: TxPending}; otherwise
// TransactionReceipt's Status, BlockNumber and Logs, with the sender from
// types.Sender(types.LatestSignerForChainID(chainID), tx) (which recovers
// an unprotected legacy transaction's by Homestead's rules), go to Mined. Any other error of either call is ReadFailed, and so is an answer
// about another transaction or one signed for another chain. ReadEvidence
// (rpcevidence.go) is this mapping.
type Evidence struct {
	// ChainID is the chain the evidence was read from.
	ChainID uint64
	State   TxState
	// The fields below are set when State is TxMined.
	From        common.Address
	Status      uint64 // types.ReceiptStatusSuccessful or types.ReceiptStatusFailed
	BlockNumber uint64
	Transfers   []Transfer
	// To and Value are the transaction's recipient (zero for a contract
	// creation) and the native amount it sent (nil when not read), by
	// which GET /v1/status matches a transaction broadcast without execute
	// to its quote's transaction request.
	To    common.Address
	Value *big.Int
	// CallRef is keccak256 of the transaction's calldata (quote.CallRef),
	// by which a multi-step quote whose step 1 carries no quote reference
	// (the aggregator's, in live mode) is found; zero when not read.
	CallRef [32]byte
	// Head is the chain's latest block when the evidence was read, for
	// counting confirmations; 0 when the source read no head (the sandbox
	// chain's ledger, whose transactions are final once mined), which
	// counts as the transaction's own block.
	Head uint64
}

// Confirmations is how many blocks, the transaction's own included, ev's
// mined transaction has: 0 for one not mined.
func (ev Evidence) Confirmations() uint64 {
	if ev.State != TxMined {
		return 0
	}
	if ev.Head < ev.BlockNumber {
		return 1 // no head read, or a node whose head lags its receipts
	}
	return ev.Head - ev.BlockNumber + 1
}

// Awaiting reports whether ev shows a transaction the source chain may
// still confirm: unknown to the node (not broadcast yet, or not seen by
// this node), pending, or mined in fewer than need blocks (the transaction
// manager's --confirmations, the depth below which a reorganisation can
// still drop it). A registration of such a transaction is accepted in
// CONFIRMING and read again, rather than refused; reason says what it
// waits for (TX_NOT_FOUND, TX_PENDING or TX_UNCONFIRMED). A mined
// transaction that reverted or shows no deposit is not awaited even
// unconfirmed: CheckDeposit refuses it at once.
func Awaiting(ev Evidence, need uint64) (reason string, ok bool) {
	switch ev.State {
	case TxNotFound:
		return ReasonNotFound, true
	case TxPending:
		return ReasonPending, true
	}
	if ev.Confirmations() < need {
		return ReasonUnconfirmed, true
	}
	return "", false
}

// Mined is the evidence of a mined transaction: its sender, receipt status
// and block, and the ERC-20 transfers among its logs.
func Mined(chainID uint64, from common.Address, status, blockNumber uint64, logs []*types.Log) Evidence {
	return Evidence{ChainID: chainID, State: TxMined, From: from, Status: status, BlockNumber: blockNumber, Transfers: Transfers(logs)}
}

// transferTopic is keccak256("Transfer(address,address,uint256)").
var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

// Transfers decodes the ERC-20 Transfer events among logs, in log order. It
// skips logs removed by a reorganisation, ERC-721 transfers (whose token id
// is a fourth topic) and anything not laid out as the ERC-20 event is: an
// address topic with bits above its 160, or data other than one word.
func Transfers(logs []*types.Log) []Transfer {
	var out []Transfer
	for _, l := range logs {
		if l == nil || l.Removed || len(l.Topics) != 3 || l.Topics[0] != transferTopic || len(l.Data) != 32 {
			continue
		}
		from, ok1 := topicAddress(l.Topics[1])
		to, ok2 := topicAddress(l.Topics[2])
		if !ok1 || !ok2 {
			continue
		}
		out = append(out, Transfer{Token: l.Address, From: from, To: to, Amount: new(big.Int).SetBytes(l.Data)})
	}
	return out
}

func topicAddress(h common.Hash) (common.Address, bool) {
	for _, b := range h[:common.HashLength-common.AddressLength] {
		if b != 0 {
			return common.Address{}, false
		}
	}
	return common.BytesToAddress(h[:]), true
}

// Reasons of a CheckDeposit refusal, in details.reason, so that a client
// can tell "try again later" (TX_NOT_FOUND soon after sending, TX_PENDING)
// from "this will never register".
const (
	ReasonWrongChain = "WRONG_CHAIN"  // the chain has no inbound receiver: not a source chain
	ReasonNotFound   = "TX_NOT_FOUND" // no such transaction on the source chain
	ReasonPending    = "TX_PENDING"   // not mined yet: register after it confirms
	ReasonFailed     = "TX_FAILED"    // mined, but reverted
	ReasonSender     = "WRONG_SENDER" // sent by another account than fromAddress
	ReasonNoDeposit  = "NO_DEPOSIT"   // no USDC reached the inbound receiver
	// ReasonUnconfirmed: mined in fewer blocks than the confirmations; a
	// deposit waits in CONFIRMING for it, it is never a refusal.
	ReasonUnconfirmed = "TX_UNCONFIRMED"
	// ReasonHorizon: still not confirmed at the deposit's horizon (the
	// reason of a FAILED deposit, never a refusal).
	ReasonHorizon = "NOT_CONFIRMED"
	// ReasonBelowMinimum: the transaction delivered less USDC than the
	// quote's step 1 promised at least (its minimum out).
	ReasonBelowMinimum = "BELOW_MINIMUM"
)

// CheckMinimum refuses a deposit of amount below min, the least USDC the
// quote's step 1 delivers to the inbound receiver (its ticket's
// Step1AmountMin): INVALID_PARAMS naming txHash with details.reason
// BELOW_MINIMUM, the amount and the minimum. A nil min (no quote found, or
// one issued without it) checks nothing: CheckDeposit's positive amount is
// then all that is asked.
func CheckMinimum(sourceChainID uint64, reg Registration, amount, min *big.Int) *apierr.Error {
	if min == nil || amount == nil || amount.Cmp(min) >= 0 {
		return nil
	}
	return apierr.Param(FieldTxHash, "transaction "+reg.TxHash.Hex()+" delivered "+amount.String()+
		" USDC base units to the inbound receiver, below the quote's minimum of "+min.String()).
		With("reason", ReasonBelowMinimum).With("chainId", sourceChainID).With("value", reg.TxHash.Hex()).
		With("amount", amount.String()).With("minimum", min.String())
}

// CheckDeposit decides whether ev, read from the source chain the
// registration was signed for (sourceChainID, as SourceChain found it),
// shows the deposit being registered, and returns the USDC amount it
// delivered, in base units. The deposit is accepted only for a mined,
// successful transaction sent by fromAddress in which the chain's USDC (the
// collateral token of the warp route) reached the chain's inbound receiver:
// the net amount, what the Transfer events moved to the receiver less what
// they moved out of it in the same transaction, must be positive. Who sent
// the USDC is not checked: in step 1 it is the DEX, not the user.
//
// Refusals, each INVALID_PARAMS naming txHash with details.reason (the
// constants above) and details.chainId, since each is the client's to fix
// or to wait out:
//
//   - WRONG_CHAIN: sourceChainID has no inbound receiver or no warp-route
//     USDC (chain 369 itself, or a chain the flow does not start from);
//   - TX_NOT_FOUND: the chain knows no such transaction (a wrong hash, a
//     transaction sent on another chain, or not yet seen by the node);
//   - TX_PENDING: not yet mined;
//   - TX_FAILED: mined and reverted;
//   - WRONG_SENDER: sent by an account other than fromAddress;
//   - NO_DEPOSIT: no net USDC to the inbound receiver.
//
// Evidence read from another chain than sourceChainID is the caller's
// mistake, INTERNAL_ERROR; a failure to read the chain at all is not
// CheckDeposit's to see: ReadFailed makes it RPC_FAILURE (UPSTREAM_TIMEOUT
// for a node that did not answer in time).
func CheckDeposit(c *pulseroute.Contracts, sourceChainID uint64, reg Registration, ev Evidence) (*big.Int, *apierr.Error) {
	if ev.ChainID != sourceChainID {
		return nil, apierr.New(apierr.Internal, "deposit evidence read from the wrong chain").
			With("chainId", sourceChainID).With("evidenceChainId", ev.ChainID)
	}
	refuse := func(reason, message string) *apierr.Error {
		return apierr.Param(FieldTxHash, message).With("reason", reason).With("chainId", sourceChainID).With("value", reg.TxHash.Hex())
	}
	chain := "chain " + strconv.FormatUint(sourceChainID, 10)
	receiver, okReceiver := c.InboundReceiver(sourceChainID)
	warp, okWarp := c.WarpRoute(sourceChainID)
	if !okReceiver || !okWarp || warp.Synthetic {
		return nil, refuse(ReasonWrongChain, chain+" is not a source chain of inbound deposits: it has no inbound receiver")
	}
	switch ev.State {
	case TxNotFound:
		return nil, refuse(ReasonNotFound, "no transaction "+reg.TxHash.Hex()+" on "+chain+"; check the hash, and that step 1 was sent on the chain the registration is signed for")
	case TxPending:
		return nil, refuse(ReasonPending, "transaction "+reg.TxHash.Hex()+" is not mined yet on "+chain+"; register it after it confirms")
	case TxMined:
	default:
		return nil, apierr.New(apierr.Internal, "deposit evidence in an unknown state").With("state", int(ev.State))
	}
	if ev.Status != types.ReceiptStatusSuccessful {
		return nil, refuse(ReasonFailed, "transaction "+reg.TxHash.Hex()+" failed on "+chain+"; nothing was deposited")
	}
	if ev.From != reg.FromAddress {
		return nil, refuse(ReasonSender, "transaction "+reg.TxHash.Hex()+" was sent by "+ev.From.Hex()+", not by fromAddress "+reg.FromAddress.Hex()).
			With("sender", ev.From.Hex())
	}
	net := new(big.Int)
	for _, t := range ev.Transfers {
		if t.Token != warp.Token || t.Amount == nil {
			continue
		}
		if t.To == receiver {
			net.Add(net, t.Amount)
		}
		if t.From == receiver {
			net.Sub(net, t.Amount)
		}
	}
	if net.Sign() <= 0 {
		return nil, refuse(ReasonNoDeposit, "transaction "+reg.TxHash.Hex()+" delivered no USDC ("+warp.Token.Hex()+") to the inbound receiver "+receiver.Hex()+" on "+chain).
			With("receiver", receiver.Hex()).With("token", warp.Token.Hex())
	}
	return net, nil
}

// ReadFailed is the error of a source chain that could not be read, naming
// the chain, the cause kept for the logs: UPSTREAM_TIMEOUT when its node
// did not answer within --rpc-timeout, RPC_FAILURE otherwise
// (noderead.Failure).
func ReadFailed(chainID uint64, err error) *apierr.Error {
	return noderead.Failure("could not read chain "+strconv.FormatUint(chainID, 10)+"; try again", err).With("chainId", chainID)
}
