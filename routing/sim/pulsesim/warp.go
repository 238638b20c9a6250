package pulsesim

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// The sandbox's Hyperlane relayer: what delivers a warp-route message on
// its destination chain. On chain, a relayer watches every origin mailbox's
// Dispatch, waits for the validators to sign the origin's checkpoint, and
// calls the destination mailbox's process, which has the interchain
// security module check the signatures and then calls the destination
// router's handle: USDCh minted on 369, USDC released from the collateral
// router elsewhere. The sandbox keeps the outcome and the words of the
// logs and leaves the cryptography out:
//
//   - A delivery is a transaction from RelayerAddress (an address nobody
//     holds a key for) to the destination warp router's process(messageId,
//     origin, recipient, amount). The router takes it from that account
//     alone, standing for the security module: the sandbox's owner of the
//     chains is the only one that sends it (sandboxnet's relay operation,
//     which its clients cannot send as a broadcast).
//   - The router delivers each message id once: it records the block of
//     the delivery under the id (deliveredSlot), and a second process of
//     the id reverts with "Mailbox: already delivered", as Hyperlane's
//     mailbox does. Delivery finds the delivering transaction from it.
//   - It emits ReceivedTransferRemote(origin, recipient, amount), then
//     ProcessId(messageId), the events a watcher of the destination reads
//     (the second with the message id as its one indexed topic, so that
//     eth_getLogs by topic finds the delivery of a message).
//   - A collateral router releases USDC from what it holds: what earlier
//     transfers locked, and CollateralGenesis it starts with, which stands
//     for what was bridged before the sandbox began (every address's
//     genesis USDCh on 369 included). A release beyond what it holds
//     reverts, and the relayer tries again later.

// RelayerAddress is the sandbox relayer's account on every chain: the
// sender of every delivery. It is derived from a name, so no key exists
// for it; it pays for its deliveries' gas from the native genesis
// allocation every address starts with.
var RelayerAddress = common.BytesToAddress(crypto.Keccak256([]byte("swapgate sandbox hyperlane relayer"))[12:])

// ArrivalDesk is Swapgate's account on chain 369 where the sender
// contract's warp transfers arrive when its quote swaps them there
// (bridgeAndSwap with an outputToken other than USDCh): the delivered
// USDCh goes to the desk, the swap on arrival pays the output token to the
// user (the sandbox's swap tracker does it), and the USDCh stays at the
// desk, as a PulseX swap would leave it in the pool. A transfer whose
// output is USDCh itself goes to the user, and its delivery is the
// user's output. It has code (it takes no calls), so it starts empty.
var ArrivalDesk = common.BytesToAddress(crypto.Keccak256([]byte("swapgate sandbox pulseroute arrival desk"))[12:])

// CollateralGenesis is the USDC, in base units, every collateral router of
// the sandbox starts with: a billion USDC.
var CollateralGenesis = new(big.Int).Mul(big.NewInt(1_000_000_000), big.NewInt(1_000_000))

// Gas of a delivery.
const (
	// ProcessGas is what process charges on top of the chain's metering:
	// the security module's check and the mailbox's bookkeeping.
	ProcessGas = 60_000
	// RelayGasLimit is the gas limit of a delivery transaction.
	RelayGasLimit = 300_000
)

// MethodProcess is the sandbox destination router's delivery entry point.
const MethodProcess = "process"

const relayABIJSON = `[
 {"type":"function","name":"process","stateMutability":"nonpayable",
  "inputs":[{"name":"messageId","type":"bytes32"},{"name":"origin","type":"uint32"},{"name":"recipient","type":"bytes32"},{"name":"amount","type":"uint256"}],
  "outputs":[]}
]`

// relayABI is parsed once and only read afterwards.
var relayABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(relayABIJSON))
	if err != nil {
		panic(fmt.Sprintf("pulsesim: parse relay ABI: %v", err))
	}
	return a
}()

// WarpMessage is one warp-route transfer as its origin chain shows it: the
// SentTransferRemote and DispatchId its router emitted in one
// transaction.
type WarpMessage struct {
	ID          common.Hash `json:"id"`
	Origin      uint64      `json:"origin"`
	Destination uint64      `json:"destination"`
	Recipient   common.Hash `json:"recipient"`
	Amount      *big.Int    `json:"amount"`
	// SourceTx, SourceBlock and SentAt are the origin transaction, its
	// block and the block's time.
	SourceTx    common.Hash `json:"sourceTx"`
	SourceBlock uint64      `json:"sourceBlock"`
	SentAt      time.Time   `json:"sentAt"`
}

// RecipientAddress is the recipient as an EVM address.
func (m WarpMessage) RecipientAddress() common.Address {
	return common.BytesToAddress(m.Recipient[12:])
}

// ProcessCalldata is the delivery of m: the destination router's
// process call.
func ProcessCalldata(m WarpMessage) ([]byte, error) {
	if m.Amount == nil || m.Destination > uint64(^uint32(0)) || m.Origin > uint64(^uint32(0)) {
		return nil, fmt.Errorf("pulsesim: message %s cannot be delivered: malformed", m.ID.Hex())
	}
	return relayABI.Pack(MethodProcess, [32]byte(m.ID), uint32(m.Origin), [32]byte(m.Recipient), m.Amount)
}

// deliveredSlot is the router's storage slot that holds the block number
// of a message's delivery (zero: not delivered).
func deliveredSlot(id common.Hash) common.Hash {
	return crypto.Keccak256Hash([]byte("hyperlane/delivered"), id.Bytes())
}

