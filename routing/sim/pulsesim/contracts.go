package pulsesim

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// The code of the warp routes and of Swapgate's own contracts on the
// sandbox chain (package simchain), so that every pulseroute quote's
// transaction executes there as it would on chain: bridgeAndSwap on the
// sender contract, transferRemote on either side of the warp route, and
// deposits to the inbound receiver. The warp route's delivery on the other
// chain of a transfer is the relayer's process call (warp.go); the PulseX
// swap after a bridgeAndSwap is the swap tracker's.

// Gas the contracts charge for their own work on top of what the chain
// meters, so that a quote's gas limit (sbx-warp's gas units × 1.25) covers
// the call with room to spare but is not wildly above what it uses.
const (
	// DispatchGas is charged by transferRemote: the mailbox's dispatch
	// (the message's merkle-tree insertion) and the interchain gas
	// paymaster's accounting.
	DispatchGas = 130_000
	// SenderWorkGas is charged by bridgeAndSwap for its own bookkeeping.
	SenderWorkGas = 10_000
)

// pulseDomain is chain 369's Hyperlane domain, which equals its chain id.
const pulseDomain = uint32(quote.PulseChainID)

// Slots of the contracts' own storage.
var nonceSlot = common.Hash{} // the warp router's message count

// WarpRouterContract is one side of the Hyperlane USDC warp route on the
// sandbox chain, deployed at Route.Router:
//
//   - transferRemote(destination, recipient, amount), payable: on a
//     collateral chain it pulls amount of USDC from the caller with
//     transferFrom (approve the router first: without an allowance it
//     reverts with "ERC20: insufficient allowance") and locks it; on chain
//     369 (synthetic: USDCh is its own router) it burns amount from the
//     caller, with no approval. msg.value is the interchain gas payment and
//     must be at least quoteGasPayment(destination) ("IGP: insufficient
//     interchain gas payment"); the router keeps it, excess included, as the
//     paymaster would. A destination without an enrolled router reverts. It
//     emits SentTransferRemote(destination, recipient, amount) and
//     DispatchId(messageId) and returns the message id, keccak256 of the
//     origin, destination, recipient, amount and the router's message
//     count, so that every message has its own.
//   - quoteGasPayment(destination), view: the payment above.
//   - process(messageId, origin, recipient, amount), from the sandbox
//     relayer alone: the delivery of a message on this side (USDCh minted
//     on 369, USDC released on a collateral chain), once per message id
//     (warp.go).
//   - on chain 369 every other call is USDCh's own ERC-20 code.
type WarpRouterContract struct {
	Route pulseroute.WarpRoute
	// Payments is the interchain gas payment per enrolled destination
	// domain, in the chain's native coin.
	Payments map[uint32]*big.Int
}

var _ simchain.Contract = (*WarpRouterContract)(nil)

// Execute runs one call of the warp router.
func (w *WarpRouterContract) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	if isProcess(data) {
		return w.process(env, from, value, data)
	}
	if len(data) >= 4 {
		if m, err := pulseroute.ABI().MethodById(data[:4]); err == nil {
			switch m.Name {
			case pulseroute.MethodTransferRemote:
				args, err := m.Inputs.Unpack(data[4:])
				if err != nil {
					return nil, simchain.Revert("TokenRouter: invalid calldata for transferRemote")
				}
				return w.transferRemote(env, from, value, args[0].(uint32), args[1].([32]byte), args[2].(*big.Int))
			case pulseroute.MethodQuoteGasPayment:
				args, err := m.Inputs.Unpack(data[4:])
				if err != nil {
					return nil, simchain.Revert("TokenRouter: invalid calldata for quoteGasPayment")
				}
				p, ok := w.Payments[args[0].(uint32)]
				if !ok {
					return nil, simchain.Revertf("TokenRouter: no router enrolled for domain %d", args[0].(uint32))
				}
				return m.Outputs.Pack(p)
			}
		}
	}
	if w.Route.Synthetic {
		return simchain.ERC20{}.Execute(env, from, value, data)
	}
	return nil, simchain.Revert("TokenRouter: function not recognised")
}

