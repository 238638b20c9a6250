package pulsesim

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// simChain is a sandbox chain with the router, the warp routes and
// Swapgate's contracts deployed, at 1 gwei on a fixed clock. Accounts start
// with a billion native coins, since 100 PLS pay no interchain gas.
func simChain(t *testing.T, f fixture, p *pulseroute.Provider, chainID uint64) *simchain.Chain {
	t.Helper()
	genesis := new(big.Int).Exp(big.NewInt(10), big.NewInt(27), nil)
	c, err := simchain.New(simchain.Config{Registry: f.reg, ChainID: chainID, GasPrice: big.NewInt(1e9), GenesisNative: genesis,
		Clock: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sandbox.DeployRouter(c); err != nil {
		t.Fatal(err)
	}
	cs, err := NewSandboxChain(f.reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := DeploySandbox(c, pulseroute.DefaultContracts(), cs); err != nil {
		t.Fatal(err)
	}
	return c
}

// txOf is a quote's transaction request as the sandbox chain reads it.
func txOf(t *testing.T, tx *quote.TxRequest) simchain.TxRequest {
	t.Helper()
	gl := ""
	if tx.GasLimit > 0 {
		gl = "0x" + new(big.Int).SetUint64(tx.GasLimit).Text(16)
	}
	req, err := simchain.ParseTxRequest(tx.To, "0x"+common.Bytes2Hex(tx.Data), "0x"+tx.Value.Text(16), gl)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func mustSend(t *testing.T, c *simchain.Chain, from common.Address, req simchain.TxRequest) *simchain.Receipt {
	t.Helper()
	r, err := c.Send(from, req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func approveTx(t *testing.T, token, spender common.Address, amount *big.Int) simchain.TxRequest {
	t.Helper()
	data, err := pulseroute.ABI().Pack(pulseroute.MethodApprove, spender, amount)
	if err != nil {
		t.Fatal(err)
	}
	return simchain.TxRequest{To: token, Data: data}
}

// logOf finds the first log of an event of the package ABI.
func logOf(r *simchain.Receipt, event string) (topics []common.Hash, vals []any, ok bool) {
	ev := pulseroute.ABI().Events[event]
	for _, l := range r.Logs {
		if l.Topics[0] == ev.ID {
			vals, err := ev.Inputs.NonIndexed().Unpack(l.Data)
			return l.Topics, vals, err == nil
		}
	}
	return nil, nil, false
}

func checkGas(t *testing.T, r *simchain.Receipt, limit uint64) {
	t.Helper()
	if r.GasUsed > limit || limit > 2*r.GasUsed {
		t.Errorf("gas used %d under limit %d: want the limit enough and at most twice the use", r.GasUsed, limit)
	}
}

// TestDirectInboundExecutes sends a direct inbound quote's transaction:
// without an approval to the sender contract it reverts with the token's
// reason; with one, the USDC leaves the user, the fee stays with the sender
// contract, the rest is locked in the collateral router, and the logs
// announce the transfer to 369 with what the tracker needs.
func TestDirectInboundExecutes(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	for _, tc := range []struct {
		name   string
		toTok  string
		feeBps int
	}{
		{"USDC to USDCh", "USDCh", 0},
		{"USDC to PLSX with a fee", "PLSX", 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := f.req(t, 8453, "USDC", 369, tc.toTok, "750")
			req.FeeBps = tc.feeBps
			r, err := p.QuoteLeg(context.Background(), req, ToolWarp)
			if err != nil {
				t.Fatal(err)
			}
			c := simChain(t, f, p, 8453)
			w, _ := pulseroute.DefaultContracts().WarpRoute(8453)
			senderAddr, _ := pulseroute.DefaultContracts().SenderContract(8453)
			user := common.HexToAddress(sender)
			tx := txOf(t, r.Tx)

			rc := mustSend(t, c, user, tx)
			if rc.Succeeded() || rc.RevertReason != "ERC20: insufficient allowance" {
				t.Fatalf("without an approval: status %d reason %q", rc.Status, rc.RevertReason)
			}
			if ok := mustSend(t, c, user, approveTx(t, w.Token, common.HexToAddress(r.ApprovalAddress), req.FromAmount)); !ok.Succeeded() {
				t.Fatal(ok.RevertReason)
			}
			before, lockedBefore := c.Balance(w.Token, user), c.Balance(w.Token, w.Router)
			rc = mustSend(t, c, user, tx)
			if !rc.Succeeded() {
				t.Fatalf("reverted: %s", rc.RevertReason)
			}
			checkGas(t, rc, tx.GasLimit)
			bridged, fee := quote.SplitFee(req.FromAmount, tc.feeBps)
			if got := new(big.Int).Sub(before, c.Balance(w.Token, user)); got.Cmp(req.FromAmount) != 0 {
				t.Errorf("user paid %s, want %s", got, req.FromAmount)
			}
			if got := new(big.Int).Sub(c.Balance(w.Token, w.Router), lockedBefore); got.Cmp(bridged) != 0 {
				t.Errorf("collateral locked %s, want %s", got, bridged)
			}
			if got := c.Balance(w.Token, senderAddr); got.Cmp(fee) != 0 {
				t.Errorf("sender contract kept %s, want the fee %s", got, fee)
			}
			if got := c.Balance(common.Address{}, w.Router); got.Cmp(tx.Value) != 0 {
				t.Errorf("interchain gas paid %s, want %s", got, tx.Value)
			}
			// The transfer goes to the user when it delivers the output
			// (USDCh), and to the arrival desk when the output is swapped
			// on arrival.
			to := common.HexToAddress(recipient)
			if tc.toTok != "USDCh" {
				to = ArrivalDesk
			}
			topics, vals, ok := logOf(rc, "SentTransferRemote")
			if !ok || topics[1] != common.BigToHash(big.NewInt(369)) || topics[2] != common.Hash(pulseroute.AddressToBytes32(to)) ||
				vals[0].(*big.Int).Cmp(bridged) != 0 {
				t.Errorf("SentTransferRemote %v %v", topics, vals)
			}
			topics, vals, ok = logOf(rc, "InboundSent")
			if !ok || topics[1] != quote.Ref(req.ID) || topics[2] != common.BytesToHash(user.Bytes()) ||
				vals[0].(*big.Int).Cmp(bridged) != 0 || vals[1].(*big.Int).Cmp(fee) != 0 || vals[3].(*big.Int).Cmp(r.ToAmountMin) != 0 {
				t.Errorf("InboundSent %v %v", topics, vals)
			}
		})
	}
}

// TestDirectOutboundExecutes sends the fee-free USDCh → USDC quote on 369:
// no approval, USDCh burned from the user, the payment kept, and a
// transferRemote log to the destination; too small a payment reverts with
// the paymaster's reason.
func TestDirectOutboundExecutes(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	req := f.req(t, 369, "USDCh", 42161, "USDC", "40")
	r, err := p.QuoteLeg(context.Background(), req, ToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	if r.ApprovalAddress != "" {
		t.Fatalf("outbound needs no approval, got %q", r.ApprovalAddress)
	}
	c := simChain(t, f, p, 369)
	user := common.HexToAddress(sender)
	usdch := common.HexToAddress(pulseroute.USDChAddress)
	tx := txOf(t, r.Tx)

	short := tx
	short.Value = new(big.Int).Sub(tx.Value, big.NewInt(1))
	if rc := mustSend(t, c, user, short); rc.Succeeded() || !strings.Contains(rc.RevertReason, "IGP: insufficient interchain gas payment") {
		t.Fatalf("short payment: status %d reason %q", rc.Status, rc.RevertReason)
	}
	before := c.Balance(usdch, user)
	rc := mustSend(t, c, user, tx)
	if !rc.Succeeded() {
		t.Fatalf("reverted: %s", rc.RevertReason)
	}
	checkGas(t, rc, tx.GasLimit)
	if got := new(big.Int).Sub(before, c.Balance(usdch, user)); got.Cmp(req.FromAmount) != 0 {
		t.Errorf("burned %s, want %s", got, req.FromAmount)
	}
	topics, vals, ok := logOf(rc, "SentTransferRemote")
	if !ok || topics[1] != common.BigToHash(big.NewInt(42161)) || vals[0].(*big.Int).Cmp(req.FromAmount) != 0 {
		t.Errorf("SentTransferRemote %v %v", topics, vals)
	}
	// USDCh is still an ERC-20 under the router's code.
	if _, err := c.Call(user, usdch, mustPack(t, pulseroute.MethodBalanceOf, user)); err != nil {
		t.Errorf("balanceOf on USDCh: %v", err)
	}
	// More than the user holds reverts with the token's reason.
	big1 := f.req(t, 369, "USDCh", 42161, "USDC", "5000")
	r2, err := p.QuoteLeg(context.Background(), big1, ToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	if rc := mustSend(t, c, user, txOf(t, r2.Tx)); rc.Succeeded() || rc.RevertReason != "ERC20: burn amount exceeds balance" {
		t.Fatalf("over the balance: status %d reason %q", rc.Status, rc.RevertReason)
	}
}

func mustPack(t *testing.T, method string, args ...any) []byte {
	t.Helper()
	data, err := pulseroute.ABI().Pack(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRouterStepsExecute sends multi-step step 1 (a router swap into USDC
// delivered to the inbound receiver) and a same-chain swap on 369: each
// delivers exactly the quoted amount.
func TestRouterStepsExecute(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	cases := []struct {
		name              string
		from              uint64
		fromTok, toTok    string
		to                uint64
		amount            string
		feeBps            int
		receiverIsInbound bool
	}{
		{name: "multi-step step 1, WETH on Arbitrum", from: 42161, fromTok: "WETH", to: 369, toTok: "", amount: "0.5", feeBps: 30, receiverIsInbound: true},
		{name: "multi-step step 1, native ETH on Base", from: 8453, fromTok: "", to: 369, toTok: "PLSX", amount: "0.2", receiverIsInbound: true},
		{name: "same-chain swap on 369", from: 369, fromTok: "HEX", to: 369, toTok: "PLSX", amount: "500", feeBps: 50},
		{name: "same-chain swap on 369 into native PLS", from: 369, fromTok: "USDCh", to: 369, toTok: "", amount: "20"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := f.req(t, tc.from, tc.fromTok, tc.to, tc.toTok, tc.amount)
			req.FeeBps, req.FeeRecipient = tc.feeBps, feeWallet
			leg := ToolWarp
			if tc.from == tc.to {
				leg = ToolPulseX
			}
			r, err := p.QuoteLeg(context.Background(), req, leg)
			if err != nil {
				t.Fatal(err)
			}
			c := simChain(t, f, p, tc.from)
			user := common.HexToAddress(sender)
			tx := txOf(t, r.Tx)
			if !req.FromToken.IsNative() {
				in := common.HexToAddress(req.FromToken.Address)
				if rc := mustSend(t, c, user, tx); rc.Succeeded() || rc.RevertReason != "ERC20: insufficient allowance" {
					t.Fatalf("without an approval: status %d reason %q", rc.Status, rc.RevertReason)
				}
				if rc := mustSend(t, c, user, approveTx(t, in, common.HexToAddress(r.ApprovalAddress), req.FromAmount)); !rc.Succeeded() {
					t.Fatal(rc.RevertReason)
				}
			}
			receiver, out, want := common.HexToAddress(recipient), common.Address{}, r.ToAmount
			if tc.receiverIsInbound {
				receiver, _ = pulseroute.DefaultContracts().InboundReceiver(tc.from)
				w, _ := pulseroute.DefaultContracts().WarpRoute(tc.from)
				out = w.Token
				quoted, ok := sandbox.QuotedAmountOut(r.Tx.Data)
				if !ok {
					t.Fatal("step 1 carries no quoted amount")
				}
				want, _ = quote.SplitFee(quoted, tc.feeBps)
			} else if !req.ToToken.IsNative() {
				out = common.HexToAddress(req.ToToken.Address)
			}
			before := c.Balance(out, receiver)
			rc := mustSend(t, c, user, tx)
			if !rc.Succeeded() {
				t.Fatalf("reverted: %s", rc.RevertReason)
			}
			checkGas(t, rc, tx.GasLimit)
			if got := new(big.Int).Sub(c.Balance(out, receiver), before); got.Cmp(want) != 0 {
				t.Errorf("receiver got %s, want %s", got, want)
			}
		})
	}
}

// TestInboundReceiverTakesNoCalls: it holds what step 1 delivers and
// refuses every call.
func TestInboundReceiverTakesNoCalls(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	c := simChain(t, f, p, 42161)
	receiver, _ := pulseroute.DefaultContracts().InboundReceiver(42161)
	w, _ := pulseroute.DefaultContracts().WarpRoute(42161)
	if got := c.Balance(w.Token, receiver); got.Sign() != 0 {
		t.Fatalf("the inbound receiver starts with %s USDC, want none", got)
	}
	rc := mustSend(t, c, common.HexToAddress(sender), simchain.TxRequest{To: receiver, Data: []byte{1, 2, 3, 4}})
	if rc.Succeeded() || !strings.HasPrefix(rc.RevertReason, "InboundReceiver:") {
		t.Fatalf("call: status %d reason %q", rc.Status, rc.RevertReason)
	}
}

// TestPulseXRouterReads: on the sandbox chain 369 the PulseX router answers
// getAmountsOut and getAmountsIn (an eth_call of a node) exactly as the
// chain state the sandbox quotes with while no swap moved a pool; a hop
// without a pool and a swap past its deadline revert.
func TestPulseXRouterReads(t *testing.T) {
	f := loadFixture(t)
	c := simChain(t, f, nil, 369)
	cs, err := NewSandboxChain(f.reg)
	if err != nil {
		t.Fatal(err)
	}
	router := pulseroute.DefaultContracts().PulseX().Router
	tok := func(sym string) common.Address {
		tk, ok := f.reg.TokenBySymbol(369, sym)
		if !ok {
			t.Fatalf("no %s on 369", sym)
		}
		return common.HexToAddress(tk.Address)
	}
	path := []common.Address{tok("HEX"), tok("USDCh"), tok("PLSX")}
	amount := big.NewInt(5_000_000_000)
	for _, tc := range []struct {
		method string
		want   func() ([]*big.Int, error)
		call   func() ([]byte, error)
	}{
		{pulseroute.MethodGetAmountsOut, func() ([]*big.Int, error) { return cs.AmountsOut(context.Background(), amount, path) },
			func() ([]byte, error) { return pulseroute.GetAmountsOutCall(amount, path) }},
		{pulseroute.MethodGetAmountsIn, func() ([]*big.Int, error) { return cs.AmountsIn(context.Background(), amount, path) },
			func() ([]byte, error) { return pulseroute.GetAmountsInCall(amount, path) }},
	} {
		want, err := tc.want()
		if err != nil {
			t.Fatal(err)
		}
		data, err := tc.call()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Call(common.Address{}, router, data)
		if err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		vals, err := pulseroute.UnpackOutputs(tc.method, out)
		if err != nil {
			t.Fatal(err)
		}
		got := vals[0].([]*big.Int)
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", tc.method, got, want)
		}
		for i := range want {
			if got[i].Cmp(want[i]) != 0 {
				t.Fatalf("%s: %v, want %v", tc.method, got, want)
			}
		}
	}
	noPool, _ := pulseroute.GetAmountsOutCall(amount, []common.Address{tok("HEX"), common.HexToAddress("0x1234")})
	if _, err := c.Call(common.Address{}, router, noPool); !errors.Is(err, simchain.ErrReverted) {
		t.Fatalf("a hop without a pool: %v", err)
	}
	if _, err := c.Call(common.Address{}, router, mustPack(t, "swapExactTokensForTokens", amount, big.NewInt(1), path, common.Address{1}, big.NewInt(1))); !errors.Is(err, simchain.ErrReverted) {
		t.Fatalf("a swap past its deadline: %v", err)
	}
}
