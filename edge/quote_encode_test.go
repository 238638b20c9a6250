package edge

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/swapgate/swapgate/actors/refdata"
	"github.com/swapgate/swapgate/routing/gas"
	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
)

// goldenPrices knows one of the two tokens, so both priceUSD sources show.
type goldenPrices struct{ addr string }

func (g goldenPrices) Prices(uint64) (refdata.PriceSnapshot, bool) {
	return refdata.PriceSnapshot{ByAddress: map[string]float64{g.addr: 0.99987}}, true
}
func (goldenPrices) Gas(uint64) (gas.Record, bool) { return gas.Record{}, false }
func (goldenPrices) GasVersion(uint64) uint64      { return 0 }

// TestShapeAEncodingMatchesEncodingJSON compares the appended Shape A with
// json.Marshal of the struct form, byte for byte.
func TestShapeAEncodingMatchesEncodingJSON(t *testing.T) {
	from := &registry.Chain{ID: 42161}
	to := &registry.Chain{ID: 8453}
	usdcA := &registry.Token{ChainID: 42161, Address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", Symbol: "USDC", Decimals: 6, PriceUSD: "1.00"}
	usdcB := &registry.Token{ChainID: 8453, Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Symbol: "U<S>&\"\\\n\x01\u2028é\xff", Decimals: 18, PriceUSD: "0.5"}
	s := &Server{deps: Deps{RefData: goldenPrices{addr: "0xaf88d065e77c8cc2239327c5edb3a432268e5831"}}}
	huge, _ := new(big.Int).SetString("123456789012345678901234567890123456789", 10)
	full := &quote.Route{Provider: "aggregator", Tool: "sbx-canal", ToolName: "Canal", StepType: "cross",
		FromAmount: big.NewInt(1_000_000_000), ToAmount: huge, ToAmountMin: big.NewInt(0),
		FromAmountUSD: 1000, ToAmountUSD: 0.004321, ApprovalAddress: "0x1111111111111111111111111111111111111111",
		GasCosts: []quote.GasCost{
			{Type: "APPROVE", Price: big.NewInt(10_000_000), Estimate: 46000, Limit: 57500, Amount: big.NewInt(575_000_000_000), AmountUSD: 0.0019, Token: usdcA},
			{Type: "SEND", Amount: big.NewInt(1), AmountUSD: -3.5},
		},
		FeeCosts: []quote.FeeCost{
			{Name: "Canal fee", Description: "Canal charges 5 bps", Amount: big.NewInt(500000), AmountUSD: 0.5, Percentage: 0.0005, Token: usdcA, Included: true},
			{Name: "Partner fee", Amount: huge, AmountUSD: 12345.678, Percentage: 0.0025},
		},
		ExecutionDuration: 120,
		Tx: &quote.TxRequest{To: "0xRouter", From: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", Data: []byte{0xde, 0xad, 0xbe, 0xef},
			Value: huge, ChainID: 42161, GasLimit: 312500, GasPrice: big.NewInt(10_000_000)},
	}
	bare := &quote.Route{Provider: "intents", Tool: "sbx-intents", StepType: "intents", DepositAddress: "dep<&>", DepositMemo: "memo 7",
		Tx: &quote.TxRequest{To: "0xabc", Value: new(big.Int), ChainID: 1}}
	empty := &quote.Route{Provider: "aggregator", Tool: "x"}
	for i, c := range []struct {
		rt       *quote.Route
		slippage float64
		dry      bool
	}{{full, 0.005, false}, {bare, 1e-7, true}, {empty, 0, false}, {full, 0.5, true}} {
		req := &quote.Request{ID: "qt_0123", From: from, To: to, FromToken: usdcA, ToToken: usdcB, FromAmount: big.NewInt(1_000_000_000),
			FromAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", ToAddress: "Recipient\t\"x\"", Slippage: c.slippage, Dry: c.dry}
		want, err := json.Marshal(quoteResponse{Quote: s.shapeA(req, c.rt, 1_700_000_060), Provider: c.rt.Provider, FeeBps: 25,
			IsDryQuote: req.Dry, ExpiresAt: 1_700_000_060})
		if err != nil {
			t.Fatal(err)
		}
		got := s.appendQuoteResponse(nil, req, c.rt, c.rt.Provider, 25, 1_700_000_060)
		if string(got) != string(want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
