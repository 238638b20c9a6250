package pulseroute

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares v, marshalled as indented JSON, with testdata/name; with
// -update it rewrites the file instead.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func bigInt(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad integer %q", s)
	}
	return v
}

var (
	user    = common.HexToAddress("0x5B38Da6a701c568545dCfcB03FcB875f56beddC4")
	plsRef  = quote.TokenRef{Address: "0x0000000000000000000000000000000000000000", Symbol: "PLS", Decimals: 18}
	usdcRef = func(c *Contracts, chain uint64) quote.TokenRef {
		w, _ := c.WarpRoute(chain)
		sym := "USDC"
		if w.Synthetic {
			sym = "USDCh"
		}
		return quote.TokenRef{Address: w.Token.Hex(), Symbol: sym, Decimals: w.Decimals}
	}
)

func directInbound(t *testing.T) DirectInput {
	c := DefaultContracts()
	sender, _ := c.SenderContract(8453)
	from := big.NewInt(100_000_000)
	_, fee := quote.SplitFee(from, 30)
	gas := bigInt(t, "369000000000000")
	out := bigInt(t, "3321776045130812004081937")
	minOut := quote.MinOut(out, 0.005)
	data, err := BridgeAndSwap(SenderCall{QuoteRef: quote.Ref("q-direct-in"), DestinationDomain: 369, Recipient: user,
		Amount: from, Fee: fee, OutputToken: common.HexToAddress(plsRef.Address), MinOutput: minOut})
	if err != nil {
		t.Fatal(err)
	}
	return DirectInput{
		ID: "q-direct-in", Tool: "pulseroute", FromChainID: 8453, ToChainID: 369,
		FromToken: usdcRef(c, 8453), ToToken: plsRef,
		FromAmount: from, Fee: fee, FeeBps: 30, DexFeeBps: PulseXFeeBps,
		EstimatedOutput: out, MinOutput: minOut, BridgeGasEstimate: gas, EstimatedDuration: 180,
		SenderContract: sender,
		Tx:             quote.TxRequest{To: sender.Hex(), From: user.Hex(), Data: data, Value: gas, ChainID: 8453, GasLimit: 250_000},
	}
}

func directOutbound(t *testing.T) DirectInput {
	c := DefaultContracts()
	usdch := c.USDCh()
	from := big.NewInt(50_000_000)
	gas := bigInt(t, "1500000000000000000000")
	data, err := TransferRemote(42161, user, from)
	if err != nil {
		t.Fatal(err)
	}
	return DirectInput{
		ID: "q-direct-out", Tool: "pulseroute", FromChainID: 369, ToChainID: 42161,
		FromToken: usdcRef(c, 369), ToToken: usdcRef(c, 42161),
		FromAmount: from, Fee: new(big.Int), EstimatedOutput: from, MinOutput: from,
		BridgeGasEstimate: gas, EstimatedDuration: 120, SenderContract: usdch.Router,
		Tx: quote.TxRequest{To: usdch.Router.Hex(), Data: data, Value: gas, ChainID: 369, GasLimit: 180_000},
	}
}

func multiStep(t *testing.T) MultiStepInput {
	c := DefaultContracts()
	w, _ := c.WarpRoute(42161)
	receiver, _ := c.InboundReceiver(42161)
	diamond := "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE"
	to := bigInt(t, "4012345678901234567890123")
	return MultiStepInput{
		ID: "q-multi", FromChainID: 42161,
		FromToken:   quote.TokenRef{Address: "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", Symbol: "WETH", Decimals: 18},
		ToToken:     plsRef,
		FromAddress: user, ToAddress: user,
		IntermediateChainID: 42161, IntermediateToken: w.Token, InboundReceiver: receiver,
		ApprovalAddress: diamond,
		FromAmount:      bigInt(t, "500000000000000000"), ToAmount: to, ToAmountMin: quote.MinOut(to, 0.005),
		ExecutionDuration: 420,
		Step1Tx:           quote.TxRequest{To: diamond, Data: []byte{0x4e, 0x21, 0xfd, 0x0b, 0x00, 0x01}, Value: new(big.Int), ChainID: 42161, GasLimit: 400_000},
	}
}

func TestShapeGoldens(t *testing.T) {
	in, err := NewDirectQuote(directInbound(t))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "shape_b_direct_inbound.golden.json", in)

	out, err := NewDirectQuote(directOutbound(t))
	if err != nil {
		t.Fatal(err)
	}
	// The specification's test for the fee-free outbound bridge.
	if out.FeeBreakdown.TotalFeeBps != 0 || out.EstimatedOutput != out.FromAmount {
		t.Errorf("outbound is not recognisable as the direct bridge: %+v", out)
	}
	golden(t, "shape_b_direct_outbound.golden.json", out)

	ms, err := NewMultiStepQuote(multiStep(t))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "shape_c_multi_step.golden.json", ms)
}

func TestShapeInputsMustAgree(t *testing.T) {
	direct := map[string]func(*DirectInput){
		"fee above amount":     func(in *DirectInput) { in.Fee = new(big.Int).Add(in.FromAmount, big.NewInt(1)) },
		"min above estimate":   func(in *DirectInput) { in.MinOutput = new(big.Int).Add(in.EstimatedOutput, big.NewInt(1)) },
		"tx on another chain":  func(in *DirectInput) { in.Tx.ChainID = 1 },
		"tx to another target": func(in *DirectInput) { in.Tx.To = alice.Hex() },
		"missing gas estimate": func(in *DirectInput) { in.BridgeGasEstimate = nil },
		"negative output":      func(in *DirectInput) { in.EstimatedOutput = big.NewInt(-1) },
	}
	for name, mutate := range direct {
		in := directInbound(t)
		mutate(&in)
		if _, err := NewDirectQuote(in); !errors.Is(err, ErrInconsistentQuote) {
			t.Errorf("direct, %s: %v", name, err)
		}
	}
	multi := map[string]func(*MultiStepInput){
		"min above estimate":  func(in *MultiStepInput) { in.ToAmountMin = new(big.Int).Add(in.ToAmount, big.NewInt(1)) },
		"step 1 elsewhere":    func(in *MultiStepInput) { in.Step1Tx.ChainID = 1 },
		"step 1 without to":   func(in *MultiStepInput) { in.Step1Tx.To = "" },
		"missing from amount": func(in *MultiStepInput) { in.FromAmount = nil },
	}
	for name, mutate := range multi {
		in := multiStep(t)
		mutate(&in)
		if _, err := NewMultiStepQuote(in); !errors.Is(err, ErrInconsistentQuote) {
			t.Errorf("multi-step, %s: %v", name, err)
		}
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct {
		bps  int
		want string
	}{{0, "0.00"}, {30, "0.30"}, {5, "0.05"}, {150, "1.50"}, {500, "5.00"}} {
		if got := FeePercentage(tc.bps); got != tc.want {
			t.Errorf("FeePercentage(%d) = %s, want %s", tc.bps, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    string
		dec  uint8
		want string
	}{{"1500000", 6, "1.5"}, {"1", 6, "0.000001"}, {"100000000", 6, "100"}, {"0", 18, "0"}, {"42", 0, "42"}, {"-2500000", 6, "-2.5"}} {
		if got := FormatUnits(bigInt(t, tc.v), tc.dec); got != tc.want {
			t.Errorf("FormatUnits(%s, %d) = %s, want %s", tc.v, tc.dec, got, tc.want)
		}
	}
}
