// Package sandboxchain is the owner of the sandbox chains: one
// sandboxnet.Chain per EVM chain of the registry, each behind its own mutex
// (a chain is not safe for concurrent use, and chains never touch one
// another, so one lock per chain is all the serialising they need).
//
// Every operation that changes a chain — a broadcast transaction, a faucet
// top-up, a credit — is applied, then appended to the chain's operation log
// in the store, synced, before it is answered. At start the log is applied
// again in order, each operation at its recorded time, to chains built
// afresh: the same blocks, hashes, receipts and balances come back, so a
// restart keeps every transaction a client was told about. Should an
// append fail after its operation was applied, the chain holds a change the
// log lacks; it then refuses further changes (ErrUnavailable) until a
// restart rebuilds it from the log, so the log and the chain never diverge
// for what is answered.
package sandboxchain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	"github.com/swapgate/swapgate/routing/sim/simrpc"
)

// Store records the operations applied to each chain, each as the bytes
// sandboxnet.EncodeOp makes of it; store.ChainLog promises it.
type Store interface {
	AppendChainOp(ctx context.Context, chainID, seq uint64, rec []byte) error
	ChainOps(ctx context.Context, chainID uint64, fn func(seq uint64, rec []byte) error) error
}

// Errors of the service, which are sandboxnet's, so that clients that
// cannot import this package (the edge) can tell them apart. Refusals of
// the chain itself (simchain's request errors, simchain.ErrUnknownToken,
// sandboxnet.ErrFaucetLimit) come back wrapped as they are.
var (
	// ErrUnknownChain names a chain that is not a sandbox chain: not in the
	// registry, or not an EVM chain.
	ErrUnknownChain = sandboxnet.ErrUnknownChain
	// ErrUnavailable is a chain whose last change could not be recorded;
	// it takes no changes until a restart rebuilds it from its log.
	ErrUnavailable = sandboxnet.ErrUnavailable
	// ErrClosed is a change asked of a closed service; it is an
	// ErrUnavailable.
	ErrClosed = fmt.Errorf("%w: the service is closed", sandboxnet.ErrUnavailable)
)

// Options tunes Start. The zero value is ready to use.
type Options struct {
	// Contracts and Payments are passed to sandboxnet (nil: pulseroute's
	// defaults, which the quotes use).
	Contracts *pulseroute.Contracts
	Payments  pulseroute.ChainState
	// Now stamps new operations; nil means time.Now.
	Now func() time.Time
	// Logger receives replay and recording failures; nil discards them.
	Logger *slog.Logger
	// ArbitragePeriod is how often the sandbox's arbitrage trades chain
	// 369's PulseX pools back to their reference prices (arbitrage.go):
	// zero is DefaultArbitragePeriod, a negative period holds it off.
	ArbitragePeriod time.Duration
}

// Service owns the sandbox chains. It is safe for concurrent use.
type Service struct {
	store     Store
	contracts *pulseroute.Contracts
	now       func() time.Time
	log       *slog.Logger
	chains    map[uint64]*slot // fixed by Start
	ids       []uint64
	closed    atomic.Bool
	arb       arbitrageLoop

	// hashes finds the chain of a mined transaction.
	hashMu sync.RWMutex
	hashes map[common.Hash]uint64
}

// slot is one chain and what serialises it.
type slot struct {
	mu     sync.Mutex
	chain  *sandboxnet.Chain
	next   uint64 // sequence number of the next operation
	broken error  // why the chain takes no changes, once an append failed
}

// ReplayStats says what Start found in the logs.
type ReplayStats struct {
	// Ops is the number of operations applied again.
	Ops int
	// Diverged counts operations that did not mine the hash they had
	// mined before (the contracts' code changed since they were recorded).
	Diverged int
}

