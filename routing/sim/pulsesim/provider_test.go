package pulsesim

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

func TestPulserouteDirectInbound(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	contracts := pulseroute.DefaultContracts()
	for _, c := range []struct {
		name   string
		toTok  string
		feeBps int
		swap   bool
	}{
		{"USDC to USDCh", "USDCh", 0, false},
		{"USDC to USDCh with fee", "USDCh", 30, false},
		{"USDC to PLSX, swapped on arrival", "PLSX", 30, true},
		{"USDC to native PLS", "", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := f.req(t, 42161, "USDC", 369, c.toTok, "1000")
			req.FeeBps = c.feeBps
			r, err := p.QuoteLeg(context.Background(), req, ToolWarp)
			if err != nil {
				t.Fatal(err)
			}
			checkAmounts(t, r)
			dq := r.Direct
			if r.Shape != quote.ShapeDirect || dq == nil || r.MultiStep != nil {
				t.Fatalf("shape %v direct %v multi-step %v", r.Shape, dq, r.MultiStep)
			}
			senderAddr, _ := contracts.SenderContract(42161)
			if r.ApprovalAddress != senderAddr.Hex() || r.Tx.To != senderAddr.Hex() || dq.SenderContract != senderAddr.Hex() {
				t.Errorf("sender %s, approval %s, tx to %s", senderAddr.Hex(), r.ApprovalAddress, r.Tx.To)
			}
			payment, _ := f.chain(t).QuoteGasPayment(context.Background(), 42161, 369)
			if r.Tx.Value.Cmp(payment) != 0 || dq.BridgeGasEstimate != payment.String() {
				t.Errorf("value %s, payment %s", r.Tx.Value, payment)
			}
			_, fee := quote.SplitFee(req.FromAmount, c.feeBps)
			if dq.Fee != fee.String() || dq.EstimatedOutput != r.ToAmount.String() || dq.FeeBreakdown.ServiceFeeBps != c.feeBps {
				t.Errorf("quote %+v", dq)
			}
			if !c.swap && (r.ToAmount.Cmp(new(big.Int).Sub(req.FromAmount, fee)) != 0 || r.ToAmountMin.Cmp(r.ToAmount) != 0) {
				t.Errorf("1:1 bridge: to %s min %s", r.ToAmount, r.ToAmountMin)
			}
			if c.swap && (dq.FeeBreakdown.DexFeeBps != pulseroute.PulseXFeeBps || r.ToAmountMin.Cmp(quote.MinOut(r.ToAmount, req.Slippage)) != 0) {
				t.Errorf("swap: breakdown %+v min %s", dq.FeeBreakdown, r.ToAmountMin)
			}
			method, args, err := pulseroute.Decode(r.Tx.Data)
			if err != nil || method != pulseroute.MethodBridgeAndSwap {
				t.Fatalf("decode: %s %v", method, err)
			}
			wantOut := common.Address{}
			if c.toTok != "" {
				wantOut = common.HexToAddress(req.ToToken.Address)
			}
			if args[0].([32]byte) != quote.Ref(req.ID) || args[1].(uint32) != 369 ||
				args[2].([32]byte) != pulseroute.AddressToBytes32(common.HexToAddress(recipient)) ||
				args[3].(*big.Int).Cmp(req.FromAmount) != 0 || args[4].(*big.Int).Cmp(fee) != 0 ||
				args[5].(common.Address) != wantOut || args[6].(*big.Int).Cmp(r.ToAmountMin) != 0 {
				t.Errorf("bridgeAndSwap args %v", args)
			}
		})
	}
}

