package simchain

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Signed transactions and the fee market: what makes the sandbox chain a
// node a wallet can sign for.
//
// SendRaw takes a signed transaction as eth_sendRawTransaction does (the
// binary encoding: legacy, EIP-2930 or EIP-1559, decoded by go-ethereum),
// recovers its sender from the signature with the chain's latest signer
// (EIP-155 enforced: an unprotected legacy transaction or another chain's
// is refused) and checks it as go-ethereum's transaction pool does, with
// its words: "nonce too low", "insufficient funds for gas * price +
// value" (gas limit × max fee per gas, plus the value), "intrinsic gas
// too low", "exceeds block gas limit", "invalid sender", "already known",
// "replacement transaction underpriced". An accepted transaction joins its
// sender's queue; a queued transaction is mined, each in a block of its
// own, as soon as it carries its sender's next nonce and its max fee per
// gas (a legacy or EIP-2930 transaction's gas price) reaches the base fee.
// So a future nonce waits until the gap fills, and a transaction whose max
// fee is below the base fee waits until SetBaseFee lowers it or a
// replacement (same sender and nonce, max fee and priority fee both at
// least 10% higher, as go-ethereum's default price bump) takes its place.
// A mined signed transaction pays the effective gas price min(max fee,
// base fee + priority fee), keeps its own hash, and is executed exactly as
// Send executes a request. A queued transaction its sender can no longer
// pay for when its turn comes is dropped, as a pool drops it.
//
// The chain's base fee is fixed (Config.BaseFee) until SetBaseFee moves
// it; every block records the base fee it was mined under. Access lists
// are accepted and cost no gas.

// Pending is a signed transaction waiting in the chain's queue.
type Pending struct {
	Tx   *types.Transaction
	From common.Address
}

// MaxQueuedPerAccount bounds what one sender may have waiting, and
// MaxQueued what the chain holds waiting in all; a transaction with its
// sender's next nonce is always taken, since it fills the gap.
const (
	MaxQueuedPerAccount = 64
	MaxQueued           = 4096
)

// PriceBump is the least rise, in percent, of both fees of a replacement.
const PriceBump = 10

// Refusals of a signed transaction, in a node's words (go-ethereum's
// transaction pool's), so that a wallet shows what it would show for a
// real chain. SendRaw wraps them with the figures.
var (
	ErrTxDecode           = errors.New("invalid transaction")
	ErrTxTypeNotSupported = errors.New("transaction type not supported")
	ErrContractCreation   = errors.New("contract creation is not supported by the sandbox chain")
	ErrUnprotectedTx      = errors.New("only replay-protected (EIP-155) transactions allowed over RPC")
	ErrTxChainID          = errors.New("invalid chain id for signer")
	ErrTxSender           = errors.New("invalid sender")
	ErrTxGasLimit         = errors.New("exceeds block gas limit")
	ErrTxIntrinsicGas     = errors.New("intrinsic gas too low")
	ErrTipAboveFeeCap     = errors.New("max priority fee per gas higher than max fee per gas")
	ErrAlreadyKnown       = errors.New("already known")
	ErrNonceTooLow        = errors.New("nonce too low")
	ErrInsufficientFunds  = errors.New("insufficient funds for gas * price + value")
	ErrReplaceUnderpriced = errors.New("replacement transaction underpriced")
	ErrTxPoolFull         = errors.New("txpool is full")
	ErrBaseFee            = errors.New("the base fee must be between 0 and 2^64-1 wei")
)

// BlockByHash is the block with that hash.
func (c *Chain) BlockByHash(h common.Hash) (*Block, bool) {
	n, ok := c.blockNumbers[h]
	if !ok {
		return nil, false
	}
	return c.blocks[n], true
}

// BaseFee is the chain's base fee per gas, in wei.
func (c *Chain) BaseFee() *big.Int { return new(big.Int).Set(c.baseFee) }

// SuggestedTip is the priority fee per gas the chain suggests
// (eth_maxPriorityFeePerGas): its gas price less its genesis base fee.
func (c *Chain) SuggestedTip() *big.Int { return new(big.Int).Set(c.tip) }

// SignedTransaction is the signed transaction mined under hash, if the
// transaction was a signed one (a Send or a faucet top-up is not).
func (c *Chain) SignedTransaction(hash common.Hash) (*types.Transaction, bool) {
	tx, ok := c.signed[hash]
	return tx, ok
}

// Queued is the signed transaction waiting under hash.
func (c *Chain) Queued(hash common.Hash) (Pending, bool) {
	p, ok := c.waiting[hash]
	if !ok {
		return Pending{}, false
	}
	return *p, true
}

