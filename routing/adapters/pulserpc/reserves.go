package pulserpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// Defaults of ReservesConfig.
const (
	// DefaultReservesMaxAge is --pulse-reserves-max-age's default: three
	// PulseChain blocks (10 s each). A snapshot the reader has not seen
	// current for that long (the node stopped answering, or the head
	// stopped moving under a dropped subscription) is not trusted.
	DefaultReservesMaxAge = 30 * time.Second
	// DefaultReservesPoll is how often the reader asks the node its block
	// number when it has no newHeads subscription: well under a block, so
	// that a swap that moved a pool is priced within a second of its block.
	DefaultReservesPoll = time.Second
	// maxBatch is the most calls one JSON-RPC batch carries (the sandbox
	// node takes 100; public nodes commonly take about as many).
	maxBatch = 100
)

// ReservesConfig configures a Reserves.
type ReservesConfig struct {
	// MaxAge is how long a snapshot is used after the reader last saw it
	// current (--pulse-reserves-max-age); 0 turns local pricing off, and
	// every amount is the router's.
	MaxAge time.Duration
	// Poll spaces the reader's eth_blockNumber reads (DefaultReservesPoll
	// when 0). With a newHeads subscription the reader polls only when no
	// head came for ten of them (a subscription that went quiet without
	// an error), and tries to subscribe again as often after one dropped.
	Poll time.Duration
	// Timeout bounds each read of the node (--rpc-timeout); 0 adds none.
	Timeout time.Duration
	// Logger reports failed reads (slog.Default when nil).
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Reserves prices PulseX swaps on chain 369 from the pools' reserves, as
// the router does (pulseroute.AmountOut and AmountIn hop by hop, 0.29% per
// hop), so that a quote whose chain-369 leg would otherwise wait for the
// router's getAmountsOut over eth_call waits for nothing. It keeps a
// snapshot of the pairs pulseroute's paths use (pulseroute.PricedPairs):
// each pair's address from the factory's getPair, read once and kept
// (including a pair that does not exist), its token0 once, and every
// pair's getReserves in one batched call whenever the chain's head moves
// (eth_blockNumber every Poll, or the node's newHeads where the URL is a
// WebSocket). A path with a hop outside the snapshot, or a snapshot not
// seen current within MaxAge, goes to next, the router's own
// getAmountsOut and getAmountsIn as before; so does everything but PulseX
// amounts (the warp routes' gas payments).
//
// The snapshot is replaced whole, so readers never see a block's reserves
// mixed with another's. It is safe for concurrent use; Start runs its
// refresh loop until the context given to it ends.
type Reserves struct {
	client  *rpc.Client
	factory common.Address
	wanted  []pulseroute.Pair
	next    pulseroute.ChainState
	cfg     ReservesConfig
	ws      bool
	// owned is a client DialReserves made, closed by Start's stop.
	owned bool

	snap atomic.Pointer[snapshot]
	// seen is when the snapshot was last seen current (Unix nanoseconds):
	// read, or its block found still the head.
	seen      atomic.Int64
	fallbacks atomic.Uint64

	// pairs is the factory's answers so far, and failing whether the last
	// refresh failed (its warning is logged once, not at every poll); both
	// owned by the refresh loop.
	pairs   map[pulseroute.Pair]*pairInfo
	failing bool
}

var (
	_ pulseroute.ChainState      = (*Reserves)(nil)
	_ pulseroute.AmountsInReader = (*Reserves)(nil)
)

// pairInfo is what the factory and the pair answered about a pair once.
type pairInfo struct {
	addr   common.Address
	none   bool // getPair answered the zero address
	token0 common.Address
	known0 bool
}

// snapshot is the reserves of the pairs at one block, by the pair's
// sorted tokens.
type snapshot struct {
	block uint64
	pools map[pulseroute.Pair]pool
}

// pool is one pair's reserves, reserve0 of the lower-sorted token; none
// is a pair the factory does not have.
type pool struct {
	none       bool
	low, high  *big.Int
	lowAddress common.Address
}

// sortedPair orders a pair's tokens as the factory does (token0 is the
// lower address).
func sortedPair(a, b common.Address) pulseroute.Pair {
	if bytes.Compare(a.Bytes(), b.Bytes()) > 0 {
		a, b = b, a
	}
	return pulseroute.Pair{A: a, B: b}
}

// NewReserves builds the reader over client, chain 369's node (url is its
// address, which tells a WebSocket node), for the pairs wanted; next
// answers what the snapshot cannot.
func NewReserves(client *rpc.Client, url string, contracts *pulseroute.Contracts, wanted []pulseroute.Pair, next pulseroute.ChainState, cfg ReservesConfig) *Reserves {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultReservesPoll
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Reserves{client: client, factory: contracts.PulseX().Factory, next: next, cfg: cfg,
		ws: strings.HasPrefix(url, "ws://") || strings.HasPrefix(url, "wss://"), pairs: map[pulseroute.Pair]*pairInfo{}}
	seen := map[pulseroute.Pair]bool{}
	for _, p := range wanted {
		k := sortedPair(p.A, p.B)
		if k.A != k.B && !seen[k] {
			seen[k] = true
			r.wanted = append(r.wanted, k)
		}
	}
	return r
}

// Start runs the refresh loop until ctx ends and returns a function that
// stops it and waits for it. With MaxAge 0 nothing runs.
func (r *Reserves) Start(ctx context.Context) (stop func()) {
	if r.cfg.MaxAge <= 0 {
		return r.close
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.run(ctx)
	}()
	return func() {
		cancel()
		wg.Wait()
		r.close()
	}
}

// close closes the client when the reader dialled it.
func (r *Reserves) close() {
	if r.owned {
		r.client.Close()
	}
}

// run is the refresh loop: a first read at once, then on every new head
// (subscription) or every Poll (eth_blockNumber).
func (r *Reserves) run(ctx context.Context) {
	var (
		heads     chan *types.Header
		sub       *rpc.ClientSubscription
		subErr    <-chan error
		lastTried time.Time
		lastHead  time.Time
	)
	quiet := 10 * r.cfg.Poll
	subscribe := func() {
		if !r.ws || sub != nil || r.cfg.Now().Sub(lastTried) < quiet {
			return
		}
		lastTried = r.cfg.Now()
		heads = make(chan *types.Header, 16)
		s, err := r.client.EthSubscribe(ctx, heads, "newHeads")
		if err != nil {
			r.cfg.Logger.Warn("pulseroute reserves: no newHeads subscription; polling eth_blockNumber", "err", err)
			return
		}
		sub, subErr, lastHead = s, s.Err(), r.cfg.Now()
	}
	defer func() {
		if sub != nil {
			sub.Unsubscribe()
		}
	}()
	subscribe()
	r.poll(ctx)
	t := time.NewTicker(r.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case h := <-heads:
			if h != nil && h.Number != nil {
				lastHead = r.cfg.Now()
				r.atBlock(ctx, h.Number.Uint64())
			}
		case err := <-subErr:
			r.cfg.Logger.Warn("pulseroute reserves: newHeads subscription dropped; polling eth_blockNumber", "err", err)
			sub, subErr, heads = nil, nil, nil
		case <-t.C:
			subscribe()
			if sub == nil || r.cfg.Now().Sub(lastHead) >= quiet {
				r.poll(ctx)
			}
		}
	}
}

