// Package txm is the transaction manager: everything the service signs
// goes through it. A caller submits a txintent.Request; the intent is
// stored before Submit returns, and a worker per account (one per chain:
// the operator's address) takes queued intents in order, gives each the
// account's next nonce, signs it, stores the nonce and the signed bytes
// (state signed) before broadcasting them, follows the receipt to the
// configured confirmations, and replaces a transaction not mined within
// BumpAfter by one with the same nonce and both fees 12.5% higher, up to
// the chain's fee cap, storing each replacement before sending it. Many
// intents of one account are in flight at once, sent in nonce order.
//
// After a crash a new manager on the same store resumes: a signed intent is
// broadcast again with its stored bytes (never signed again with another
// nonce), and when the node answers "nonce too low" the receipts of every
// stored hash say which one was mined. All of an intent's transactions
// share its nonce, so at most one of them is ever mined.
package txm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// Node is what the manager needs of a chain's node: go-ethereum's
// ethclient.Client has every method (routing/adapters/evmnode wraps one
// per chain; sandbox mode's reaches the sandbox chain in process).
type Node interface {
	ChainID(ctx context.Context) (*big.Int, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	// NonceAt at the latest block says which of the account's nonces are
	// mined, so that receipts are read only for those.
	NonceAt(ctx context.Context, account common.Address, block *big.Int) (uint64, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	// SuggestGasPrice (eth_gasPrice: the next block's base fee plus a
	// tip) sees a base fee risen since the head, which a replacement must
	// clear.
	SuggestGasPrice(ctx context.Context) (*big.Int, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
	BlockNumber(ctx context.Context) (uint64, error)
	BalanceAt(ctx context.Context, account common.Address, block *big.Int) (*big.Int, error)
	// CallContract replays a reverted transaction to read its reason.
	CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error)
}

// Signer signs the operator's transactions: a local key
// (txm.LocalSigner) or an external signer speaking eth_signTransaction.
type Signer interface {
	Address() common.Address
	SignTx(ctx context.Context, chainID *big.Int, tx *types.Transaction) (*types.Transaction, error)
}

// Store is what the manager needs of the store (store.TxIntents).
type Store interface {
	PutTxIntent(ctx context.Context, in *txintent.Intent) (*txintent.Intent, bool, error)
	TxIntent(ctx context.Context, id string) (*txintent.Intent, error)
	TxIntentByKey(ctx context.Context, key string) (*txintent.Intent, error)
	ListTxIntents(ctx context.Context, q txintent.Query) ([]*txintent.Intent, error)
	UpdateTxIntents(ctx context.Context, ins []*txintent.Intent) error
	NextNonce(ctx context.Context, chainID uint64, account string) (uint64, error)
	RaiseNonce(ctx context.Context, chainID uint64, account string, n uint64) (uint64, error)
	MarkTxIntentHandled(ctx context.Context, id string) error
}

// Options configures a Manager.
type Options struct {
	Store  Store
	Signer Signer
	// Nodes is each chain's node by chain ID; a request for a chain not
	// here is refused.
	Nodes map[uint64]Node
	// Confirmations is how many blocks, the receipt's included, make a
	// mined intent confirmed (at least 1).
	Confirmations uint64
	// BumpAfter is how long a sent transaction waits to be mined before it
	// is replaced (default 30s).
	BumpAfter time.Duration
	// FeeCap is the highest maxFeePerGas in wei per chain (none when
	// missing).
	FeeCap map[uint64]*big.Int
	// MinBalance is the least native balance (wei) the operator's account
	// should hold on each chain: under it a warning is logged every
	// BalanceEvery and Stats says so (nil: no warning).
	MinBalance *big.Int
	// BalanceEvery is how often each account's balance is read (default
	// 1 minute).
	BalanceEvery time.Duration
	// Poll is how often receipts and blocks are read (default 1s).
	Poll   time.Duration
	Logger *slog.Logger
	// Owner, set in a cluster, says whether this node works an account:
	// each account (chain and address, OwnerKey) is worked by the node
	// that owns it; the others only store intents, which the owner reads.
	// A node that stops owning an account drops what it held in memory
	// and the new owner reads the store; every write is compare-and-set
	// on the intent's version, so that an old owner's late write fails.
	Owner Owner
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Owner says which accounts this node works in a cluster; *cluster.Node
// is one.
type Owner interface {
	Owns(key string) bool
}

// OwnerKey is the ownership key of an account on a chain.
func OwnerKey(chainID uint64, account common.Address) string {
	return fmt.Sprintf("txm/%d/%s", chainID, strings.ToLower(account.Hex()))
}

// Hook is called with a final intent of the purpose it is registered for.
type Hook func(ctx context.Context, in *txintent.Intent) error

// Errors Submit returns for a request the manager cannot take.
var (
	ErrUnknownChain = errors.New("txm: no node for the chain")
	ErrStopped      = errors.New("txm: the manager is stopped")
)

// Manager is the transaction manager; New builds it, Start runs it.
type Manager struct{ m *manager }

// New builds a manager from opts; nothing runs until Start.
func New(opts Options) (*Manager, error) {
	m, err := newManager(opts)
	if err != nil {
		return nil, err
	}
	return &Manager{m: m}, nil
}

// OnFinal registers h for intents of purpose, before Start: it is called
// at least once after such an intent is confirmed or failed (also for one
// that became final while the service was down), and the intent is then
// marked handled. An error is retried later.
func (m *Manager) OnFinal(purpose string, h Hook) { m.m.onFinal(purpose, h) }

// Start reads the store's open intents, reconciles each account's nonce
// with its node, and starts the workers; they stop when ctx ends or Stop.
func (m *Manager) Start(ctx context.Context) error { return m.m.start(ctx) }

// Stop stops the workers and waits for them.
func (m *Manager) Stop() { m.m.stop() }

// Submit stores the request as a queued intent (or returns the intent
// already stored under its Key) and wakes the chain's worker. The intent
// is durable when Submit returns.
func (m *Manager) Submit(ctx context.Context, r txintent.Request) (*txintent.Intent, error) {
	return m.m.submit(ctx, r)
}

// Intent returns the stored intent with id.
func (m *Manager) Intent(ctx context.Context, id string) (*txintent.Intent, error) {
	return m.m.opts.Store.TxIntent(ctx, id)
}

// IntentByKey returns the stored intent submitted under key, or
// store.ErrNotFound: a caller that decides whether to submit (the inbound
// runner's swap or fallback) first looks for what it submitted before a
// restart.
func (m *Manager) IntentByKey(ctx context.Context, key string) (*txintent.Intent, error) {
	return m.m.opts.Store.TxIntentByKey(ctx, key)
}

// Wake tells the workers that intents were stored by another process (the
// settle command) and should be read.
func (m *Manager) Wake() { m.m.wake() }

// Account is the operator's address on chainID (the same on every EVM
// chain: one key).
func (m *Manager) Account(chainID uint64) common.Address { return m.m.opts.Signer.Address() }

// Balance is the operator's native balance on chainID, for the
// --operator-min-balance warning and metric.
func (m *Manager) Balance(ctx context.Context, chainID uint64) (*big.Int, error) {
	return m.m.balance(ctx, chainID)
}

// Stats is a moment's counts for the metrics.
type Stats struct {
	// InFlight is each chain's intents signed or sent and not yet mined.
	InFlight map[uint64]int
	// Bumps is the replacements sent since start.
	Bumps uint64
	// Balance is each chain's last read native balance of the account
	// (missing until read); Low the chains where it is under MinBalance.
	Balance map[uint64]*big.Int
	Low     map[uint64]bool
}

// Stats reports the manager's counts.
func (m *Manager) Stats() Stats { return m.m.stats() }
