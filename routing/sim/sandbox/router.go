package sandbox

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// RouterABIJSON is the ABI of the sandbox router, the contract every
// aggregator route from an EVM chain calls. swap trades within one chain;
// bridge sends value to another chain, with the destination token as bytes32
// and the receiver as bytes so that Solana and Sui recipients fit. quoteId is
// quote.Ref(quote id), which lets the sandbox chain tie an executed
// transaction back to its quote. The fee is taken from the output and paid to
// feeRecipient (the zero address: the platform, which the router keeps).
//
// The calldata a quote carries has one more word after the ABI-encoded
// arguments: the quote's output before the partner fee (QuotedAmountOut),
// which the sandbox router settles at (see RouterContract). ABI decoders
// ignore it, so the calldata still decodes with this ABI.
//
// Events: QuoteExecuted on every call; Swapped with a swap's amounts;
// BridgeSent with what a bridge sent and what the destination owes, which a
// tracker delivers there later.
const RouterABIJSON = `[
 {"type":"function","name":"swap","stateMutability":"payable","outputs":[{"name":"amountOut","type":"uint256"}],"inputs":[
  {"name":"quoteId","type":"bytes32"},
  {"name":"fromToken","type":"address"},
  {"name":"fromAmount","type":"uint256"},
  {"name":"toToken","type":"address"},
  {"name":"minAmountOut","type":"uint256"},
  {"name":"receiver","type":"address"},
  {"name":"feeBps","type":"uint16"},
  {"name":"feeRecipient","type":"address"}]},
 {"type":"function","name":"bridge","stateMutability":"payable","outputs":[{"name":"transferId","type":"bytes32"}],"inputs":[
  {"name":"quoteId","type":"bytes32"},
  {"name":"fromToken","type":"address"},
  {"name":"fromAmount","type":"uint256"},
  {"name":"toChainId","type":"uint256"},
  {"name":"toToken","type":"bytes32"},
  {"name":"minAmountOut","type":"uint256"},
  {"name":"receiver","type":"bytes"},
  {"name":"feeBps","type":"uint16"},
  {"name":"feeRecipient","type":"address"}]},
 {"type":"event","name":"QuoteExecuted","anonymous":false,"inputs":[
  {"name":"quoteId","type":"bytes32","indexed":true},
  {"name":"sender","type":"address","indexed":true},
  {"name":"amountIn","type":"uint256","indexed":false}]},
 {"type":"event","name":"Swapped","anonymous":false,"inputs":[
  {"name":"quoteId","type":"bytes32","indexed":true},
  {"name":"receiver","type":"address","indexed":true},
  {"name":"fromToken","type":"address","indexed":false},
  {"name":"toToken","type":"address","indexed":false},
  {"name":"amountIn","type":"uint256","indexed":false},
  {"name":"amountOut","type":"uint256","indexed":false},
  {"name":"fee","type":"uint256","indexed":false},
  {"name":"feeRecipient","type":"address","indexed":false}]},
 {"type":"event","name":"BridgeSent","anonymous":false,"inputs":[
  {"name":"transferId","type":"bytes32","indexed":true},
  {"name":"quoteId","type":"bytes32","indexed":true},
  {"name":"sender","type":"address","indexed":true},
  {"name":"fromToken","type":"address","indexed":false},
  {"name":"amountIn","type":"uint256","indexed":false},
  {"name":"toChainId","type":"uint256","indexed":false},
  {"name":"toToken","type":"bytes32","indexed":false},
  {"name":"amountOut","type":"uint256","indexed":false},
  {"name":"minAmountOut","type":"uint256","indexed":false},
  {"name":"fee","type":"uint256","indexed":false},
  {"name":"feeRecipient","type":"address","indexed":false},
  {"name":"receiver","type":"bytes","indexed":false}]}
]`

// ERC20ABIJSON covers the ERC-20 calls sandbox routes build.
const ERC20ABIJSON = `[
 {"type":"function","name":"transfer","stateMutability":"nonpayable","outputs":[{"name":"","type":"bool"}],"inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}]},
 {"type":"function","name":"approve","stateMutability":"nonpayable","outputs":[{"name":"","type":"bool"}],"inputs":[{"name":"spender","type":"address"},{"name":"amount","type":"uint256"}]}
]`

// RouterABI parses RouterABIJSON.
func RouterABI() (abi.ABI, error) {
	a, err := abi.JSON(strings.NewReader(RouterABIJSON))
	if err != nil {
		return abi.ABI{}, fmt.Errorf("sandbox: parse router ABI: %w", err)
	}
	return a, nil
}

// ERC20ABI parses ERC20ABIJSON.
func ERC20ABI() (abi.ABI, error) {
	a, err := abi.JSON(strings.NewReader(ERC20ABIJSON))
	if err != nil {
		return abi.ABI{}, fmt.Errorf("sandbox: parse ERC-20 ABI: %w", err)
	}
	return a, nil
}

