package sandbox

import (
	"bytes"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// Gas the router charges for its own work on top of what the chain meters
// (the calldata, entering the router, the token calls and the logs), so
// that a quote's gas limit, its tool's gas units × 1.25, covers the call
// with room to spare but is not wildly above what it uses: a DEX router's
// pool math and a bridge's message, in a real deployment.
const (
	// SwapWorkGas is charged by swap: the pool walk of a DEX aggregator.
	SwapWorkGas = 50_000
	// BridgeWorkGas is charged by bridge: the bridge's message and its
	// accounting.
	BridgeWorkGas = 85_000
	// NativeInputGas is charged for a native input on top: wrapping it as a
	// real router does before it trades.
	NativeInputGas = 25_000
)

// RouterNativeReserve is the native coin the sandbox router holds from the
// genesis block on each chain (a genesis allocation), out of which it pays
// swaps into the native coin; it takes native inputs into the same balance.
var RouterNativeReserve = new(big.Int).Lsh(big.NewInt(1), 128)

// routerABI and routerEncoder are parsed once; neither is modified after.
var (
	routerABI     = mustRouterABI()
	routerEncoder = mustRouterCalls()
)

func mustRouterABI() abi.ABI {
	a, err := RouterABI()
	if err != nil {
		panic(err)
	}
	return a
}

func mustRouterCalls() routerCalls {
	c, err := newRouterCalls(routerABI)
	if err != nil {
		panic(err)
	}
	return c
}

// RouterContract is the sandbox router's code on the sandbox chain
// (package simchain), deployed at RouterAddress on every chain with the
// router as a minter of every token there. It settles a quote at the quote's
// word: there is no pool behind it, so the receiver gets exactly what the
// quote said.
//
// swap(quoteId, fromToken, fromAmount, toToken, minAmountOut, receiver,
// feeBps, feeRecipient):
//
//   - takes the input: an ERC-20 with transferFrom from the caller (so
//     without an allowance to the router it reverts with the token's
//     "ERC20: insufficient allowance", and with too small a balance with
//     "ERC20: transfer amount exceeds balance"); the native coin as
//     msg.value, which must equal fromAmount (and must be zero for a token);
//   - reads the quoted output before the partner fee from the word after the
//     ABI-encoded arguments (QuotedAmountOut), splits the fee off it at
//     feeBps with quote.SplitFee, the quote's own rule, and reverts unless
//     the rest is at least minAmountOut;
//   - mints the quoted output to itself and transfers the rest to the
//     receiver and the fee to feeRecipient (the zero address: the router
//     keeps it for the platform); a native output is paid from its reserve;
//   - emits QuoteExecuted and Swapped and returns the amount delivered.
//
// bridge(quoteId, fromToken, fromAmount, toChainId, toToken, minAmountOut,
// receiver, feeBps, feeRecipient) takes the input the same way, keeps it
// (the bridge's liquidity), and emits QuoteExecuted and BridgeSent with
// what the destination owes: amountOut to receiver and the fee to
// feeRecipient, in toToken on toChainId. Nothing reaches the destination
// here: the status tracker delivers it there. It returns the transfer id,
// keccak256(chainId, block number, quoteId, sender), unique because every
// block holds one transaction.
//
// Calldata without the quoted word (built from the ABI alone rather than
// taken from a quote) reverts: the router has no price of its own.
type RouterContract struct{}

var _ simchain.Contract = RouterContract{}

// QuotedAmountOut returns the word after the ABI-encoded arguments of a
// router call built for a quote: the quoted output before the partner fee.
// ok is false for calldata that is not a canonically encoded swap or bridge
// followed by exactly that word.
func QuotedAmountOut(data []byte) (*big.Int, bool) {
	if len(data) < 4 {
		return nil, false
	}
	m, err := routerABI.MethodById(data[:4])
	if err != nil {
		return nil, false
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, false
	}
	return quotedWord(m.Name, args, data)
}

// quotedWord re-encodes the decoded arguments canonically and takes the one
// word that must follow them.
func quotedWord(method string, args []any, data []byte) (*big.Int, bool) {
	var enc []byte
	var err error
	switch method {
	case "swap":
		enc, err = routerEncoder.swap(args[0].([32]byte), args[1].(common.Address), args[2].(*big.Int), args[3].(common.Address),
			args[4].(*big.Int), args[5].(common.Address), args[6].(uint16), args[7].(common.Address))
	case "bridge":
		toChain := args[3].(*big.Int)
		if !toChain.IsUint64() {
			return nil, false
		}
		enc, err = routerEncoder.bridge(args[0].([32]byte), args[1].(common.Address), args[2].(*big.Int), toChain.Uint64(),
			args[4].([32]byte), args[5].(*big.Int), args[6].([]byte), args[7].(uint16), args[8].(common.Address))
	default:
		return nil, false
	}
	if err != nil || len(data) != len(enc)+wordSize || !bytes.Equal(data[:len(enc)], enc) {
		return nil, false
	}
	return new(big.Int).SetBytes(data[len(enc):]), true
}

// Execute runs one call of the router.
func (RouterContract) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	if len(data) < 4 {
		return nil, simchain.Revert("SandboxRouter: no function selector, and the router accepts no plain transfers")
	}
	m, err := routerABI.MethodById(data[:4])
	if err != nil {
		return nil, simchain.Revertf("SandboxRouter: function selector %#x not recognised", data[:4])
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, simchain.Revertf("SandboxRouter: invalid calldata for %s", m.Name)
	}
	quoted, ok := quotedWord(m.Name, args, data)
	if !ok {
		return nil, simchain.Revert("SandboxRouter: the calldata carries no quoted amount after the arguments; send the transaction request of a quote")
	}
	switch m.Name {
	case "swap":
		return routerSwap(env, m, from, value, args, quoted)
	case "bridge":
		return routerBridge(env, m, from, value, args, quoted)
	}
	return nil, simchain.Revertf("SandboxRouter: function %s not implemented", m.Name)
}

