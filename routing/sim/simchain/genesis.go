package simchain

import (
	"fmt"

	"github.com/ethereum/go-ethereum/common"
)

// InitStorage writes one of a contract's storage slots before the first
// transaction, as a genesis allocation (or a deployment's constructor)
// does: no transaction, no log, and the slot reads as value from the
// genesis block on. It is how a contract starts with state of its own (a
// pool's reserves, a factory's pair table) in a way that rebuilding the
// chain reproduces exactly. addr must hold code. Once a transaction has
// been mined it returns ErrNotGenesis.
func (c *Chain) InitStorage(addr common.Address, key, value common.Hash) error {
	switch {
	case c.Head().Number != 0:
		return ErrNotGenesis
	case c.codeAt(addr) == nil:
		return fmt.Errorf("simchain: init storage: %s holds no code", addr.Hex())
	}
	c.setStorage(addr, key, value)
	clear(c.journal) // nothing between transactions is rolled back
	c.journal = c.journal[:0]
	return nil
}