func (w *WarpRouterContract) transferRemote(env *simchain.Env, from common.Address, value *big.Int, dest uint32, recipient [32]byte, amount *big.Int) ([]byte, error) {
	payment, ok := w.Payments[dest]
	switch {
	case !ok:
		return nil, simchain.Revertf("TokenRouter: no router enrolled for domain %d", dest)
	case recipient == [32]byte{}:
		return nil, simchain.Revert("TokenRouter: recipient is zero")
	case amount.Sign() == 0:
		return nil, simchain.Revert("TokenRouter: amount is zero")
	case value.Cmp(payment) < 0:
		return nil, simchain.Revertf("IGP: insufficient interchain gas payment: sent %s, quoteGasPayment(%d) is %s", value, dest, payment)
	}
	if err := env.UseGas(DispatchGas); err != nil {
		return nil, err
	}
	var err error
	if w.Route.Synthetic {
		err = env.Burn(w.Route.Token, from, amount)
	} else {
		err = env.TransferFrom(w.Route.Token, from, env.Self(), amount)
	}
	if err != nil {
		return nil, err
	}
	count, err := env.Load(nonceSlot)
	if err != nil {
		return nil, err
	}
	next := new(big.Int).Add(count.Big(), big.NewInt(1))
	if err := env.Store(nonceSlot, common.BigToHash(next)); err != nil {
		return nil, err
	}
	messageID := crypto.Keccak256Hash(
		common.BigToHash(new(big.Int).SetUint64(env.ChainID())).Bytes(),
		common.BigToHash(new(big.Int).SetUint64(uint64(dest))).Bytes(),
		recipient[:], common.BigToHash(amount).Bytes(), count.Bytes())
	sent := pulseroute.ABI().Events["SentTransferRemote"]
	if err := env.Emit([]common.Hash{sent.ID, common.BigToHash(new(big.Int).SetUint64(uint64(dest))), common.Hash(recipient)},
		common.BigToHash(amount).Bytes()); err != nil {
		return nil, err
	}
	if err := env.Emit([]common.Hash{pulseroute.ABI().Events["DispatchId"].ID, messageID}, nil); err != nil {
		return nil, err
	}
	return messageID.Bytes(), nil
}

// SenderContractCode is Swapgate's sender contract on a warp-route chain
// (Contracts.SenderContract), the target of direct inbound quotes.
// bridgeAndSwap(quoteRef, destinationDomain, recipient, amount, fee,
// outputToken, minOutput), payable:
//
//   - the destination must be chain 369 and fee at most amount;
//   - it pulls amount of the chain's USDC from the caller with
//     transferFrom (approve the sender contract, the quote's approval
//     address: without it the call reverts with "ERC20: insufficient
//     allowance"), keeps fee (the service's, settled from the ledger), and
//     sends the rest over the warp route with msg.value as the interchain
//     gas payment: to recipient on 369 when outputToken is USDCh, to the
//     arrival desk (ArrivalDesk) when the quote swaps it there;
//   - it emits InboundSent(quoteRef, sender, recipient, bridged, fee,
//     outputToken, minOutput, messageId), which is what the tracker needs to
//     deliver USDCh on 369 and swap it into outputToken there (or refund
//     USDCh when the swap cannot meet minOutput).
type SenderContractCode struct {
	Route pulseroute.WarpRoute
	// USDCh is the synthetic token on 369: an outputToken other than it
	// sends the transfer to the arrival desk.
	USDCh common.Address
}

var _ simchain.Contract = (*SenderContractCode)(nil)

// Execute runs one call of the sender contract.
func (s *SenderContractCode) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	if len(data) < 4 {
		return nil, simchain.Revert("SenderContract: no function selector, and it accepts no plain transfers")
	}
	m, err := pulseroute.ABI().MethodById(data[:4])
	if err != nil || m.Name != pulseroute.MethodBridgeAndSwap {
		return nil, simchain.Revertf("SenderContract: function selector %#x not recognised", data[:4])
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, simchain.Revert("SenderContract: invalid calldata for bridgeAndSwap")
	}
	quoteRef, dest, recipient := args[0].([32]byte), args[1].(uint32), args[2].([32]byte)
	amount, fee, output, minOut := args[3].(*big.Int), args[4].(*big.Int), args[5].(common.Address), args[6].(*big.Int)
	switch {
	case dest != pulseDomain:
		return nil, simchain.Revertf("SenderContract: destination domain %d is not chain %d", dest, quote.PulseChainID)
	case fee.Cmp(amount) > 0:
		return nil, simchain.Revertf("SenderContract: fee %s exceeds amount %s", fee, amount)
	case amount.Cmp(fee) == 0:
		return nil, simchain.Revert("SenderContract: nothing left to bridge after the fee")
	}
	if err := env.UseGas(SenderWorkGas); err != nil {
		return nil, err
	}
	usdc := s.Route.Token
	if err := env.TransferFrom(usdc, from, env.Self(), amount); err != nil {
		return nil, err
	}
	bridged := new(big.Int).Sub(amount, fee)
	if err := env.Approve(usdc, s.Route.Router, bridged); err != nil {
		return nil, err
	}
	to := recipient
	if output != s.USDCh {
		to = pulseroute.AddressToBytes32(ArrivalDesk)
	}
	call, err := pulseroute.ABI().Pack(pulseroute.MethodTransferRemote, dest, to, bridged)
	if err != nil {
		return nil, simchain.Revertf("SenderContract: %v", err)
	}
	ret, err := env.Call(s.Route.Router, value, call)
	if err != nil {
		return nil, err
	}
	var messageID [32]byte
	copy(messageID[:], ret)
	ev := pulseroute.ABI().Events["InboundSent"]
	evData, err := ev.Inputs.NonIndexed().Pack(bridged, fee, output, minOut, messageID)
	if err != nil {
		return nil, simchain.Revertf("SenderContract: encode InboundSent: %v", err)
	}
	return nil, env.Emit([]common.Hash{ev.ID, common.Hash(quoteRef), common.BytesToHash(from.Bytes()), common.Hash(recipient)}, evData)
}