// RouterAddress is the sandbox router on a chain: the last 20 bytes of
// keccak256("swapgate-sandbox-router:<chainId>"). It differs per chain so
// that a transaction sent to the wrong chain's router is visibly wrong.
func RouterAddress(chainID uint64) common.Address {
	return common.BytesToAddress(crypto.Keccak256([]byte("swapgate-sandbox-router:" + strconv.FormatUint(chainID, 10)))[12:])
}

// EVMAddress parses an EVM address or the word native (the zero address).
func EVMAddress(s string) (common.Address, error) {
	if strings.EqualFold(s, "native") {
		return common.Address{}, nil
	}
	if !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("sandbox: %q is not an EVM address", s)
	}
	return common.HexToAddress(s), nil
}

// receiverBytes encodes a recipient on a chain for the router's bytes
// receiver: 20 bytes on EVM chains, the 32 bytes of the public key on Solana
// and Sui, and the address text elsewhere.
func receiverBytes(c *registry.Chain, addr string) ([]byte, error) {
	switch c.AddressFormat {
	case "evm":
		a, err := EVMAddress(addr)
		if err != nil {
			return nil, err
		}
		return a.Bytes(), nil
	case "solana":
		b, err := base58.Decode(addr)
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("sandbox: %q is not a Solana address", addr)
		}
		return b, nil
	case "sui":
		return sui32(addr)
	}
	return []byte(addr), nil
}

// sui32 decodes a Sui address, left-padding short forms to 32 bytes.
func sui32(addr string) ([]byte, error) {
	h := strings.TrimPrefix(strings.ToLower(addr), "0x")
	if len(h) == 0 || len(h) > 64 {
		return nil, fmt.Errorf("sandbox: %q is not a Sui address", addr)
	}
	b, err := hex.DecodeString(strings.Repeat("0", 64-len(h)) + h)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %q is not a Sui address: %w", addr, err)
	}
	return b, nil
}

// tokenBytes32 encodes a destination token for the router's bytes32 toToken:
// an EVM address left-padded, a Solana mint's 32 bytes, and otherwise
// keccak256 of the token's address text (Sui coin types do not fit 32 bytes).
func tokenBytes32(c *registry.Chain, t *registry.Token) [32]byte {
	var out [32]byte
	switch c.AddressFormat {
	case "evm":
		if a, err := EVMAddress(t.Address); err == nil {
			copy(out[12:], a.Bytes())
			return out
		}
	case "solana":
		if b, err := base58.Decode(t.Address); err == nil && len(b) == 32 {
			copy(out[:], b)
			return out
		}
	}
	copy(out[:], crypto.Keccak256([]byte(t.Address)))
	return out
}

// feeRecipient is the partner's fee wallet when it is an EVM address, and the
// zero address (the platform) otherwise.
func feeRecipient(s string) common.Address {
	if common.IsHexAddress(s) {
		return common.HexToAddress(s)
	}
	return common.Address{}
}

// packSwap builds swap(...) calldata followed by the quoted pre-fee output.
func packSwap(c routerCalls, quoteID string, fromToken common.Address, fromAmount *big.Int, toToken common.Address, minOut, quoted *big.Int, receiver common.Address, feeBps int, feeTo common.Address) ([]byte, error) {
	data, err := c.swap(quote.Ref(quoteID), fromToken, fromAmount, toToken, minOut, receiver, uint16(feeBps), feeTo)
	if err == nil {
		data, err = appendQuoted(data, quoted)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: pack swap: %w", err)
	}
	return data, nil
}

// SwapCall builds the router's swap(...) calldata for a request: its quote
// id, input amount and fee, with the fee paid to the request's fee wallet,
// and preFee, the quoted output before the partner fee, as the word the
// router settles at. It is exported for pulseroute, whose multi-step step 1
// and same-chain swaps on 369 call the sandbox router like any aggregator
// route.
func (m *Market) SwapCall(req *quote.Request, fromToken, toToken common.Address, minOut, preFee *big.Int, receiver common.Address) ([]byte, error) {
	return packSwap(m.router, req.ID, fromToken, req.FromAmount, toToken, minOut, preFee, receiver, req.FeeBps, feeRecipient(req.FeeRecipient))
}

// packBridge builds bridge(...) calldata followed by the quoted pre-fee
// output.
func packBridge(c routerCalls, quoteID string, fromToken common.Address, fromAmount *big.Int, toChainID uint64, toToken [32]byte, minOut, quoted *big.Int, receiver []byte, feeBps int, feeTo common.Address) ([]byte, error) {
	data, err := c.bridge(quote.Ref(quoteID), fromToken, fromAmount, toChainID, toToken, minOut, receiver, uint16(feeBps), feeTo)
	if err == nil {
		data, err = appendQuoted(data, quoted)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: pack bridge: %w", err)
	}
	return data, nil
}

// appendQuoted appends the quoted pre-fee output as the word after the
// ABI-encoded arguments.
func appendQuoted(data []byte, quoted *big.Int) ([]byte, error) {
	data, err := appendUint256(data, quoted)
	if err != nil {
		return nil, fmt.Errorf("quotedAmountOut: %w", err)
	}
	return data, nil
}
