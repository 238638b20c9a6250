package evidencerpc

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// TestEvidenceOverRPC reads each recorded answer of an Arbitrum node
// through go-ethereum's client, connected by Dial, and checks the Evidence
// it makes and what inbound.CheckDeposit decides of it, as the runner
// does: an error of the read is inbound.ReadFailed, RPC_FAILURE.
func TestEvidenceOverRPC(t *testing.T) {
	c := pulseroute.DefaultContracts()
	receiver, _ := c.InboundReceiver(rpcChain)
	usdc := arbUSDC(t)
	_, depositor := testKey(t, rpcDepositSeed)
	_, stranger := testKey(t, "mallory")
	unknown := common.HexToHash("0x7a1f0c6e5b4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1908f7e6d5c4b3a")
	both := func(name string) map[string]string {
		m := map[string]string{"eth_getTransactionByHash": name, "eth_getTransactionReceipt": name}
		if name == caseDeposit || name == caseReverted {
			m["eth_blockNumber"] = name // a mined transaction's confirmations
		}
		return m
	}

	cases := []struct {
		name     string
		node     map[string]string // method → recorded case replayed
		tx       common.Hash       // zero: the hash the transaction answer carries
		from     common.Address    // the registration's fromAddress (zero: the depositor)
		chain    uint64            // the chain the evidence is read as (zero: 42161)
		want     inbound.Evidence  // ChainID and Transfers filled in below when zero
		receipts int               // eth_getTransactionReceipt calls expected
		amount   *big.Int          // accepted: the amount
		code     string            // refused: the code
		reason   string            // refused as INVALID_PARAMS: details.reason
	}{
		{name: "USDC delivered to the receiver", node: both(caseDeposit), receipts: 1, amount: rpcDeposited,
			want: inbound.Evidence{State: inbound.TxMined, From: depositor, Status: types.ReceiptStatusSuccessful, BlockNumber: 312_457_108, Head: rpcHead}},
		{name: "sent by another account than fromAddress", node: both(caseDeposit), from: stranger, receipts: 1,
			want: inbound.Evidence{State: inbound.TxMined, From: depositor, Status: types.ReceiptStatusSuccessful, BlockNumber: 312_457_108, Head: rpcHead},
			code: apierr.InvalidParams, reason: inbound.ReasonSender},
		{name: "reverted", node: both(caseReverted), receipts: 1,
			want: inbound.Evidence{State: inbound.TxMined, From: depositor, Status: types.ReceiptStatusFailed, BlockNumber: 312_457_311, Head: 312_457_322},
			code: apierr.InvalidParams, reason: inbound.ReasonFailed},
		{name: "pending", node: both(casePending), want: inbound.Evidence{State: inbound.TxPending},
			code: apierr.InvalidParams, reason: inbound.ReasonPending},
		{name: "not found", node: both(caseNotFound), tx: unknown, want: inbound.Evidence{State: inbound.TxNotFound},
			code: apierr.InvalidParams, reason: inbound.ReasonNotFound},
		{name: "the node refuses the call", node: both(caseRPCError), tx: unknown, code: apierr.RPCFailure},
		{name: "the node refuses the receipt", node: map[string]string{"eth_getTransactionByHash": caseDeposit, "eth_getTransactionReceipt": caseRPCError},
			receipts: 1, code: apierr.RPCFailure},
		{name: "mined, the receipt not yet served", node: map[string]string{"eth_getTransactionByHash": caseDeposit, "eth_getTransactionReceipt": caseNotFound},
			receipts: 1, code: apierr.RPCFailure},
		{name: "the node answers another transaction", node: both(caseDeposit), tx: unknown, code: apierr.RPCFailure},
		{name: "the node answers another transaction's receipt", node: map[string]string{"eth_getTransactionByHash": caseDeposit, "eth_getTransactionReceipt": caseReverted},
			receipts: 1, code: apierr.RPCFailure},
		{name: "the node serves another chain", node: both(caseDeposit), chain: 8453, code: apierr.RPCFailure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := startRecordedNode(t, tc.node)
			chain := tc.chain
			if chain == 0 {
				chain = rpcChain
			}
			reg := inbound.Registration{TxHash: tc.tx, FromAddress: tc.from}
			if reg.TxHash == (common.Hash{}) {
				reg.TxHash = recordedHash(t, tc.node["eth_getTransactionByHash"])
			}
			if reg.FromAddress == (common.Address{}) {
				reg.FromAddress = depositor
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := Dial(ctx, map[uint64]string{chain: node.srv.URL}, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()

			ev, err := r.Evidence(ctx, chain, reg.TxHash)
			if n := node.count("eth_getTransactionReceipt"); n != tc.receipts {
				t.Errorf("%d receipt reads, want %d", n, tc.receipts)
			}
			var amount *big.Int
			var refusal *apierr.Error
			if err != nil {
				refusal = inbound.ReadFailed(chain, err) // as the runner does
			} else {
				want := tc.want
				want.ChainID = chain
				if want.State == inbound.TxMined && want.Status == types.ReceiptStatusSuccessful {
					want.Transfers = []inbound.Transfer{
						{Token: usdc, From: arbPool, To: receiver, Amount: rpcDeposited},
						{Token: arbWETH, From: depositor, To: arbPool, Amount: rpcWETHIn},
					}
				}
				sameEvidence(t, ev, want)
				if want.State == inbound.TxMined {
					// The recorded head makes twelve confirmations, live
					// mode's default: the deposit is checked, not awaited;
					// one more block asked for awaits it.
					if r, ok := inbound.Awaiting(ev, 12); ok {
						t.Fatalf("awaited (%s) with %d confirmations", r, ev.Confirmations())
					}
					if r, ok := inbound.Awaiting(ev, 13); !ok || r != inbound.ReasonUnconfirmed {
						t.Fatalf("Awaiting(13) = %q, %v", r, ok)
					}
				}
				amount, refusal = inbound.CheckDeposit(c, chain, reg, ev)
			}

			if tc.code == "" {
				if refusal != nil || amount.Cmp(tc.amount) != 0 {
					t.Fatalf("amount %v, refusal %v; want %s accepted", amount, refusal, tc.amount)
				}
				return
			}
			if tc.code == apierr.RPCFailure {
				if refusal == nil || refusal.Code != apierr.RPCFailure || refusal.Details["chainId"] != chain || errors.Unwrap(refusal) == nil {
					t.Fatalf("refusal %#v, want RPC_FAILURE naming chain %d with its cause", refusal, chain)
				}
				return
			}
			wantAPIError(t, refusal, tc.code, inbound.FieldTxHash)
			if refusal.Details["reason"] != tc.reason {
				t.Fatalf("reason %v, want %s (%s)", refusal.Details["reason"], tc.reason, refusal.Message)
			}
			if tc.reason == inbound.ReasonSender && refusal.Details["sender"] != depositor.Hex() {
				t.Fatalf("details %v, want the recovered sender %s", refusal.Details, depositor.Hex())
			}
		})
	}
}

func sameEvidence(t *testing.T, got, want inbound.Evidence) {
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

func (s *stubSource) Evidence(_ context.Context, chainID uint64, _ common.Hash) (inbound.Evidence, error) {
	s.asked = append(s.asked, chainID)
	return inbound.Evidence{ChainID: chainID, State: inbound.TxPending}, nil
}

// An EvidenceReader asks a chain's node when it has one and its fallback
// otherwise; with neither the chain cannot be read, which is an error (so
// RPC_FAILURE), never a "not found" that blames the client's hash.
func TestEvidenceReaderChoosesTheSource(t *testing.T) {
	node := startRecordedNode(t, map[string]string{"eth_getTransactionByHash": caseDeposit, "eth_getTransactionReceipt": caseDeposit, "eth_blockNumber": caseDeposit})
	deposit := recordedHash(t, caseDeposit)
	ctx := context.Background()
	cases := []struct {
		name      string
		fallback  bool
		chain     uint64
		state     inbound.TxState
		err       string // a substring of the error, "" none
		nodeCalls int
		fbAsked   int
	}{
		{"a chain with a node", true, rpcChain, inbound.TxMined, "", 1, 0},
		{"a chain without one, the sandbox chain", true, 8453, inbound.TxPending, "", 0, 1},
		{"a chain without one, no fallback", false, 8453, 0, "no node for chain 8453", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := node.count("eth_getTransactionByHash")
			src := &stubSource{}
			var fb inbound.EvidenceSource
			if tc.fallback {
				fb = src
			}
			r, err := Dial(ctx, map[uint64]string{rpcChain: node.srv.URL}, time.Minute, fb)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.HasNode(rpcChain) || r.HasNode(8453) {
				t.Fatal("HasNode disagrees with the configured URLs")
			}
			ev, err := r.Evidence(ctx, tc.chain, deposit)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			} else if err != nil || ev.State != tc.state || ev.ChainID != tc.chain {
				t.Fatalf("evidence %+v, error %v", ev, err)
			}
			if n := node.count("eth_getTransactionByHash") - before; n != tc.nodeCalls || len(src.asked) != tc.fbAsked {
				t.Fatalf("node asked %d times, fallback %v", n, src.asked)
			}
		})
	}
}

func TestDialRefusesABadURL(t *testing.T) {
	_, err := Dial(context.Background(), map[uint64]string{rpcChain: "ftp://node.invalid"}, time.Minute, nil)
	if err == nil || !strings.Contains(err.Error(), "chain 42161") {
		t.Fatalf("error %v, want one naming the chain", err)
	}
}
