package sandbox

import (
	"bytes"
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// routerChain is a sandbox chain with the router deployed, on a fixed clock
// at 1 gwei.
func routerChain(t *testing.T, f fixture, chainID uint64) *simchain.Chain {
	t.Helper()
	c, err := simchain.New(simchain.Config{Registry: f.reg, ChainID: chainID, GasPrice: big.NewInt(1e9),
		Clock: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := DeployRouter(c); err != nil {
		t.Fatal(err)
	}
	return c
}

func approveCall(t *testing.T, spender common.Address, amount *big.Int) []byte {
	t.Helper()
	a, err := ERC20ABI()
	if err != nil {
		t.Fatal(err)
	}
	data, err := a.Pack("approve", spender, amount)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// balances reads holder's balance of each token.
func balances(c *simchain.Chain, holder common.Address, tokens ...common.Address) []*big.Int {
	out := make([]*big.Int, len(tokens))
	for i, tok := range tokens {
		out[i] = c.Balance(tok, holder)
	}
	return out
}

func tokenAddr(t *testing.T, c *simchain.Chain, addr string) common.Address {
	t.Helper()
	a, err := EVMAddress(addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRouterSettlesEveryAggregatorQuote quotes on the market, then executes
// the quote's own transaction on a sandbox chain: an ERC-20 input reverts
// with the token's reason until it is approved to the approval address,
// then the receiver gets exactly the quoted output and the fee wallet the
// quoted partner fee (swaps), or the router keeps the input and announces
// what the destination owes (bridges), within the quoted gas limit.
func TestRouterSettlesEveryAggregatorQuote(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	cases := []struct {
		name              string
		from              uint64
		fromTok           string
		to                uint64
		toTok, tool       string
		amount            string
		feeBps            int
		bridge, anonymous bool
	}{
		{name: "ERC-20 swap with a partner fee", from: 1, fromTok: "USDC", to: 1, toTok: "WETH", tool: "sbx-uniflow", amount: "500", feeBps: 30},
		{name: "ERC-20 swap, platform fee kept by the router", from: 1, fromTok: "USDC", to: 1, toTok: "DAI", tool: "sbx-curveline", amount: "900", feeBps: 30, anonymous: true},
		{name: "native input swap", from: 1, to: 1, toTok: "USDC", tool: "sbx-uniflow", amount: "2", feeBps: 25},
		{name: "native output swap", from: 42161, fromTok: "USDC", to: 42161, tool: "sbx-uniflow", amount: "700"},
		{name: "bridge same asset", from: 1, fromTok: "USDC", to: 42161, toTok: "USDC", tool: "sbx-arcbridge", amount: "1000", feeBps: 25, bridge: true},
		{name: "bridge with a hop", from: 42161, fromTok: "USDC", to: 8453, toTok: "WETH", tool: "sbx-canal", amount: "1000", bridge: true},
		{name: "bridge to Solana", from: 1, fromTok: "USDC", to: 1151111081099710, toTok: "USDC", tool: "sbx-wormway", amount: "1000", bridge: true},
		{name: "native bridge", from: 8453, to: 42161, tool: "sbx-arcbridge", amount: "1.5", bridge: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := f.req(t, tc.from, tc.fromTok, tc.to, tc.toTok, tc.amount)
			req.FeeBps = tc.feeBps
			if !tc.anonymous {
				req.FeeRecipient = feeWallet
			}
			r, err := m.Aggregator().QuoteLeg(context.Background(), req, tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			c := routerChain(t, f, tc.from)
			tx, err := simchain.ParseTxRequest(r.Tx.To, "0x"+common.Bytes2Hex(r.Tx.Data), "0x"+r.Tx.Value.Text(16), "0x"+new(big.Int).SetUint64(r.Tx.GasLimit).Text(16))
			if err != nil {
				t.Fatal(err)
			}
			from := common.HexToAddress(sender)
			in := tokenAddr(t, c, req.FromToken.Address)
			router := RouterAddress(tc.from)

			if !req.FromToken.IsNative() {
				rc, err := c.Send(from, tx)
				if err != nil {
					t.Fatal(err)
				}
				if rc.Succeeded() || rc.RevertReason != "ERC20: insufficient allowance" {
					t.Fatalf("without an approval: status %d, reason %q", rc.Status, rc.RevertReason)
				}
				spender := common.HexToAddress(r.ApprovalAddress)
				if ok, err := c.Send(from, simchain.TxRequest{To: in, Data: approveCall(t, spender, req.FromAmount)}); err != nil || !ok.Succeeded() {
					t.Fatalf("approve: %v %+v", err, ok)
				}
			}

			var out common.Address
			if !tc.bridge {
				out = tokenAddr(t, c, req.ToToken.Address)
			}
			recv, feeTo := common.HexToAddress(recipient), common.HexToAddress(feeWallet)
			senderBefore := balances(c, from, in)
			recvBefore := balances(c, recv, out)
			feeBefore := balances(c, feeTo, out)
			routerBefore := balances(c, router, in, out)

			rc, err := c.Send(from, tx)
			if err != nil {
				t.Fatal(err)
			}
			if !rc.Succeeded() {
				t.Fatalf("reverted after approval: %s", rc.RevertReason)
			}
			if rc.GasUsed > tx.GasLimit || tx.GasLimit > 2*rc.GasUsed {
				t.Errorf("gas used %d under limit %d: want the limit enough and at most twice the use", rc.GasUsed, tx.GasLimit)
			}
			gasPaid := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
			wantSpent := new(big.Int).Set(req.FromAmount)
			if req.FromToken.IsNative() {
				wantSpent.Add(wantSpent, gasPaid)
			}
			if got := new(big.Int).Sub(senderBefore[0], c.Balance(in, from)); got.Cmp(wantSpent) != 0 {
				t.Errorf("sender spent %s, want %s", got, wantSpent)
			}
			if got := new(big.Int).Sub(c.Balance(in, router), routerBefore[0]); in != out && got.Cmp(req.FromAmount) != 0 {
				t.Errorf("router took %s of the input, want %s", got, req.FromAmount)
			}
			if tc.bridge {
				checkBridgeSent(t, rc, req, r)
				return
			}
			if got := new(big.Int).Sub(c.Balance(out, recv), recvBefore[0]); got.Cmp(r.ToAmount) != 0 {
				t.Errorf("receiver got %s, quote said %s", got, r.ToAmount)
			}
			wantFee := new(big.Int)
			if !tc.anonymous {
				wantFee = r.PartnerFee
			}
			if got := new(big.Int).Sub(c.Balance(out, feeTo), feeBefore[0]); got.Cmp(wantFee) != 0 {
				t.Errorf("fee wallet got %s, want %s", got, wantFee)
			}
			if tc.anonymous && r.PartnerFee.Sign() > 0 {
				if got := new(big.Int).Sub(c.Balance(out, router), routerBefore[1]); got.Cmp(r.PartnerFee) != 0 {
					t.Errorf("router kept %s of the output, want the platform fee %s", got, r.PartnerFee)
				}
			}
			checkSwapped(t, rc, req, r, tc.anonymous)
		})
	}
}

func checkSwapped(t *testing.T, rc *simchain.Receipt, req *quote.Request, r *quote.Route, anonymous bool) {
	t.Helper()
	var executed, swapped bool
	for _, l := range rc.Logs {
		switch l.Topics[0] {
		case routerABI.Events["QuoteExecuted"].ID:
			executed = l.Topics[1] == quote.Ref(req.ID)
		case routerABI.Events["Swapped"].ID:
			vals, err := routerABI.Events["Swapped"].Inputs.NonIndexed().Unpack(l.Data)
			if err != nil {
				t.Fatal(err)
			}
			swapped = l.Topics[1] == quote.Ref(req.ID) && l.Topics[2] == addressTopic(common.HexToAddress(recipient)) &&
				vals[3].(*big.Int).Cmp(r.ToAmount) == 0 && vals[4].(*big.Int).Cmp(r.PartnerFee) == 0 &&
				(vals[5].(common.Address) == common.HexToAddress(feeWallet)) != anonymous
		}
	}
	if !executed || !swapped {
		t.Errorf("logs: QuoteExecuted %v, Swapped %v", executed, swapped)
	}
}

func checkBridgeSent(t *testing.T, rc *simchain.Receipt, req *quote.Request, r *quote.Route) {
	t.Helper()
	ev := routerABI.Events["BridgeSent"]
	for _, l := range rc.Logs {
		if l.Topics[0] != ev.ID {
			continue
		}
		vals, err := ev.Inputs.NonIndexed().Unpack(l.Data)
		if err != nil {
			t.Fatal(err)
		}
		receiver, _ := receiverBytes(req.To, req.ToAddress)
		if l.Topics[2] != quote.Ref(req.ID) || vals[2].(*big.Int).Uint64() != req.To.ID || vals[4].(*big.Int).Cmp(r.ToAmount) != 0 ||
			vals[5].(*big.Int).Cmp(r.ToAmountMin) != 0 || vals[6].(*big.Int).Cmp(r.PartnerFee) != 0 || !bytes.Equal(vals[8].([]byte), receiver) {
			t.Errorf("BridgeSent %v, quote %s→%s min %s fee %s", vals, r.FromAmount, r.ToAmount, r.ToAmountMin, r.PartnerFee)
		}
		return
	}
	t.Error("no BridgeSent log")
}

// TestRouterRefuses covers the router's refusals: each is a mined failure
// with the router's reason, and nothing moves.
func TestRouterRefuses(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	swapReq := f.req(t, 1, "", 1, "USDC", "1")
	r, err := m.Aggregator().QuoteLeg(context.Background(), swapReq, "sbx-uniflow")
	if err != nil {
		t.Fatal(err)
	}
	noSuffix := r.Tx.Data[:len(r.Tx.Data)-32]
	highMin := bytes.Clone(r.Tx.Data)
	// minAmountOut is the fifth argument: one above the quoted output.
	new(big.Int).Add(r.ToAmount, big.NewInt(1)).FillBytes(highMin[4+4*32 : 4+5*32])
	cases := []struct {
		name   string
		data   []byte
		value  *big.Int
		reason string
	}{
		{"calldata without the quoted word", noSuffix, r.Tx.Value, "carries no quoted amount"},
		{"quoted word and more", append(bytes.Clone(r.Tx.Data), 0), r.Tx.Value, "carries no quoted amount"},
		{"output below the minimum", highMin, r.Tx.Value, "below minAmountOut"},
		{"value short of fromAmount", r.Tx.Data, new(big.Int).Sub(r.Tx.Value, big.NewInt(1)), "must equal fromAmount"},
		{"unknown selector", []byte{1, 2, 3, 4}, nil, "not recognised"},
		{"plain transfer", nil, big.NewInt(1), "accepts no plain transfers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := routerChain(t, f, 1)
			from := common.HexToAddress(sender)
			usdcAddr := tokenAddr(t, c, swapReq.ToToken.Address)
			before := c.Balance(usdcAddr, common.HexToAddress(recipient))
			rc, err := c.Send(from, simchain.TxRequest{To: RouterAddress(1), Data: tc.data, Value: tc.value, GasLimit: r.Tx.GasLimit})
			if err != nil {
				t.Fatal(err)
			}
			if rc.Succeeded() || !strings.Contains(rc.RevertReason, tc.reason) {
				t.Fatalf("status %d reason %q, want a failure mentioning %q", rc.Status, rc.RevertReason, tc.reason)
			}
			if got := c.Balance(usdcAddr, common.HexToAddress(recipient)); got.Cmp(before) != 0 {
				t.Fatalf("receiver balance moved: %s → %s", before, got)
			}
		})
	}
}

func TestQuotedAmountOut(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	for _, tool := range []string{"sbx-uniflow", "sbx-arcbridge"} {
		to := uint64(1)
		if tool == "sbx-arcbridge" {
			to = 42161
		}
		r, err := m.Aggregator().QuoteLeg(context.Background(), f.req(t, 1, "USDC", to, "USDC", "100"), tool)
		if tool == "sbx-uniflow" {
			r, err = m.Aggregator().QuoteLeg(context.Background(), f.req(t, 1, "USDC", 1, "WETH", "100"), tool)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, ok := QuotedAmountOut(r.Tx.Data)
		if !ok || got.Cmp(r.PreFeeToAmount) != 0 {
			t.Errorf("%s: quoted %v %v, want %s", tool, got, ok, r.PreFeeToAmount)
		}
		if _, ok := QuotedAmountOut(r.Tx.Data[:len(r.Tx.Data)-32]); ok {
			t.Errorf("%s: calldata without the word read as quoted", tool)
		}
	}
	if _, ok := QuotedAmountOut([]byte{1}); ok {
		t.Error("short calldata read as quoted")
	}
}