// PendingNonce is the nonce of addr's next transaction counting the ones
// it has waiting without a gap (eth_getTransactionCount "pending").
func (c *Chain) PendingNonce(addr common.Address) uint64 {
	n := c.nonce(addr)
	for c.pool[addr][n] != nil {
		n++
	}
	return n
}

// SetBaseFee moves the chain's base fee, between transactions, and mines
// what waited for it to fall; it returns their receipts in order.
func (c *Chain) SetBaseFee(fee *big.Int) ([]*Receipt, error) {
	if fee == nil || fee.Sign() < 0 || !fee.IsUint64() {
		return nil, ErrBaseFee
	}
	c.baseFee = new(big.Int).Set(fee)
	return c.promote(), nil
}

// SendRaw takes a signed transaction (see the top of this file). It
// returns the transaction's hash and the receipts of every transaction it
// got mined, itself and those it unblocked, in order; an error is a
// refusal, and then nothing changed.
func (c *Chain) SendRaw(raw []byte) (common.Hash, []*Receipt, error) {
	p, err := c.checkRaw(raw)
	if err != nil {
		return common.Hash{}, nil, err
	}
	tx, from := p.Tx, p.From
	q := c.pool[from]
	if old := q[tx.Nonce()]; old != nil {
		if !bumped(tx.GasFeeCap(), old.Tx.GasFeeCap()) || !bumped(tx.GasTipCap(), old.Tx.GasTipCap()) {
			return common.Hash{}, nil, fmt.Errorf("%w: both fees must rise by at least %d%% over %s's (max fee %s, priority fee %s wei)",
				ErrReplaceUnderpriced, PriceBump, old.Tx.Hash().Hex(), old.Tx.GasFeeCap(), old.Tx.GasTipCap())
		}
		delete(c.waiting, old.Tx.Hash())
	} else if next := tx.Nonce() == c.nonce(from); !next && len(q) >= MaxQueuedPerAccount {
		return common.Hash{}, nil, fmt.Errorf("%w: %s has %d transactions waiting", ErrTxPoolFull, from.Hex(), len(q))
	} else if !next && len(c.waiting) >= MaxQueued {
		return common.Hash{}, nil, fmt.Errorf("%w: the chain has %d transactions waiting", ErrTxPoolFull, len(c.waiting))
	}
	if q == nil {
		q = make(map[uint64]*Pending)
		c.pool[from] = q
	}
	q[tx.Nonce()] = p
	c.waiting[tx.Hash()] = p
	return tx.Hash(), c.promote(), nil
}

// bumped reports whether next is at least PriceBump percent above prev.
func bumped(next, prev *big.Int) bool {
	want := new(big.Int).Mul(prev, big.NewInt(100+PriceBump))
	return new(big.Int).Mul(next, big.NewInt(100)).Cmp(want) >= 0
}

// checkRaw decodes a signed transaction and checks it as a pool does
// before queueing it.
func (c *Chain) checkRaw(raw []byte) (*Pending, error) {
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTxDecode, err)
	}
	switch tx.Type() {
	case types.LegacyTxType, types.AccessListTxType, types.DynamicFeeTxType:
	default:
		return nil, fmt.Errorf("%w: type %d", ErrTxTypeNotSupported, tx.Type())
	}
	if tx.Type() == types.LegacyTxType && !tx.Protected() {
		return nil, ErrUnprotectedTx
	}
	if id := tx.ChainId(); id == nil || !id.IsUint64() || id.Uint64() != c.id {
		return nil, fmt.Errorf("%w: have %v want %d", ErrTxChainID, tx.ChainId(), c.id)
	}
	from, err := types.LatestSignerForChainID(new(big.Int).SetUint64(c.id)).Sender(tx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTxSender, err)
	}
	switch {
	case from == (common.Address{}) || from == c.faucet || c.codeAt(from) != nil:
		return nil, fmt.Errorf("%w: %s cannot send transactions", ErrTxSender, from.Hex())
	case tx.To() == nil:
		return nil, ErrContractCreation
	case tx.Gas() > BlockGasLimit:
		return nil, fmt.Errorf("%w: gas %d, limit %d", ErrTxGasLimit, tx.Gas(), BlockGasLimit)
	case tx.Gas() < IntrinsicGas(tx.Data()):
		return nil, fmt.Errorf("%w: gas %d, minimum needed %d", ErrTxIntrinsicGas, tx.Gas(), IntrinsicGas(tx.Data()))
	case tx.GasFeeCap().Cmp(tx.GasTipCap()) < 0:
		return nil, fmt.Errorf("%w: maxPriorityFeePerGas: %s, maxFeePerGas: %s", ErrTipAboveFeeCap, tx.GasTipCap(), tx.GasFeeCap())
	case c.waiting[tx.Hash()] != nil || c.txs[tx.Hash()] != nil:
		return nil, ErrAlreadyKnown
	}
	if state := c.nonce(from); tx.Nonce() < state {
		return nil, fmt.Errorf("%w: address %s, tx: %d state: %d", ErrNonceTooLow, from.Hex(), tx.Nonce(), state)
	}
	cost := txCost(tx)
	if have := c.balance(common.Address{}, from); have.Cmp(cost) < 0 {
		return nil, fmt.Errorf("%w: balance %s, tx cost %s, overshot %s", ErrInsufficientFunds, have, cost, new(big.Int).Sub(cost, have))
	}
	return &Pending{Tx: tx, From: from}, nil
}

