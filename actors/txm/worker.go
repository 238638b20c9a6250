package txm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/store"
)

// worker is one account on one chain: it alone writes that account's
// intents, so that its in-memory copies (with their versions) are the
// stored ones.
type worker struct {
	m       *manager
	chainID uint64
	node    Node
	account common.Address
	feeCap  *big.Int

	wake   chan struct{}
	rescan atomic.Bool

	qmu   sync.Mutex
	queue []*txintent.Intent // queued, in submission order
	known map[string]bool    // IDs queued or in flight (under qmu)
	next  uint64             // the next nonce to allocate
	// reconciled is set once next was reconciled with the node.
	reconciled bool
	// stale is set when a write of this round found the store moved on.
	stale  bool
	flight []*txintent.Intent // signed, sent or mined, in nonce order
	final  []*txintent.Intent // final, hooks not yet returned
	// unseen is when an intent's nonce was first seen used with no
	// receipt for any of its transactions.
	unseen map[string]time.Time

	inFlight atomic.Int64
	// active is set while the worker holds the account's state (it owns
	// the account and read the store).
	active atomic.Bool
	// balance is the account's last read native balance; balanceAt when.
	balance   atomic.Pointer[big.Int]
	balanceAt time.Time
}

func (w *worker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) enqueue(in *txintent.Intent) {
	if !w.active.Load() {
		return // read from the store by the owner, or here once resumed
	}
	w.qmu.Lock()
	if !w.known[in.ID] {
		w.known[in.ID] = true
		w.queue = append(w.queue, in)
	}
	w.qmu.Unlock()
	w.poke()
}

func (w *worker) logger() *slog.Logger {
	return w.m.log.With(slog.Uint64("chainId", w.chainID), slog.String("account", w.account.Hex()))
}

// resume reads the chain's open intents and reconciles the account's
// next nonce: the higher of the store's and the node's pending count.
func (w *worker) resume(ctx context.Context) error {
	st := w.m.opts.Store
	ins, err := st.ListTxIntents(ctx, txintent.Query{Open: true, Unhandled: true, ChainID: w.chainID})
	if err != nil {
		return fmt.Errorf("txm: resume chain %d: %w", w.chainID, err)
	}
	w.qmu.Lock()
	for _, in := range ins {
		switch {
		case in.Final():
			w.final = append(w.final, in)
		case in.State == txintent.Queued:
			if !w.known[in.ID] {
				w.known[in.ID] = true
				w.queue = append(w.queue, in)
			}
		default:
			w.known[in.ID] = true
			w.flight = append(w.flight, in)
		}
	}
	w.qmu.Unlock()
	sortByNonce(w.flight)
	w.inFlight.Store(int64(len(w.flight)))
	w.active.Store(true)
	return nil
}

// owned reports whether this node works the account (always, outside a
// cluster).
func (w *worker) owned() bool {
	o := w.m.opts.Owner
	return o == nil || o.Owns(OwnerKey(w.chainID, w.account))
}

// deactivate drops what the worker holds in memory, to be read again
// from the store: the account moved to another node, or a write found
// the store moved on (another node's write).
func (w *worker) deactivate() {
	w.active.Store(false)
	w.qmu.Lock()
	w.queue, w.known = nil, map[string]bool{}
	w.qmu.Unlock()
	w.flight, w.final, w.unseen, w.reconciled = nil, nil, map[string]time.Time{}, false
	w.inFlight.Store(0)
}

// reconcile sets the next nonce to the higher of the store's and the
// node's pending count, before anything is signed: the node may have
// transactions the store never saw (the key used elsewhere), the store
// signed ones the node never got. A node down at start delays it (and
// all signing) to a later round rather than failing the start.
func (w *worker) reconcile(ctx context.Context) error {
	pending, err := w.node.PendingNonceAt(ctx, w.account)
	if err != nil {
		return fmt.Errorf("pending nonce of %s: %w", w.account.Hex(), err)
	}
	if w.next, err = w.m.opts.Store.RaiseNonce(ctx, w.chainID, w.account.Hex(), pending); err != nil {
		return err
	}
	w.reconciled = true
	return nil
}

func (w *worker) run(ctx context.Context) {
	t := time.NewTicker(w.m.opts.Poll)
	defer t.Stop()
	for {
		more := w.step(ctx)
		if ctx.Err() != nil {
			return
		}
		if more {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-t.C:
		}
	}
}