// MessagesIn lists the warp messages router dispatched on chain origin in
// logs (a receipt's, or eth_getLogs'), in log order.
func MessagesIn(origin uint64, router common.Address, logs []*types.Log) []WarpMessage {
	sent, dispatch := pulseroute.ABI().Events["SentTransferRemote"], pulseroute.ABI().Events["DispatchId"]
	var out []WarpMessage
	var last *types.Log // the SentTransferRemote its DispatchId follows
	for _, l := range logs {
		if l.Address != router || len(l.Topics) == 0 {
			continue
		}
		switch {
		case l.Topics[0] == sent.ID && len(l.Topics) == 3:
			last = l
		case l.Topics[0] == dispatch.ID && len(l.Topics) == 2 && last != nil && last.TxHash == l.TxHash:
			out = append(out, WarpMessage{ID: l.Topics[1], Origin: origin, Destination: last.Topics[1].Big().Uint64(),
				Recipient: last.Topics[2], Amount: new(big.Int).SetBytes(last.Data), SourceTx: l.TxHash,
				SourceBlock: l.BlockNumber, SentAt: time.Unix(int64(l.BlockTimestamp), 0).UTC()})
			last = nil
		}
	}
	return out
}

// WarpMessagesSince lists the warp messages c's router dispatched in blocks
// from on, and the head it read up to.
func WarpMessagesSince(c *simchain.Chain, contracts *pulseroute.Contracts, from uint64) ([]WarpMessage, uint64) {
	head := c.Head().Number
	w, ok := contracts.WarpRoute(c.ChainID())
	if !ok || from > head {
		return nil, head
	}
	ev := pulseroute.ABI().Events
	logs := c.Logs(simchain.LogFilter{FromBlock: from, ToBlock: head, Addresses: []common.Address{w.Router},
		Topics: [][]common.Hash{{ev["SentTransferRemote"].ID, ev["DispatchId"].ID}}})
	return MessagesIn(c.ChainID(), w.Router, logs), head
}

// Delivery finds the transaction that delivered message id on c, the
// destination: the one the router recorded, whose logs carry its
// ProcessId.
func Delivery(c *simchain.Chain, contracts *pulseroute.Contracts, id common.Hash) (*simchain.Receipt, bool) {
	w, ok := contracts.WarpRoute(c.ChainID())
	if !ok {
		return nil, false
	}
	n := c.Storage(w.Router, deliveredSlot(id)).Big()
	if n.Sign() == 0 || !n.IsUint64() {
		return nil, false
	}
	b, ok := c.BlockByNumber(n.Uint64())
	if !ok {
		return nil, false
	}
	processID := pulseroute.ABI().Events["ProcessId"].ID
	for _, h := range b.Transactions {
		r, ok := c.Receipt(h)
		if !ok {
			continue
		}
		for _, l := range r.Logs {
			if l.Address == w.Router && len(l.Topics) == 2 && l.Topics[0] == processID && l.Topics[1] == id {
				return r, true
			}
		}
	}
	return nil, false
}

// isProcess reports whether data calls process.
func isProcess(data []byte) bool {
	return len(data) >= 4 && bytes.Equal(data[:4], relayABI.Methods[MethodProcess].ID)
}

// process delivers one message on this side of the warp route (see the
// comment at the top of this file).
func (w *WarpRouterContract) process(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	if from != RelayerAddress {
		return nil, simchain.Revert("Mailbox: only the relayer delivers messages (the security module's check)")
	}
	if value != nil && value.Sign() != 0 {
		return nil, simchain.Revert("Mailbox: process is not payable")
	}
	args, err := relayABI.Methods[MethodProcess].Inputs.Unpack(data[4:])
	if err != nil || len(args) != 4 {
		return nil, simchain.Revert("Mailbox: invalid calldata for process")
	}
	id, origin, recipient, amount := common.Hash(args[0].([32]byte)), args[1].(uint32), common.Hash(args[2].([32]byte)), args[3].(*big.Int)
	if _, ok := w.Payments[origin]; !ok {
		return nil, simchain.Revertf("TokenRouter: no router enrolled for origin domain %d", origin)
	}
	slot := deliveredSlot(id)
	done, err := env.Load(slot)
	if err != nil {
		return nil, err
	}
	if done != (common.Hash{}) {
		return nil, simchain.Revertf("Mailbox: already delivered (message %s)", id.Hex())
	}
	if err := env.UseGas(ProcessGas); err != nil {
		return nil, err
	}
	to := common.BytesToAddress(recipient[12:])
	if w.Route.Synthetic {
		err = env.Mint(w.Route.Token, to, amount)
	} else {
		err = env.Transfer(w.Route.Token, to, amount)
	}
	if err != nil {
		return nil, err
	}
	if err := env.Store(slot, common.BigToHash(new(big.Int).SetUint64(env.BlockNumber()))); err != nil {
		return nil, err
	}
	ev := pulseroute.ABI().Events
	if err := env.Emit([]common.Hash{ev["ReceivedTransferRemote"].ID, common.BigToHash(big.NewInt(int64(origin))), recipient},
		common.BigToHash(amount).Bytes()); err != nil {
		return nil, err
	}
	return nil, env.Emit([]common.Hash{ev["ProcessId"].ID, id}, nil)
}

// ArrivalDeskCode is the arrival desk's code on chain 369: it holds what
// arrives and takes no calls.
type ArrivalDeskCode struct{}

var _ simchain.Contract = ArrivalDeskCode{}

// Execute refuses every call.
func (ArrivalDeskCode) Execute(*simchain.Env, common.Address, *big.Int, []byte) ([]byte, error) {
	return nil, simchain.Revert("ArrivalDesk: USDCh arrives here over the warp route; it takes no calls")
}
