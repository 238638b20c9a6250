package simchain

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The genesis allocation: what every address without code holds of each
// asset of its chain before anything touched that balance, in whole units
// at the asset's decimals.
const (
	// GenesisNativeUnits is the native coin allocation: 100 coins (100 ETH
	// on Ethereum, 100 PLS on PulseChain), ample for gas and native inputs.
	GenesisNativeUnits = 100
	// GenesisTokenUnits is the allocation of every registry token of the
	// chain: 1,000 tokens (1,000 USDC, 1,000 WETH, ...).
	GenesisTokenUnits = 1_000
)

// faucetSeed is hashed into the faucet's address.
const faucetSeed = "swapgate-sandbox-faucet"

// FaucetAddress is the account that sends faucet transactions on every
// sandbox chain: the last 20 bytes of keccak256("swapgate-sandbox-faucet").
// It starts empty, holds nothing between transactions, is a minter of every
// token, and Send refuses transactions from it.
func FaucetAddress() common.Address {
	return common.BytesToAddress(crypto.Keccak256([]byte(faucetSeed))[12:])
}

// Config is what a chain is built from.
type Config struct {
	// Registry gives the chain and its tokens.
	Registry *registry.Registry
	// ChainID names an EVM chain of the registry.
	ChainID uint64
	// Clock stamps blocks; a fixed or stepping clock makes the chain
	// reproducible.
	Clock func() time.Time
	// GasPrice is the price of a unit of gas in wei (the native coin's
	// base units), the same for every transaction; it may be zero.
	GasPrice *big.Int
	// GenesisNative, when set, replaces the native coin's genesis
	// allocation of GenesisNativeUnits whole coins, in wei: on a chain whose
	// coin is worth little and whose gas is dear, 100 coins may not pay for
	// one transaction. It must be positive.
	GenesisNative *big.Int
	// BaseFee is the chain's base fee per gas at genesis, in wei (nil: the
	// gas price, with no tip). It must not exceed GasPrice: the difference
	// is the priority fee the chain suggests (SuggestedTip). Signed
	// transactions pay it as EIP-1559 says (see SendRaw); SetBaseFee moves
	// it.
	BaseFee *big.Int
}

// tokenState is an asset's fixed facts and its minters.
type tokenState struct {
	symbol, name string
	decimals     uint8
	genesis      *big.Int
	minters      map[common.Address]bool
	// approvalReset is the registry's flag: approve refuses to move a
	// non-zero allowance to another non-zero one (see ERC20).
	approvalReset bool
}

// blockContext is the block a call executes in.
type blockContext struct {
	number, time uint64
}

// Errors of chain set-up.
var (
	// ErrNotEVM is returned by New for a chain the registry does not list
	// as an EVM chain.
	ErrNotEVM = errors.New("simchain: not an EVM chain of the registry")
	// ErrAccountInUse is returned by Deploy for an address that has sent
	// transactions or holds written balances without code: code may go only
	// to a fresh address or replace other code.
	ErrAccountInUse = errors.New("simchain: account already in use without code")
)

// Chain is one simulated EVM chain. It is not safe for concurrent use: its
// owner serialises every call. The values it returns (blocks, transactions,
// receipts, logs) are never modified after they are mined, so they may be
// read from other goroutines, but must not be modified.
type Chain struct {
	id       uint64
	gasPrice *big.Int
	clock    func() time.Time
	faucet   common.Address

	tokens    map[common.Address]*tokenState
	tokenList []common.Address // native first, then in registry order

	accounts   map[common.Address]*account
	allowances map[allowanceKey]*big.Int
	journal    []func()
	logs       []*types.Log // the logs of the transaction being executed
	exec       blockContext

	blocks   []*Block
	txs      map[common.Hash]*Transaction
	receipts map[common.Hash]*Receipt

	// The fee market and the signed transactions (signed.go).
	baseFee, tip *big.Int
	pool         map[common.Address]map[uint64]*Pending // waiting, by sender and nonce
	waiting      map[common.Hash]*Pending               // the same, by hash
	signed       map[common.Hash]*types.Transaction     // every signed transaction mined, by hash
	blockNumbers map[common.Hash]uint64                 // every block\'s number, by hash
}

