package inbound

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// fakeNode is a TxReader answering from fields, as go-ethereum's client
// would map a node's answers; it counts the calls. The recorded node's
// answers over JSON-RPC are routing/adapters/evidencerpc's tests.
type fakeNode struct {
	tx         *types.Transaction
	pending    bool
	txErr      error
	receipt    *types.Receipt
	receiptErr error
	// head and headErr are BlockNumber's answer.
	head    uint64
	headErr error
	// block, when set, makes every call wait for its context's end.
	block bool

	mu       sync.Mutex
	txs      int
	receipts int
}

func (n *fakeNode) TransactionByHash(ctx context.Context, _ common.Hash) (*types.Transaction, bool, error) {
	n.mu.Lock()
	n.txs++
	n.mu.Unlock()
	if n.block {
		<-ctx.Done()
		return nil, false, ctx.Err()
	}
	return n.tx, n.pending, n.txErr
}

func (n *fakeNode) TransactionReceipt(context.Context, common.Hash) (*types.Receipt, error) {
	n.mu.Lock()
	n.receipts++
	n.mu.Unlock()
	return n.receipt, n.receiptErr
}

func (n *fakeNode) BlockNumber(context.Context) (uint64, error) { return n.head, n.headErr }

func (n *fakeNode) calls() (txs, receipts int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.txs, n.receipts
}

