package simchain_test

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// decodeAmountLog checks a Transfer or Approval log the way a client
// decodes it with go-ethereum, and returns its two addresses and amount.
func decodeAmountLog(t *testing.T, l *types.Log, event string) (a, b common.Address, amount *big.Int) {
	t.Helper()
	sig := map[string]string{"Transfer": "Transfer(address,address,uint256)", "Approval": "Approval(address,address,uint256)"}[event]
	if len(l.Topics) != 3 || l.Topics[0] != crypto.Keccak256Hash([]byte(sig)) {
		t.Fatalf("log topics %v, want %s and two addresses", l.Topics, sig)
	}
	ev, err := standardERC20.EventByID(l.Topics[0])
	if err != nil || ev.Name != event {
		t.Fatalf("event by topic: %v, %v", ev, err)
	}
	var out struct{ Value *big.Int }
	if err := standardERC20.UnpackIntoInterface(&out, event, l.Data); err != nil {
		t.Fatalf("unpack %s data: %v", event, err)
	}
	fields := map[string]any{}
	if err := abi.ParseTopicsIntoMap(fields, abi.Arguments{ev.Inputs[0], ev.Inputs[1]}, l.Topics[1:]); err != nil {
		t.Fatalf("parse topics: %v", err)
	}
	return fields[ev.Inputs[0].Name].(common.Address), fields[ev.Inputs[1].Name].(common.Address), out.Value
}

func TestTransferAndApprovalLogs(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")

	r := mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(250))})
	if len(r.Logs) != 1 {
		t.Fatalf("%d logs, want 1", len(r.Logs))
	}
	l := r.Logs[0]
	from, to, amount := decodeAmountLog(t, l, "Transfer")
	if from != alice || to != bob || amount.Cmp(usdc(250)) != 0 {
		t.Errorf("Transfer(%s, %s, %s)", from, to, amount)
	}
	if l.Address != usdcAddr || l.TxHash != r.TxHash || l.BlockNumber != r.BlockNumber || l.BlockHash != r.BlockHash ||
		l.BlockTimestamp != r.BlockTime || l.Index != 0 || l.TxIndex != 0 || l.Removed {
		t.Errorf("log fields = %+v", l)
	}

	r = mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", carol, usdc(7))})
	owner, spender, amount := decodeAmountLog(t, r.Logs[0], "Approval")
	if owner != alice || spender != carol || amount.Cmp(usdc(7)) != 0 {
		t.Errorf("Approval(%s, %s, %s)", owner, spender, amount)
	}

	// transferFrom logs the Transfer of the owner's tokens, and no Approval.
	r = mustSucceed(t, c, carol, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transferFrom", alice, bob, usdc(3))})
	if len(r.Logs) != 1 {
		t.Fatalf("transferFrom logged %d logs, want 1", len(r.Logs))
	}
	from, to, amount = decodeAmountLog(t, r.Logs[0], "Transfer")
	if from != alice || to != bob || amount.Cmp(usdc(3)) != 0 {
		t.Errorf("Transfer(%s, %s, %s)", from, to, amount)
	}
	wantBig(t, "allowance left", c.Allowance(usdcAddr, alice, carol), usdc(4))
}