// Start builds every sandbox chain and applies each chain's recorded
// operations again, in order, at their recorded times.
func Start(ctx context.Context, reg *registry.Registry, store Store, o Options) (*Service, ReplayStats, error) {
	var stats ReplayStats
	if reg == nil || store == nil {
		return nil, stats, errors.New("sandboxchain: registry and store are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Payments == nil {
		sc, err := pulsesim.NewSandboxChain(reg)
		if err != nil {
			return nil, stats, fmt.Errorf("sandboxchain: %w", err)
		}
		o.Payments = sc
	}
	if o.Contracts == nil {
		o.Contracts = pulseroute.DefaultContracts()
	}
	s := &Service{store: store, contracts: o.Contracts, now: o.Now, log: o.Logger, chains: map[uint64]*slot{}, hashes: map[common.Hash]uint64{}}
	cfg := sandboxnet.Config{Registry: reg, Contracts: o.Contracts, Payments: o.Payments}
	for _, id := range sandboxnet.ChainIDs(reg) {
		c, err := sandboxnet.New(cfg, id)
		if err != nil {
			return nil, stats, err
		}
		sl := &slot{chain: c, next: 1}
		if err := s.replay(ctx, sl, &stats); err != nil {
			return nil, stats, err
		}
		s.chains[id] = sl
		s.ids = append(s.ids, id)
	}
	s.startArbitrage(o)
	return s, stats, nil
}

// replay applies a chain's log to it.
func (s *Service) replay(ctx context.Context, sl *slot, stats *ReplayStats) error {
	next, err := replayLog(ctx, s.store, sl.chain, s.log, stats, func(_ sandboxnet.Op, a sandboxnet.Applied) {
		for _, r := range a.Mined {
			s.index(r.TxHash, sl.chain.ID())
		}
	})
	sl.next = next
	return err
}

// replayLog applies chain's recorded operations to it, in order, each at
// its recorded time, calling mined with each operation that changed the
// chain and what it did; it returns the sequence number of the next
// operation. A gap in the log or an operation that mines another hash than
// it recorded is logged and counted, not refused: the chain is still the
// best rebuild of what clients were told.
func replayLog(ctx context.Context, store Store, chain *sandboxnet.Chain, log *slog.Logger, stats *ReplayStats,
	mined func(sandboxnet.Op, sandboxnet.Applied)) (uint64, error) {
	id := chain.ID()
	next := uint64(1)
	err := store.ChainOps(ctx, id, func(seq uint64, rec []byte) error {
		op, err := sandboxnet.DecodeOp(rec)
		if err != nil {
			return fmt.Errorf("operation %d of chain %d: %w", seq, id, err)
		}
		if seq != next {
			log.Warn("sandbox chain log has a gap", slog.Uint64("chainId", id), slog.Uint64("want", next), slog.Uint64("seq", seq))
		}
		next = seq + 1
		stats.Ops++
		a, err := chain.Do(op)
		refused := err != nil && a.Receipt == nil
		if a.Hash != op.TxHash || refused {
			stats.Diverged++
			log.Warn("sandbox chain replay diverged", slog.Uint64("chainId", id), slog.Uint64("seq", seq),
				slog.String("recorded", op.TxHash.Hex()), slog.Any("err", err))
		}
		if !refused {
			mined(op, a)
		}
		return nil
	})
	return next, err
}

func (s *Service) index(h common.Hash, chainID uint64) {
	s.hashMu.Lock()
	s.hashes[h] = chainID
	s.hashMu.Unlock()
}

// Close refuses every later change and stops the arbitrage; reads go on.
func (s *Service) Close() {
	s.closed.Store(true)
	s.stopArbitrage()
}

// ChainIDs lists the sandbox chains in registry order.
func (s *Service) ChainIDs() []uint64 { return append([]uint64(nil), s.ids...) }

func (s *Service) slot(chainID uint64) (*slot, error) {
	sl, ok := s.chains[chainID]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrUnknownChain, chainID)
	}
	return sl, nil
}

