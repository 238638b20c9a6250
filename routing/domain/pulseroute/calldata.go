package pulseroute

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// Method names as they appear in the ABIs and in Decode's answer.
const (
	MethodTransferRemote           = "transferRemote"
	MethodQuoteGasPayment          = "quoteGasPayment"
	MethodGetAmountsOut            = "getAmountsOut"
	MethodGetAmountsIn             = "getAmountsIn"
	MethodSwapExactTokensForTokens = "swapExactTokensForTokens"
	MethodApprove                  = "approve"
	MethodTransfer                 = "transfer"
	MethodBalanceOf                = "balanceOf"
	MethodAllowance                = "allowance"
	MethodBridgeAndSwap            = "bridgeAndSwap"
	MethodGetPair                  = "getPair"
	MethodGetReserves              = "getReserves"
	MethodToken0                   = "token0"
	MethodToken1                   = "token1"
	MethodSwapExactTokensForETH    = "swapExactTokensForETH"
)

// abiJSON is every function pulseroute calls: the Hyperlane TokenRouter, the
// PulseX v2 router, factory (getPair) and pairs (getReserves, token0,
// token1, and their Swap and Sync events), ERC-20, and Swapgate's sender
// contract. Their selectors
// do not collide, so one ABI decodes calldata to any of them. It also holds
// the events the warp routes and the sender contract emit: the TokenRouter's
// SentTransferRemote and, on delivery, ReceivedTransferRemote, the
// mailbox's DispatchId and, on delivery, ProcessId (both emitted by the
// sandbox warp routes themselves; on chain by the Hyperlane mailbox), and
// the sender contract's InboundSent.
//
// bridgeAndSwap is Swapgate's own sender-contract entry point (no public
// deployment exists; the sandbox chain executes it): it pulls amount USDC
// from the caller (approve the sender contract first), keeps fee, sends the
// rest over the warp route with msg.value as the messaging payment, and on
// PulseChain swaps it into outputToken for recipient, refunding USDCh to the
// recipient if the swap cannot deliver minOutput. quoteRef ties the
// transaction to the quote id (see quote.Ref).
const abiJSON = `[
 {"type":"function","name":"transferRemote","stateMutability":"payable",
  "inputs":[{"name":"destination","type":"uint32"},{"name":"recipient","type":"bytes32"},{"name":"amount","type":"uint256"}],
  "outputs":[{"name":"messageId","type":"bytes32"}]},
 {"type":"function","name":"quoteGasPayment","stateMutability":"view",
  "inputs":[{"name":"destinationDomain","type":"uint32"}],
  "outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"getAmountsOut","stateMutability":"view",
  "inputs":[{"name":"amountIn","type":"uint256"},{"name":"path","type":"address[]"}],
  "outputs":[{"name":"amounts","type":"uint256[]"}]},
 {"type":"function","name":"getAmountsIn","stateMutability":"view",
  "inputs":[{"name":"amountOut","type":"uint256"},{"name":"path","type":"address[]"}],
  "outputs":[{"name":"amounts","type":"uint256[]"}]},
 {"type":"function","name":"swapExactTokensForTokens","stateMutability":"nonpayable",
  "inputs":[{"name":"amountIn","type":"uint256"},{"name":"amountOutMin","type":"uint256"},{"name":"path","type":"address[]"},{"name":"to","type":"address"},{"name":"deadline","type":"uint256"}],
  "outputs":[{"name":"amounts","type":"uint256[]"}]},
 {"type":"function","name":"swapExactTokensForETH","stateMutability":"nonpayable",
  "inputs":[{"name":"amountIn","type":"uint256"},{"name":"amountOutMin","type":"uint256"},{"name":"path","type":"address[]"},{"name":"to","type":"address"},{"name":"deadline","type":"uint256"}],
  "outputs":[{"name":"amounts","type":"uint256[]"}]},
 {"type":"function","name":"approve","stateMutability":"nonpayable",
  "inputs":[{"name":"spender","type":"address"},{"name":"amount","type":"uint256"}],
  "outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"transfer","stateMutability":"nonpayable",
  "inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],
  "outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"balanceOf","stateMutability":"view",
  "inputs":[{"name":"owner","type":"address"}],
  "outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"allowance","stateMutability":"view",
  "inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"}],
  "outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"bridgeAndSwap","stateMutability":"payable",
  "inputs":[{"name":"quoteRef","type":"bytes32"},{"name":"destinationDomain","type":"uint32"},{"name":"recipient","type":"bytes32"},{"name":"amount","type":"uint256"},{"name":"fee","type":"uint256"},{"name":"outputToken","type":"address"},{"name":"minOutput","type":"uint256"}],
  "outputs":[]},
 {"type":"function","name":"getPair","stateMutability":"view",
  "inputs":[{"name":"tokenA","type":"address"},{"name":"tokenB","type":"address"}],
  "outputs":[{"name":"pair","type":"address"}]},
 {"type":"function","name":"getReserves","stateMutability":"view",
  "inputs":[],
  "outputs":[{"name":"reserve0","type":"uint112"},{"name":"reserve1","type":"uint112"},{"name":"blockTimestampLast","type":"uint32"}]},
 {"type":"function","name":"token0","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"token1","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"event","name":"Swap","anonymous":false,
  "inputs":[{"name":"sender","type":"address","indexed":true},{"name":"amount0In","type":"uint256","indexed":false},{"name":"amount1In","type":"uint256","indexed":false},{"name":"amount0Out","type":"uint256","indexed":false},{"name":"amount1Out","type":"uint256","indexed":false},{"name":"to","type":"address","indexed":true}]},
 {"type":"event","name":"Sync","anonymous":false,
  "inputs":[{"name":"reserve0","type":"uint112","indexed":false},{"name":"reserve1","type":"uint112","indexed":false}]},
 {"type":"event","name":"SentTransferRemote","anonymous":false,
  "inputs":[{"name":"destination","type":"uint32","indexed":true},{"name":"recipient","type":"bytes32","indexed":true},{"name":"amount","type":"uint256","indexed":false}]},
 {"type":"event","name":"ReceivedTransferRemote","anonymous":false,
  "inputs":[{"name":"origin","type":"uint32","indexed":true},{"name":"recipient","type":"bytes32","indexed":true},{"name":"amount","type":"uint256","indexed":false}]},
 {"type":"event","name":"ProcessId","anonymous":false,
  "inputs":[{"name":"messageId","type":"bytes32","indexed":true}]},
 {"type":"event","name":"DispatchId","anonymous":false,
  "inputs":[{"name":"messageId","type":"bytes32","indexed":true}]},
 {"type":"event","name":"InboundSent","anonymous":false,
  "inputs":[{"name":"quoteRef","type":"bytes32","indexed":true},{"name":"sender","type":"address","indexed":true},{"name":"recipient","type":"bytes32","indexed":true},{"name":"bridged","type":"uint256","indexed":false},{"name":"fee","type":"uint256","indexed":false},{"name":"outputToken","type":"address","indexed":false},{"name":"minOutput","type":"uint256","indexed":false},{"name":"messageId","type":"bytes32","indexed":false}]}
]`