// poll reads the head's number and refreshes on a new block.
func (r *Reserves) poll(ctx context.Context) {
	var n hexutil.Uint64
	if err := noderead.Read(ctx, r.cfg.Timeout, func(ctx context.Context) error {
		return r.client.CallContext(ctx, &n, "eth_blockNumber")
	}); err != nil {
		r.failed(ctx, fmt.Errorf("eth_blockNumber: %w", err))
		return
	}
	r.atBlock(ctx, uint64(n))
}

// failed logs the first of a run of failed reads; the snapshot ages
// meanwhile, and past MaxAge the router prices the leg.
func (r *Reserves) failed(ctx context.Context, err error) {
	if ctx.Err() != nil || r.failing {
		return
	}
	r.failing = true
	r.cfg.Logger.Warn("pulseroute reserves: a read failed; the snapshot ages until one succeeds, the router pricing PulseX once it is older than the max age", "err", err)
}

// atBlock refreshes the snapshot unless it is already block's.
func (r *Reserves) atBlock(ctx context.Context, block uint64) {
	if s := r.snap.Load(); s != nil && s.block == block {
		r.seen.Store(r.cfg.Now().UnixNano())
		return
	}
	if err := r.refresh(ctx, block); err != nil {
		r.failed(ctx, fmt.Errorf("block %d: %w", block, err))
		return
	}
	if r.failing {
		r.failing = false
		r.cfg.Logger.Info("pulseroute reserves: reads succeed again", "block", block)
	}
}