// apply runs one operation on a chain and records it before returning its
// receipt. An operation refused before it mined anything is returned as an
// error and not recorded. A faucet or credit transaction that mined but
// failed is recorded and returned as its failed receipt, without error.
func (s *Service) apply(ctx context.Context, chainID uint64, op sandboxnet.Op, check func(*sandboxnet.Chain) error) (*simchain.Receipt, error) {
	a, err := s.do(ctx, chainID, op, check)
	if err != nil {
		return nil, err
	}
	if a.Receipt == nil {
		return nil, fmt.Errorf("sandboxchain: chain %d: %s mined nothing", chainID, op.Kind)
	}
	return a.Receipt, nil
}

// do runs one operation on a chain and records it before returning what it
// did. An operation refused before it changed anything is returned as the
// chain's error (wrapped for sends, top-ups and credits; as it is for a
// signed transaction, whose refusal is a node's words) and not recorded.
func (s *Service) do(ctx context.Context, chainID uint64, op sandboxnet.Op, check func(*sandboxnet.Chain) error) (sandboxnet.Applied, error) {
	var none sandboxnet.Applied
	sl, err := s.slot(chainID)
	if err != nil {
		return none, err
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	switch {
	case s.closed.Load():
		return none, ErrClosed
	case sl.broken != nil:
		return none, fmt.Errorf("%w: chain %d: its last change was not recorded (%v); restart to rebuild it", ErrUnavailable, chainID, sl.broken)
	}
	if check != nil {
		if err := check(sl.chain); err != nil {
			return none, err
		}
	}
	op.Time = s.now()
	a, err := sl.chain.Do(op)
	if err != nil && a.Receipt == nil {
		if op.Kind == sandboxnet.OpRaw || op.Kind == sandboxnet.OpBaseFee {
			return none, err
		}
		return none, fmt.Errorf("sandboxchain: chain %d: %w", chainID, err)
	}
	op.TxHash = a.Hash
	// The chain has changed: the record must be written whatever became of
	// the caller's context.
	rec, err := sandboxnet.EncodeOp(op)
	if err == nil {
		err = s.store.AppendChainOp(context.WithoutCancel(ctx), chainID, sl.next, rec)
	}
	if err != nil {
		sl.broken = err
		s.log.Error("sandbox chain operation not recorded; the chain takes no changes until a restart",
			slog.Uint64("chainId", chainID), slog.Uint64("seq", sl.next), slog.String("txHash", a.Hash.Hex()), slog.Any("err", err))
		return none, fmt.Errorf("%w: chain %d: record operation: %v", ErrUnavailable, chainID, err)
	}
	sl.next++
	for _, r := range a.Mined {
		s.index(r.TxHash, chainID)
	}
	return a, nil
}

// SendRaw takes a signed transaction for a chain, as a node's
// eth_sendRawTransaction does (simchain's SendRaw): mined at once, or
// queued until its nonce's turn and the base fee allow, answered with its
// hash once the operation is recorded. A refusal is the chain's error, in
// a node's words (simchain.ErrNonceTooLow, ...), and nothing is recorded.
func (s *Service) SendRaw(ctx context.Context, chainID uint64, raw []byte) (common.Hash, error) {
	a, err := s.do(ctx, chainID, sandboxnet.Op{Kind: sandboxnet.OpRaw, Raw: raw}, nil)
	return a.Hash, err
}

// SetBaseFee sets a chain's base fee, recorded like a transaction, and
// mines what waited for it to fall.
func (s *Service) SetBaseFee(ctx context.Context, chainID uint64, fee *big.Int) error {
	_, err := s.do(ctx, chainID, sandboxnet.Op{Kind: sandboxnet.OpBaseFee, Amount: fee}, nil)
	return err
}

// JSONRPC answers a JSON-RPC 2.0 body for a chain's node (package
// simrpc) over this service's chains.
func (s *Service) JSONRPC(ctx context.Context, chainID uint64, body []byte) []byte {
	return simrpc.Serve(ctx, s, chainID, body)
}

// View runs fn on one chain's state and history under the chain's lock:
// the reads of the chain's node (simrpc). fn must not keep the chain.
func (s *Service) View(_ context.Context, chainID uint64, fn func(*simchain.Chain)) error {
	return s.read(chainID, func(c *sandboxnet.Chain) { fn(c.Sim()) })
}

// Send executes a transaction request from an account on a chain and mines
// it, answering once it is recorded. A reverted transaction is a receipt
// with Status 0 and its reason; a request that cannot be a transaction at
// all (simchain's request errors) is an error, and nothing is mined.
func (s *Service) Send(ctx context.Context, chainID uint64, from common.Address, tx simchain.TxRequest) (*simchain.Receipt, error) {
	return s.apply(ctx, chainID, sandboxnet.Op{Kind: sandboxnet.OpSend, From: from, Tx: tx}, nil)
}

// Faucet tops holder up with amount of token (the zero address: the native
// coin), within sandboxnet's bounds, in a mined faucet transaction.
func (s *Service) Faucet(ctx context.Context, chainID uint64, holder, token common.Address, amount *big.Int) (*simchain.Receipt, error) {
	op := sandboxnet.Op{Kind: sandboxnet.OpFaucet, Holder: holder, Token: token, Amount: amount}
	return s.apply(ctx, chainID, op, func(c *sandboxnet.Chain) error {
		t, ok := c.Sim().Token(token)
		if !ok {
			return fmt.Errorf("%w: %s on chain %d", simchain.ErrUnknownToken, token.Hex(), chainID)
		}
		return sandboxnet.CheckFaucet(t, amount)
	})
}

// Credit delivers amount of token to holder on a chain, in a mined
// transaction from the faucet account: what a tracker calls when a bridge's
// transfer arrives on its destination.
func (s *Service) Credit(ctx context.Context, chainID uint64, holder, token common.Address, amount *big.Int) (*simchain.Receipt, error) {
	return s.apply(ctx, chainID, sandboxnet.Op{Kind: sandboxnet.OpCredit, Holder: holder, Token: token, Amount: amount}, nil)
}

// Transaction finds a mined transaction by hash on any chain.
func (s *Service) Transaction(_ context.Context, hash common.Hash) (sandboxnet.Mined, bool) {
	s.hashMu.RLock()
	id, ok := s.hashes[hash]
	s.hashMu.RUnlock()
	if !ok {
		return sandboxnet.Mined{}, false
	}
	sl := s.chains[id]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	tx, ok := sl.chain.Sim().Transaction(hash)
	if !ok {
		return sandboxnet.Mined{}, false
	}
	r, _ := sl.chain.Sim().Receipt(hash)
	return sandboxnet.Mined{ChainID: id, Transaction: tx, Receipt: r}, true
}

// TransactionOn finds a mined transaction by hash on one chain: what the
// ledger asks (see Chains).
func (s *Service) TransactionOn(ctx context.Context, chainID uint64, hash common.Hash) (sandboxnet.Mined, bool, error) {
	m, ok := s.Transaction(ctx, hash)
	if !ok || m.ChainID != chainID {
		return sandboxnet.Mined{}, false, nil
	}
	return m, true, nil
}

// CreditOnce is Credit for the ledger's deliveries (see Chains). In one
// process a call is made once, so ref is not needed here: the ledger's
// delivery record keeps a reference from being delivered twice.
func (s *Service) CreditOnce(ctx context.Context, chainID uint64, _ string, holder, token common.Address, amount *big.Int) (*simchain.Receipt, error) {
	return s.Credit(ctx, chainID, holder, token, amount)
}

// Receipt is the receipt of a mined transaction found by hash on any
// chain.
func (s *Service) Receipt(ctx context.Context, hash common.Hash) (*simchain.Receipt, bool) {
	m, ok := s.Transaction(ctx, hash)
	return m.Receipt, ok
}

// read runs fn on a chain under its lock.
func (s *Service) read(chainID uint64, fn func(*sandboxnet.Chain)) error {
	sl, err := s.slot(chainID)
	if err != nil {
		return err
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	fn(sl.chain)
	return nil
}

// Balance is holder's balance of token (the zero address: the native coin)
// on a chain.
func (s *Service) Balance(_ context.Context, chainID uint64, holder, token common.Address) (*big.Int, error) {
	var out *big.Int
	var known bool
	err := s.read(chainID, func(c *sandboxnet.Chain) {
		if _, known = c.Sim().Token(token); known {
			out = c.Sim().Balance(token, holder)
		}
	})
	if err == nil && !known {
		err = fmt.Errorf("%w: %s on chain %d", simchain.ErrUnknownToken, token.Hex(), chainID)
	}
	return out, err
}

// Balances lists holder's balance of every asset of a chain, the native
// coin first.
func (s *Service) Balances(_ context.Context, chainID uint64, holder common.Address) ([]sandboxnet.Balance, error) {
	var out []sandboxnet.Balance
	err := s.read(chainID, func(c *sandboxnet.Chain) { out = c.Balances(holder) })
	return out, err
}

// Logs selects the logs of a chain's mined transactions, as eth_getLogs
// does. The logs are shared and must not be modified.
func (s *Service) Logs(_ context.Context, chainID uint64, f simchain.LogFilter) ([]*types.Log, error) {
	var out []*types.Log
	err := s.read(chainID, func(c *sandboxnet.Chain) { out = c.Sim().Logs(f) })
	return out, err
}

// Head is the newest block of a chain.
func (s *Service) Head(_ context.Context, chainID uint64) (*simchain.Block, error) {
	var out *simchain.Block
	err := s.read(chainID, func(c *sandboxnet.Chain) { out = c.Sim().Head() })
	return out, err
}

// Call runs a read-only call on a chain (balanceOf, allowance, ...), as
// eth_call does.
func (s *Service) Call(_ context.Context, chainID uint64, from, to common.Address, data []byte) ([]byte, error) {
	var out []byte
	var callErr error
	err := s.read(chainID, func(c *sandboxnet.Chain) { out, callErr = c.Sim().Call(from, to, data) })
	if err != nil {
		return nil, err
	}
	return out, callErr
}

// errDelivered stops a relay whose message the destination already
// delivered: nothing is mined, and the first delivery is the answer.
var errDelivered = errors.New("sandboxchain: message already delivered")

// Relay delivers a warp-route message on its destination chain (the
// sandbox Hyperlane relayer's transaction, sandboxnet's relay operation),
// recorded like every change, and answers with its receipt. A message the
// chain already delivered is answered with that delivery's receipt and
// nothing is mined, so that a second attempt, before or after a restart,
// is a no-op; a delivery that would fail (a collateral router short of
// USDC) is refused without mining anything.
func (s *Service) Relay(ctx context.Context, m pulsesim.WarpMessage) (*simchain.Receipt, error) {
	op, err := sandboxnet.RelayOp(s.contracts, m)
	if err != nil {
		return nil, err
	}
	var first *simchain.Receipt
	r, err := s.apply(ctx, m.Destination, op, func(c *sandboxnet.Chain) error {
		if d, ok := c.Delivery(m.ID); ok {
			first = d
			return errDelivered
		}
		return c.CheckRelay(op)
	})
	if errors.Is(err, errDelivered) {
		return first, nil
	}
	return r, err
}

// WarpMessages lists the warp-route messages a chain dispatched in blocks
// from on, and the head it read up to.
func (s *Service) WarpMessages(_ context.Context, chainID, from uint64) ([]pulsesim.WarpMessage, uint64, error) {
	var out []pulsesim.WarpMessage
	var head uint64
	err := s.read(chainID, func(c *sandboxnet.Chain) { out, head = c.WarpMessages(from) })
	return out, head, err
}

// WarpDelivery finds the delivery of message id on chainID, its
// destination: the relayer's transaction, whose logs carry
// ReceivedTransferRemote and ProcessId(id).
func (s *Service) WarpDelivery(_ context.Context, chainID uint64, id common.Hash) (*simchain.Receipt, bool, error) {
	var r *simchain.Receipt
	var ok bool
	err := s.read(chainID, func(c *sandboxnet.Chain) { r, ok = c.Delivery(id) })
	return r, ok, err
}