func TestAllowanceFlow(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")
	pull := func(amount *big.Int) *simchain.Receipt {
		return send(t, c, bob, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transferFrom", alice, bob, amount)})
	}
	steps := []struct {
		name    string
		run     func() *simchain.Receipt
		reason  string // empty: success
		allowed *big.Int
	}{
		{"pull without allowance", func() *simchain.Receipt { return pull(usdc(6)) }, "ERC20: insufficient allowance", usdc(0)},
		{"approve 5", func() *simchain.Receipt {
			return send(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", bob, usdc(5))})
		}, "", usdc(5)},
		{"pull 6 over an allowance of 5", func() *simchain.Receipt { return pull(usdc(6)) }, "ERC20: insufficient allowance", usdc(5)},
		{"approve 10", func() *simchain.Receipt {
			return send(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", bob, usdc(10))})
		}, "", usdc(10)},
		{"pull 6", func() *simchain.Receipt { return pull(usdc(6)) }, "", usdc(4)},
		{"pull the remaining 4", func() *simchain.Receipt { return pull(usdc(4)) }, "", usdc(0)},
		{"pull 1 more", func() *simchain.Receipt { return pull(usdc(1)) }, "ERC20: insufficient allowance", usdc(0)},
		{"approve infinite", func() *simchain.Receipt {
			return send(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", bob, math.MaxBig256)})
		}, "", math.MaxBig256},
		{"an infinite allowance is never spent", func() *simchain.Receipt { return pull(usdc(100)) }, "", math.MaxBig256},
		{"but the balance still bounds it", func() *simchain.Receipt { return pull(usdc(1000)) }, "ERC20: transfer amount exceeds balance", math.MaxBig256},
	}
	for _, s := range steps {
		r := s.run()
		if s.reason == "" && !r.Succeeded() {
			t.Errorf("%s: reverted: %s", s.name, r.RevertReason)
		}
		if s.reason != "" && (r.Succeeded() || r.RevertReason != s.reason) {
			t.Errorf("%s: status %d reason %q, want a revert with %q", s.name, r.Status, r.RevertReason, s.reason)
		}
		wantBig(t, s.name+": allowance", c.Allowance(usdcAddr, alice, bob), s.allowed)
	}
	wantBig(t, "alice USDC", c.Balance(usdcAddr, alice), usdc(1000-6-4-100))
	wantBig(t, "bob USDC", c.Balance(usdcAddr, bob), usdc(1000+6+4+100))
}

// TestReverts holds every kind of revert to a chain's behaviour: the
// transaction is mined with status 0 and its reason, the nonce is consumed,
// the gas is paid, and nothing else changes.
func TestReverts(t *testing.T) {
	usdcAddr := token(t, ethereum, "USDC")
	cases := []struct {
		name   string
		setup  func(t *testing.T, c *simchain.Chain)
		from   common.Address
		req    func(t *testing.T) simchain.TxRequest
		reason string
	}{
		{
			name: "token balance too small",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(1001))}
			},
			reason: "ERC20: transfer amount exceeds balance",
		},
		{
			name: "allowance missing",
			from: bob,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: pack(t, "transferFrom", alice, bob, usdc(1))}
			},
			reason: "ERC20: insufficient allowance",
		},
		{
			name: "allowance too small",
			setup: func(t *testing.T, c *simchain.Chain) {
				mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", bob, usdc(1))})
			},
			from: bob,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: pack(t, "transferFrom", alice, bob, usdc(2))}
			},
			reason: "ERC20: insufficient allowance",
		},
		{
			name: "native value above the balance",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: bob, Value: eth(100), GasLimit: 21_000}
			},
			reason: "insufficient funds for transfer",
		},
		{
			name: "unknown selector on a token",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: []byte{0xde, 0xad, 0xbe, 0xef}}
			},
			reason: "ERC20: function selector 0xdeadbeef not recognised",
		},
		{
			name:   "calldata without a selector",
			from:   alice,
			req:    func(t *testing.T) simchain.TxRequest { return simchain.TxRequest{To: usdcAddr, Data: []byte{0xa9}} },
			reason: "ERC20: no function selector in the calldata, and no fallback",
		},
		{
			name: "truncated arguments",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(1))[:40]}
			},
			reason: "ERC20: invalid calldata for transfer",
		},
		{
			name: "value sent to a token",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(1)), Value: big.NewInt(1)}
			},
			reason: "ERC20: transfer is not payable",
		},
		{
			name: "transfer to the zero address",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", native, usdc(1))}
			},
			reason: "ERC20: transfer to the zero address",
		},
		{
			name: "approve to the zero address",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", native, usdc(1))}
			},
			reason: "ERC20: approve to the zero address",
		},
		{
			name: "mint by a caller that is no minter",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				data, err := simchain.ERC20ABI().Pack("mint", alice, usdc(1))
				if err != nil {
					t.Fatal(err)
				}
				return simchain.TxRequest{To: usdcAddr, Data: data}
			},
			reason: "ERC20: " + alice.Hex() + " is not a minter of USDC",
		},
		{
			name: "out of gas",
			from: alice,
			req: func(t *testing.T) simchain.TxRequest {
				data := pack(t, "transfer", bob, usdc(1))
				// Enough to enter the token and write the first balance, not the second.
				return simchain.TxRequest{To: usdcAddr, Data: data, GasLimit: simchain.IntrinsicGas(data) + simchain.ContractCallGas + 2*simchain.StorageReadGas + simchain.StorageWriteGas}
			},
			reason: "out of gas",
		},
		{
			name:  "a contract reverts after pulling tokens",
			setup: approveHold(usdc(800)),
			from:  alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: holdAddr, Data: packHold(t, "hold", usdcAddr, usdc(501))}
			},
			reason: "PullAndHold: cap exceeded",
		},
		{
			name:  "a contract's pull fails on the allowance",
			setup: approveHold(usdc(10)),
			from:  alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: holdAddr, Data: packHold(t, "hold", usdcAddr, usdc(11))}
			},
			reason: "ERC20: insufficient allowance",
		},
		{
			name:  "a contract mints without the minter role",
			setup: func(t *testing.T, c *simchain.Chain) { deployHold(t, c) },
			from:  alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: holdAddr, Data: packHold(t, "mint", usdcAddr, alice, usdc(1))}
			},
			reason: "ERC20: " + holdAddr.Hex() + " is not a minter of USDC",
		},
		{
			name:  "a contract with an unknown function",
			setup: func(t *testing.T, c *simchain.Chain) { deployHold(t, c) },
			from:  alice,
			req: func(t *testing.T) simchain.TxRequest {
				return simchain.TxRequest{To: holdAddr, Data: pack(t, "transfer", bob, usdc(1))}
			},
			reason: "PullAndHold: unknown function",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newChain(t, ethereum)
			if tc.setup != nil {
				tc.setup(t, c)
			}
			watched := []common.Address{alice, bob, holdAddr}
			type snap struct{ usdc, eth, allowHold, allowBob *big.Int }
			before := map[common.Address]snap{}
			for _, a := range watched {
				before[a] = snap{c.Balance(usdcAddr, a), c.Balance(native, a), c.Allowance(usdcAddr, a, holdAddr), c.Allowance(usdcAddr, a, bob)}
			}
			nonce, head := c.Nonce(tc.from), c.Head().Number
			req := tc.req(t)

			r := send(t, c, tc.from, req)
			if r.Succeeded() || r.Status != types.ReceiptStatusFailed {
				t.Fatalf("status %d, want a revert", r.Status)
			}
			if r.RevertReason != tc.reason {
				t.Errorf("reason %q, want %q", r.RevertReason, tc.reason)
			}
			if len(r.Logs) != 0 {
				t.Errorf("a reverted transaction kept %d logs", len(r.Logs))
			}
			if c.Nonce(tc.from) != nonce+1 || c.Head().Number != head+1 || r.BlockNumber != head+1 {
				t.Errorf("nonce %d head %d block %d; want %d, %d, %d", c.Nonce(tc.from), c.Head().Number, r.BlockNumber, nonce+1, head+1, head+1)
			}
			if r.TxHash == (common.Hash{}) {
				t.Error("no hash")
			}
			if got, ok := c.Receipt(r.TxHash); !ok || got != r {
				t.Error("the failed receipt cannot be looked up")
			}
			tx, _ := c.Transaction(r.TxHash)
			if r.GasUsed > tx.GasLimit || r.GasUsed == 0 {
				t.Errorf("gas used %d of %d", r.GasUsed, tx.GasLimit)
			}
			if tc.reason == "out of gas" && r.GasUsed != tx.GasLimit {
				t.Errorf("out of gas used %d, want all %d", r.GasUsed, tx.GasLimit)
			}
			for _, a := range watched {
				b := before[a]
				wantEth := b.eth
				if a == tc.from {
					wantEth = sub(b.eth, fee(r))
				}
				wantBig(t, a.Hex()+" USDC", c.Balance(usdcAddr, a), b.usdc)
				wantBig(t, a.Hex()+" ETH", c.Balance(native, a), wantEth)
				wantBig(t, a.Hex()+" allowance to the contract", c.Allowance(usdcAddr, a, holdAddr), b.allowHold)
				wantBig(t, a.Hex()+" allowance to bob", c.Allowance(usdcAddr, a, bob), b.allowBob)
			}
		})
	}
}