// step does one round: signs queued intents, broadcasts what is signed,
// follows what is sent and mined, and runs the hooks of final intents. It
// reports whether queued intents are left for another round at once.
func (w *worker) step(ctx context.Context) bool {
	log := w.logger()
	if !w.owned() {
		if w.active.Load() {
			log.Info("txm: the account moved to another node")
			w.deactivate()
		}
		return false
	}
	if !w.active.Load() {
		if err := w.resume(ctx); err != nil {
			log.Warn("txm: resume", slog.Any("err", err))
			return false
		}
	}
	if w.m.opts.Owner != nil {
		w.rescan.Store(true) // other nodes store intents without a word
	}
	if w.rescan.Swap(false) {
		if err := w.scanQueued(ctx); err != nil {
			log.Warn("txm: read queued intents", slog.Any("err", err))
			w.rescan.Store(true)
		}
	}
	if !w.reconciled {
		if err := w.reconcile(ctx); err != nil {
			if ctx.Err() == nil {
				log.Warn("txm: reconcile the nonce", slog.Any("err", err))
			}
			return false
		}
	}
	more, err := w.signQueued(ctx)
	if err != nil && ctx.Err() == nil {
		log.Warn("txm: sign queued intents", slog.Any("err", err))
		more = false
	}
	if err := w.follow(ctx); err != nil && ctx.Err() == nil {
		log.Warn("txm: follow intents", slog.Any("err", err))
	}
	w.runHooks(ctx)
	w.inFlight.Store(int64(len(w.flight)))
	w.checkBalance(ctx)
	return more
}

// checkBalance reads the account's balance every BalanceEvery and warns
// when it is under MinBalance: intents would soon stop being mined.
func (w *worker) checkBalance(ctx context.Context) {
	now := w.m.now()
	if !w.balanceAt.IsZero() && now.Sub(w.balanceAt) < w.m.opts.BalanceEvery {
		return
	}
	w.balanceAt = now
	b, err := w.node.BalanceAt(ctx, w.account, nil)
	if err != nil {
		w.logger().Warn("txm: read the account's balance", slog.Any("err", err))
		return
	}
	w.balance.Store(b)
	if min := w.m.opts.MinBalance; min != nil && b.Cmp(min) < 0 {
		w.logger().Warn("txm: the operator's balance is under --operator-min-balance", slog.String("balance", b.String()), slog.String("min", min.String()))
	}
}

// scanQueued adds the store's queued intents of the chain not yet known
// (stored by another process, which called Wake).
func (w *worker) scanQueued(ctx context.Context) error {
	ins, err := w.m.opts.Store.ListTxIntents(ctx, txintent.Query{Open: true, State: txintent.Queued, ChainID: w.chainID})
	if err != nil {
		return err
	}
	w.qmu.Lock()
	defer w.qmu.Unlock()
	for _, in := range ins {
		if !w.known[in.ID] {
			w.known[in.ID] = true
			w.queue = append(w.queue, in)
		}
	}
	return nil
}

// signQueued signs up to signBatch queued intents with the next nonces,
// stores them (state signed, nonce allocated) in one write, and only then
// broadcasts them in nonce order.
func (w *worker) signQueued(ctx context.Context) (bool, error) {
	w.qmu.Lock()
	n := min(len(w.queue), signBatch)
	batch := append([]*txintent.Intent(nil), w.queue[:n]...)
	more := len(w.queue) > n
	w.qmu.Unlock()
	if n == 0 {
		return false, nil
	}
	head, err := w.node.HeaderByNumber(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("head: %w", err)
	}
	tip, err := w.node.SuggestGasTipCap(ctx)
	if err != nil {
		return false, fmt.Errorf("tip: %w", err)
	}
	fees, capped := txintent.Initial(head.BaseFee, tip, w.feeCap)
	if capped {
		w.logger().Warn("txm: fees held at the chain's fee cap", slog.String("maxFeePerGas", fees.MaxFeePerGas.String()))
	}
	chainID := new(big.Int).SetUint64(w.chainID)
	now := w.m.now().UTC()
	signed := make([]*txintent.Intent, 0, n)
	for i, in := range batch {
		c := in.Clone()
		tx, err := w.sign(ctx, chainID, c, w.next+uint64(i), fees)
		if err != nil {
			// Those before it are stored and sent; it waits for the next
			// round with the nonce after theirs.
			if len(signed) == 0 {
				return false, err
			}
			w.logger().Warn("txm: sign", slog.String("intent", in.ID), slog.Any("err", err))
			break
		}
		if err := c.AddTx(tx); err != nil {
			return false, err
		}
		if err := c.Move(txintent.Signed, now); err != nil {
			return false, err
		}
		signed = append(signed, c)
	}
	if err := w.m.opts.Store.UpdateTxIntents(ctx, signed); err != nil {
		if errors.Is(err, store.ErrStale) {
			w.deactivate() // another node signed them: read the store again
		}
		return false, fmt.Errorf("store signed intents: %w", err)
	}
	w.next += uint64(len(signed))
	w.qmu.Lock()
	w.queue = w.queue[len(signed):]
	w.qmu.Unlock()
	w.flight = append(w.flight, signed...)
	return more || len(signed) < n, nil
}

