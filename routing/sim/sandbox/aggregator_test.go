package sandbox

import (
	"bytes"
	"context"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

func TestAggregatorRoutes(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	router, err := RouterABI()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		from              uint64
		fromTok           string
		to                uint64
		toTok, tool       string
		amount            string
		feeBps            int
		wantMethod        string
		wantApprove, noTx bool
		wantHop           bool
		wantStep          string
	}{
		{name: "same-chain ERC-20 swap", from: 1, fromTok: "USDC", to: 1, toTok: "WETH", tool: "sbx-uniflow", amount: "5000", feeBps: 30, wantMethod: "swap", wantApprove: true, wantStep: "swap"},
		{name: "same-chain native swap", from: 1, fromTok: "", to: 1, toTok: "USDC", tool: "sbx-uniflow", amount: "2", wantMethod: "swap", wantStep: "swap"},
		{name: "bridge same asset", from: 1, fromTok: "USDC", to: 42161, toTok: "USDC", tool: "sbx-arcbridge", amount: "1000", feeBps: 25, wantMethod: "bridge", wantApprove: true, wantStep: "cross"},
		{name: "bridge with destination hop", from: 42161, fromTok: "USDC", to: 8453, toTok: "WETH", tool: "sbx-canal", amount: "1000", wantMethod: "bridge", wantApprove: true, wantHop: true, wantStep: "cross"},
		{name: "bridge to Solana", from: 1, fromTok: "USDC", to: 1151111081099710, toTok: "USDC", tool: "sbx-wormway", amount: "1000", wantMethod: "bridge", wantApprove: true, wantStep: "cross"},
		{name: "from Solana: no transaction", from: 1151111081099710, fromTok: "USDC", to: 1, toTok: "USDC", tool: "sbx-wormway", amount: "1000", noTx: true, wantStep: "cross"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := f.req(t, c.from, c.fromTok, c.to, c.toTok, c.amount)
			req.FeeBps, req.FeeRecipient = c.feeBps, feeWallet
			r, err := m.Aggregator().QuoteLeg(context.Background(), req, c.tool)
			if err != nil {
				t.Fatalf("QuoteLeg: %v", err)
			}
			checkAmounts(t, r)
			if r.Provider != "aggregator" || r.Tool != c.tool || r.StepType != c.wantStep {
				t.Errorf("provider/tool/step = %s/%s/%s", r.Provider, r.Tool, r.StepType)
			}
			if want := quote.MinOut(r.ToAmount, req.Slippage); r.ToAmountMin.Cmp(want) != 0 {
				t.Errorf("ToAmountMin %s, want %s", r.ToAmountMin, want)
			}
			if _, fee := quote.SplitFee(r.PreFeeToAmount, c.feeBps); fee.Cmp(r.PartnerFee) != 0 {
				t.Errorf("PartnerFee %s, want %s", r.PartnerFee, fee)
			}
			names := map[string]quote.FeeCost{}
			for _, fc := range r.FeeCosts {
				names[fc.Name] = fc
				if !fc.Included {
					t.Errorf("fee %q not included", fc.Name)
				}
			}
			if _, ok := names[r.ToolName+" fee"]; !ok {
				t.Errorf("no tool fee in %v", r.FeeCosts)
			}
			if pf, ok := names["Partner fee"]; ok != (c.feeBps > 0) || (ok && (pf.Amount.Cmp(r.PartnerFee) != 0 || pf.Percentage != float64(c.feeBps)/1e4)) {
				t.Errorf("partner fee cost %+v (feeBps %d)", pf, c.feeBps)
			}
			if _, ok := names["Destination swap fee"]; ok != c.wantHop {
				t.Errorf("hop fee present = %v, want %v", ok, c.wantHop)
			}
			var types []string
			for _, g := range r.GasCosts {
				types = append(types, g.Type)
				if g.Limit != g.Estimate*5/4 || g.AmountUSD <= 0 {
					t.Errorf("gas %s: limit %d estimate %d usd %f", g.Type, g.Limit, g.Estimate, g.AmountUSD)
				}
			}
			wantTypes := []string{"SEND"}
			if c.wantApprove {
				wantTypes = []string{"APPROVE", "SEND"}
			}
			if !reflect.DeepEqual(types, wantTypes) {
				t.Errorf("gas types %v, want %v", types, wantTypes)
			}
			if c.noTx {
				if r.Tx != nil || r.ApprovalAddress != "" {
					t.Errorf("non-EVM source got tx %+v approval %q", r.Tx, r.ApprovalAddress)
				}
				return
			}
			routerAddr := RouterAddress(c.from).Hex()
			if r.Tx == nil || r.Tx.To != routerAddr || r.Tx.ChainID != c.from || r.Tx.From != sender {
				t.Fatalf("tx %+v, want router %s", r.Tx, routerAddr)
			}
			if c.wantApprove != (r.ApprovalAddress == routerAddr) {
				t.Errorf("approval address %q", r.ApprovalAddress)
			}
			if r.Tx.GasLimit != r.GasCosts[len(r.GasCosts)-1].Limit {
				t.Errorf("gas limit %d, SEND limit %d", r.Tx.GasLimit, r.GasCosts[len(r.GasCosts)-1].Limit)
			}
			wantValue := new(big.Int)
			if c.fromTok == "" {
				wantValue = req.FromAmount
			}
			if r.Tx.Value.Cmp(wantValue) != 0 {
				t.Errorf("value %s, want %s", r.Tx.Value, wantValue)
			}
			method, err := router.MethodById(r.Tx.Data[:4])
			if err != nil || method.Name != c.wantMethod {
				t.Fatalf("method %v (%v), want %s", method, err, c.wantMethod)
			}
			args := map[string]any{}
			if err := method.Inputs.UnpackIntoMap(args, r.Tx.Data[4:]); err != nil {
				t.Fatal(err)
			}
			if args["quoteId"].([32]byte) != quote.Ref(req.ID) || args["fromAmount"].(*big.Int).Cmp(req.FromAmount) != 0 ||
				args["minAmountOut"].(*big.Int).Cmp(r.ToAmountMin) != 0 || args["feeBps"].(uint16) != uint16(c.feeBps) ||
				args["feeRecipient"].(common.Address) != common.HexToAddress(feeWallet) {
				t.Errorf("router args %v", args)
			}
			if !strings.EqualFold(args["fromToken"].(common.Address).Hex(), req.FromToken.Address) {
				t.Errorf("fromToken %v", args["fromToken"])
			}
			switch c.wantMethod {
			case "swap":
				if args["receiver"].(common.Address) != common.HexToAddress(recipient) {
					t.Errorf("receiver %v", args["receiver"])
				}
			case "bridge":
				if args["toChainId"].(*big.Int).Uint64() != c.to {
					t.Errorf("toChainId %v", args["toChainId"])
				}
				want, _ := receiverBytes(req.To, req.ToAddress)
				if !bytes.Equal(args["receiver"].([]byte), want) || (c.to == 42161 && len(want) != 20) {
					t.Errorf("receiver %x, want %x", args["receiver"], want)
				}
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	f := loadFixture(t)
	m1, m2 := f.market(t, Config{}), f.market(t, Config{})
	for _, p := range []struct {
		prov quote.Provider
		leg  string
		req  *quote.Request
	}{
		{m1.Aggregator(), "sbx-arcbridge", f.req(t, 1, "WETH", 10, "USDC", "3")},
		{m1.Intents(), "sbx-intents", f.req(t, 1, "USDC", 900000001, "wNEAR", "500")},
	} {
		a, err := p.prov.QuoteLeg(context.Background(), p.req, p.leg)
		if err != nil {
			t.Fatal(err)
		}
		var other quote.Provider
		switch p.prov.Name() {
		case "aggregator":
			other = m2.Aggregator()
		default:
			other = m2.Intents()
		}
		b, err := other.QuoteLeg(context.Background(), p.req, p.leg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two quotes of one request differ:\n%+v\n%+v", p.prov.Name(), a, b)
		}
	}
}

func TestPriceImpactGrowsWithSize(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	prev := 2.0
	for _, amount := range []string{"1000", "100000", "5000000", "50000000"} {
		req := f.req(t, 1, "USDC", 1, "DAI", amount)
		r, err := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-uniflow")
		if err != nil {
			t.Fatal(err)
		}
		rate := quote.FromUnits(r.ToAmount, 18) / quote.FromUnits(req.FromAmount, 6)
		if rate >= prev {
			t.Errorf("%s USDC: rate %f not below %f", amount, rate, prev)
		}
		prev = rate
	}
}

func TestFloorsAndFees(t *testing.T) {
	f := loadFixture(t)
	cases := []struct {
		name, tool string
		req        *quote.Request
		gas        GasPriceFunc
		reason     string
		msg        string
	}{
		{name: "bridge floor", tool: "sbx-arcbridge", req: f.req(t, 1, "USDC", 10, "USDC", "9.99"), reason: pricing.ReasonAmountTooLow, msg: "$10.00"},
		{name: "dex floor", tool: "sbx-uniflow", req: f.req(t, 10, "USDC", 10, "USDT", "0.5"), reason: pricing.ReasonAmountTooLow, msg: "$1.00"},
		{name: "gas above output", tool: "sbx-arcbridge", req: f.req(t, 1, "USDC", 10, "USDC", "12"),
			gas: func(uint64) (*big.Int, bool) { return big.NewInt(1000e9), true }, reason: pricing.ReasonFeesHigher},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gas := c.gas
			if gas == nil {
				gas = fixedGas
			}
			m, err := New(f.reg, f.cat, fixedPrices(f.reg), gas, Config{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Aggregator().QuoteLeg(context.Background(), c.req, c.tool)
			if got := noRouteReason(err); got != c.reason || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err %v, want reason %s containing %q", err, c.reason, c.msg)
			}
		})
	}
	t.Run("unknown price", func(t *testing.T) {
		noPrice := func(chainID uint64, token string) (float64, bool) { return 0, false }
		m, err := New(f.reg, f.cat, noPrice, fixedGas, Config{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Aggregator().QuoteLeg(context.Background(), f.req(t, 1, "USDC", 10, "USDC", "100"), "sbx-arcbridge")
		if noRouteReason(err) != pricing.ReasonNoPossibleRoute {
			t.Errorf("err %v", err)
		}
	})
	t.Run("configured floor", func(t *testing.T) {
		m := f.market(t, Config{Tools: map[string]ToolConfig{"sbx-arcbridge": {MinAmountUSD: 500}}})
		_, err := m.Aggregator().QuoteLeg(context.Background(), f.req(t, 1, "USDC", 10, "USDC", "100"), "sbx-arcbridge")
		if noRouteReason(err) != pricing.ReasonAmountTooLow || !strings.Contains(err.Error(), "$500.00") {
			t.Errorf("err %v", err)
		}
	})
}

func TestIndicativeHasNoTransaction(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	req := f.req(t, 1, "USDC", 42161, "USDC", "100")
	req.Indicative = true
	r, err := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-arcbridge")
	if err != nil {
		t.Fatal(err)
	}
	if r.Tx != nil {
		t.Errorf("indicative route has a transaction")
	}
}
