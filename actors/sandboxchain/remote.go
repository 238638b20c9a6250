package sandboxchain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	"github.com/swapgate/swapgate/routing/sim/simrpc"
)

// Caller reaches a grain of the cluster; *cluster.Node is one. Call
// retries an attempt that goes unanswered or reaches a stale activation
// until ctx ends.
type Caller interface {
	Call(ctx context.Context, kind, identity, method string, body []byte) ([]byte, error)
}

// DefaultCallTimeout bounds one call of a Remote to a chain grain, retries
// included: long enough for the cluster to notice a dead owner (a few
// health polls) and for a new activation to replay its chain's log.
const DefaultCallTimeout = 20 * time.Second

// Remote is a node's view of the sandbox chains in a cluster: what Service
// offers its users (the sandbox endpoints, the balance reader, the
// ledger), each call a request to the chain's grain (see GrainKind), with
// the chain's refusals carried back as the errors Service returns. It is
// safe for concurrent use.
type Remote struct {
	node    Caller
	ids     []uint64
	known   map[uint64]bool
	timeout time.Duration
	log     *slog.Logger

	// hashes remembers the chain of transactions this node has seen, so
	// that a lookup by hash alone asks one chain rather than all; at most
	// maxRemembered, forgotten all at once beyond.
	hashMu sync.Mutex
	hashes map[common.Hash]uint64
}

// maxRemembered bounds Remote's memory of transaction hashes.
const maxRemembered = 1 << 16

// NewRemote returns the proxy of the registry's sandbox chains through
// node; timeout bounds each call (0: DefaultCallTimeout).
func NewRemote(reg *registry.Registry, node Caller, timeout time.Duration, log *slog.Logger) *Remote {
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Remote{node: node, ids: sandboxnet.ChainIDs(reg), known: map[uint64]bool{}, timeout: timeout, log: log,
		hashes: map[common.Hash]uint64{}}
	for _, id := range r.ids {
		r.known[id] = true
	}
	return r
}

// ChainIDs lists the sandbox chains in registry order.
func (r *Remote) ChainIDs() []uint64 { return append([]uint64(nil), r.ids...) }

// call sends one request to chain's grain and decodes its answer. A call
// the cluster could not answer within the timeout (no live owner, a store
// that does not take the log's appends) is ErrUnavailable, which the edge
// answers 503; a refusal of the chain is returned as the error it was
// there.
func (r *Remote) call(ctx context.Context, chainID uint64, method string, req any) (*grainReply, error) {
	if !r.known[chainID] {
		return nil, fmt.Errorf("%w: %d", ErrUnknownChain, chainID)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("sandboxchain: encode %s request: %w", method, err)
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	out, err := r.node.Call(cctx, GrainKind, strconv.FormatUint(chainID, 10), method, body)
	var handlerErr *cluster.RemoteError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, fmt.Errorf("sandboxchain: chain %d %s: %w", chainID, method, ctx.Err())
	case errors.As(err, &handlerErr):
		// The grain could not read the request: a fault, not an outage.
		return nil, fmt.Errorf("sandboxchain: chain %d %s: %w", chainID, method, err)
	default:
		return nil, fmt.Errorf("%w: chain %d %s: %v", ErrUnavailable, chainID, method, err)
	}
	var rep grainReply
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("sandboxchain: chain %d %s: decode answer: %w", chainID, method, err)
	}
	if rep.Err != nil {
		return nil, rep.Err.decode()
	}
	return &rep, nil
}

// change asks chain's grain for a change under request id.
func (r *Remote) change(ctx context.Context, chainID uint64, req changeRequest) (*simchain.Receipt, error) {
	rep, err := r.call(ctx, chainID, grainChange, req)
	if err != nil {
		return nil, err
	}
	if rep.Receipt == nil {
		return nil, fmt.Errorf("sandboxchain: chain %d: a change answered without a receipt", chainID)
	}
	r.remember(rep.Receipt.TxHash, chainID)
	return rep.Receipt, nil
}