// contractABI is parsed once at package initialisation and only read
// afterwards; abi.ABI's methods do not mutate it.
var contractABI = mustParseABI(abiJSON)

func mustParseABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(fmt.Sprintf("pulseroute: parse ABI: %v", err))
	}
	return a
}

// ErrShortCalldata is returned by Decode for data without a 4-byte selector.
var ErrShortCalldata = errors.New("calldata shorter than a selector")

// ErrUnknownSelector is returned by Decode for a selector of no known ABI.
var ErrUnknownSelector = errors.New("unknown selector")

func pack(method string, args ...any) ([]byte, error) {
	data, err := contractABI.Pack(method, args...)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", method, err)
	}
	return data, nil
}

func requireAmount(name string, v *big.Int) error {
	if v == nil {
		return fmt.Errorf("%s is nil", name)
	}
	if v.Sign() < 0 {
		return fmt.Errorf("%s is negative", name)
	}
	if v.BitLen() > 256 {
		return fmt.Errorf("%s exceeds uint256", name)
	}
	return nil
}

// AddressToBytes32 left-pads a 20-byte address to the bytes32 recipient
// Hyperlane uses.
func AddressToBytes32(a common.Address) [32]byte {
	var b [32]byte
	copy(b[12:], a.Bytes())
	return b
}

// TransferRemote encodes the Hyperlane TokenRouter call that bridges amount
// to recipient on the destination domain; msg.value must be the router's
// quoteGasPayment for that domain.
func TransferRemote(destination uint32, recipient common.Address, amount *big.Int) ([]byte, error) {
	if err := requireAmount("amount", amount); err != nil {
		return nil, fmt.Errorf("transferRemote: %w", err)
	}
	return pack(MethodTransferRemote, destination, AddressToBytes32(recipient), amount)
}

// QuoteGasPaymentCall encodes the read of the messaging payment a
// transferRemote to destination needs.
func QuoteGasPaymentCall(destination uint32) ([]byte, error) {
	return pack(MethodQuoteGasPayment, destination)
}