// settlement is what a call owes: the output after the fee and the fee.
type settlement struct {
	quoteID   [32]byte
	fromToken common.Address
	amountIn  *big.Int
	net, fee  *big.Int
	feeTo     common.Address
}

// takeInput pulls the input and splits the quoted output, the steps swap
// and bridge share.
func takeInput(env *simchain.Env, from common.Address, value *big.Int, quoteID [32]byte, fromToken common.Address,
	amountIn, minOut *big.Int, feeBps uint16, feeTo common.Address, quoted *big.Int) (settlement, error) {
	s := settlement{quoteID: quoteID, fromToken: fromToken, amountIn: amountIn, feeTo: feeTo}
	switch {
	case amountIn.Sign() == 0:
		return s, simchain.Revert("SandboxRouter: fromAmount is zero")
	case feeBps > 10_000:
		return s, simchain.Revertf("SandboxRouter: feeBps %d is above 10000", feeBps)
	}
	if fromToken == (common.Address{}) {
		if value.Cmp(amountIn) != 0 {
			return s, simchain.Revertf("SandboxRouter: msg.value %s must equal fromAmount %s for a native input", value, amountIn)
		}
		if err := env.UseGas(NativeInputGas); err != nil {
			return s, err
		}
	} else {
		if value.Sign() != 0 {
			return s, simchain.Revert("SandboxRouter: msg.value must be zero for a token input")
		}
		if err := env.TransferFrom(fromToken, from, env.Self(), amountIn); err != nil {
			return s, err
		}
	}
	s.net, s.fee = quote.SplitFee(quoted, int(feeBps))
	if s.net.Cmp(minOut) < 0 {
		return s, simchain.Revertf("SandboxRouter: output %s is below minAmountOut %s", s.net, minOut)
	}
	return s, emitQuoteExecuted(env, quoteID, from, amountIn)
}

func routerSwap(env *simchain.Env, m *abi.Method, from common.Address, value *big.Int, args []any, quoted *big.Int) ([]byte, error) {
	quoteID, fromToken, amountIn := args[0].([32]byte), args[1].(common.Address), args[2].(*big.Int)
	toToken, minOut, receiver := args[3].(common.Address), args[4].(*big.Int), args[5].(common.Address)
	feeBps, feeTo := args[6].(uint16), args[7].(common.Address)
	if receiver == (common.Address{}) {
		return nil, simchain.Revert("SandboxRouter: swap to the zero address")
	}
	if err := env.UseGas(SwapWorkGas); err != nil {
		return nil, err
	}
	s, err := takeInput(env, from, value, quoteID, fromToken, amountIn, minOut, feeBps, feeTo, quoted)
	if err != nil {
		return nil, err
	}
	if toToken != (common.Address{}) && quoted.Sign() > 0 {
		if err := env.Mint(toToken, env.Self(), quoted); err != nil {
			return nil, err
		}
	}
	if err := pay(env, toToken, receiver, s.net); err != nil {
		return nil, err
	}
	if feeTo != (common.Address{}) {
		if err := pay(env, toToken, feeTo, s.fee); err != nil {
			return nil, err
		}
	}
	ev := routerABI.Events["Swapped"]
	evData, err := ev.Inputs.NonIndexed().Pack(fromToken, toToken, amountIn, s.net, s.fee, feeTo)
	if err != nil {
		return nil, simchain.Revertf("SandboxRouter: encode Swapped: %v", err)
	}
	if err := env.Emit([]common.Hash{ev.ID, common.Hash(quoteID), addressTopic(receiver)}, evData); err != nil {
		return nil, err
	}
	return m.Outputs.Pack(s.net)
}

