package simchain

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"

	"github.com/swapgate/swapgate/routing/domain/evmtx"
)

// zero is a shared zero; it is never modified.
var zero = new(big.Int)

// maxUint256 bounds every amount, as the EVM's words do.
var maxUint256 = evmtx.MaxUint256()

// Block is a mined block. Each block holds one transaction (the chain
// mines as soon as a transaction arrives, as a development chain does),
// except the genesis block, which holds none.
type Block struct {
	Number     uint64
	Hash       common.Hash
	ParentHash common.Hash
	// Time is the block's timestamp in Unix seconds: the clock's time, but
	// always at least one second after the parent's, as a chain requires.
	Time         uint64
	GasLimit     uint64
	GasUsed      uint64
	Transactions []common.Hash
	// BaseFee is the chain's base fee per gas when the block was mined
	// (eth_getBlockByNumber's baseFeePerGas); it is not part of the hash.
	BaseFee *big.Int
}

// Send executes a transaction request from an account and mines it in a
// block of its own. It fails only for a request that cannot be a
// transaction at all (the errors above); anything a chain reverts yields a
// mined receipt with Status 0 and a RevertReason, with the nonce consumed,
// gas paid and every other change of the transaction rolled back.
//
// Order of events, as on a chain: the sender buys GasLimit × gas price of
// native coin up front and its nonce is incremented; the value moves to To
// (too little left for it: "insufficient funds for transfer") and To's
// code, if any, runs; afterwards the gas not used is refunded. The fee paid
// (gas used × gas price) is burned. Data sent to an account without code is
// accepted and does nothing, as on a chain.
//
// One departure from a node: a node refuses a transaction whose sender
// cannot pay gas and value together, while Send refuses only one whose
// sender cannot buy its gas, and mines the rest as failed. A client that
// sends more than it holds thus gets a hash and a failed receipt, as for
// every other failure, and the service sees the failure as it sees others.
func (c *Chain) Send(from common.Address, req TxRequest) (*Receipt, error) {
	switch {
	case from == (common.Address{}):
		return nil, fmt.Errorf("%w: the zero address has no key", ErrInvalidSender)
	case from == c.faucet:
		return nil, fmt.Errorf("%w: the faucet account sends only faucet transactions", ErrInvalidSender)
	case c.codeAt(from) != nil:
		return nil, fmt.Errorf("%w: %s is a contract", ErrInvalidSender, from.Hex())
	}
	value := req.Value
	if value == nil {
		value = zero
	}
	if value.Sign() < 0 || value.Cmp(maxUint256) > 0 {
		return nil, ErrInvalidValue
	}
	limit := req.GasLimit
	if limit == 0 {
		limit = BlockGasLimit
	}
	if limit > BlockGasLimit {
		return nil, fmt.Errorf("%w: %d > %d", ErrGasLimitTooHigh, limit, BlockGasLimit)
	}
	if need := IntrinsicGas(req.Data); limit < need {
		return nil, fmt.Errorf("%w: gas limit %d, need %d", ErrIntrinsicGas, limit, need)
	}
	price := c.gasPrice
	if c.baseFee.Cmp(price) > 0 {
		price = c.baseFee // a base fee raised above the chain's gas price
	}
	prepay := new(big.Int).Mul(new(big.Int).SetUint64(limit), price)
	if have := c.balance(common.Address{}, from); have.Cmp(prepay) < 0 {
		return nil, fmt.Errorf("%w: have %s wei, need %s", ErrInsufficientFundsForGas, have, prepay)
	}
	return c.apply(from, req.To, value, req.Data, limit, price, nil), nil
}

// apply executes and mines a transaction that has passed Send's checks (or
// a faucet transaction, with a zero gas price and mint crediting the
// sender with the value before it moves).
func (c *Chain) apply(from, to common.Address, value *big.Int, data []byte, limit uint64, price, mint *big.Int) *Receipt {
	return c.applyTx(from, to, value, data, limit, price, mint, nil)
}

