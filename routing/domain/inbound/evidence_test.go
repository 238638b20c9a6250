package inbound

import (
	"errors"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

func addrTopic(a common.Address) common.Hash { return common.BytesToHash(a.Bytes()) }

func transferLog(token, from, to common.Address, amount int64) *types.Log {
	return &types.Log{
		Address: token,
		Topics:  []common.Hash{transferTopic, addrTopic(from), addrTopic(to)},
		Data:    common.LeftPadBytes(big.NewInt(amount).Bytes(), 32),
	}
}

func TestTransferTopic(t *testing.T) {
	// The ERC-20 Transfer event's topic, as every explorer shows it.
	if transferTopic != common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef") {
		t.Fatalf("transfer topic %s", transferTopic.Hex())
	}
}

func TestTransfers(t *testing.T) {
	token := common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	a, b := common.HexToAddress("0x1111111111111111111111111111111111111111"), common.HexToAddress("0x2222222222222222222222222222222222222222")
	good := transferLog(token, a, b, 5)

	removed := *good
	removed.Removed = true
	nft := *good
	nft.Topics = append(append([]common.Hash(nil), good.Topics...), common.BigToHash(big.NewInt(7)))
	nft.Data = nil
	approval := *good
	approval.Topics = []common.Hash{crypto.Keccak256Hash([]byte("Approval(address,address,uint256)")), good.Topics[1], good.Topics[2]}
	shortData := *good
	shortData.Data = good.Data[1:]
	longData := *good
	longData.Data = append(append([]byte(nil), good.Data...), make([]byte, 32)...)
	dirtyTopic := *good
	dirtyTopic.Topics = []common.Hash{transferTopic, good.Topics[1], good.Topics[2]}
	dirtyTopic.Topics[2][0] = 1
	noTopics := *good
	noTopics.Topics = nil

	cases := []struct {
		name string
		logs []*types.Log
		want []Transfer
	}{
		{"none", nil, nil},
		{"one", []*types.Log{good}, []Transfer{{token, a, b, big.NewInt(5)}}},
		{"in log order", []*types.Log{transferLog(token, b, a, 9), good}, []Transfer{{token, b, a, big.NewInt(9)}, {token, a, b, big.NewInt(5)}}},
		{"nil log", []*types.Log{nil, good}, []Transfer{{token, a, b, big.NewInt(5)}}},
		{"removed by a reorganisation", []*types.Log{&removed}, nil},
		{"ERC-721 transfer", []*types.Log{&nft}, nil},
		{"approval", []*types.Log{&approval}, nil},
		{"data short of a word", []*types.Log{&shortData}, nil},
		{"data of two words", []*types.Log{&longData}, nil},
		{"address topic with high bits", []*types.Log{&dirtyTopic}, nil},
		{"anonymous event", []*types.Log{&noTopics}, nil},
		{"skipped among good ones", []*types.Log{&removed, good, &nft}, []Transfer{{token, a, b, big.NewInt(5)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Transfers(tc.logs)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d transfers %v, want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Token != w.Token || g.From != w.From || g.To != w.To || g.Amount.Cmp(w.Amount) != 0 {
					t.Errorf("transfer %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestCheckDeposit(t *testing.T) {
	const source = 8453
	c := pulseroute.DefaultContracts()
	reg := signedRegistration(t, "alice", source)
	receiver, _ := c.InboundReceiver(source)
	warp, _ := c.WarpRoute(source)
	usdc := warp.Token
	arbUSDC := common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	arbReceiver, _ := c.InboundReceiver(42161)
	if arbReceiver == receiver {
		t.Fatal("two chains share an inbound receiver: the case of another chain's receiver tests nothing")
	}
	dex := common.HexToAddress("0x5555555555555555555555555555555555555555")
	_, stranger := testKey(t, "mallory")

	tr := func(token, from, to common.Address, amount int64) Transfer {
		return Transfer{Token: token, From: from, To: to, Amount: big.NewInt(amount)}
	}
	mined := func(transfers ...Transfer) Evidence {
		return Evidence{ChainID: source, State: TxMined, From: reg.FromAddress, Status: types.ReceiptStatusSuccessful, BlockNumber: 7, Transfers: transfers}
	}
	with := func(ev Evidence, f func(*Evidence)) Evidence { f(&ev); return ev }
	deposit := tr(usdc, dex, receiver, 1_000_000)

	cases := []struct {
		name   string
		chain  uint64
		ev     Evidence
		amount int64  // accepted: the amount
		code   string // refused: the code
		reason string // refused as INVALID_PARAMS: details.reason
	}{
		{"from the DEX", source, mined(deposit), 1_000_000, "", ""},
		{"from the user", source, mined(tr(usdc, reg.FromAddress, receiver, 42)), 42, "", ""},
		{"two transfers add up", source, mined(deposit, tr(usdc, reg.FromAddress, receiver, 5)), 1_000_005, "", ""},
		{"unrelated transfers ignored", source, mined(
			tr(arbUSDC, dex, receiver, 9), tr(usdc, reg.FromAddress, dex, 1_500_000), deposit, tr(usdc, receiver, receiver, 3),
		), 1_000_000, "", ""},
		{"out of the receiver in the same transaction counts against", source, mined(deposit, tr(usdc, receiver, stranger, 400_000)), 600_000, "", ""},
		{"a transfer without an amount is ignored", source, mined(deposit, Transfer{Token: usdc, From: dex, To: receiver}), 1_000_000, "", ""},

		{"evidence from another chain", source, with(mined(deposit), func(e *Evidence) { e.ChainID = 42161 }), 0, apierr.Internal, ""},
		{"unknown evidence state", source, with(mined(deposit), func(e *Evidence) { e.State = 9 }), 0, apierr.Internal, ""},
		{"chain 369 is no source", 369, with(mined(deposit), func(e *Evidence) { e.ChainID = 369 }), 0, apierr.InvalidParams, ReasonWrongChain},
		{"chain without a warp route", 56, with(mined(deposit), func(e *Evidence) { e.ChainID = 56 }), 0, apierr.InvalidParams, ReasonWrongChain},
		{"not found", source, Evidence{ChainID: source}, 0, apierr.InvalidParams, ReasonNotFound},
		{"not found, whatever else is filled in", source, with(mined(deposit), func(e *Evidence) { e.State = TxNotFound }), 0, apierr.InvalidParams, ReasonNotFound},
		{"pending", source, Evidence{ChainID: source, State: TxPending}, 0, apierr.InvalidParams, ReasonPending},
		{"reverted", source, with(mined(deposit), func(e *Evidence) { e.Status = types.ReceiptStatusFailed }), 0, apierr.InvalidParams, ReasonFailed},
		{"unknown status", source, with(mined(deposit), func(e *Evidence) { e.Status = 2 }), 0, apierr.InvalidParams, ReasonFailed},
		{"sent by someone else", source, with(mined(deposit), func(e *Evidence) { e.From = stranger }), 0, apierr.InvalidParams, ReasonSender},
		{"sent by the receiver", source, with(mined(deposit), func(e *Evidence) { e.From = receiver }), 0, apierr.InvalidParams, ReasonSender},
		{"no transfers", source, mined(), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"USDC to someone else", source, mined(tr(usdc, dex, reg.FromAddress, 1_000_000)), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"another token to the receiver", source, mined(tr(dex, dex, receiver, 1_000_000)), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"another chain's USDC to the receiver", source, mined(tr(arbUSDC, dex, receiver, 1_000_000)), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"USDC to another chain's receiver", source, mined(tr(usdc, dex, arbReceiver, 1_000_000)), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"zero amount", source, mined(tr(usdc, dex, receiver, 0)), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"all of it out again", source, mined(deposit, tr(usdc, receiver, dex, 1_000_000)), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"more out than in", source, mined(deposit, tr(usdc, receiver, dex, 2_000_000)), 0, apierr.InvalidParams, ReasonNoDeposit},
		{"the receiver to itself", source, mined(tr(usdc, receiver, receiver, 1_000_000)), 0, apierr.InvalidParams, ReasonNoDeposit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckDeposit(c, tc.chain, reg, tc.ev)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got.Cmp(big.NewInt(tc.amount)) != 0 {
					t.Fatalf("amount %s, want %d", got, tc.amount)
				}
				return
			}
			if got != nil {
				t.Errorf("amount %s with a refusal", got)
			}
			if tc.code != apierr.InvalidParams {
				if err == nil || err.Code != tc.code {
					t.Fatalf("error %v, want %s", err, tc.code)
				}
				return
			}
			wantAPIError(t, err, apierr.InvalidParams, FieldTxHash)
			if err.Details["reason"] != tc.reason || err.Details["chainId"] != tc.chain || err.Details["value"] != reg.TxHash.Hex() {
				t.Fatalf("details %v, want reason %s on chain %d", err.Details, tc.reason, tc.chain)
			}
		})
	}
}

func TestReadFailed(t *testing.T) {
	cause := errors.New("dial tcp: connection refused")
	err := ReadFailed(42161, cause)
	if err.Code != apierr.RPCFailure || err.HTTPStatus() != http.StatusBadGateway || err.Details["chainId"] != uint64(42161) {
		t.Fatalf("%#v", err)
	}
	if !errors.Is(err, cause) {
		t.Fatal("the cause is lost")
	}
}

// TestEvidenceFromSandboxChain fills Evidence from the sandbox chain's
// receipts, as the sandbox's deposit tracker does, and checks the verdicts.
func TestEvidenceFromSandboxChain(t *testing.T) {
	const source = 8453
	reg0, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	chain, err := simchain.New(simchain.Config{
		Registry: reg0, ChainID: source, GasPrice: big.NewInt(1),
		Clock: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	c := pulseroute.DefaultContracts()
	receiver, _ := c.InboundReceiver(source)
	warp, _ := c.WarpRoute(source)
	reg := signedRegistration(t, "alice", source)

	evidence := func(h common.Hash) Evidence {
		r, ok := chain.Receipt(h)
		if !ok {
			return Evidence{ChainID: source}
		}
		return Mined(source, r.From, r.Status, r.BlockNumber, r.Logs)
	}
	send := func(from, to common.Address, amount *big.Int) common.Hash {
		data, err := simchain.ERC20ABI().Pack("transfer", to, amount)
		if err != nil {
			t.Fatal(err)
		}
		r, err := chain.Send(from, simchain.TxRequest{To: warp.Token, Data: data, GasLimit: 200_000})
		if err != nil {
			t.Fatal(err)
		}
		return r.TxHash
	}
	amount := big.NewInt(25_000_000)
	deposited := send(reg.FromAddress, receiver, amount)
	tooMuch := send(reg.FromAddress, receiver, new(big.Int).Lsh(big.NewInt(1), 100)) // more than the genesis balance
	elsewhere := send(reg.FromAddress, testTo, amount)
	_, bob := testKey(t, "bob")
	byBob := send(bob, receiver, amount)

	cases := []struct {
		name   string
		tx     common.Hash
		reason string // "" accepted
	}{
		{"USDC sent to the receiver", deposited, ""},
		{"transfer reverted", tooMuch, ReasonFailed},
		{"USDC sent elsewhere", elsewhere, ReasonNoDeposit},
		{"sent by another account", byBob, ReasonSender},
		{"never sent", common.HexToHash("0x01"), ReasonNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := reg
			r.TxHash = tc.tx
			got, err := CheckDeposit(c, source, r, evidence(tc.tx))
			if tc.reason == "" {
				if err != nil || got.Cmp(amount) != 0 {
					t.Fatalf("amount %v, error %v; want %s", got, err, amount)
				}
				return
			}
			wantAPIError(t, err, apierr.InvalidParams, FieldTxHash)
			if err.Details["reason"] != tc.reason {
				t.Fatalf("reason %v, want %s (%s)", err.Details["reason"], tc.reason, err.Message)
			}
		})
	}
}

// TestAwaitingCountsConfirmations: unknown and pending transactions are
// awaited, a mined one until it has the confirmations (its own block
// counted; no head read counts that block alone).
func TestAwaitingCountsConfirmations(t *testing.T) {
	mined := func(block, head uint64) Evidence {
		return Evidence{ChainID: 8453, State: TxMined, Status: 1, BlockNumber: block, Head: head}
	}
	cases := []struct {
		name   string
		ev     Evidence
		need   uint64
		reason string // "" not awaited
	}{
		{"unknown", Evidence{ChainID: 8453}, 1, ReasonNotFound},
		{"pending", Evidence{ChainID: 8453, State: TxPending}, 1, ReasonPending},
		{"mined, one block of one", mined(100, 100), 1, ""},
		{"mined, no head read, one of one", mined(100, 0), 1, ""},
		{"mined, no head read, one of twelve", mined(100, 0), 12, ReasonUnconfirmed},
		{"mined, eleven of twelve", mined(100, 110), 12, ReasonUnconfirmed},
		{"mined, twelve of twelve", mined(100, 111), 12, ""},
		{"mined, a head behind the receipt", mined(100, 90), 2, ReasonUnconfirmed},
		{"none asked", mined(100, 100), 0, ""},
	}
	for _, c := range cases {
		reason, ok := Awaiting(c.ev, c.need)
		if ok != (c.reason != "") || reason != c.reason {
			t.Errorf("%s: Awaiting = %q, %v; want %q", c.name, reason, ok, c.reason)
		}
	}
}

// TestCheckMinimum: below the quote's step-1 minimum is BELOW_MINIMUM
// naming txHash with the amount and the minimum; at or above it, or with
// no minimum known, nothing is refused.
func TestCheckMinimum(t *testing.T) {
	reg := Registration{TxHash: common.HexToHash("0xab")}
	if e := CheckMinimum(42161, reg, big.NewInt(99), big.NewInt(100)); e == nil || e.Code != apierr.InvalidParams || e.Details["param"] != FieldTxHash ||
		e.Details["reason"] != ReasonBelowMinimum || e.Details["amount"] != "99" || e.Details["minimum"] != "100" || e.Details["chainId"] != uint64(42161) {
		t.Fatalf("below: %+v", e)
	}
	for _, min := range []*big.Int{big.NewInt(100), big.NewInt(1), nil} {
		if e := CheckMinimum(42161, reg, big.NewInt(100), min); e != nil {
			t.Fatalf("100 against %v: %v", min, e)
		}
	}
}