// sign makes in's transaction with nonce and fees.
func (w *worker) sign(ctx context.Context, chainID *big.Int, in *txintent.Intent, nonce uint64, fees txintent.Fees) (txintent.Tx, error) {
	to := common.HexToAddress(in.To)
	unsigned := types.NewTx(&types.DynamicFeeTx{ChainID: chainID, Nonce: nonce, GasTipCap: fees.MaxPriorityFeePerGas,
		GasFeeCap: fees.MaxFeePerGas, Gas: in.GasLimit, To: &to, Value: parseWei(in.Value), Data: in.Data})
	tx, err := w.m.opts.Signer.SignTx(ctx, chainID, unsigned)
	if err != nil {
		return txintent.Tx{}, fmt.Errorf("sign intent %s: %w", in.ID, err)
	}
	// What comes back is held to what was asked, field by field, and to
	// the account's signature: an external signer is another process, and
	// its answer is broadcast as it is.
	if tx.Type() != types.DynamicFeeTxType || tx.ChainId().Cmp(chainID) != 0 || tx.Nonce() != nonce ||
		tx.GasFeeCap().Cmp(fees.MaxFeePerGas) != 0 || tx.GasTipCap().Cmp(fees.MaxPriorityFeePerGas) != 0 ||
		tx.To() == nil || *tx.To() != to || tx.Gas() != in.GasLimit || tx.Value().Cmp(unsigned.Value()) != 0 ||
		!bytes.Equal(tx.Data(), in.Data) || len(tx.AccessList()) != 0 {
		return txintent.Tx{}, fmt.Errorf("sign intent %s: the signer changed the transaction", in.ID)
	}
	if from, err := types.Sender(types.LatestSignerForChainID(chainID), tx); err != nil || from != w.account {
		return txintent.Tx{}, fmt.Errorf("sign intent %s: the transaction is not signed by %s", in.ID, w.account.Hex())
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return txintent.Tx{}, err
	}
	return txintent.Tx{Hash: tx.Hash().Hex(), Nonce: nonce, MaxFeePerGas: fees.MaxFeePerGas.String(),
		MaxPriorityFeePerGas: fees.MaxPriorityFeePerGas.String(), Raw: raw}, nil
}

// follow broadcasts what is stored and not yet sent, reads receipts of
// what is mined, bumps what waited BumpAfter, confirms and fails; every
// change of the round is stored in one write.
func (w *worker) follow(ctx context.Context) error {
	if len(w.flight) == 0 {
		return nil
	}
	latest, err := w.node.NonceAt(ctx, w.account, nil)
	if err != nil {
		return fmt.Errorf("latest nonce: %w", err)
	}
	var head uint64
	now := w.m.now().UTC()
	var changed []*txintent.Intent
	var baseFee *big.Int
	blocked := false // a send failed: later nonces wait for the next round
	for _, in := range w.flight {
		if ctx.Err() != nil {
			break
		}
		c := in.Clone()
		moved, err := w.advance(ctx, c, latest, &head, &baseFee, &blocked, now)
		if err != nil {
			w.logger().Warn("txm: intent", slog.String("intent", in.ID), slog.Any("err", err))
		}
		if moved {
			changed = append(changed, c)
		}
	}
	if w.stale {
		// Another node wrote the account's intents: read them again.
		w.stale = false
		w.deactivate()
		return fmt.Errorf("the store moved on: %w", store.ErrStale)
	}
	if len(changed) == 0 {
		return nil
	}
	if err := w.m.opts.Store.UpdateTxIntents(ctx, changed); err != nil {
		if errors.Is(err, store.ErrStale) {
			w.deactivate()
			return fmt.Errorf("store %d intents: %w", len(changed), err)
		}
		w.reload(ctx)
		return fmt.Errorf("store %d intents: %w", len(changed), err)
	}
	byID := make(map[string]*txintent.Intent, len(changed))
	for _, c := range changed {
		byID[c.ID] = c
	}
	keep := w.flight[:0]
	for _, in := range w.flight {
		if c, ok := byID[in.ID]; ok {
			in = c
		}
		if in.Final() {
			w.final = append(w.final, in)
			w.qmu.Lock()
			delete(w.known, in.ID)
			w.qmu.Unlock()
			continue
		}
		keep = append(keep, in)
	}
	w.flight = keep
	return nil
}