// txCost is what a sender must hold for a transaction: gas limit × max
// fee per gas, plus the value.
func txCost(tx *types.Transaction) *big.Int {
	cost := new(big.Int).Mul(new(big.Int).SetUint64(tx.Gas()), tx.GasFeeCap())
	return cost.Add(cost, tx.Value())
}

// promote mines every queued transaction that may be mined, senders in
// address order and each sender's in nonce order, until none may; it
// drops what can never be mined (a nonce already used, a cost its sender
// no longer holds). It returns the receipts in order.
func (c *Chain) promote() []*Receipt {
	var out []*Receipt
	for progress := true; progress; {
		progress = false
		senders := make([]common.Address, 0, len(c.pool))
		for a := range c.pool {
			senders = append(senders, a)
		}
		slices.SortFunc(senders, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
		for _, from := range senders {
			q := c.pool[from]
			n := c.nonce(from)
			for nonce, p := range q {
				if nonce < n {
					c.drop(from, nonce)
				} else if nonce == n && txCost(p.Tx).Cmp(c.balance(common.Address{}, from)) > 0 {
					c.drop(from, nonce)
				}
			}
			p := q[n]
			if p == nil || p.Tx.GasFeeCap().Cmp(c.baseFee) < 0 {
				continue
			}
			c.drop(from, n)
			price := new(big.Int).Add(c.baseFee, p.Tx.GasTipCap())
			if price.Cmp(p.Tx.GasFeeCap()) > 0 {
				price.Set(p.Tx.GasFeeCap())
			}
			out = append(out, c.applyTx(from, *p.Tx.To(), p.Tx.Value(), p.Tx.Data(), p.Tx.Gas(), price, nil, p.Tx))
			progress = true
		}
	}
	return out
}

// drop removes a queued transaction.
func (c *Chain) drop(from common.Address, nonce uint64) {
	q := c.pool[from]
	if p := q[nonce]; p != nil {
		delete(c.waiting, p.Tx.Hash())
		delete(q, nonce)
	}
	if len(q) == 0 {
		delete(c.pool, from)
	}
}

// Promote mines what may be mined of the queue; the owner calls it after
// a change that may unblock a queued transaction (a Send that used a
// nonce, a top-up), so that every change leaves nothing minable waiting.
func (c *Chain) Promote() []*Receipt { return c.promote() }

// Simulate runs a call against the head block as eth_call and
// eth_estimateGas do: from calls to with value and data under gas (0: the
// block gas limit), and whatever the call changed is discarded. It returns
// the return data and the gas the call would use as a transaction, or the
// failure: a *RevertError (errors.Is ErrReverted) or ErrOutOfGas.
func (c *Chain) Simulate(from, to common.Address, value *big.Int, data []byte, gas uint64) ([]byte, uint64, error) {
	if value == nil {
		value = zero
	}
	if value.Sign() < 0 || value.Cmp(maxUint256) > 0 {
		return nil, 0, ErrInvalidValue
	}
	if gas == 0 || gas > BlockGasLimit {
		gas = BlockGasLimit
	}
	head := c.Head()
	c.exec = blockContext{number: head.Number, time: head.Time}
	snap := c.snapshot()
	defer func() {
		c.revertTo(snap)
		c.logs = nil
	}()
	m := &meter{limit: gas}
	if err := m.use(IntrinsicGas(data)); err != nil {
		return nil, m.used, err
	}
	out, err := c.call(from, to, value, data, from, m, 0)
	if err == nil && m.out {
		err = ErrOutOfGas
	}
	if err != nil {
		return nil, m.used, err
	}
	return bytes.Clone(out), m.used, nil
}
