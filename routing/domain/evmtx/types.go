// Package evmtx holds the values of an EVM chain that more than the
// simulator speaks: a transaction request as wallets and quote answers write
// it (and its parsing), a mined transaction and its receipt, an asset, a
// holder's balance, and the refusals a chain gives before it mines anything.
// The sandbox chain (routing/sim/simchain, routing/sim/sandboxnet) produces
// them and the edge's sandbox endpoints and the balance reader consume them,
// so that neither consumer imports the simulator. The error texts keep the
// simulator's words ("simchain: …", "sandboxnet: …"): answers that quote
// them stay what they were.
package evmtx

import (
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// BlockGasLimit is the most gas one transaction may ask for; a request
// without a gas limit runs under it.
const BlockGasLimit = 30_000_000

// maxUint256 bounds every amount, as the EVM's words do.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// MaxUint256 is 2^256-1, the largest amount a word holds. The value is a
// copy: callers may keep and modify it.
func MaxUint256() *big.Int { return new(big.Int).Set(maxUint256) }

// TxRequest is what a wallet signs: a call to To with Data and native
// Value, under a gas limit. Contract creation is not supported.
type TxRequest struct {
	To   common.Address
	Data []byte
	// Value is the native value sent, in wei; nil is none.
	Value *big.Int
	// GasLimit caps the gas the transaction may use; zero stands for
	// BlockGasLimit, as for a wallet that did not set one.
	GasLimit uint64
}

// Transaction is a mined transaction.
type Transaction struct {
	Hash        common.Hash
	ChainID     uint64
	Nonce       uint64
	From        common.Address
	To          common.Address
	Value       *big.Int
	Data        []byte
	GasLimit    uint64
	GasPrice    *big.Int
	BlockNumber uint64
	BlockHash   common.Hash
	Index       uint
}

// Receipt is the outcome of a mined transaction.
type Receipt struct {
	TxHash      common.Hash
	TxIndex     uint
	BlockNumber uint64
	BlockHash   common.Hash
	BlockTime   uint64
	From        common.Address
	To          common.Address
	// Status is types.ReceiptStatusSuccessful (1) or
	// types.ReceiptStatusFailed (0).
	Status uint64
	// GasUsed is what the transaction paid for, at most its gas limit; a
	// transaction that ran out of gas used all of it.
	GasUsed           uint64
	CumulativeGasUsed uint64
	EffectiveGasPrice *big.Int
	// Logs are the logs of a successful transaction, as go-ethereum's log
	// type with every derived field set; a failed one has none.
	Logs []*types.Log
	// RevertReason says why a failed transaction failed ("out of gas",
	// "ERC20: insufficient allowance", ...); empty on success.
	RevertReason string
}

// Succeeded reports whether the transaction succeeded.
func (r *Receipt) Succeeded() bool { return r.Status == types.ReceiptStatusSuccessful }

// Token is one asset of a chain. The native coin has the zero address.
type Token struct {
	Address  common.Address
	Symbol   string
	Name     string
	Decimals uint8
	// Genesis is what an address without code holds on the sandbox chain
	// before its balance of this asset is first touched.
	Genesis *big.Int
}

// Balance is a holder's balance of one asset of a chain.
type Balance struct {
	Token  Token
	Amount *big.Int
}

// Mined is a mined transaction with its receipt and its chain. Neither is
// modified once mined; both must not be modified.
type Mined struct {
	ChainID     uint64
	Transaction *Transaction
	Receipt     *Receipt
}

// Refusals of a request that cannot be a transaction at all: a chain gives
// them without mining anything or consuming a nonce.
var (
	ErrInvalidSender = errors.New("simchain: invalid sender")
	ErrInvalidValue  = errors.New("simchain: value must be between 0 and 2^256-1")
	// ErrGasLimitTooHigh is a gas limit above BlockGasLimit.
	ErrGasLimitTooHigh = errors.New("simchain: gas limit above the block gas limit")
	// ErrIntrinsicGas is a gas limit below the transaction's intrinsic gas.
	ErrIntrinsicGas = errors.New("simchain: intrinsic gas too low")
	// ErrInsufficientFundsForGas is a sender whose native balance cannot
	// pay gas limit × gas price up front.
	ErrInsufficientFundsForGas = errors.New("simchain: insufficient funds for gas * price")
	// ErrUnknownToken names an asset that is not one of the chain's.
	ErrUnknownToken = errors.New("simchain: unknown token")
	// ErrInvalidFaucetRequest is a faucet top-up that cannot be made (a
	// holder with code, or a balance pushed past 2^256-1).
	ErrInvalidFaucetRequest = errors.New("simchain: invalid faucet request")
)

// MaxFaucetUnits bounds one faucet top-up: at most a billion whole units of
// the asset (1e9 USDC, 1e9 ETH), which no sandbox quote needs more than and
// which keeps every balance far from 2^256.
const MaxFaucetUnits = 1_000_000_000

// Refusals of the chains a service reaches.
var (
	// ErrFaucetLimit is a faucet amount that is not positive or exceeds
	// MaxFaucetUnits whole units.
	ErrFaucetLimit = errors.New("sandboxnet: faucet amount out of bounds")
	// ErrUnknownChain names a chain that is not served: not in the
	// registry, not an EVM chain, or without a node or sandbox chain.
	ErrUnknownChain = errors.New("sandboxnet: not a sandbox chain")
	// ErrUnavailable is a chain that cannot take changes now.
	ErrUnavailable = errors.New("sandboxnet: chain unavailable")
)
