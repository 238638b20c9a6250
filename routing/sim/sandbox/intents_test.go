package sandbox

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

func TestIntentsRoutes(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	erc20, err := ERC20ABI()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		req         *quote.Request
		wantDeposit bool
		wantTx      bool
	}{
		{"ERC-20 from Ethereum", f.req(t, 1, "USDC", 900000001, "wNEAR", "500"), true, true},
		{"native from Arbitrum", f.req(t, 42161, "", 900000003, "USDT", "1"), true, true},
		{"from Solana: deposit, no tx", f.req(t, 1151111081099710, "USDC", 1, "USDC", "200"), true, false},
		{"from Bitcoin: no deposit format", f.req(t, 20000000000001, "", 1, "USDC", "0.01"), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.FeeBps = 20
			r, err := m.Intents().QuoteLeg(context.Background(), c.req, "sbx-intents")
			if err != nil {
				t.Fatal(err)
			}
			checkAmounts(t, r)
			if r.Provider != "intents" || r.StepType != "intents" || r.ApprovalAddress != "" {
				t.Errorf("route %+v", r)
			}
			if (r.DepositAddress != "") != c.wantDeposit || r.DepositAddress != DepositAddress(c.req.From, c.req.ID) {
				t.Errorf("deposit %q", r.DepositAddress)
			}
			if (r.Tx != nil) != c.wantTx {
				t.Fatalf("tx %+v", r.Tx)
			}
			if r.Tx == nil {
				return
			}
			if c.req.FromToken.IsNative() {
				if r.Tx.To != r.DepositAddress || r.Tx.Value.Cmp(c.req.FromAmount) != 0 || len(r.Tx.Data) != 0 {
					t.Errorf("native deposit tx %+v", r.Tx)
				}
				return
			}
			if !common.IsHexAddress(r.Tx.To) || common.HexToAddress(r.Tx.To) != common.HexToAddress(c.req.FromToken.Address) || r.Tx.Value.Sign() != 0 {
				t.Errorf("token deposit tx %+v", r.Tx)
			}
			args, err := erc20.Methods["transfer"].Inputs.Unpack(r.Tx.Data[4:])
			if err != nil || string(r.Tx.Data[:4]) != string(erc20.Methods["transfer"].ID) {
				t.Fatalf("calldata: %v", err)
			}
			if args[0].(common.Address).Hex() != r.DepositAddress || args[1].(*big.Int).Cmp(c.req.FromAmount) != 0 {
				t.Errorf("transfer args %v", args)
			}
		})
	}
}

func TestDepositAddressFormats(t *testing.T) {
	f := loadFixture(t)
	for _, c := range []struct {
		chain  uint64
		length int
	}{{1, 42}, {9270000000000000, 66}, {900000001, 64}, {900000002, 0}} {
		ch, _ := f.reg.Chain(c.chain)
		a, b := DepositAddress(ch, "q1"), DepositAddress(ch, "q2")
		if len(a) != c.length || (c.length > 0 && a == b) {
			t.Errorf("chain %d: %q / %q", c.chain, a, b)
		}
	}
	sol, _ := f.reg.Chain(1151111081099710)
	if _, err := receiverBytes(sol, DepositAddress(sol, "q1")); err != nil {
		t.Errorf("Solana deposit address does not decode: %v", err)
	}
}
