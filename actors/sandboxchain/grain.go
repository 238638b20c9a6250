package sandboxchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	"github.com/swapgate/swapgate/routing/sim/simrpc"
	"github.com/swapgate/swapgate/store"
)

// A cluster runs each sandbox chain as a grain of kind GrainKind whose
// identity is the chain id in decimal: one owner among the nodes, reached
// from every node through a Remote.
//
// An activation builds its chain afresh and replays the chain's operation
// log from the store (the same log a single process keeps), then applies
// each change the way Service does (applied, appended, answered) with two
// differences that the cluster's promises require:
//
//   - The append is the fence. Two activations of one chain may briefly
//     live on two nodes while the topology changes; each appends at the
//     sequence number after the last it knows, and the store refuses a
//     sequence already taken (store.ErrExists, a unique key in
//     PostgreSQL). The activation that finds its sequence taken holds a
//     chain that no longer matches the log: it answers cluster.ErrStale,
//     stops, and the call is retried on a fresh activation, which replays
//     the log first. Any other failed append stops the activation too (the
//     chain may hold a change the log lacks), so a chain never answers from
//     a state the log does not have.
//   - Requests are idempotent. A grain call is retried after a per-try
//     timeout or a stale answer, and a broadcast, a faucet top-up or a
//     credit is not idempotent by nature. Every change request carries an
//     id (a random one per call, made by the Remote; for a delivery's
//     credit, the delivery's reference; for the relayer's delivery of a
//     warp-route message, "warp/" and the message id, and a message the
//     chain already delivered is answered with that delivery), which the
//     operation records in the log (sandboxnet.Op.Request); an activation
//     knows the ids of every operation it applied or replayed and answers
//     a repeated id with the receipt of the transaction it mined the first
//     time. Refusals mine nothing and are not remembered: a retry is
//     refused again.
//
// A JSON-RPC body for the chain's node is run by the activation over its
// chain (grainNode): signed transactions are applied and appended as
// changes are, one the chain already holds answered with its hash (its
// hash is its id), and base fees are changes with an id.
//
// Reads (a transaction, balances) are answered from the activation's
// chain. They are not fenced: during a topology change a read can reach
// an activation that has not seen the other's last changes.
const GrainKind = "chain"

// Grain methods.
const (
	grainChange   = "change"
	grainTx       = "tx"
	grainBalance  = "balance"
	grainBalances = "balances"
	// grainRPC's body is a JSON-RPC request body for the chain's node
	// (package simrpc), and its answer the node's answer.
	grainRPC = "rpc"
	// grainWarp lists the warp-route messages dispatched from a block on;
	// grainDelivery finds a message's delivery.
	grainWarp     = "warp"
	grainDelivery = "delivery"
)

// changeRequest asks a chain grain for a change: a send (From, To, Data,
// Value, GasLimit), a faucet top-up or a credit (Holder, Token, Amount).
type changeRequest struct {
	// ID makes the request idempotent (see GrainKind).
	ID     string              `json:"id"`
	Kind   sandboxnet.OpKind   `json:"kind"`
	From   common.Address      `json:"from,omitempty"`
	Tx     *simchain.TxRequest `json:"tx,omitempty"`
	Holder common.Address      `json:"holder,omitempty"`
	Token  common.Address      `json:"token,omitempty"`
	Amount *big.Int            `json:"amount,omitempty"`
	// Message is a relay's warp-route message.
	Message *pulsesim.WarpMessage `json:"message,omitempty"`
}

// readRequest asks a chain grain for a transaction (Hash) or balances
// (Holder, and Token for one asset).
type readRequest struct {
	Hash   common.Hash    `json:"hash,omitempty"`
	Holder common.Address `json:"holder,omitempty"`
	Token  common.Address `json:"token,omitempty"`
	// From is the first block of a warp read; Hash a delivery's message id.
	From uint64 `json:"from,omitempty"`
}

// grainReply is every answer of a chain grain: the field its method fills,
// or the chain's refusal.
type grainReply struct {
	Receipt  *evmtx.Receipt         `json:"receipt,omitempty"`
	Mined    *evmtx.Mined           `json:"mined,omitempty"`
	Amount   *big.Int               `json:"amount,omitempty"`
	Balances []evmtx.Balance        `json:"balances,omitempty"`
	Messages []pulsesim.WarpMessage `json:"messages,omitempty"`
	Head     uint64                 `json:"head,omitempty"`
	Err      *wireError             `json:"err,omitempty"`
}