// newRequestID is a fresh id for a change that has no identity of its own:
// 128 random bits.
func newRequestID(kind sandboxnet.OpKind) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return string(kind) + "/" + hex.EncodeToString(b[:])
}

func (r *Remote) remember(h common.Hash, chainID uint64) {
	r.hashMu.Lock()
	defer r.hashMu.Unlock()
	if len(r.hashes) >= maxRemembered {
		clear(r.hashes)
	}
	r.hashes[h] = chainID
}

// Send executes a transaction request from an account on a chain and mines
// it (see Service.Send), once however often the cluster retries the call.
func (r *Remote) Send(ctx context.Context, chainID uint64, from common.Address, tx simchain.TxRequest) (*simchain.Receipt, error) {
	return r.change(ctx, chainID, changeRequest{ID: newRequestID(sandboxnet.OpSend), Kind: sandboxnet.OpSend, From: from, Tx: &tx})
}

// Faucet tops holder up (see Service.Faucet).
func (r *Remote) Faucet(ctx context.Context, chainID uint64, holder, token common.Address, amount *big.Int) (*simchain.Receipt, error) {
	return r.change(ctx, chainID, changeRequest{ID: newRequestID(sandboxnet.OpFaucet), Kind: sandboxnet.OpFaucet,
		Holder: holder, Token: token, Amount: amount})
}

// Credit delivers amount of token to holder on a chain (see
// Service.Credit).
func (r *Remote) Credit(ctx context.Context, chainID uint64, holder, token common.Address, amount *big.Int) (*simchain.Receipt, error) {
	return r.change(ctx, chainID, changeRequest{ID: newRequestID(sandboxnet.OpCredit), Kind: sandboxnet.OpCredit,
		Holder: holder, Token: token, Amount: amount})
}

// CreditOnce is Credit identified by ref: the chain's grain answers every
// later request for ref, from any node and any activation, with the first
// credit's receipt.
func (r *Remote) CreditOnce(ctx context.Context, chainID uint64, ref string, holder, token common.Address, amount *big.Int) (*simchain.Receipt, error) {
	return r.change(ctx, chainID, changeRequest{ID: "credit/" + ref, Kind: sandboxnet.OpCredit, Holder: holder, Token: token, Amount: amount})
}

// TransactionOn finds a mined transaction by hash on one chain.
func (r *Remote) TransactionOn(ctx context.Context, chainID uint64, hash common.Hash) (sandboxnet.Mined, bool, error) {
	rep, err := r.call(ctx, chainID, grainTx, readRequest{Hash: hash})
	if err != nil {
		return sandboxnet.Mined{}, false, err
	}
	if rep.Mined == nil {
		return sandboxnet.Mined{}, false, nil
	}
	r.remember(hash, chainID)
	return *rep.Mined, true, nil
}