// advance moves one intent as far as it goes this round and reports
// whether it changed (then it is stored by the caller). A replacement is
// stored by advance itself before it is sent.
func (w *worker) advance(ctx context.Context, in *txintent.Intent, latest uint64, head *uint64, baseFee **big.Int, blocked *bool, now time.Time) (bool, error) {
	nonce := *in.Nonce
	changed := false
	if nonce < latest && in.State != txintent.Mined {
		// The nonce is used: one of the stored transactions was mined,
		// or another one took the nonce.
		ok, err := w.findMined(ctx, in, head, now)
		if err != nil || ok {
			return ok, err
		}
		// A receipt may lag its block on a node behind a balancer: the
		// intent fails only when none appeared within BumpAfter.
		first, seen := w.unseen[in.ID]
		if !seen {
			w.unseen[in.ID] = now
			return false, nil
		}
		if now.Sub(first) < w.m.opts.BumpAfter {
			return false, nil
		}
		delete(w.unseen, in.ID)
		err = in.Fail(fmt.Sprintf("nonce %d was used by a transaction this intent did not send", nonce), now)
		return err == nil, err
	}
	switch in.State {
	case txintent.Signed:
		if *blocked {
			return false, nil
		}
		if err := w.send(ctx, in, len(in.Txs)-1, now); err != nil {
			*blocked = true
			return false, err
		}
		return true, in.Move(txintent.Sent, now)
	case txintent.Sent:
		last := in.Last()
		if last.SentAt.IsZero() {
			// A replacement stored and not yet sent (a crash between).
			if *blocked {
				return false, nil
			}
			if err := w.send(ctx, in, len(in.Txs)-1, now); err != nil {
				*blocked = true
				return false, err
			}
			changed = true
		}
		if now.Sub(last.SentAt) < w.m.opts.BumpAfter || last.SentAt.IsZero() {
			return changed, nil
		}
		return w.bump(ctx, in, baseFee, now)
	case txintent.Mined:
		if *head == 0 {
			h, err := w.node.BlockNumber(ctx)
			if err != nil {
				return false, err
			}
			*head = h
		}
		return w.confirm(ctx, in, *head, now)
	}
	return false, nil
}

// send broadcasts in.Txs[i]'s stored bytes. The node's "already known" and
// "nonce too low" are not failures: the transaction is pending, or the
// nonce is mined (which receipts say).
func (w *worker) send(ctx context.Context, in *txintent.Intent, i int, now time.Time) error {
	t := &in.Txs[i]
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(t.Raw); err != nil {
		return fmt.Errorf("stored transaction %s: %w", t.Hash, err)
	}
	err := w.node.SendTransaction(ctx, tx)
	if err != nil && !nodeSays(err, "already known", "known transaction", "nonce too low", "replacement transaction underpriced") {
		in.Reason = err.Error()
		return fmt.Errorf("send %s: %w", t.Hash, err)
	}
	t.SentAt = now
	in.Reason = ""
	return nil
}

// findMined reads the receipts of every stored hash of in: at most one can
// be mined, all sharing the nonce. It records it (mined, or failed when
// reverted) and reports whether one was found.
func (w *worker) findMined(ctx context.Context, in *txintent.Intent, head *uint64, now time.Time) (bool, error) {
	for i := len(in.Txs) - 1; i >= 0; i-- {
		t := &in.Txs[i]
		r, err := w.node.TransactionReceipt(ctx, common.HexToHash(t.Hash))
		if errors.Is(err, ethereum.NotFound) || (err == nil && r == nil) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("receipt %s: %w", t.Hash, err)
		}
		t.BlockNumber, t.BlockHash, t.Status = r.BlockNumber.Uint64(), r.BlockHash.Hex(), r.Status
		if t.SentAt.IsZero() {
			t.SentAt = now
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return true, in.Fail(w.revertReason(ctx, in, r), now)
		}
		if err := in.Move(txintent.Mined, now); err != nil {
			return false, err
		}
		if *head < t.BlockNumber {
			h, err := w.node.BlockNumber(ctx)
			if err != nil {
				return true, nil
			}
			*head = h
		}
		_, err = w.confirm(ctx, in, *head, now)
		return true, err
	}
	return false, nil
}