// Grains activates chain grains; its Activate is the kind's.
type Grains struct {
	reg   *registry.Registry
	store Store
	cfg   sandboxnet.Config
	now   func() time.Time
	log   *slog.Logger
	arb   *pulsesim.Arbitrage // chain 369's (arbitrage.go)
}

// NewGrains returns the activator of chain grains over the store that
// keeps the chains' logs (the shared store every node opens).
func NewGrains(reg *registry.Registry, store Store, o Options) (*Grains, error) {
	if reg == nil || store == nil {
		return nil, errors.New("sandboxchain: registry and store are required")
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
			return nil, fmt.Errorf("sandboxchain: %w", err)
		}
		o.Payments = sc
	}
	return &Grains{reg: reg, store: store, cfg: sandboxnet.Config{Registry: reg, Contracts: o.Contracts, Payments: o.Payments},
		now: o.Now, log: o.Logger, arb: newArbitrage(o.Contracts, o.Payments)}, nil
}

// Activate starts the activation of chain identity (its id in decimal):
// the chain built afresh and its log replayed.
func (g *Grains) Activate(ctx context.Context, identity string) (*Grain, error) {
	id, err := strconv.ParseUint(identity, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("sandboxchain: grain identity %q is not a chain id", identity)
	}
	c, err := sandboxnet.New(g.cfg, id)
	if err != nil {
		return nil, err
	}
	gr := &Grain{chain: c, contracts: g.cfg.Contracts, store: g.store, now: g.now, log: g.log, done: map[string]common.Hash{}}
	if id == arbitrageChain {
		gr.arb = g.arb
	}
	started := time.Now()
	var stats ReplayStats
	gr.next, err = replayLog(ctx, g.store, c, g.log, &stats, func(op sandboxnet.Op, a sandboxnet.Applied) {
		if op.Request != "" {
			gr.done[op.Request] = a.Hash
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sandboxchain: replay chain %d: %w", id, err)
	}
	g.log.Info("sandbox chain grain active", slog.Uint64("chainId", id), slog.Int("replayed", stats.Ops),
		slog.Int("diverged", stats.Diverged), slog.Duration("took", time.Since(started)))
	return gr, nil
}

// Grain is one activation of a chain grain. The cluster runs its requests
// one at a time, so it holds no lock.
type Grain struct {
	chain     *sandboxnet.Chain
	contracts *pulseroute.Contracts
	store     Store
	now       func() time.Time
	log       *slog.Logger
	next      uint64
	// done maps the id of every request whose operation is in the log to
	// the transaction it mined.
	done map[string]common.Hash
	// arb is the arbitrage of chain 369's grain, nil on other chains.
	arb *pulsesim.Arbitrage
}

// appendTimeout bounds an append, so that a store that does not answer
// stops the activation rather than the chain.
const appendTimeout = 10 * time.Second

// Receive serves one request (see GrainKind).
func (g *Grain) Receive(ctx context.Context, method string, body []byte) ([]byte, error) {
	var out grainReply
	switch method {
	case grainRPC:
		n := &grainNode{g: g}
		answer := simrpc.Serve(ctx, n, g.chain.ID(), body)
		if n.stale != nil {
			return nil, n.stale
		}
		return answer, nil
	case grainArbitrage:
		_, err := g.arbitrage(ctx)
		if errors.Is(err, cluster.ErrStale) {
			return nil, err
		}
		out.Err = encodeError(err)
	case grainChange:
		var req changeRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("sandboxchain: change request: %w", err)
		}
		r, err := g.change(ctx, req)
		if errors.Is(err, cluster.ErrStale) {
			return nil, err
		}
		out.Receipt, out.Err = r, encodeError(err)
	case grainTx, grainBalance, grainBalances, grainWarp, grainDelivery:
		var req readRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("sandboxchain: %s request: %w", method, err)
		}
		sim := g.chain.Sim()
		switch method {
		case grainTx:
			if tx, ok := sim.Transaction(req.Hash); ok {
				r, _ := sim.Receipt(req.Hash)
				out.Mined = &evmtx.Mined{ChainID: g.chain.ID(), Transaction: tx, Receipt: r}
			}
		case grainBalance:
			if _, ok := sim.Token(req.Token); ok {
				out.Amount = sim.Balance(req.Token, req.Holder)
			} else {
				out.Err = encodeError(fmt.Errorf("%w: %s on chain %d", simchain.ErrUnknownToken, req.Token.Hex(), g.chain.ID()))
			}
		case grainBalances:
			out.Balances = g.chain.Balances(req.Holder)
		case grainWarp:
			out.Messages, out.Head = g.chain.WarpMessages(req.From)
		case grainDelivery:
			if r, ok := g.chain.Delivery(req.Hash); ok {
				out.Receipt = r
			}
		}
	default:
		return nil, fmt.Errorf("sandboxchain: unknown grain method %q", method)
	}
	return json.Marshal(out)
}