// applyTx is apply for a signed transaction too (signed non-nil): it is
// mined under its own hash and nonce, and remembered for the node's reads.
func (c *Chain) applyTx(from, to common.Address, value *big.Int, data []byte, limit uint64, price, mint *big.Int, signed *types.Transaction) *Receipt {
	head := c.Head()
	c.exec = blockContext{number: head.Number + 1, time: c.nextTime(head)}
	tx := &Transaction{
		ChainID:  c.id,
		Nonce:    c.nonce(from),
		From:     from,
		To:       to,
		Value:    new(big.Int).Set(value),
		Data:     bytes.Clone(data),
		GasLimit: limit,
		GasPrice: new(big.Int).Set(price),
	}
	tx.Hash = txHash(tx)
	if signed != nil {
		tx.Hash = signed.Hash()
		c.signed[tx.Hash] = signed
	}

	prepay := new(big.Int).Mul(new(big.Int).SetUint64(limit), price)
	c.setNonce(from, tx.Nonce+1)
	c.setBalance(common.Address{}, from, new(big.Int).Sub(c.balance(common.Address{}, from), prepay))

	gas := &meter{limit: limit}
	_ = gas.use(IntrinsicGas(data)) // Send checked the limit covers it
	snap := c.snapshot()
	if mint != nil {
		c.setBalance(common.Address{}, from, new(big.Int).Add(c.balance(common.Address{}, from), mint))
	}
	_, err := c.call(from, to, value, data, from, gas, 0)
	if err == nil && gas.out {
		err = ErrOutOfGas // a contract swallowed running out of gas
	}
	if err != nil {
		c.revertTo(snap)
		if errors.Is(err, ErrOutOfGas) {
			gas.used = gas.limit // however the contract came to report it
		}
	}
	refund := new(big.Int).Mul(new(big.Int).SetUint64(gas.left()), price)
	c.setBalance(common.Address{}, from, new(big.Int).Add(c.balance(common.Address{}, from), refund))

	r := &Receipt{
		TxHash:            tx.Hash,
		From:              from,
		To:                to,
		Status:            types.ReceiptStatusSuccessful,
		GasUsed:           gas.used,
		CumulativeGasUsed: gas.used,
		EffectiveGasPrice: new(big.Int).Set(price),
	}
	if err != nil {
		r.Status = types.ReceiptStatusFailed
		r.RevertReason = revertReason(err)
	} else {
		r.Logs = c.logs
	}
	c.mine(tx, r)
	return r
}

// revertReason is the reason a receipt gives for a failure.
func revertReason(err error) string {
	var re *RevertError
	if errors.As(err, &re) {
		if re.Reason == "" {
			return ErrReverted.Error()
		}
		return re.Reason
	}
	return err.Error()
}

// nextTime is the timestamp of the block after head.
func (c *Chain) nextTime(head *Block) uint64 {
	if t := clockSeconds(c.clock); t > head.Time {
		return t
	}
	return head.Time + 1
}

// clockSeconds is the clock's time in Unix seconds, zero before 1970.
func clockSeconds(clock func() time.Time) uint64 {
	return uint64(max(clock().Unix(), 0))
}

// mine seals the transaction and its receipt in a new block and forgets the
// journal: what is mined is never rolled back.
func (c *Chain) mine(tx *Transaction, r *Receipt) {
	head := c.Head()
	b := newBlock(c.id, c.exec.number, head.Hash, c.exec.time, []common.Hash{tx.Hash}, r.GasUsed)
	tx.BlockNumber, tx.BlockHash, tx.Index = b.Number, b.Hash, 0
	r.BlockNumber, r.BlockHash, r.BlockTime, r.TxIndex = b.Number, b.Hash, b.Time, 0
	for i, l := range r.Logs {
		l.BlockNumber, l.BlockHash, l.BlockTimestamp = b.Number, b.Hash, b.Time
		l.TxHash, l.TxIndex, l.Index = tx.Hash, 0, uint(i)
	}
	b.BaseFee = new(big.Int).Set(c.baseFee)
	c.blocks = append(c.blocks, b)
	c.blockNumbers[b.Hash] = b.Number
	c.txs[tx.Hash] = tx
	c.receipts[tx.Hash] = r
	clear(c.journal)
	c.journal = c.journal[:0]
	c.logs = nil
}