// New builds the chain with its genesis block, stamped by the clock: every
// registry token of the chain is deployed at its address with the ERC20
// code, and every address starts with the genesis allocation.
func New(cfg Config) (*Chain, error) {
	if cfg.Registry == nil {
		return nil, errors.New("simchain: no registry")
	}
	if cfg.Clock == nil {
		return nil, errors.New("simchain: no clock")
	}
	if cfg.GasPrice == nil || cfg.GasPrice.Sign() < 0 {
		return nil, errors.New("simchain: the gas price must be zero or more")
	}
	if cfg.GenesisNative != nil && (cfg.GenesisNative.Sign() <= 0 || cfg.GenesisNative.Cmp(maxUint256) > 0) {
		return nil, errors.New("simchain: the native genesis allocation must be between 1 and 2^256-1")
	}
	rc, ok := cfg.Registry.Chain(cfg.ChainID)
	if !ok || rc.ChainType != registry.EVM {
		return nil, fmt.Errorf("%w: %d", ErrNotEVM, cfg.ChainID)
	}
	baseFee := cfg.GasPrice
	if cfg.BaseFee != nil {
		if cfg.BaseFee.Sign() < 0 || cfg.BaseFee.Cmp(cfg.GasPrice) > 0 {
			return nil, errors.New("simchain: the base fee must be between zero and the gas price")
		}
		baseFee = cfg.BaseFee
	}
	c := &Chain{
		baseFee:      new(big.Int).Set(baseFee),
		tip:          new(big.Int).Sub(cfg.GasPrice, baseFee),
		pool:         make(map[common.Address]map[uint64]*Pending),
		waiting:      make(map[common.Hash]*Pending),
		signed:       make(map[common.Hash]*types.Transaction),
		blockNumbers: make(map[common.Hash]uint64),
		id:           cfg.ChainID,
		gasPrice:     new(big.Int).Set(cfg.GasPrice),
		clock:        cfg.Clock,
		faucet:       FaucetAddress(),
		tokens:       make(map[common.Address]*tokenState),
		accounts:     make(map[common.Address]*account),
		allowances:   make(map[allowanceKey]*big.Int),
		txs:          make(map[common.Hash]*Transaction),
		receipts:     make(map[common.Hash]*Receipt),
	}
	for _, t := range cfg.Registry.Tokens(cfg.ChainID) {
		var addr common.Address
		units := int64(GenesisNativeUnits)
		if !t.IsNative() {
			if !common.IsHexAddress(t.Address) {
				return nil, fmt.Errorf("simchain: token %s on chain %d has no EVM address: %q", t.Symbol, c.id, t.Address)
			}
			addr = common.HexToAddress(t.Address)
			units = GenesisTokenUnits
		}
		if _, dup := c.tokens[addr]; dup {
			return nil, fmt.Errorf("simchain: token %s listed twice on chain %d", addr.Hex(), c.id)
		}
		genesis := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Decimals)), nil)
		genesis.Mul(genesis, big.NewInt(units))
		if t.IsNative() && cfg.GenesisNative != nil {
			genesis.Set(cfg.GenesisNative)
		}
		c.tokens[addr] = &tokenState{
			symbol:   t.Symbol,
			name:     t.Name,
			decimals: t.Decimals,
			genesis:  genesis,
			minters:  map[common.Address]bool{c.faucet: true},
			// The registry marks the tokens whose approve must go through
			// zero (USDT on Ethereum); their sandbox copies revert alike.
			approvalReset: t.ApprovalReset,
		}
		c.tokenList = append(c.tokenList, addr)
		if !t.IsNative() {
			c.accounts[addr] = &account{code: ERC20{}, balances: make(map[common.Address]*big.Int)}
		}
	}
	if _, ok := c.tokens[common.Address{}]; !ok {
		return nil, fmt.Errorf("simchain: chain %d has no native coin in the registry", c.id)
	}
	c.blocks = []*Block{newBlock(c.id, 0, common.Hash{}, clockSeconds(c.clock), nil, 0)}
	c.blocks[0].BaseFee = new(big.Int).Set(c.baseFee)
	c.blockNumbers[c.blocks[0].Hash] = 0
	return c, nil
}

// ChainID is the chain's id.
func (c *Chain) ChainID() uint64 { return c.id }

// GasPrice is the price of a unit of gas, in wei.
func (c *Chain) GasPrice() *big.Int { return new(big.Int).Set(c.gasPrice) }

// Tokens lists the chain's assets, the native coin first.
func (c *Chain) Tokens() []Token {
	out := make([]Token, 0, len(c.tokenList))
	for _, a := range c.tokenList {
		t, _ := c.Token(a)
		out = append(out, t)
	}
	return out
}

// Token describes one asset of the chain (the zero address: the native
// coin).
func (c *Chain) Token(addr common.Address) (Token, bool) {
	t := c.tokens[addr]
	if t == nil {
		return Token{}, false
	}
	return Token{Address: addr, Symbol: t.symbol, Name: t.name, Decimals: t.decimals, Genesis: new(big.Int).Set(t.genesis)}, true
}

// Balance is holder's balance of token (the zero address: the native coin),
// zero for an unknown token.
func (c *Chain) Balance(token, holder common.Address) *big.Int {
	return new(big.Int).Set(c.balance(token, holder))
}

