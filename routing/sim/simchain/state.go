package simchain

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// account is an address the chain has touched: one that sent a
// transaction, had a balance written, or holds code. Untouched addresses
// have no entry; they read as the genesis allocation (see balance).
type account struct {
	nonce uint64
	code  Contract
	// balances holds the balances written so far, by token (the zero
	// address for the native coin). A token missing here still reads as
	// the genesis amount for an account without code.
	balances map[common.Address]*big.Int
	// storage is a contract's own storage (Env.Load, Env.Store); a slot
	// never written reads as zero.
	storage map[common.Hash]common.Hash
}

// allowanceKey names what owner lets spender move of token.
type allowanceKey struct {
	token, owner, spender common.Address
}

// Every write to the state goes through the methods below, which record an
// undo step in the journal first, so that a reverted call can be rolled back
// to a snapshot (the journal's length when it started). The journal is
// emptied when a transaction is mined. Stored *big.Int values are never
// modified in place: a write stores a new value, so that an undo step may
// keep the old one.

func (c *Chain) snapshot() int { return len(c.journal) }

// revertTo undoes every write made since the snapshot, newest first.
func (c *Chain) revertTo(snap int) {
	for i := len(c.journal) - 1; i >= snap; i-- {
		c.journal[i]()
		c.journal[i] = nil
	}
	c.journal = c.journal[:snap]
}

// account returns the entry of addr, creating it (journaled) if needed.
func (c *Chain) account(addr common.Address) *account {
	a := c.accounts[addr]
	if a == nil {
		a = &account{balances: make(map[common.Address]*big.Int)}
		c.accounts[addr] = a
		c.journal = append(c.journal, func() { delete(c.accounts, addr) })
	}
	return a
}

// balance is holder's balance of token (the zero address: the native coin).
// A balance never written reads as the genesis amount, unless the holder is
// a contract or one of the addresses that start empty (genesisBalance). The
// result must not be modified.
func (c *Chain) balance(token, holder common.Address) *big.Int {
	if a := c.accounts[holder]; a != nil {
		if b, ok := a.balances[token]; ok {
			return b
		}
		if a.code != nil {
			return zero
		}
	}
	return c.genesisBalance(token, holder)
}

// genesisBalance is what an account without code holds of token before
// anything touched that balance: the token's genesis amount, except for the
// zero address and the faucet, which start empty.
func (c *Chain) genesisBalance(token, holder common.Address) *big.Int {
	if holder == (common.Address{}) || holder == c.faucet {
		return zero
	}
	if t := c.tokens[token]; t != nil {
		return t.genesis
	}
	return zero
}

func (c *Chain) setBalance(token, holder common.Address, v *big.Int) {
	a := c.account(holder)
	prev, had := a.balances[token]
	c.journal = append(c.journal, func() {
		if had {
			a.balances[token] = prev
		} else {
			delete(a.balances, token)
		}
	})
	a.balances[token] = v
}

// allowance is what owner lets spender move of token. The result must not
// be modified.
func (c *Chain) allowance(token, owner, spender common.Address) *big.Int {
	if v, ok := c.allowances[allowanceKey{token, owner, spender}]; ok {
		return v
	}
	return zero
}

func (c *Chain) setAllowance(token, owner, spender common.Address, v *big.Int) {
	k := allowanceKey{token, owner, spender}
	prev, had := c.allowances[k]
	c.journal = append(c.journal, func() {
		if had {
			c.allowances[k] = prev
		} else {
			delete(c.allowances, k)
		}
	})
	if v.Sign() == 0 {
		delete(c.allowances, k)
	} else {
		c.allowances[k] = v
	}
}

func (c *Chain) nonce(addr common.Address) uint64 {
	if a := c.accounts[addr]; a != nil {
		return a.nonce
	}
	return 0
}

func (c *Chain) setNonce(addr common.Address, n uint64) {
	a := c.account(addr)
	prev := a.nonce
	c.journal = append(c.journal, func() { a.nonce = prev })
	a.nonce = n
}

func (c *Chain) codeAt(addr common.Address) Contract {
	if a := c.accounts[addr]; a != nil {
		return a.code
	}
	return nil
}

func (c *Chain) storageAt(addr common.Address, key common.Hash) common.Hash {
	if a := c.accounts[addr]; a != nil {
		return a.storage[key]
	}
	return common.Hash{}
}

func (c *Chain) setStorage(addr common.Address, key, v common.Hash) {
	a := c.account(addr)
	if a.storage == nil {
		a.storage = make(map[common.Hash]common.Hash)
	}
	prev, had := a.storage[key]
	c.journal = append(c.journal, func() {
		if had {
			a.storage[key] = prev
		} else {
			delete(a.storage, key)
		}
	})
	if v == (common.Hash{}) {
		delete(a.storage, key)
	} else {
		a.storage[key] = v
	}
}

// addLog appends a log to the transaction being executed.
func (c *Chain) addLog(l *types.Log) {
	n := len(c.logs)
	c.journal = append(c.journal, func() { c.logs = c.logs[:n] })
	c.logs = append(c.logs, l)
}