// ethCall is one eth_call of a batch at the latest block.
func ethCall(to common.Address, data []byte, result *hexutil.Bytes) rpc.BatchElem {
	return rpc.BatchElem{Method: "eth_call", Args: []any{map[string]any{"to": to, "input": hexutil.Bytes(data)}, "latest"}, Result: result}
}

// batch sends calls in batches of maxBatch, each bounded by the timeout;
// the elements carry their own errors.
func (r *Reserves) batch(ctx context.Context, calls []rpc.BatchElem) error {
	for len(calls) > 0 {
		n := min(len(calls), maxBatch)
		if err := noderead.Read(ctx, r.cfg.Timeout, func(ctx context.Context) error {
			return r.client.BatchCallContext(ctx, calls[:n])
		}); err != nil {
			return err
		}
		calls = calls[n:]
	}
	return nil
}

// refresh learns the pairs it does not know yet (getPair, then token0)
// and reads every known pair's reserves, publishing the snapshot only
// when every read succeeded: a partial one would price some hops at
// another block than others. A pair the factory has not answered for yet
// is left out (a path through it goes to the router) and asked again at
// the next block.
func (r *Reserves) refresh(ctx context.Context, block uint64) error {
	if err := r.learnPairs(ctx); err != nil {
		return err
	}
	type read struct {
		key pulseroute.Pair
		ret hexutil.Bytes
	}
	var reads []*read
	var calls []rpc.BatchElem
	data, err := pulseroute.ABI().Pack(pulseroute.MethodGetReserves)
	if err != nil {
		return fmt.Errorf("getReserves: %w", err)
	}
	next := &snapshot{block: block, pools: make(map[pulseroute.Pair]pool, len(r.wanted))}
	for _, k := range r.wanted {
		p := r.pairs[k]
		switch {
		case p == nil || (!p.none && !p.known0):
			continue
		case p.none:
			next.pools[k] = pool{none: true}
		default:
			rd := &read{key: k}
			reads = append(reads, rd)
			calls = append(calls, ethCall(p.addr, data, &rd.ret))
		}
	}
	if err := r.batch(ctx, calls); err != nil {
		return fmt.Errorf("getReserves: %w", err)
	}
	for i, rd := range reads {
		if calls[i].Error != nil {
			return fmt.Errorf("getReserves on %s: %w", r.pairs[rd.key].addr.Hex(), calls[i].Error)
		}
		out, err := pulseroute.UnpackOutputs(pulseroute.MethodGetReserves, rd.ret)
		if err != nil || len(out) < 2 {
			return fmt.Errorf("getReserves on %s: %d results, %w", r.pairs[rd.key].addr.Hex(), len(out), err)
		}
		r0, ok0 := out[0].(*big.Int)
		r1, ok1 := out[1].(*big.Int)
		if !ok0 || !ok1 {
			return fmt.Errorf("getReserves on %s: results are %T and %T", r.pairs[rd.key].addr.Hex(), out[0], out[1])
		}
		p := r.pairs[rd.key]
		// The pair's reserve0 is its token0's, the lower address on any
		// factory that sorts as UniswapV2's does; token0 as read decides.
		lo, hi := r0, r1
		if p.token0 != rd.key.A {
			lo, hi = r1, r0
		}
		next.pools[rd.key] = pool{low: lo, high: hi, lowAddress: rd.key.A}
	}
	r.snap.Store(next)
	r.seen.Store(r.cfg.Now().UnixNano())
	return nil
}

