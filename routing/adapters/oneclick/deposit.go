package oneclick

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// Gas limits of deposit transactions. A native transfer to an externally
// owned deposit address costs exactly 21000; an ERC-20 transfer costs 35k to
// 65k depending on the token and on whether the deposit address already
// holds a balance, so the limit leaves a margin over the worst case rather
// than letting a wallet's transaction revert.
const (
	nativeTransferGas = 21_000
	erc20TransferGas  = 100_000
)

// erc20ABI is the one ERC-20 method a deposit needs.
const erc20ABI = `[{"type":"function","name":"transfer","stateMutability":"nonpayable",
"inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],
"outputs":[{"name":"","type":"bool"}]}]`

// erc20 is parsed once per process; the ABI value is read-only after
// parsing, so sharing it is safe.
var erc20 = mustABI(erc20ABI)

func mustABI(def string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(def))
	if err != nil {
		panic(fmt.Sprintf("oneclick: erc20 abi: %v", err))
	}
	return a
}

// depositTx builds the transaction that funds a 1Click deposit address:
// a plain value transfer for a native EVM source, an ERC-20
// transfer(depositAddress, amount) for a token (no approval needed, so the
// route's ApprovalAddress stays empty). Non-EVM sources get no transaction:
// the client's own wallet sends to the deposit address.
func depositTx(req *quote.Request, depositAddress string, amount *big.Int) (*quote.TxRequest, error) {
	if !isEVM(req.From) {
		return nil, nil
	}
	if !common.IsHexAddress(depositAddress) {
		return nil, upstream.BadAnswer("deposit address %q is not an EVM address", depositAddress)
	}
	to := common.HexToAddress(depositAddress)
	if isNative(req.From, req.FromToken) {
		return &quote.TxRequest{To: to.Hex(), From: req.FromAddress, Value: new(big.Int).Set(amount),
			ChainID: req.From.ID, GasLimit: nativeTransferGas}, nil
	}
	data, err := erc20.Pack("transfer", to, amount)
	if err != nil {
		return nil, upstream.BadAnswer("pack transfer: %w", err)
	}
	return &quote.TxRequest{To: req.FromToken.Address, From: req.FromAddress, Data: data,
		Value: new(big.Int), ChainID: req.From.ID, GasLimit: erc20TransferGas}, nil
}
