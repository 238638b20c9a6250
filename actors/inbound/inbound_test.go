package inbound

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// fakeChain shows every asked transaction as a successful step 1 that paid
// 25 USDC into Base's inbound receiver, its calldata naming a quote.
type fakeChain struct {
	contracts *pulseroute.Contracts
	from      common.Address
}

func (f *fakeChain) Evidence(_ context.Context, chainID uint64, _ common.Hash) (inbound.Evidence, error) {
	w, _ := f.contracts.WarpRoute(chainID)
	recv, _ := f.contracts.InboundReceiver(chainID)
	return inbound.Evidence{ChainID: chainID, State: inbound.TxMined, From: f.from, Status: 1, BlockNumber: 7, CallRef: [32]byte{1},
		Transfers: []inbound.Transfer{{Token: w.Token, From: common.HexToAddress("0xde"), To: recv, Amount: big.NewInt(25_000_000)}}}, nil
}

func (f *fakeChain) QuoteRef(context.Context, uint64, common.Hash) ([32]byte, bool, error) {
	return [32]byte{}, false, nil
}

// quoteTickets knows one quote, q1, whose minimum output is 50 units for
// the deposits' 25 USDC.
type quoteTickets struct{}

func (quoteTickets) Ticket(_ context.Context, id string) (*quote.Ticket, error) {
	if id != "q1" {
		return nil, fmt.Errorf("ticket %s: %w", id, store.ErrNotFound)
	}
	return &quote.Ticket{ID: id, PartnerID: "p1", ToAmountMin: "50000000"}, nil
}

// stepOptions are a test runner's options over w, its step-1 quote q1.
func stepOptions(contracts *pulseroute.Contracts, w *world) Options {
	return Options{Contracts: contracts, Txs: w, Nodes: w, Poll: time.Millisecond, BridgeHorizon: 200 * time.Millisecond,
		PendingRef: func([32]byte) (string, bool) { return "q1", true }}
}

