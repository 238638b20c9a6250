package simchain

import "github.com/swapgate/swapgate/routing/domain/evmtx"

// The values the sandbox chain takes and gives are the chain-neutral ones
// of package evmtx, so that the edge and the balance reader speak them
// without importing the simulator; these names keep the simulator's own
// code reading as it did.
type (
	TxRequest    = evmtx.TxRequest
	Transaction  = evmtx.Transaction
	Receipt      = evmtx.Receipt
	Token        = evmtx.Token
	RequestError = evmtx.RequestError
)

// Refusals of requests that cannot be a transaction or a top-up at all:
// Send and Faucet return them (wrapped with details) without mining
// anything or consuming a nonce, as a node refuses such a transaction
// before it reaches a block.
var (
	ErrInvalidSender           = evmtx.ErrInvalidSender
	ErrInvalidValue            = evmtx.ErrInvalidValue
	ErrGasLimitTooHigh         = evmtx.ErrGasLimitTooHigh
	ErrIntrinsicGas            = evmtx.ErrIntrinsicGas
	ErrInsufficientFundsForGas = evmtx.ErrInsufficientFundsForGas
	ErrUnknownToken            = evmtx.ErrUnknownToken
	ErrInvalidFaucetRequest    = evmtx.ErrInvalidFaucetRequest
)

// ParseTxRequest and ParseQuantity read a transaction request's fields (see
// package evmtx).
var (
	ParseTxRequest = evmtx.ParseTxRequest
	ParseQuantity  = evmtx.ParseQuantity
)