func TestPulserouteMultiStep(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	router, _ := sandbox.RouterABI()
	contracts := pulseroute.DefaultContracts()
	req := f.req(t, 1, "WETH", 369, "HEX", "2")
	req.FeeBps, req.FeeRecipient = 30, feeWallet
	r, err := p.QuoteLeg(context.Background(), req, ToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	checkAmounts(t, r)
	mq := r.MultiStep
	if r.Shape != quote.ShapeMultiStep || mq == nil || r.Direct != nil {
		t.Fatalf("shape %v direct %v multi-step %v", r.Shape, r.Direct, mq)
	}
	if mq.Type != "multi-step" || len(mq.Steps) != 2 || mq.Steps[0].Type != "aggregator" || mq.Steps[1].Type != "pulseroute-automatic" || !mq.Steps[1].Automated {
		t.Errorf("steps %+v", mq.Steps)
	}
	if mq.AfterStep1.EIP712.Domain.ChainID != 1 || mq.AfterStep1.EIP712.Domain.Name != "ServiceInboundReceiver" || mq.Instructions.Step3 == "" {
		t.Errorf("afterStep1 %+v instructions %+v", mq.AfterStep1, mq.Instructions)
	}
	if mq.Estimate.ToAmount != r.ToAmount.String() || mq.Estimate.ToAmountMin != r.ToAmountMin.String() {
		t.Errorf("estimate %+v", mq.Estimate)
	}
	if r.ApprovalAddress != sandbox.RouterAddress(1).Hex() || r.Tx.To != sandbox.RouterAddress(1).Hex() || mq.Steps[0].TransactionRequest.To != r.Tx.To {
		t.Errorf("approval %s tx %s", r.ApprovalAddress, r.Tx.To)
	}
	args := map[string]any{}
	if err := router.Methods["swap"].Inputs.UnpackIntoMap(args, r.Tx.Data[4:]); err != nil {
		t.Fatal(err)
	}
	inbound, _ := contracts.InboundReceiver(1)
	usdc, _ := contracts.WarpRoute(1)
	if args["receiver"].(common.Address) != inbound || args["toToken"].(common.Address) != usdc.Token || args["feeBps"].(uint16) != 30 {
		t.Errorf("step 1 args %v", args)
	}
}

func TestPulserouteDirectOutbound(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	for _, feeBps := range []int{0, 30} {
		req := f.req(t, 369, "USDCh", 8453, "USDC", "250")
		req.FeeBps = feeBps
		r, err := p.QuoteLeg(context.Background(), req, ToolWarp)
		if err != nil {
			t.Fatal(err)
		}
		checkAmounts(t, r)
		dq := r.Direct
		if r.Shape != quote.ShapeDirect || dq == nil {
			t.Fatalf("fee %d: shape %v direct %v", feeBps, r.Shape, dq)
		}
		if dq.FeeBreakdown.TotalFeeBps != 0 || dq.EstimatedOutput != dq.FromAmount || dq.Fee != "0" || r.PartnerFee.Sign() != 0 ||
			r.ToAmount.Cmp(req.FromAmount) != 0 || r.ToAmountMin.Cmp(req.FromAmount) != 0 || len(r.FeeCosts) != 0 {
			t.Errorf("fee %d: quote %+v route fees %v", feeBps, dq, r.FeeCosts)
		}
		if r.ApprovalAddress != "" || !strings.EqualFold(r.Tx.To, pulseroute.USDChAddress) {
			t.Errorf("approval %q to %s", r.ApprovalAddress, r.Tx.To)
		}
		payment, _ := f.chain(t).QuoteGasPayment(context.Background(), 369, 8453)
		if r.Tx.Value.Cmp(payment) != 0 {
			t.Errorf("value %s want %s", r.Tx.Value, payment)
		}
		method, args, err := pulseroute.Decode(r.Tx.Data)
		if err != nil || method != pulseroute.MethodTransferRemote {
			t.Fatalf("decode %s %v", method, err)
		}
		if args[0].(uint32) != 8453 || args[1].([32]byte) != pulseroute.AddressToBytes32(common.HexToAddress(recipient)) || args[2].(*big.Int).Cmp(req.FromAmount) != 0 {
			t.Errorf("transferRemote args %v", args)
		}
	}
}

func TestPulserouteRefusals(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	for _, c := range []struct {
		name   string
		req    *quote.Request
		reason string
		msg    string
	}{
		{"369 PLSX to Base USDC", f.req(t, 369, "PLSX", 8453, "USDC", "100000000"), pricing.ReasonUnsupportedRoute, "only USDCh"},
		{"369 USDCh to BSC", f.req(t, 369, "USDCh", 56, "USDC", "100"), pricing.ReasonUnsupportedRoute, "no USDC warp route"},
		{"369 USDCh to Base WETH", f.req(t, 369, "USDCh", 8453, "WETH", "100"), pricing.ReasonUnsupportedRoute, "canonical USDC"},
		{"BSC to 369", f.req(t, 56, "USDT", 369, "USDCh", "100"), pricing.ReasonUnsupportedRoute, "no USDC warp route"},
		{"inbound below floor", f.req(t, 1, "USDC", 369, "USDCh", "5"), pricing.ReasonAmountTooLow, "$10.00"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.QuoteLeg(context.Background(), c.req, ToolWarp)
			if noRouteReason(err) != c.reason || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err %v, want %s with %q", err, c.reason, c.msg)
			}
		})
	}
}