// approveHold deploys pullAndHold and has alice approve it.
func approveHold(amount *big.Int) func(t *testing.T, c *simchain.Chain) {
	return func(t *testing.T, c *simchain.Chain) {
		deployHold(t, c)
		mustSucceed(t, c, alice, simchain.TxRequest{To: token(t, ethereum, "USDC"), Data: pack(t, "approve", holdAddr, amount)})
	}
}

func TestCallReadsWithoutChangingState(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")
	mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", bob, usdc(12))})
	head, nonce := c.Head(), c.Nonce(alice)

	reads := []struct {
		method string
		args   []any
		want   any
	}{
		{"name", nil, "USD Coin"},
		{"symbol", nil, "USDC"},
		{"decimals", nil, uint8(6)},
		{"balanceOf", []any{carol}, usdc(1000)},
		{"allowance", []any{alice, bob}, usdc(12)},
		{"allowance", []any{bob, alice}, new(big.Int)},
	}
	tok, _ := testRegistry(t).TokenBySymbol(ethereum, "USDC")
	reads[0].want = tok.Name
	for _, rd := range reads {
		out, err := c.Call(carol, usdcAddr, pack(t, rd.method, rd.args...))
		if err != nil {
			t.Fatalf("%s: %v", rd.method, err)
		}
		vals, err := standardERC20.Unpack(rd.method, out)
		if err != nil || len(vals) != 1 {
			t.Fatalf("%s: unpack %x: %v", rd.method, out, err)
		}
		switch want := rd.want.(type) {
		case *big.Int:
			wantBig(t, rd.method, vals[0].(*big.Int), want)
		default:
			if vals[0] != want {
				t.Errorf("%s = %v, want %v", rd.method, vals[0], want)
			}
		}
	}

	// A call that would transfer answers true and changes nothing.
	out, err := c.Call(alice, usdcAddr, pack(t, "transfer", bob, usdc(10)))
	if err != nil || !bytes.Equal(out, common.LeftPadBytes([]byte{1}, 32)) {
		t.Fatalf("transfer call = %x, %v", out, err)
	}
	wantBig(t, "alice USDC", c.Balance(usdcAddr, alice), usdc(1000))
	wantBig(t, "bob USDC", c.Balance(usdcAddr, bob), usdc(1000))
	if c.Head() != head || c.Nonce(alice) != nonce {
		t.Error("a call mined a block or consumed a nonce")
	}

	// A call that reverts answers the revert.
	_, err = c.Call(alice, usdcAddr, pack(t, "transfer", bob, usdc(2000)))
	var re *simchain.RevertError
	if !errors.Is(err, simchain.ErrReverted) || !errors.As(err, &re) || re.Reason != "ERC20: transfer amount exceeds balance" {
		t.Fatalf("call error %v", err)
	}
	reason, err := abi.UnpackRevert(re.Data())
	if err != nil || reason != re.Reason {
		t.Errorf("revert data decodes to %q, %v", reason, err)
	}
	// A call to an account without code answers nothing.
	if out, err := c.Call(alice, bob, pack(t, "decimals")); err != nil || len(out) != 0 {
		t.Errorf("call to an EOA = %x, %v", out, err)
	}
}