// learnPairs asks the factory for the pairs not yet known and each new
// pair for its token0, in two batches; a failed answer is asked again at
// the next block.
func (r *Reserves) learnPairs(ctx context.Context) error {
	var ask []pulseroute.Pair
	for _, k := range r.wanted {
		if r.pairs[k] == nil {
			ask = append(ask, k)
		}
	}
	if len(ask) > 0 {
		rets := make([]hexutil.Bytes, len(ask))
		calls := make([]rpc.BatchElem, len(ask))
		for i, k := range ask {
			data, err := pulseroute.ABI().Pack(pulseroute.MethodGetPair, k.A, k.B)
			if err != nil {
				return fmt.Errorf("getPair: %w", err)
			}
			calls[i] = ethCall(r.factory, data, &rets[i])
		}
		if err := r.batch(ctx, calls); err != nil {
			return fmt.Errorf("getPair on %s: %w", r.factory.Hex(), err)
		}
		for i, k := range ask {
			if calls[i].Error != nil {
				continue
			}
			out, err := pulseroute.UnpackOutputs(pulseroute.MethodGetPair, rets[i])
			if err != nil || len(out) != 1 {
				continue
			}
			addr, _ := out[0].(common.Address)
			r.pairs[k] = &pairInfo{addr: addr, none: addr == (common.Address{})}
		}
	}
	var need []*pairInfo
	for _, k := range r.wanted {
		if p := r.pairs[k]; p != nil && !p.none && !p.known0 {
			need = append(need, p)
		}
	}
	if len(need) == 0 {
		return nil
	}
	data, err := pulseroute.ABI().Pack(pulseroute.MethodToken0)
	if err != nil {
		return fmt.Errorf("token0: %w", err)
	}
	rets := make([]hexutil.Bytes, len(need))
	calls := make([]rpc.BatchElem, len(need))
	for i, p := range need {
		calls[i] = ethCall(p.addr, data, &rets[i])
	}
	if err := r.batch(ctx, calls); err != nil {
		return fmt.Errorf("token0: %w", err)
	}
	for i, p := range need {
		if calls[i].Error != nil {
			continue
		}
		out, err := pulseroute.UnpackOutputs(pulseroute.MethodToken0, rets[i])
		if err != nil || len(out) != 1 {
			continue
		}
		p.token0, _ = out[0].(common.Address)
		p.known0 = true
	}
	return nil
}

// current is the snapshot when it was seen current within MaxAge.
func (r *Reserves) current() *snapshot {
	s := r.snap.Load()
	if s == nil || r.cfg.MaxAge <= 0 {
		return nil
	}
	if r.cfg.Now().Sub(time.Unix(0, r.seen.Load())) > r.cfg.MaxAge {
		return nil
	}
	return s
}

// Age is how long ago the snapshot was last seen current, and false when
// there is none (local pricing off, or no refresh has succeeded yet).
func (r *Reserves) Age() (time.Duration, bool) {
	if r.cfg.MaxAge <= 0 || r.snap.Load() == nil {
		return 0, false
	}
	return r.cfg.Now().Sub(time.Unix(0, r.seen.Load())), true
}

// Fallbacks counts the PulseX amounts the router priced because the
// snapshot could not: stale, missing, or without a hop of the path.
func (r *Reserves) Fallbacks() uint64 { return r.fallbacks.Load() }

// hop is a hop's reserves, in and out, from s; ok is false when s does not
// hold the pair, and none when the factory has no such pair.
func (s *snapshot) hop(in, out common.Address) (rIn, rOut *big.Int, none, ok bool) {
	p, ok := s.pools[sortedPair(in, out)]
	if !ok {
		return nil, nil, false, false
	}
	if p.none {
		return nil, nil, true, true
	}
	if in == p.lowAddress {
		return p.low, p.high, false, true
	}
	return p.high, p.low, false, true
}