// call runs a call from one account to another: the value moves, then the
// callee's code, if any, runs. When the call fails, everything it changed is
// rolled back and the failure (ErrOutOfGas or a *RevertError) is returned. A
// contract that panics is treated as one that reverted, so that a bug in
// one contract cannot leave the chain half-changed.
func (c *Chain) call(from, to common.Address, value *big.Int, data []byte, origin common.Address, gas *meter, depth int) (out []byte, err error) {
	snap := c.snapshot()
	defer func() {
		if p := recover(); p != nil {
			err = Revertf("contract %s panicked: %v", to.Hex(), p)
		}
		if err != nil {
			err = asFailure(err)
			c.revertTo(snap)
			out = nil
		}
	}()
	if depth > MaxCallDepth {
		return nil, Revert("call depth exceeded")
	}
	if value.Sign() > 0 {
		have := c.balance(common.Address{}, from)
		if have.Cmp(value) < 0 {
			return nil, Revert("insufficient funds for transfer")
		}
		c.setBalance(common.Address{}, from, new(big.Int).Sub(have, value))
		c.setBalance(common.Address{}, to, new(big.Int).Add(c.balance(common.Address{}, to), value))
	}
	code := c.codeAt(to)
	if code == nil {
		return nil, nil
	}
	if err := gas.use(ContractCallGas); err != nil {
		return nil, err
	}
	env := &Env{chain: c, self: to, origin: origin, gas: gas, depth: depth}
	return code.Execute(env, from, new(big.Int).Set(value), bytes.Clone(data))
}

// Call runs a read-only call against the head block, as eth_call does: from
// calls to with data under BlockGasLimit, and whatever the call changed is
// discarded. It returns the return data, or the failure: a *RevertError
// (errors.Is ErrReverted) or ErrOutOfGas. A call to an account without code
// returns nothing.
func (c *Chain) Call(from, to common.Address, data []byte) ([]byte, error) {
	head := c.Head()
	c.exec = blockContext{number: head.Number, time: head.Time}
	snap := c.snapshot()
	defer func() {
		c.revertTo(snap)
		c.logs = nil
	}()
	gas := &meter{limit: BlockGasLimit}
	if err := gas.use(IntrinsicGas(data)); err != nil {
		return nil, err
	}
	out, err := c.call(from, to, zero, data, from, gas, 0)
	if err == nil && gas.out {
		err = ErrOutOfGas
	}
	if err != nil {
		return nil, err
	}
	return bytes.Clone(out), nil
}

// txHash is keccak256 of the RLP list [chainId, from, nonce, to, value,
// data, gasLimit, gasPrice]: unique because no two transactions share a
// chain, sender and nonce, and the same for the same transaction every time.
func txHash(tx *Transaction) common.Hash {
	enc, err := rlp.EncodeToBytes([]any{tx.ChainID, tx.From, tx.Nonce, tx.To, tx.Value, tx.Data, tx.GasLimit, tx.GasPrice})
	if err != nil {
		panic(fmt.Sprintf("simchain: encode transaction: %v", err)) // values are checked non-negative
	}
	return crypto.Keccak256Hash(enc)
}

// newBlock builds a block; its hash is keccak256 of the RLP list [chainId,
// number, parentHash, time, gasUsed, transaction hashes].
func newBlock(chainID, number uint64, parent common.Hash, time uint64, txs []common.Hash, gasUsed uint64) *Block {
	if txs == nil {
		txs = []common.Hash{}
	}
	enc, err := rlp.EncodeToBytes([]any{chainID, number, parent, time, gasUsed, txs})
	if err != nil {
		panic(fmt.Sprintf("simchain: encode block: %v", err))
	}
	return &Block{
		Number:       number,
		Hash:         crypto.Keccak256Hash(enc),
		ParentHash:   parent,
		Time:         time,
		GasLimit:     BlockGasLimit,
		GasUsed:      gasUsed,
		Transactions: txs,
	}
}