// grainNode is the chain's node (simrpc) over an activation, which runs one
// request at a time: reads see its chain, a signed transaction is applied
// and appended as a change is. A transaction the chain already holds
// (mined or waiting) is answered with its hash, not "already known": the
// cluster retries a call whose answer was lost, and the retry must not
// turn an accepted transaction into a refusal. A failed append makes the
// whole request stale (the cluster retries it on a fresh activation).
type grainNode struct {
	g     *Grain
	stale error
}

func (n *grainNode) View(_ context.Context, id uint64, fn func(*simchain.Chain)) error {
	if id != n.g.chain.ID() {
		return fmt.Errorf("%w: %d", ErrUnknownChain, id)
	}
	fn(n.g.chain.Sim())
	return nil
}

func (n *grainNode) SendRaw(ctx context.Context, id uint64, raw []byte) (common.Hash, error) {
	if id != n.g.chain.ID() {
		return common.Hash{}, fmt.Errorf("%w: %d", ErrUnknownChain, id)
	}
	if n.stale != nil {
		return common.Hash{}, n.stale
	}
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err == nil {
		sim := n.g.chain.Sim()
		if _, mined := sim.Transaction(tx.Hash()); mined {
			return tx.Hash(), nil
		}
		if _, queued := sim.Queued(tx.Hash()); queued {
			return tx.Hash(), nil
		}
	}
	a, err := n.g.apply(ctx, sandboxnet.Op{Kind: sandboxnet.OpRaw, Raw: raw}, "")
	if errors.Is(err, cluster.ErrStale) {
		n.stale = err
	}
	return a.Hash, err
}

// change applies one change request, or answers the one it already
// applied under the request's id.
func (g *Grain) change(ctx context.Context, req changeRequest) (*simchain.Receipt, error) {
	if req.ID == "" {
		return nil, errors.New("sandboxchain: a change request needs an id")
	}
	if h, ok := g.done[req.ID]; ok {
		if h == (common.Hash{}) {
			return nil, nil // a base fee, set
		}
		if r, ok := g.chain.Sim().Receipt(h); ok {
			return r, nil
		}
		return nil, fmt.Errorf("%w: chain %d: request %s mined %s, which the chain lacks", ErrUnavailable, g.chain.ID(), req.ID, h.Hex())
	}
	op := sandboxnet.Op{Kind: req.Kind, Request: req.ID}
	switch req.Kind {
	case sandboxnet.OpSend:
		if req.Tx == nil {
			return nil, errors.New("sandboxchain: a send without a transaction")
		}
		op.From, op.Tx = req.From, *req.Tx
	case sandboxnet.OpFaucet:
		t, ok := g.chain.Sim().Token(req.Token)
		if !ok {
			return nil, fmt.Errorf("%w: %s on chain %d", simchain.ErrUnknownToken, req.Token.Hex(), g.chain.ID())
		}
		if err := sandboxnet.CheckFaucet(t, req.Amount); err != nil {
			return nil, err
		}
		op.Holder, op.Token, op.Amount = req.Holder, req.Token, req.Amount
	case sandboxnet.OpCredit:
		op.Holder, op.Token, op.Amount = req.Holder, req.Token, req.Amount
	case sandboxnet.OpRelay:
		if req.Message == nil {
			return nil, errors.New("sandboxchain: a relay without a message")
		}
		if d, ok := g.chain.Delivery(req.Message.ID); ok {
			return d, nil // delivered by an earlier request: a no-op
		}
		relay, err := sandboxnet.RelayOp(g.contracts, *req.Message)
		if err != nil {
			return nil, err
		}
		if err := g.chain.CheckRelay(relay); err != nil {
			return nil, err
		}
		op.From, op.Tx = relay.From, relay.Tx
	case sandboxnet.OpBaseFee:
		op.Amount = req.Amount
		_, err := g.apply(ctx, op, req.ID)
		return nil, err
	default:
		return nil, fmt.Errorf("%w: %q", sandboxnet.ErrUnknownOp, req.Kind)
	}
	a, err := g.apply(ctx, op, req.ID)
	return a.Receipt, err
}