// revertReason replays the call at the head (the sandbox keeps no older
// state) for the node's words; a call that now succeeds says only where
// it reverted.
func (w *worker) revertReason(ctx context.Context, in *txintent.Intent, r *types.Receipt) string {
	to := common.HexToAddress(in.To)
	_, err := w.node.CallContract(ctx, ethereum.CallMsg{From: w.account, To: &to, Gas: in.GasLimit,
		Value: parseWei(in.Value), Data: in.Data}, nil)
	if err != nil {
		return fmt.Sprintf("reverted in block %d: %v", r.BlockNumber.Uint64(), err)
	}
	return fmt.Sprintf("reverted in block %d", r.BlockNumber.Uint64())
}

// confirm moves a mined intent to confirmed once its block is
// Confirmations deep and still holds its transaction; a receipt gone or
// moved (a reorganisation) sends it back to sent.
func (w *worker) confirm(ctx context.Context, in *txintent.Intent, head uint64, now time.Time) (bool, error) {
	t := in.MinedTx()
	if t == nil || head+1 < t.BlockNumber+w.m.opts.Confirmations {
		return false, nil
	}
	r, err := w.node.TransactionReceipt(ctx, common.HexToHash(t.Hash))
	if errors.Is(err, ethereum.NotFound) || (err == nil && (r == nil || r.BlockHash.Hex() != t.BlockHash)) {
		t.BlockNumber, t.BlockHash, t.Status = 0, "", 0
		return true, in.Move(txintent.Sent, now)
	}
	if err != nil {
		return false, err
	}
	return true, in.Move(txintent.Confirmed, now)
}

// bump replaces in's last transaction by one with the same nonce and both
// fees 12.5% higher (at least twice the base fee plus the tip), up to the
// fee cap; the replacement is stored before it is sent.
func (w *worker) bump(ctx context.Context, in *txintent.Intent, baseFee **big.Int, now time.Time) (bool, error) {
	if *baseFee == nil {
		h, err := w.node.HeaderByNumber(ctx, nil)
		if err != nil {
			return false, err
		}
		price, err := w.node.SuggestGasPrice(ctx)
		if err != nil {
			return false, err
		}
		*baseFee = price
		if h.BaseFee != nil && h.BaseFee.Cmp(price) > 0 {
			*baseFee = h.BaseFee
		}
	}
	last := in.Last()
	fees, ok := txintent.Bump(txintent.Fees{MaxFeePerGas: parseWei(last.MaxFeePerGas), MaxPriorityFeePerGas: parseWei(last.MaxPriorityFeePerGas)}, *baseFee, w.feeCap)
	if !ok {
		// No replacement fits under the cap: the same bytes are sent
		// again (a node that dropped them takes them back) and wait.
		w.logger().Warn("txm: the fee cap leaves no room for a replacement", slog.String("intent", in.ID), slog.String("maxFeePerGas", last.MaxFeePerGas))
		return true, w.send(ctx, in, len(in.Txs)-1, now)
	}
	tx, err := w.sign(ctx, new(big.Int).SetUint64(w.chainID), in, *in.Nonce, fees)
	if err != nil {
		return false, err
	}
	if err := in.AddTx(tx); err != nil {
		return false, err
	}
	in.UpdatedAt = now
	if err := w.m.opts.Store.UpdateTxIntents(ctx, []*txintent.Intent{in}); err != nil {
		w.stale = w.stale || errors.Is(err, store.ErrStale)
		return false, fmt.Errorf("store replacement: %w", err)
	}
	w.m.bumps.Add(1)
	w.logger().Info("txm: replaced", slog.String("intent", in.ID), slog.String("hash", tx.Hash), slog.String("maxFeePerGas", tx.MaxFeePerGas))
	// Stored: the caller keeps this version, then the send is its own change.
	if err := w.send(ctx, in, len(in.Txs)-1, now); err != nil {
		return true, err
	}
	return true, nil
}

// runHooks calls the hooks of final intents and marks those whose hooks
// all returned nil handled; the others are tried again next round.
func (w *worker) runHooks(ctx context.Context) {
	keep := w.final[:0]
	for _, in := range w.final {
		ok := true
		for _, h := range w.m.hooksFor(in.Purpose) {
			if err := h(ctx, in.Clone()); err != nil {
				w.logger().Warn("txm: completion hook", slog.String("intent", in.ID), slog.Any("err", err))
				ok = false
				break
			}
		}
		if ok {
			if err := w.m.opts.Store.MarkTxIntentHandled(ctx, in.ID); err == nil {
				continue
			}
		}
		keep = append(keep, in)
	}
	w.final = keep
}

// reload reads the in-flight intents again after a failed write, which may
// have stored some of a round's changes (a replacement) and not others.
func (w *worker) reload(ctx context.Context) {
	for i, in := range w.flight {
		if got, err := w.m.opts.Store.TxIntent(ctx, in.ID); err == nil {
			w.flight[i] = got
		}
	}
}