// GetAmountsOutCall encodes the PulseX read of the amounts a swap along path
// yields.
func GetAmountsOutCall(amountIn *big.Int, path []common.Address) ([]byte, error) {
	if err := requireAmount("amountIn", amountIn); err != nil {
		return nil, fmt.Errorf("getAmountsOut: %w", err)
	}
	if len(path) < 2 {
		return nil, fmt.Errorf("getAmountsOut: path has %d tokens, need at least 2", len(path))
	}
	return pack(MethodGetAmountsOut, amountIn, path)
}

// GetAmountsInCall encodes the PulseX read of the input a swap along path
// needs to yield amountOut (UniswapV2Router02's getAmountsIn, selector
// 0x1f00ca74): one amount per path token, the last being amountOut.
func GetAmountsInCall(amountOut *big.Int, path []common.Address) ([]byte, error) {
	if err := requireAmount("amountOut", amountOut); err != nil {
		return nil, fmt.Errorf("getAmountsIn: %w", err)
	}
	if len(path) < 2 {
		return nil, fmt.Errorf("getAmountsIn: path has %d tokens, need at least 2", len(path))
	}
	return pack(MethodGetAmountsIn, amountOut, path)
}

// SenderCall is the argument list of the sender contract's bridgeAndSwap.
type SenderCall struct {
	QuoteRef          [32]byte
	DestinationDomain uint32
	Recipient         common.Address
	Amount            *big.Int
	Fee               *big.Int
	OutputToken       common.Address
	MinOutput         *big.Int
}

// BridgeAndSwap encodes the direct inbound call to Swapgate's sender
// contract. Fee may not exceed Amount.
func BridgeAndSwap(c SenderCall) ([]byte, error) {
	for _, a := range []struct {
		name string
		v    *big.Int
	}{{"amount", c.Amount}, {"fee", c.Fee}, {"minOutput", c.MinOutput}} {
		if err := requireAmount(a.name, a.v); err != nil {
			return nil, fmt.Errorf("bridgeAndSwap: %w", err)
		}
	}
	if c.Fee.Cmp(c.Amount) > 0 {
		return nil, fmt.Errorf("bridgeAndSwap: fee %s exceeds amount %s", c.Fee, c.Amount)
	}
	return pack(MethodBridgeAndSwap, c.QuoteRef, c.DestinationDomain, AddressToBytes32(c.Recipient),
		c.Amount, c.Fee, c.OutputToken, c.MinOutput)
}

// SwapExactTokensForTokens encodes the PulseX swap of exactly amountIn along
// path, reverting below amountOutMin or after deadline (Unix seconds). The
// live provider's swaps within chain 369 call it on the PulseX router, and
// step 2 of a multi-step quote is this call on the same getAmountsOut
// figures.
func SwapExactTokensForTokens(amountIn, amountOutMin *big.Int, path []common.Address, to common.Address, deadline *big.Int) ([]byte, error) {
	for _, a := range []struct {
		name string
		v    *big.Int
	}{{"amountIn", amountIn}, {"amountOutMin", amountOutMin}, {"deadline", deadline}} {
		if err := requireAmount(a.name, a.v); err != nil {
			return nil, fmt.Errorf("swapExactTokensForTokens: %w", err)
		}
	}
	if len(path) < 2 {
		return nil, fmt.Errorf("swapExactTokensForTokens: path has %d tokens, need at least 2", len(path))
	}
	return pack(MethodSwapExactTokensForTokens, amountIn, amountOutMin, path, to, deadline)
}

// Decode reads calldata of any function above: the method name and its
// arguments in ABI order, as go-ethereum unpacks them (uint32 as uint32,
// uint256 as *big.Int, bytes32 as [32]byte, address as common.Address,
// address[] as []common.Address).
func Decode(data []byte) (method string, args []any, err error) {
	if len(data) < 4 {
		return "", nil, fmt.Errorf("decode: %w (%d bytes)", ErrShortCalldata, len(data))
	}
	m, err := contractABI.MethodById(data[:4])
	if err != nil {
		return "", nil, fmt.Errorf("decode: %w 0x%x", ErrUnknownSelector, data[:4])
	}
	args, err = m.Inputs.Unpack(data[4:])
	if err != nil {
		return "", nil, fmt.Errorf("decode %s arguments: %w", m.Name, err)
	}
	return m.Name, args, nil
}

// ABI is every function and event pulseroute's contracts have (see
// abiJSON), for the code that runs or reads them elsewhere: the simulated
// contracts and the JSON-RPC reader. The value shares its tables with the
// package's own copy and must only be read.
func ABI() *abi.ABI {
	a := contractABI
	return &a
}

// UnpackOutputs decodes the return data of a call to method.
func UnpackOutputs(method string, ret []byte) ([]any, error) {
	out, err := contractABI.Unpack(method, ret)
	if err != nil {
		return nil, fmt.Errorf("unpack %s result: %w", method, err)
	}
	return out, nil
}