// apply applies an operation and appends it, the append being the fence
// (see GrainKind); request is the change request's id, empty for a signed
// transaction, which is known by its hash. A refusal is the chain's error,
// wrapped for a send, a top-up or a credit, as it is otherwise.
func (g *Grain) apply(ctx context.Context, op sandboxnet.Op, request string) (sandboxnet.Applied, error) {
	op.Time = g.now()
	a, err := g.chain.Do(op)
	if err != nil && a.Receipt == nil {
		if op.Kind == sandboxnet.OpRaw || op.Kind == sandboxnet.OpBaseFee {
			return sandboxnet.Applied{}, err
		}
		return sandboxnet.Applied{}, fmt.Errorf("sandboxchain: chain %d: %w", g.chain.ID(), err)
	}
	op.TxHash = a.Hash
	rec, err := sandboxnet.EncodeOp(op)
	if err == nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
		err = g.store.AppendChainOp(actx, g.chain.ID(), g.next, rec)
		cancel()
	}
	if err != nil {
		// The chain holds a change the log may lack, or another activation
		// took this sequence number: either way this activation is done.
		level := slog.LevelError
		if errors.Is(err, store.ErrExists) {
			level = slog.LevelWarn
		}
		g.log.Log(ctx, level, "sandbox chain grain stops: operation not appended", slog.Uint64("chainId", g.chain.ID()),
			slog.Uint64("seq", g.next), slog.String("request", request), slog.Any("err", err))
		return sandboxnet.Applied{}, fmt.Errorf("%w: chain %d, operation %d: %v", cluster.ErrStale, g.chain.ID(), g.next, err)
	}
	g.next++
	if request != "" {
		g.done[request] = a.Hash
	}
	return a, nil
}

// Stop ends the activation; the chain holds nothing to release.
func (g *Grain) Stop() {}

var _ cluster.Handler = (*Grain)(nil)

// wireError is a chain's refusal as it travels between nodes: its text and
// the sentinels it matched, so that the caller's errors.Is and errors.As
// (the edge's mapping to the contract's codes) see what they would see in
// one process.
type wireError struct {
	Msg   string   `json:"msg"`
	Kinds []string `json:"kinds,omitempty"`
	// Field and Reason are a request error's (evmtx.RequestError).
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// wireKinds are the sentinels a chain's refusal may wrap, by wire name.
var wireKinds = []struct {
	name string
	err  error
}{
	{"invalidSender", evmtx.ErrInvalidSender},
	{"invalidValue", evmtx.ErrInvalidValue},
	{"gasLimitTooHigh", evmtx.ErrGasLimitTooHigh},
	{"intrinsicGas", evmtx.ErrIntrinsicGas},
	{"insufficientFundsForGas", evmtx.ErrInsufficientFundsForGas},
	{"unknownToken", evmtx.ErrUnknownToken},
	{"invalidFaucetRequest", evmtx.ErrInvalidFaucetRequest},
	{"faucetLimit", evmtx.ErrFaucetLimit},
	{"unknownChain", evmtx.ErrUnknownChain},
	{"unavailable", evmtx.ErrUnavailable},
	{"unknownOp", sandboxnet.ErrUnknownOp},
}

func encodeError(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Msg: err.Error()}
	for _, k := range wireKinds {
		if errors.Is(err, k.err) {
			w.Kinds = append(w.Kinds, k.name)
		}
	}
	var re *evmtx.RequestError
	if errors.As(err, &re) {
		w.Field, w.Reason = re.Field, re.Reason
	}
	return w
}

// chainError is a refusal that came from a chain grain.
type chainError struct {
	msg  string
	errs []error
}

func (e *chainError) Error() string   { return e.msg }
func (e *chainError) Unwrap() []error { return e.errs }

func (w *wireError) decode() error {
	if w == nil {
		return nil
	}
	e := &chainError{msg: w.Msg}
	for _, name := range w.Kinds {
		for _, k := range wireKinds {
			if k.name == name {
				e.errs = append(e.errs, k.err)
			}
		}
	}
	if w.Field != "" {
		e.errs = append(e.errs, &evmtx.RequestError{Field: w.Field, Reason: w.Reason})
	}
	return e
}