// TestApproveCalldata: the calldata is the selector 0x095ea7b3 and two
// left-padded words, as a wallet builds it by hand.
func TestApproveCalldata(t *testing.T) {
	spender := common.HexToAddress("0x1111111111111111111111111111111111111111")
	got, err := simchain.ApproveCalldata(spender, big.NewInt(100_000_000))
	if err != nil {
		t.Fatal(err)
	}
	want := "095ea7b3" + "0000000000000000000000001111111111111111111111111111111111111111" +
		"0000000000000000000000000000000000000000000000000000000005f5e100"
	if common.Bytes2Hex(got) != want {
		t.Fatalf("calldata %x, want %s", got, want)
	}
	if _, err := simchain.ApproveCalldata(spender, big.NewInt(-1)); err == nil {
		t.Fatal("a negative amount was encoded")
	}
}

// TestApprovalResetToken holds USDT on Ethereum, which the registry marks
// approvalReset, to Tether's approve: a non-zero allowance changes only
// through zero (the change straight to another non-zero amount reverts and
// leaves it as it was), while USDC on the same chain takes the change.
func TestApprovalResetToken(t *testing.T) {
	c := newChain(t, ethereum)
	usdt, usdcAddr := token(t, ethereum, "USDT"), token(t, ethereum, "USDC")
	approve := func(tok common.Address, amount *big.Int) *simchain.Receipt {
		return send(t, c, alice, simchain.TxRequest{To: tok, Data: pack(t, "approve", bob, amount)})
	}
	steps := []struct {
		name    string
		token   common.Address
		amount  *big.Int
		reason  string // empty: success
		allowed *big.Int
	}{
		{"USDT from zero to 5", usdt, usdc(5), "", usdc(5)},
		{"USDT from 5 to 7", usdt, usdc(7), simchain.ApproveNonZeroReason, usdc(5)},
		{"USDT from 5 to the maximum", usdt, math.MaxBig256, simchain.ApproveNonZeroReason, usdc(5)},
		{"USDT from 5 to zero", usdt, usdc(0), "", usdc(0)},
		{"USDT from zero to 7", usdt, usdc(7), "", usdc(7)},
		{"USDT from 7 to zero again", usdt, usdc(0), "", usdc(0)},
		{"USDT from zero to zero", usdt, usdc(0), "", usdc(0)},
		{"USDC from zero to 5", usdcAddr, usdc(5), "", usdc(5)},
		{"USDC from 5 to 7", usdcAddr, usdc(7), "", usdc(7)},
	}
	for _, s := range steps {
		r := approve(s.token, s.amount)
		if s.reason == "" && !r.Succeeded() {
			t.Errorf("%s: reverted: %s", s.name, r.RevertReason)
		}
		if s.reason != "" && (r.Succeeded() || r.RevertReason != s.reason) {
			t.Errorf("%s: status %d reason %q, want a revert with %q", s.name, r.Status, r.RevertReason, s.reason)
		}
		wantBig(t, s.name+": allowance", c.Allowance(s.token, alice, bob), s.allowed)
	}
}