// InboundReceiverCode is Swapgate's inbound receiver on a warp-route chain
// (Contracts.InboundReceiver): step 1 of a multi-step quote delivers USDC
// to it with an ordinary transfer, and it holds that USDC until the deposit
// is registered and step 2 moves it. It starts empty, as every contract
// does, so its balance is what step 1 delivered. It takes no calls: step 2
// is the service's, not a user's.
type InboundReceiverCode struct{}

var _ simchain.Contract = InboundReceiverCode{}

// Execute refuses every call.
func (InboundReceiverCode) Execute(*simchain.Env, common.Address, *big.Int, []byte) ([]byte, error) {
	return nil, simchain.Revert("InboundReceiver: deposits arrive as token transfers and are registered with the service; it takes no calls")
}

// DeploySandbox installs the warp routes and Swapgate's own contracts on a
// sandbox chain, before its first transaction: on a chain of the warp
// route's collateral side, the collateral router (holding
// CollateralGenesis USDC), the sender contract and the inbound receiver; on
// chain 369, USDCh's code becomes the synthetic router (its balances stay),
// the arrival desk is deployed, and PulseX is deployed with gas's genesis
// pools (DeployPulseX: gas must be a *SandboxChain, or another state with
// GenesisPools). The interchain gas payments come from gas, the same
// ChainState the provider quotes with. Other chains get nothing.
func DeploySandbox(c *simchain.Chain, contracts *pulseroute.Contracts, gas pulseroute.ChainState) error {
	id := c.ChainID()
	w, ok := contracts.WarpRoute(id)
	if !ok {
		return nil
	}
	var dests []uint32
	if w.Synthetic {
		for _, sc := range contracts.SenderChains() {
			dests = append(dests, uint32(sc))
		}
	} else {
		dests = []uint32{pulseDomain}
	}
	payments := make(map[uint32]*big.Int, len(dests))
	for _, d := range dests {
		p, err := gas.QuoteGasPayment(context.Background(), id, d)
		if err != nil {
			return fmt.Errorf("pulsesim: deploy on chain %d: %w", id, err)
		}
		payments[d] = p
	}
	deploy := func(addr common.Address, code simchain.Contract) error {
		if err := c.Deploy(addr, code); err != nil {
			return fmt.Errorf("pulsesim: deploy on chain %d: %w", id, err)
		}
		return nil
	}
	if err := deploy(w.Router, &WarpRouterContract{Route: w, Payments: payments}); err != nil {
		return err
	}
	if w.Synthetic {
		if id == uint64(pulseDomain) {
			if err := deploy(ArrivalDesk, ArrivalDeskCode{}); err != nil {
				return err
			}
			pools, ok := gas.(interface{ GenesisPools() []GenesisPool })
			if !ok {
				return fmt.Errorf("pulsesim: deploy on chain %d: the chain state %T has no genesis pools for PulseX", id, gas)
			}
			return DeployPulseX(c, contracts.PulseX(), pools.GenesisPools())
		}
		return nil
	}
	if err := c.Allocate(w.Router, w.Token, CollateralGenesis); err != nil {
		return fmt.Errorf("pulsesim: collateral of chain %d: %w", id, err)
	}
	if sender, ok := contracts.SenderContract(id); ok {
		if err := deploy(sender, &SenderContractCode{Route: w, USDCh: contracts.USDCh().Token}); err != nil {
			return err
		}
	}
	if receiver, ok := contracts.InboundReceiver(id); ok {
		if err := deploy(receiver, InboundReceiverCode{}); err != nil {
			return err
		}
	}
	return nil
}