func routerBridge(env *simchain.Env, m *abi.Method, from common.Address, value *big.Int, args []any, quoted *big.Int) ([]byte, error) {
	quoteID, fromToken, amountIn := args[0].([32]byte), args[1].(common.Address), args[2].(*big.Int)
	toChain, toToken, minOut := args[3].(*big.Int), args[4].([32]byte), args[5].(*big.Int)
	receiver, feeBps, feeTo := args[6].([]byte), args[7].(uint16), args[8].(common.Address)
	switch {
	case toChain.IsUint64() && toChain.Uint64() == env.ChainID():
		return nil, simchain.Revert("SandboxRouter: bridge to the chain it starts on; use swap")
	case len(receiver) == 0:
		return nil, simchain.Revert("SandboxRouter: bridge to an empty receiver")
	}
	if err := env.UseGas(BridgeWorkGas); err != nil {
		return nil, err
	}
	s, err := takeInput(env, from, value, quoteID, fromToken, amountIn, minOut, feeBps, feeTo, quoted)
	if err != nil {
		return nil, err
	}
	transferID := crypto.Keccak256Hash(
		new(big.Int).SetUint64(env.ChainID()).FillBytes(make([]byte, wordSize)),
		new(big.Int).SetUint64(env.BlockNumber()).FillBytes(make([]byte, wordSize)),
		quoteID[:], from.Bytes())
	ev := routerABI.Events["BridgeSent"]
	evData, err := ev.Inputs.NonIndexed().Pack(fromToken, amountIn, toChain, toToken, s.net, minOut, s.fee, feeTo, receiver)
	if err != nil {
		return nil, simchain.Revertf("SandboxRouter: encode BridgeSent: %v", err)
	}
	if err := env.Emit([]common.Hash{ev.ID, transferID, common.Hash(quoteID), addressTopic(from)}, evData); err != nil {
		return nil, err
	}
	return m.Outputs.Pack(transferID)
}

// pay sends amount of token (the zero address: the native coin, from the
// reserve) from the router to to; nothing for a zero amount.
func pay(env *simchain.Env, token, to common.Address, amount *big.Int) error {
	if amount.Sign() == 0 {
		return nil
	}
	return env.Transfer(token, to, amount)
}

func emitQuoteExecuted(env *simchain.Env, quoteID [32]byte, sender common.Address, amountIn *big.Int) error {
	ev := routerABI.Events["QuoteExecuted"]
	data, err := ev.Inputs.NonIndexed().Pack(amountIn)
	if err != nil {
		return simchain.Revertf("SandboxRouter: encode QuoteExecuted: %v", err)
	}
	return env.Emit([]common.Hash{ev.ID, common.Hash(quoteID), addressTopic(sender)}, data)
}

// addressTopic is an address as an indexed event topic.
func addressTopic(a common.Address) common.Hash { return common.BytesToHash(a.Bytes()) }

// DeployRouter installs the sandbox router on a sandbox chain, before its
// first transaction: RouterContract at RouterAddress, a minter of every
// token of the chain, holding RouterNativeReserve of the native coin.
func DeployRouter(c *simchain.Chain) error {
	addr := RouterAddress(c.ChainID())
	if err := c.Deploy(addr, RouterContract{}); err != nil {
		return fmt.Errorf("sandbox: deploy the router on chain %d: %w", c.ChainID(), err)
	}
	for _, t := range c.Tokens() {
		if t.Address == (common.Address{}) {
			continue
		}
		if err := c.GrantMinter(t.Address, addr); err != nil {
			return fmt.Errorf("sandbox: router on chain %d: %w", c.ChainID(), err)
		}
	}
	if err := c.Allocate(addr, common.Address{}, RouterNativeReserve); err != nil {
		return fmt.Errorf("sandbox: router reserve on chain %d: %w", c.ChainID(), err)
	}
	return nil
}

// ExecutedQuoteRef is the quote reference that the sandbox router on
// chainID announced (QuoteExecuted) among a transaction's logs: how a
// step-1 transaction names the quote it executed.
func ExecutedQuoteRef(chainID uint64, logs []*types.Log) ([32]byte, bool) {
	ev, ok := routerABI.Events["QuoteExecuted"]
	if !ok {
		return [32]byte{}, false
	}
	router := RouterAddress(chainID)
	for _, l := range logs {
		if l.Address == router && len(l.Topics) >= 2 && l.Topics[0] == ev.ID {
			return l.Topics[1], true
		}
	}
	return [32]byte{}, false
}