// signedTx is a transaction of the key of seed, signed for chainID (0:
// a legacy transaction without replay protection).
func signedTx(t *testing.T, seed string, chainID uint64, nonce uint64) *types.Transaction {
	t.Helper()
	key, _ := testKey(t, seed)
	to := testTo
	if chainID == 0 {
		tx, err := types.SignTx(types.NewTx(&types.LegacyTx{Nonce: nonce, GasPrice: big.NewInt(1), Gas: 21_000, To: &to}), types.HomesteadSigner{}, key)
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	id := new(big.Int).SetUint64(chainID)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{ChainID: id, Nonce: nonce,
		GasTipCap: big.NewInt(0), GasFeeCap: big.NewInt(1), Gas: 21_000, To: &to})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestReadEvidence maps each answer a node can give, through the TxReader
// interface, to the Evidence or the error the Evidence doc comment names:
// not found, pending and mined with the sender recovered from the
// signature; a failed read, and an answer about another transaction or
// from another chain, an error.
func TestReadEvidence(t *testing.T) {
	const chain = 42161
	_, depositor := testKey(t, "depositor")
	tx := signedTx(t, "depositor", chain, 7)
	legacy := signedTx(t, "depositor", 0, 8)
	other := signedTx(t, "depositor", chain, 9)
	onBase := signedTx(t, "depositor", 8453, 7)
	receipt := func(of *types.Transaction, status uint64) *types.Receipt {
		return &types.Receipt{TxHash: of.Hash(), Status: status, BlockNumber: big.NewInt(312_457_108), Logs: []*types.Log{transferLog(testOutput, depositor, testTo, 5)}}
	}
	refused := errors.New("daily request count exceeded")
	cases := []struct {
		name     string
		node     *fakeNode
		hash     common.Hash // zero: the node's transaction's
		want     Evidence    // ChainID filled in below
		err      string      // a substring of the error, "" none
		receipts int
	}{
		{name: "unknown to the node", node: &fakeNode{txErr: ethereum.NotFound}, hash: testTx, want: Evidence{State: TxNotFound}},
		{name: "the read fails", node: &fakeNode{txErr: refused}, hash: testTx, err: "daily request count"},
		{name: "neither a transaction nor an error", node: &fakeNode{}, hash: testTx, err: "no transaction and no error"},
		{name: "another transaction", node: &fakeNode{tx: other}, hash: tx.Hash(), err: "the node answered " + other.Hash().Hex()},
		{name: "signed for another chain", node: &fakeNode{tx: onBase}, err: "signed for chain 8453"},
		{name: "pending", node: &fakeNode{tx: tx, pending: true}, want: Evidence{State: TxPending}},
		{name: "mined, successful", node: &fakeNode{tx: tx, receipt: receipt(tx, types.ReceiptStatusSuccessful)}, receipts: 1,
			want: Evidence{State: TxMined, From: depositor, Status: types.ReceiptStatusSuccessful, BlockNumber: 312_457_108,
				Transfers: []Transfer{{Token: testOutput, From: depositor, To: testTo, Amount: big.NewInt(5)}}}},
		{name: "mined, reverted", node: &fakeNode{tx: tx, receipt: receipt(tx, types.ReceiptStatusFailed)}, receipts: 1,
			want: Evidence{State: TxMined, From: depositor, Status: types.ReceiptStatusFailed, BlockNumber: 312_457_108,
				Transfers: []Transfer{{Token: testOutput, From: depositor, To: testTo, Amount: big.NewInt(5)}}}},
		{name: "legacy, without replay protection", node: &fakeNode{tx: legacy, receipt: receipt(legacy, types.ReceiptStatusSuccessful)}, receipts: 1,
			want: Evidence{State: TxMined, From: depositor, Status: types.ReceiptStatusSuccessful, BlockNumber: 312_457_108,
				Transfers: []Transfer{{Token: testOutput, From: depositor, To: testTo, Amount: big.NewInt(5)}}}},
		{name: "mined, the receipt not yet served", node: &fakeNode{tx: tx, receiptErr: ethereum.NotFound}, receipts: 1, err: "receipt of"},
		{name: "mined, the receipt refused", node: &fakeNode{tx: tx, receiptErr: refused}, receipts: 1, err: "daily request count"},
		{name: "another transaction's receipt", node: &fakeNode{tx: tx, receipt: receipt(other, types.ReceiptStatusSuccessful)}, receipts: 1, err: "another transaction's receipt"},
		{name: "mined, with the chain's head", node: &fakeNode{tx: tx, receipt: receipt(tx, types.ReceiptStatusSuccessful), head: 312_457_119}, receipts: 1,
			want: Evidence{State: TxMined, From: depositor, Status: types.ReceiptStatusSuccessful, BlockNumber: 312_457_108, Head: 312_457_119,
				Transfers: []Transfer{{Token: testOutput, From: depositor, To: testTo, Amount: big.NewInt(5)}}}},
		{name: "the head cannot be read", node: &fakeNode{tx: tx, receipt: receipt(tx, types.ReceiptStatusSuccessful), headErr: errors.New("boom")}, receipts: 1, err: "latest block"},
		{name: "a receipt without its block", node: &fakeNode{tx: tx, receipt: &types.Receipt{TxHash: tx.Hash(), Status: 1}}, receipts: 1, err: "incomplete"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hash := c.hash
			if hash == (common.Hash{}) {
				hash = c.node.tx.Hash()
			}
			ev, err := ReadEvidence(context.Background(), c.node, chain, hash)
			if _, n := c.node.calls(); n != c.receipts {
				t.Errorf("%d receipt reads, want %d", n, c.receipts)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "chain 42161") {
					t.Fatalf("evidence %+v, error %v; want an error naming chain 42161 and %q", ev, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			want.ChainID = chain
			sameEvidence(t, ev, want)
			if ev.State == TxMined {
				if wantRef := quote.CallRef(c.node.tx.Data()); ev.CallRef != wantRef {
					t.Fatalf("calldata reference %x, want %x", ev.CallRef, wantRef)
				}
			}
		})
	}
}

func sameEvidence(t *testing.T, got, want Evidence) {
	t.Helper()
	if got.ChainID != want.ChainID || got.State != want.State || got.From != want.From ||
		got.Status != want.Status || got.BlockNumber != want.BlockNumber || got.Head != want.Head || len(got.Transfers) != len(want.Transfers) {
		t.Fatalf("evidence %+v, want %+v", got, want)
	}
	for i, tr := range got.Transfers {
		w := want.Transfers[i]
		if tr.Token != w.Token || tr.From != w.From || tr.To != w.To || tr.Amount.Cmp(w.Amount) != 0 {
			t.Fatalf("transfer %d %+v, want %+v", i, tr, w)
		}
	}
}

// stubSource is the sandbox chain's side of an EvidenceReader: it records
// the chains it is asked about.
type stubSource struct{ asked []uint64 }

func (s *stubSource) Evidence(_ context.Context, chainID uint64, _ common.Hash) (Evidence, error) {
	s.asked = append(s.asked, chainID)
	return Evidence{ChainID: chainID, State: TxPending}, nil
}

// An EvidenceReader asks a chain's node when it has one and its fallback
// otherwise; with neither the chain cannot be read, which is an error (so
// RPC_FAILURE), never a "not found" that blames the client's hash. A node
// that does not answer within the reader's timeout is noderead.ErrTimeout,
// and Close releases what the nodes hold.
func TestEvidenceReaderChoosesTheSource(t *testing.T) {
	tx := signedTx(t, "depositor", 42161, 7)
	cases := []struct {
		name      string
		fallback  bool
		chain     uint64
		state     TxState
		err       string // a substring of the error, "" none
		nodeCalls int
		fbAsked   int
	}{
		{"a chain with a node", true, 42161, TxPending, "", 1, 0},
		{"a chain without one, the sandbox chain", true, 8453, TxPending, "", 0, 1},
		{"a chain without one, no fallback", false, 8453, 0, "no node for chain 8453", 0, 0},
		{"a chain whose node does not answer in time", true, 10, 0, noderead.ErrTimeout.Error(), 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			arbitrum := &fakeNode{tx: tx, pending: true}
			optimism := &fakeNode{block: true}
			src := &stubSource{}
			var fb EvidenceSource
			if tc.fallback {
				fb = src
			}
			released := 0
			r := NewEvidenceReader(map[uint64]TxReader{42161: arbitrum, 10: optimism}, fb, 50*time.Millisecond, func() { released++ })
			if !r.HasNode(42161) || !r.HasNode(10) || r.HasNode(8453) {
				t.Fatal("HasNode disagrees with the nodes")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ev, err := r.Evidence(ctx, tc.chain, tx.Hash())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			} else if err != nil || ev.State != tc.state || ev.ChainID != tc.chain {
				t.Fatalf("evidence %+v, error %v", ev, err)
			}
			a, _ := arbitrum.calls()
			o, _ := optimism.calls()
			if a+o != tc.nodeCalls || len(src.asked) != tc.fbAsked {
				t.Fatalf("nodes asked %d times, fallback %v", a+o, src.asked)
			}
			r.Close()
			if released != 1 {
				t.Fatalf("Close released %d times, want once", released)
			}
		})
	}
	// A reader given nothing to release closes quietly.
	NewEvidenceReader(nil, nil, 0, nil).Close()
}
