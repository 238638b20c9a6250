package quote

import (
	"encoding/json"
	"testing"
	"time"
)

// TestResponseShapesBAndCMatchEncodingJSON checks that Shapes B and C are
// answered exactly as encoding/json renders the whole data object with the
// shape's struct as data.quote, which is what clients have always received.
func TestResponseShapesBAndCMatchEncodingJSON(t *testing.T) {
	direct := &DirectQuote{ID: "qt_<b>&", Provider: "pulseroute", Tool: "sbx-warp", FromChainID: 8453, ToChainID: 369,
		FromToken:  TokenRef{Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Symbol: "USDC", Decimals: 6},
		ToToken:    TokenRef{Address: "0x0000000000000000000000000000000000000000", Symbol: "PLS\u2028", Decimals: 18},
		FromAmount: "100000000", Fee: "300000", FeePercentage: "0.30", BridgeAmount: "99700000",
		EstimatedOutput: "3321776045130812004081937", MinOutput: "3305167164905157944061527", BridgeGasEstimate: "369000000000000",
		EstimatedDuration: 180, SenderContract: "0xSender",
		TransactionRequest: DirectTx{To: "0xSender", Data: "0xdeadbeef", Value: "0x14f9e1c1a5000", ChainID: 8453, GasLimit: "0x3d090"},
		FeeBreakdown:       FeeBreakdown{TotalFeeBps: 59, ServiceFeeBps: 30, DexFeeBps: 29, MessagingFee: "369000000000000"}}
	multi := &MultiStepQuote{ID: "qt_c", Provider: "pulseroute", Type: "multi-step", TotalSteps: 2, SingleSignature: true,
		IntermediateChainID: 42161, IntermediateToken: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
		Estimate: MultiStepEstimate{FromAmount: "500000000000000000", ToAmount: "4012345678901234567890123", ToAmountMin: "1", ExecutionDuration: 420},
		Steps: []Step{
			{Step: 1, Type: "aggregator", Description: "Swap 0.5 WETH <into> USDC", TransactionRequest: &StepTx{To: "0xRouter", Data: "0x", Value: "0x0", ChainID: 42161}},
			{Step: 2, Type: "pulseroute-automatic", Description: "Bridge & swap", Automated: true},
		},
		Instructions: Instructions{Step1: "Sign.", Step2: "Register.", Step3: "Fallback."},
		AfterStep1: AfterStep1{Action: "POST /v1/inbound-receiver/register", SignatureRequired: true,
			EIP712: EIP712Spec{Domain: EIP712Domain{Name: "ServiceInboundReceiver", Version: "1", ChainID: 42161},
				Types:       EIP712Types{RegisterDeposit: []EIP712Field{{Name: "txHash", Type: "bytes32"}, {Name: "toAddress", Type: "address"}}},
				PrimaryType: "RegisterDeposit"},
			Body: RegisterBody{TxHash: "{{step1TxHash}}", FromAddress: "0xA", ToAddress: "0xB", OutputToken: "0xC", DestinationDomain: 369, Signature: "{{signature}}"}}}
	for i, c := range []struct {
		rt    *Route
		quote any // what data.quote held before the shapes were typed
		dry   bool
	}{
		{&Route{Provider: "pulseroute", Shape: ShapeDirect, Direct: direct}, *direct, false},
		{&Route{Provider: "pulseroute", Shape: ShapeMultiStep, MultiStep: multi}, *multi, true},
		{&Route{Provider: "pulseroute", Shape: ShapeDirect}, nil, false},
	} {
		req := &Request{ID: "qt_0123", Dry: c.dry}
		tm := &Timing{Total: 3 * time.Millisecond, Reason: StopAllAnswered, Legs: []LegTiming{{Provider: "pulseroute", Tool: "sbx-warp", Elapsed: 2 * time.Millisecond, Status: LegWon}}}
		is := &Issued{ID: req.ID, Request: req, Route: c.rt, Provider: "pulse<route>&", FeeBps: 30, ExpiresAt: time.Unix(1_700_000_060, 0), Timing: tm}
		want, err := json.Marshal(quoteResponse{Quote: c.quote, Provider: is.Provider, FeeBps: is.FeeBps, IsDryQuote: c.dry, ExpiresAt: 1_700_000_060, Timing: timingForm(tm)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendResponse([]byte("prefix"), nil, req, is)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("case %d:\n got %s\nwant prefix%s", i, got, want)
		}
	}
}