func body(t *testing.T, chainID uint64, tx common.Hash, output common.Address) ([]byte, common.Address) {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/actors-inbound-test")))
	if err != nil {
		t.Fatal(err)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	to := common.HexToAddress("0x3333333333333333333333333333333333333333")
	msg := pulseroute.RegisterMessage{TxHash: tx, ToAddress: to, OutputToken: output, DestinationDomain: 369}
	digest, err := pulseroute.Hash(pulseroute.TypedData(chainID, msg))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	b, _ := json.Marshal(map[string]any{"txHash": tx.Hex(), "fromAddress": from.Hex(), "toAddress": to.Hex(),
		"outputToken": output.Hex(), "destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)})
	return b, from
}

// waitFinal waits for the deposit of tx to reach a terminal state.
func waitFinal(t *testing.T, r *Runner, tx common.Hash) *inbound.Record {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := r.Deposit(context.Background(), tx.Hex())
		if err == nil && got.Deposit.State.Terminal() {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("deposit stuck: %+v %v", got, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Step 2 is the operator's transactions through the transaction manager,
// each step once: the table gives what the chains do and the steps and
// end each deposit must show.
func TestStepTwoThroughTheTransactionManager(t *testing.T) {
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	usdch := contracts.USDCh().Token
	tests := []struct {
		name   string
		output common.Address
		set    func(w *world)
		final  inbound.State
		steps  string
		reason string
	}{
		{"the swap pays the asked token", plsx, nil, inbound.Completed, "approve bridge swap-approve swap", ""},
		{"the native coin: swapExactTokensForETH", common.Address{}, nil, inbound.Completed, "approve bridge swap-approve swap", ""},
		{"USDCh asked: a transfer once it arrived", usdch, nil, inbound.Completed, "approve bridge deliver", ""},
		{"allowances already there: no approvals", plsx, func(w *world) {
			w.allow[contracts.USDCh().Token.Hex()+"/"+contracts.PulseX().Router.Hex()] = true
			wr, _ := contracts.WarpRoute(8453)
			w.allow[wr.Token.Hex()+"/"+wr.Router.Hex()] = true
		}, inbound.Completed, "bridge swap", ""},
		{"the minimum cannot be met: the fallback, no swap", plsx, func(w *world) { w.rate = 1 }, inbound.RefundedUSDCh,
			"approve bridge swap-approve fallback", "DEX leg failed: PulseX getAmountsOut gives 25000000, under the quote's minimum output 50000000"},
		{"getAmountsOut reverts: the fallback", plsx, func(w *world) { w.revert = true }, inbound.RefundedUSDCh,
			"approve bridge swap-approve fallback", "DEX leg failed: PulseX getAmountsOut reverted: execution reverted: PulseXLibrary: INSUFFICIENT_LIQUIDITY"},
		{"the swap reverts: the fallback", plsx, func(w *world) { w.fail["swap"] = "execution reverted: PulseX: INSUFFICIENT_OUTPUT_AMOUNT" },
			inbound.RefundedUSDCh, "approve bridge swap-approve swap fallback",
			"DEX leg failed: the PulseX swap failed: execution reverted: PulseX: INSUFFICIENT_OUTPUT_AMOUNT"},
		{"transferRemote reverts: FAILED, nothing on 369", plsx, func(w *world) { w.fail["bridge"] = "execution reverted: IGP: insufficient interchain gas payment" },
			inbound.Failed, "approve bridge",
			"transferRemote failed: execution reverted: IGP: insufficient interchain gas payment; the USDC waits with the operator account on chain 8453 for an operator"},
		{"the fallback's transfer fails: FAILED", plsx, func(w *world) { w.rate = 1; w.fail["fallback"] = "execution reverted: paused" },
			inbound.Failed, "approve bridge swap-approve fallback",
			"the fallback's USDCh transfer to toAddress failed: execution reverted: paused; the USDCh waits with the operator account on chain 369 for an operator"},
		{"nothing arrives within the horizon: FAILED", plsx, func(w *world) { w.deliver = false }, inbound.Failed, "approve bridge", "the bridge to chain 369 did not deliver within"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			if tt.set != nil {
				tt.set(w)
			}
			tx := common.BigToHash(big.NewInt(int64(1000 + i)))
			b, from := body(t, 8453, tx, tt.output)
			chain := &fakeChain{contracts: contracts, from: from}
			r, err := Start(ctx, st, chain, quoteTickets{}, stepOptions(contracts, w))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Stop()
			d, perr := r.Register(ctx, b)
			if perr != nil {
				t.Fatal(perr)
			}
			if d.Deposit.State != inbound.Received || d.Deposit.SourceChain != 8453 || d.Deposit.AmountIn.Int64() != 25_000_000 {
				t.Fatalf("registered %+v", d.Deposit)
			}
			d = waitFinal(t, r, tx)
			steps, twice := w.steps()
			if got := strings.Join(steps, " "); got != tt.steps || twice {
				t.Fatalf("steps %q (a key twice: %v), want %q", got, twice, tt.steps)
			}
			dep := d.Deposit
			if dep.State != tt.final || !strings.HasPrefix(dep.Reason, tt.reason) || dep.Fallback != strings.Contains(tt.steps, "fallback") {
				t.Fatalf("final %s %q fallback %v, want %s %q", dep.State, dep.Reason, dep.Fallback, tt.final, tt.reason)
			}
			// Every mined step is in the status and the events, the bridge
			// and the payment on 369 in their own fields too.
			data := dep.Data()
			if len(data.Transactions) != len(steps) {
				t.Fatalf("transactions %+v, want %d", data.Transactions, len(steps))
			}
			for i, s := range steps {
				want := crypto.Keccak256Hash([]byte(inbound.IntentKey(tx, s))).Hex()
				if got := data.Transactions[i]; got.Step != s || got.TxHash != want {
					t.Fatalf("transaction %d %+v, want %s %s", i, got, s, want)
				}
			}
			if data.BridgeTxHash != crypto.Keccak256Hash([]byte(inbound.IntentKey(tx, "bridge"))).Hex() && tt.final != inbound.Failed {
				t.Fatalf("bridgeTxHash %s", data.BridgeTxHash)
			}
			switch tt.final {
			case inbound.Completed:
				last := steps[len(steps)-1]
				want := new(big.Int).Mul(dep.AmountIn, big.NewInt(3))
				if last == "deliver" {
					want = dep.AmountIn
				}
				if data.DestinationTxHash != crypto.Keccak256Hash([]byte(inbound.IntentKey(tx, last))).Hex() || dep.AmountOut.Cmp(want) != 0 {
					t.Fatalf("completed: %+v", data)
				}
			case inbound.RefundedUSDCh:
				if dep.DeliveredToken != usdch || dep.AmountOut.Cmp(dep.AmountIn) != 0 ||
					data.DestinationTxHash != crypto.Keccak256Hash([]byte(inbound.IntentKey(tx, "fallback"))).Hex() {
					t.Fatalf("refunded: %+v", data)
				}
			}
			// The same body again is the same deposit; another body for the
			// same transaction is refused.
			if again, perr := r.Register(ctx, b); perr != nil || again.Deposit.State != tt.final {
				t.Fatalf("replay: %+v %v", again, perr)
			}
			other, _ := body(t, 8453, tx, usdch)
			if tt.output == usdch {
				other, _ = body(t, 8453, tx, plsx)
			}
			if _, perr := r.Register(ctx, other); perr == nil || perr.Code != apierr.InvalidParams || perr.Details["param"] != "txHash" {
				t.Fatalf("another body for a registered txHash: %v", perr)
			}
		})
	}
}

// A runner stopped after each of step 2's submissions (and a Submit that
// stored its intent but never answered) and started again on the same
// store resumes from what was stored: every step is submitted once, and
// the swap decided before the stop is followed, not decided again, even
// when the pool has since moved under the minimum.
func TestStepTwoResumesWithoutSendingTwice(t *testing.T) {
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	for crashInSubmit := 0; crashInSubmit < 2; crashInSubmit++ {
		w := newWorld()
		for _, s := range []string{"approve", "bridge", "swap-approve", "swap"} {
			w.hold[s] = true
		}
		tx := common.BigToHash(big.NewInt(int64(3000 + crashInSubmit)))
		b, from := body(t, 8453, tx, plsx)
		chain := &fakeChain{contracts: contracts, from: from}
		start := func() *Runner {
			r, err := Start(ctx, st, chain, quoteTickets{}, stepOptions(contracts, w))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		r := start()
		if _, perr := r.Register(ctx, b); perr != nil {
			t.Fatal(perr)
		}
		for n, s := range []string{"approve", "bridge", "swap-approve", "swap"} {
			w.mu.Lock()
			w.crashSubmit = crashInSubmit
			w.mu.Unlock()
			deadline := time.Now().Add(10 * time.Second)
			for steps, _ := w.steps(); len(steps) < n+1; steps, _ = w.steps() {
				if time.Now().After(deadline) {
					t.Fatalf("step %s never submitted: %v", s, steps)
				}
				time.Sleep(time.Millisecond)
			}
			r.Stop()
			if s == "swap" {
				w.mu.Lock()
				w.rate = 1 // the pool moved: a swap decided again would be a fallback
				w.mu.Unlock()
			}
			w.release(s)
			r = start()
		}
		d := waitFinal(t, r, tx)
		r.Stop()
		steps, twice := w.steps()
		if got := strings.Join(steps, " "); got != "approve bridge swap-approve swap" || twice || d.Deposit.State != inbound.Completed {
			t.Fatalf("crash in submit %d: steps %q twice %v final %+v", crashInSubmit, got, twice, d.Deposit)
		}
	}
}

// The sandbox's failing bridge (Options.BridgeFails) ends the deposit
// FAILED from RECEIVED with its reason, without the fallback and without a
// transaction: the USDC stays with the operator account.
func TestFailingBridgeEndsFailed(t *testing.T) {
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tx := common.BigToHash(big.NewInt(2000))
	b, from := body(t, 8453, tx, common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab"))
	chain := &fakeChain{contracts: contracts, from: from}
	var asked []string
	var mu sync.Mutex
	w := newWorld()
	o := stepOptions(contracts, w)
	o.BridgeFails = func(h string) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, h)
		return true
	}
	r, err := Start(ctx, st, chain, quoteTickets{}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if _, perr := r.Register(ctx, b); perr != nil {
		t.Fatal(perr)
	}
	d := waitFinal(t, r, tx)
	if d.Deposit.State != inbound.Failed || d.Deposit.Fallback || d.Deposit.AmountOut != nil || d.Deposit.BridgeTxHash != (common.Hash{}) ||
		d.Deposit.Reason != "the bridge to chain 369 could not be sent (the sandbox's failing bridge); the USDC waits with the operator account on chain 8453 for an operator" {
		t.Fatalf("final %+v", d.Deposit)
	}
	if steps, _ := w.steps(); len(steps) != 0 {
		t.Fatalf("a failed bridge sent %v", steps)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != tx.Hex() {
		t.Fatalf("BridgeFails asked for %v, want once for %s", asked, tx.Hex())
	}
}

// A deposit in FALLBACK whose swap intent exists (submitted by a node that
// still ran it when another decided the fallback, in a cluster's
// handover) waits for that swap, and sends no fallback once it paid.
func TestFallbackDefersToASwapAlreadySubmitted(t *testing.T) {
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := newWorld()
	w.hold["swap"] = true
	r, err := Start(ctx, st, &fakeChain{contracts: contracts}, quoteTickets{}, stepOptions(contracts, w))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	tx := common.BigToHash(big.NewInt(4000))
	key := inbound.IntentKey(tx, inbound.StepSwap)
	if _, err := w.Submit(ctx, txintent.Request{Purpose: "inbound.swap", Key: key, ChainID: 369, To: contracts.PulseX().Router, GasLimit: 1,
		Data: mustSwapData(t, contracts)}); err != nil {
		t.Fatal(err)
	}
	rec := &inbound.Record{Deposit: inbound.Deposit{State: inbound.Fallback, AmountIn: big.NewInt(25_000_000),
		Registration: inbound.Registration{TxHash: tx, OutputToken: common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")}}}
	if m := r.next(rec); m.wait <= 0 || m.progress != nil || m.update.Trigger != "" {
		t.Fatalf("with the swap in flight: %+v, want a wait", m)
	}
	w.release("swap")
	m := r.next(rec)
	if m.update.Trigger != inbound.FallbackFailed || !strings.Contains(m.update.Reason, "paid toAddress after the fallback was decided") {
		t.Fatalf("after the swap paid: %+v, want no fallback", m)
	}
	if steps, _ := w.steps(); strings.Join(steps, " ") != "swap" {
		t.Fatalf("steps %v, want the swap alone", steps)
	}
}

func mustSwapData(t *testing.T, contracts *pulseroute.Contracts) []byte {
	t.Helper()
	data, err := pulseroute.SwapExactTokensForTokens(big.NewInt(25_000_000), big.NewInt(1),
		[]common.Address{contracts.USDCh().Token, common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")}, common.HexToAddress("0x3333"), big.NewInt(1))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