// errNoLiquidity is a hop the router would revert on: no pair, a reserve
// or an input of zero, or an output the pool cannot pay.
func errNoLiquidity(method string, in, out common.Address) error {
	return rpcFailure(method, fmt.Errorf("%w: %s/%s from its reserves", pulseroute.ErrNoPair, in.Hex(), out.Hex()))
}

// amountsOut is getAmountsOut from s, or ok false when s lacks a hop.
func (s *snapshot) amountsOut(amountIn *big.Int, path []common.Address) (amounts []*big.Int, ok bool, err error) {
	if len(path) < 2 {
		return nil, false, nil
	}
	amounts = []*big.Int{new(big.Int).Set(amountIn)}
	for i := 0; i+1 < len(path); i++ {
		rIn, rOut, none, ok := s.hop(path[i], path[i+1])
		if !ok {
			return nil, false, nil
		}
		// PulseXLibrary.getAmountOut requires a positive input and
		// reserves: the router reverts where they are not.
		if none || amounts[i].Sign() <= 0 || rIn.Sign() <= 0 || rOut.Sign() <= 0 {
			return nil, true, errNoLiquidity(pulseroute.MethodGetAmountsOut, path[i], path[i+1])
		}
		amounts = append(amounts, pulseroute.AmountOut(amounts[i], rIn, rOut))
	}
	return amounts, true, nil
}

// amountsIn is getAmountsIn from s, or ok false when s lacks a hop.
func (s *snapshot) amountsIn(amountOut *big.Int, path []common.Address) (amounts []*big.Int, ok bool, err error) {
	if len(path) < 2 {
		return nil, false, nil
	}
	amounts = make([]*big.Int, len(path))
	amounts[len(path)-1] = new(big.Int).Set(amountOut)
	for i := len(path) - 1; i > 0; i-- {
		rIn, rOut, none, ok := s.hop(path[i-1], path[i])
		if !ok {
			return nil, false, nil
		}
		if none || amounts[i].Sign() <= 0 {
			return nil, true, errNoLiquidity(pulseroute.MethodGetAmountsIn, path[i-1], path[i])
		}
		in := pulseroute.AmountIn(amounts[i], rIn, rOut)
		if in == nil {
			return nil, true, errNoLiquidity(pulseroute.MethodGetAmountsIn, path[i-1], path[i])
		}
		amounts[i-1] = in
	}
	return amounts, true, nil
}

// QuoteGasPayment is next's: the snapshot holds PulseX only.
func (r *Reserves) QuoteGasPayment(ctx context.Context, chainID uint64, destination uint32) (*big.Int, error) {
	return r.next.QuoteGasPayment(ctx, chainID, destination)
}

// AmountsOut prices the path from the snapshot when it is current and
// holds every hop, and asks the router otherwise.
func (r *Reserves) AmountsOut(ctx context.Context, amountIn *big.Int, path []common.Address) ([]*big.Int, error) {
	if s := r.current(); s != nil && amountIn != nil {
		if amounts, ok, err := s.amountsOut(amountIn, path); ok {
			return amounts, err
		}
	}
	if r.cfg.MaxAge > 0 {
		r.fallbacks.Add(1)
	}
	return r.next.AmountsOut(ctx, amountIn, path)
}

// AmountsIn prices the path backwards from the snapshot when it is
// current and holds every hop, and asks the router otherwise (when next
// reads PulseX backwards).
func (r *Reserves) AmountsIn(ctx context.Context, amountOut *big.Int, path []common.Address) ([]*big.Int, error) {
	if s := r.current(); s != nil && amountOut != nil {
		if amounts, ok, err := s.amountsIn(amountOut, path); ok {
			return amounts, err
		}
	}
	if r.cfg.MaxAge > 0 {
		r.fallbacks.Add(1)
	}
	in, ok := r.next.(pulseroute.AmountsInReader)
	if !ok {
		return nil, errors.New("getAmountsIn: the chain state does not read PulseX backwards")
	}
	return in.AmountsIn(ctx, amountOut, path)
}