// Transaction finds a mined transaction by hash on any chain: the chain
// this node saw it on, else every chain at once. A chain that cannot be
// asked counts as not having it (logged).
func (r *Remote) Transaction(ctx context.Context, hash common.Hash) (sandboxnet.Mined, bool) {
	r.hashMu.Lock()
	id, ok := r.hashes[hash]
	r.hashMu.Unlock()
	if ok {
		if m, found, err := r.TransactionOn(ctx, id, hash); err == nil && found {
			return m, true
		}
	}
	type found struct {
		m   sandboxnet.Mined
		err error
		ok  bool
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make(chan found, len(r.ids))
	for _, id := range r.ids {
		go func() {
			m, ok, err := r.TransactionOn(ctx, id, hash)
			answers <- found{m: m, ok: ok, err: err}
		}()
	}
	var errs []error
	for range r.ids {
		a := <-answers
		if a.ok {
			return a.m, true
		}
		if a.err != nil {
			errs = append(errs, a.err)
		}
	}
	if len(errs) > 0 {
		r.log.Warn("sandbox transaction lookup: chains not asked", slog.String("txHash", hash.Hex()), slog.Any("err", errors.Join(errs...)))
	}
	return sandboxnet.Mined{}, false
}

// Receipt is the receipt of a mined transaction found by hash on any
// chain.
func (r *Remote) Receipt(ctx context.Context, hash common.Hash) (*simchain.Receipt, bool) {
	m, ok := r.Transaction(ctx, hash)
	return m.Receipt, ok
}

// Balance is holder's balance of token (the zero address: the native coin)
// on a chain.
func (r *Remote) Balance(ctx context.Context, chainID uint64, holder, token common.Address) (*big.Int, error) {
	rep, err := r.call(ctx, chainID, grainBalance, readRequest{Holder: holder, Token: token})
	if err != nil {
		return nil, err
	}
	if rep.Amount == nil {
		return nil, fmt.Errorf("sandboxchain: chain %d: a balance answered without an amount", chainID)
	}
	return rep.Amount, nil
}

// Balances lists holder's balance of every asset of a chain, the native
// coin first.
func (r *Remote) Balances(ctx context.Context, chainID uint64, holder common.Address) ([]sandboxnet.Balance, error) {
	rep, err := r.call(ctx, chainID, grainBalances, readRequest{Holder: holder})
	if err != nil {
		return nil, err
	}
	return rep.Balances, nil
}

// JSONRPC answers a JSON-RPC 2.0 body for a chain's node (package simrpc)
// at the chain's grain, which runs it over its activation's chain. A call
// the cluster could not answer is a JSON-RPC error (-32000) naming the
// outage, so that the node's client learns it as from a node.
func (r *Remote) JSONRPC(ctx context.Context, chainID uint64, body []byte) []byte {
	if !r.known[chainID] {
		return rpcFailure(fmt.Errorf("%w: %d", ErrUnknownChain, chainID))
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	out, err := r.node.Call(cctx, GrainKind, strconv.FormatUint(chainID, 10), grainRPC, body)
	if err != nil {
		return rpcFailure(fmt.Errorf("%w: chain %d: %v", ErrUnavailable, chainID, err))
	}
	return out
}

// rpcFailure is a JSON-RPC error answer, with a null id, for a request the
// node could not be asked.
func rpcFailure(err error) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": simrpc.CodeServer, "message": err.Error()}})
	return b
}

// SetBaseFee sets a chain's base fee (see Service.SetBaseFee), once
// however often the cluster retries the call.
func (r *Remote) SetBaseFee(ctx context.Context, chainID uint64, fee *big.Int) error {
	_, err := r.call(ctx, chainID, grainChange, changeRequest{ID: newRequestID(sandboxnet.OpBaseFee), Kind: sandboxnet.OpBaseFee, Amount: fee})
	return err
}

// Relay delivers a warp-route message at its destination chain's grain
// (see Service.Relay), identified by the message id: every later request
// for it, from any node and any activation, is answered with the first
// delivery.
func (r *Remote) Relay(ctx context.Context, m pulsesim.WarpMessage) (*simchain.Receipt, error) {
	return r.change(ctx, m.Destination, changeRequest{ID: "warp/" + m.ID.Hex(), Kind: sandboxnet.OpRelay, Message: &m})
}

// WarpMessages lists the warp-route messages a chain dispatched in blocks
// from on, and the head it read up to (see Service.WarpMessages).
func (r *Remote) WarpMessages(ctx context.Context, chainID, from uint64) ([]pulsesim.WarpMessage, uint64, error) {
	rep, err := r.call(ctx, chainID, grainWarp, readRequest{From: from})
	if err != nil {
		return nil, 0, err
	}
	return rep.Messages, rep.Head, nil
}

// WarpDelivery finds the delivery of message id on chainID (see
// Service.WarpDelivery).
func (r *Remote) WarpDelivery(ctx context.Context, chainID uint64, id common.Hash) (*simchain.Receipt, bool, error) {
	rep, err := r.call(ctx, chainID, grainDelivery, readRequest{Hash: id})
	if err != nil || rep.Receipt == nil {
		return nil, false, err
	}
	r.remember(rep.Receipt.TxHash, chainID)
	return rep.Receipt, true, nil
}