// Allowance is what owner lets spender move of token.
func (c *Chain) Allowance(token, owner, spender common.Address) *big.Int {
	return new(big.Int).Set(c.allowance(token, owner, spender))
}

// Nonce is the number of transactions addr has sent, which is the nonce of
// its next one.
func (c *Chain) Nonce(addr common.Address) uint64 { return c.nonce(addr) }

// Storage is the value of a contract's storage slot, as eth_getStorageAt
// reads it: zero if never written.
func (c *Chain) Storage(addr common.Address, key common.Hash) common.Hash {
	return c.storageAt(addr, key)
}

// Code is the contract deployed at addr, nil for an account without code.
func (c *Chain) Code(addr common.Address) Contract { return c.codeAt(addr) }

// Deploy installs code at addr, between transactions, as a deployment or a
// development chain's set-code does: at a fresh address the contract starts
// with no balances (a contract gets no genesis allocation); at an address
// that already holds code, the code is replaced and the account's balances
// and allowances stay, which is how a contract that extends a token (such
// as a bridge's synthetic token that is its own router) takes over the
// token's address. An address that has sent transactions or holds written
// balances without code is refused with ErrAccountInUse, and so are the
// zero address and the faucet.
func (c *Chain) Deploy(addr common.Address, code Contract) error {
	switch {
	case code == nil:
		return errors.New("simchain: deploy: no code")
	case addr == (common.Address{}) || addr == c.faucet:
		return fmt.Errorf("simchain: deploy: %s is reserved", addr.Hex())
	}
	a := c.accounts[addr]
	if a == nil {
		c.accounts[addr] = &account{code: code, balances: make(map[common.Address]*big.Int)}
		return nil
	}
	if a.code == nil && (a.nonce > 0 || len(a.balances) > 0) {
		return fmt.Errorf("%w: %s", ErrAccountInUse, addr.Hex())
	}
	a.code = code
	return nil
}

// GrantMinter lets minter mint and burn an ERC-20 of the chain (the role a
// bridge's router holds on its synthetic token). The faucet and the token's
// own address are always minters.
func (c *Chain) GrantMinter(token, minter common.Address) error {
	t := c.tokens[token]
	if t == nil || token == (common.Address{}) {
		return fmt.Errorf("%w: %s on chain %d", ErrUnknownToken, token.Hex(), c.id)
	}
	t.minters[minter] = true
	return nil
}

// ErrNotGenesis is returned by Allocate once a transaction has been mined.
var ErrNotGenesis = errors.New("simchain: allocations are made before the first transaction")

// Allocate sets holder's balance of token (the zero address: the native
// coin) before the first transaction, as a genesis allocation does: no
// transaction, no log, and the balance reads as amount from the genesis
// block on. It is how a contract starts with reserves (a router paying out
// the native coin), since Deploy gives a contract nothing. Once a
// transaction has been mined it returns ErrNotGenesis: from then on
// balances change only through transactions.
func (c *Chain) Allocate(holder, token common.Address, amount *big.Int) error {
	switch {
	case c.Head().Number != 0:
		return ErrNotGenesis
	case c.tokens[token] == nil:
		return fmt.Errorf("%w: %s on chain %d", ErrUnknownToken, token.Hex(), c.id)
	case holder == (common.Address{}) || holder == c.faucet:
		return fmt.Errorf("simchain: allocate: %s is reserved", holder.Hex())
	case amount == nil || amount.Sign() < 0 || amount.Cmp(maxUint256) > 0:
		return errors.New("simchain: allocate: the amount must be between 0 and 2^256-1")
	}
	c.setBalance(token, holder, new(big.Int).Set(amount))
	clear(c.journal) // nothing between transactions is rolled back
	c.journal = c.journal[:0]
	return nil
}

func (c *Chain) isMinter(token, caller common.Address) bool {
	t := c.tokens[token]
	return t != nil && (caller == token || t.minters[caller])
}

// Head is the newest block.
func (c *Chain) Head() *Block { return c.blocks[len(c.blocks)-1] }

// BlockByNumber is the block with that number.
func (c *Chain) BlockByNumber(n uint64) (*Block, bool) {
	if n >= uint64(len(c.blocks)) {
		return nil, false
	}
	return c.blocks[n], true
}

// Transaction is the mined transaction with that hash.
func (c *Chain) Transaction(hash common.Hash) (*Transaction, bool) {
	tx, ok := c.txs[hash]
	return tx, ok
}

// Receipt is the receipt of the mined transaction with that hash.
func (c *Chain) Receipt(hash common.Hash) (*Receipt, bool) {
	r, ok := c.receipts[hash]
	return r, ok
}