func TestPulseXSameChain(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	req := f.req(t, 369, "HEX", 369, "PLSX", "100000")
	req.FeeBps = 50
	r, err := p.QuoteLeg(context.Background(), req, ToolPulseX)
	if err != nil {
		t.Fatal(err)
	}
	checkAmounts(t, r)
	if r.Shape != quote.ShapeStandard || r.Direct != nil || r.MultiStep != nil || r.Tx.To != sandbox.RouterAddress(369).Hex() {
		t.Errorf("route %+v", r)
	}
	hex, _ := f.reg.TokenBySymbol(369, "HEX")
	plsx, _ := f.reg.TokenBySymbol(369, "PLSX")
	amounts, err := f.chain(t).AmountsOut(context.Background(), req.FromAmount,
		[]common.Address{common.HexToAddress(hex.Address), common.HexToAddress(pulseroute.USDChAddress), common.HexToAddress(plsx.Address)})
	if err != nil || amounts[2].Cmp(r.PreFeeToAmount) != 0 {
		t.Errorf("pre-fee %s, PulseX %v (%v)", r.PreFeeToAmount, amounts, err)
	}
}

func TestSandboxChain(t *testing.T) {
	f := loadFixture(t)
	cs, err := NewSandboxChain(f.reg)
	if err != nil {
		t.Fatal(err)
	}
	usdch := common.HexToAddress(pulseroute.USDChAddress)
	wpls := common.HexToAddress(pulseroute.WPLSAddress)
	small, err := cs.AmountsOut(context.Background(), big.NewInt(1_000_000), []common.Address{usdch, wpls})
	if err != nil {
		t.Fatal(err)
	}
	// $1 of USDCh buys about 1/0.00003 PLS less the 0.29% fee.
	got := quote.FromUnits(small[1], 18)
	if want := 1 / 0.00003 * 0.9971; got < want*0.999 || got > want {
		t.Errorf("$1 buys %f PLS, want about %f", got, want)
	}
	big1, _ := cs.AmountsOut(context.Background(), big.NewInt(1_000_000_000_000), []common.Address{usdch, wpls})
	if r1, r2 := quote.FromUnits(small[1], 18)/1, quote.FromUnits(big1[1], 18)/1e6; r2 >= r1 {
		t.Errorf("no price impact: %f vs %f", r1, r2)
	}
	if _, err := cs.AmountsOut(context.Background(), big.NewInt(1), []common.Address{wpls, common.HexToAddress(recipient)}); err == nil {
		t.Error("unknown pair accepted")
	}
	pay, err := cs.QuoteGasPayment(context.Background(), 1, 369)
	if err != nil || quote.FromUnits(pay, 18)*3400 < 0.49 || quote.FromUnits(pay, 18)*3400 > 0.51 {
		t.Errorf("gas payment %s (%v)", pay, err)
	}
}

// brokenChain is a pulseroute.ChainState whose node is down.
type brokenChain struct{}

func (brokenChain) QuoteGasPayment(context.Context, uint64, uint32) (*big.Int, error) {
	return nil, context.DeadlineExceeded
}

func (brokenChain) AmountsOut(context.Context, *big.Int, []common.Address) ([]*big.Int, error) {
	return nil, context.DeadlineExceeded
}

func TestChainStateFailureIsRPCFailure(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, brokenChain{})
	_, err := p.QuoteLeg(context.Background(), f.req(t, 1, "USDC", 369, "USDCh", "100"), ToolWarp)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.RPCFailure || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want RPC_FAILURE wrapping the cause", err)
	}
}

// legsCase is one row of testdata/legs.json: which legs the provider
// offers for a pair, under the request's tool filters.
type legsCase struct {
	Name      string   `json:"name"`
	Provider  string   `json:"provider"`
	From      uint64   `json:"from"`
	FromToken string   `json:"fromToken"`
	To        uint64   `json:"to"`
	ToToken   string   `json:"toToken"`
	Allow     []string `json:"allow"`
	Deny      []string `json:"deny"`
	Want      []string `json:"want"`
}

func toolSet(keys []string) map[string]bool {
	if keys == nil {
		return nil
	}
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func TestLegs(t *testing.T) {
	raw, err := os.ReadFile("testdata/legs.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []legsCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := f.req(t, c.From, c.FromToken, c.To, c.ToToken, "100")
			r.AllowTools, r.DenyTools = toolSet(c.Allow), toolSet(c.Deny)
			if p.Name() != c.Provider {
				t.Fatalf("Name() = %q", p.Name())
			}
			got := p.Legs(r)
			if !slices.Equal(got, c.Want) && !(len(got) == 0 && len(c.Want) == 0) {
				t.Errorf("Legs = %v, want %v", got, c.Want)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	f := loadFixture(t)
	p1, p2 := f.provider(t, sandbox.Config{}, nil), f.provider(t, sandbox.Config{}, nil)
	req := f.req(t, 1, "WETH", 369, "HEX", "1")
	a, err := p1.QuoteLeg(context.Background(), req, ToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p2.QuoteLeg(context.Background(), req, ToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: two quotes of one request differ:\n%+v\n%+v", p1.Name(), a, b)
	}
}
