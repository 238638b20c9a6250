package pulserpc

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// Caller is the one JSON-RPC capability the reader needs: eth_call. It is
// narrow so tests can answer it without a node.
type Caller interface {
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
}

// An *ethclient.Client is the production Caller.
var _ Caller = (*ethclient.Client)(nil)

// rpcFailure wraps a failed chain read as the error a client sees:
// UPSTREAM_TIMEOUT when the node did not answer within --rpc-timeout
// (noderead.ErrTimeout), RPC_FAILURE otherwise, keeping the cause for
// errors.Is and logs.
func rpcFailure(what string, cause error) *apierr.Error {
	return noderead.Failure(what+" failed", fmt.Errorf("%s: %w", what, cause))
}

// call runs one eth_call at the latest block and unpacks its result.
func call(ctx context.Context, c Caller, to common.Address, method string, data []byte) ([]any, error) {
	what := fmt.Sprintf("%s on %s", method, to.Hex())
	ret, err := c.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		return nil, rpcFailure(what, noderead.Err(ctx, err))
	}
	if len(ret) == 0 {
		// An eth_call to an address without code succeeds with no data.
		return nil, rpcFailure(what, fmt.Errorf("empty return data: no contract at %s?", to.Hex()))
	}
	out, err := pulseroute.UnpackOutputs(method, ret)
	if err != nil {
		return nil, rpcFailure(what, err)
	}
	return out, nil
}

// reverted reports a call the node ran and the contract reverted: JSON-RPC
// error 3 (geth and its forks), or a message saying so from nodes that
// answer reverts with another code.
func reverted(err error) bool {
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == 3 {
		return true
	}
	return strings.Contains(err.Error(), "execution reverted")
}

// QuoteGasPayment reads the native-coin payment a warp-route transferRemote
// to destination needs (its msg.value) from router: quoteGasPayment(uint32),
// selector 0xf2ed8c53, returning one uint256.
func QuoteGasPayment(ctx context.Context, c Caller, router common.Address, destination uint32) (*big.Int, error) {
	data, err := pulseroute.QuoteGasPaymentCall(destination)
	if err != nil {
		return nil, fmt.Errorf("quote gas payment: %w", err)
	}
	out, err := call(ctx, c, router, pulseroute.MethodQuoteGasPayment, data)
	if err != nil {
		return nil, err
	}
	v, ok := out[0].(*big.Int)
	if !ok {
		return nil, rpcFailure(pulseroute.MethodQuoteGasPayment, fmt.Errorf("result is %T, not uint256", out[0]))
	}
	return v, nil
}

// GetAmountsOut reads from a PulseX (UniswapV2) router what a swap of
// amountIn along path yields: getAmountsOut(uint256,address[]), selector
// 0xd06ca61f, returning one amount per path token, the first being
// amountIn. A result of another length is treated as a faulty node.
func GetAmountsOut(ctx context.Context, c Caller, pulsexRouter common.Address, amountIn *big.Int, path []common.Address) ([]*big.Int, error) {
	data, err := pulseroute.GetAmountsOutCall(amountIn, path)
	if err != nil {
		return nil, fmt.Errorf("get amounts out: %w", err)
	}
	out, err := call(ctx, c, pulsexRouter, pulseroute.MethodGetAmountsOut, data)
	if err != nil {
		if reverted(err) {
			// UniswapV2Library reverts on a hop whose pair does not exist
			// (or holds nothing): no swap along this path. The error stays
			// an RPC_FAILURE for callers that do not tell the two apart.
			return nil, rpcFailure(pulseroute.MethodGetAmountsOut, fmt.Errorf("%w: %w", pulseroute.ErrNoPair, err))
		}
		return nil, err
	}
	amounts, ok := out[0].([]*big.Int)
	if !ok {
		return nil, rpcFailure(pulseroute.MethodGetAmountsOut, fmt.Errorf("result is %T, not uint256[]", out[0]))
	}
	if len(amounts) != len(path) {
		return nil, rpcFailure(pulseroute.MethodGetAmountsOut, fmt.Errorf("%d amounts for a path of %d tokens", len(amounts), len(path)))
	}
	if amounts[0].Cmp(amountIn) != 0 {
		// The router echoes amountIn first: an answer that does not is
		// not an answer to this call.
		return nil, rpcFailure(pulseroute.MethodGetAmountsOut, fmt.Errorf("first amount %s is not amountIn %s", amounts[0], amountIn))
	}
	return amounts, nil
}

// GetAmountsIn reads from a PulseX (UniswapV2) router the input a swap
// along path needs to yield amountOut: getAmountsIn(uint256,address[]),
// selector 0x1f00ca74, returning one amount per path token, the last being
// amountOut. UniswapV2Library reverts on a hop without a pair and on one
// whose pool holds less than it must give (INSUFFICIENT_LIQUIDITY): both
// are pulseroute.ErrNoPair, no swap along this path yields amountOut.
func GetAmountsIn(ctx context.Context, c Caller, pulsexRouter common.Address, amountOut *big.Int, path []common.Address) ([]*big.Int, error) {
	data, err := pulseroute.GetAmountsInCall(amountOut, path)
	if err != nil {
		return nil, fmt.Errorf("get amounts in: %w", err)
	}
	out, err := call(ctx, c, pulsexRouter, pulseroute.MethodGetAmountsIn, data)
	if err != nil {
		if reverted(err) {
			return nil, rpcFailure(pulseroute.MethodGetAmountsIn, fmt.Errorf("%w: %w", pulseroute.ErrNoPair, err))
		}
		return nil, err
	}
	amounts, ok := out[0].([]*big.Int)
	if !ok {
		return nil, rpcFailure(pulseroute.MethodGetAmountsIn, fmt.Errorf("result is %T, not uint256[]", out[0]))
	}
	if len(amounts) != len(path) {
		return nil, rpcFailure(pulseroute.MethodGetAmountsIn, fmt.Errorf("%d amounts for a path of %d tokens", len(amounts), len(path)))
	}
	if last := amounts[len(amounts)-1]; last.Cmp(amountOut) != 0 {
		// The router echoes amountOut last: an answer that does not is
		// not an answer to this call.
		return nil, rpcFailure(pulseroute.MethodGetAmountsIn, fmt.Errorf("last amount %s is not amountOut %s", last, amountOut))
	}
	return amounts, nil
}
