package quote

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// goldenPrices knows one of the two tokens, so that a priced token and one
// without a price both show.
func goldenPrices(addr string) LivePrices {
	return func(uint64) (map[string]float64, bool) { return map[string]float64{addr: 0.99987}, true }
}

// quoteResponse is the data object of GET /v1/quote as encoding/json makes
// it, the form AppendResponse must match byte for byte.
type quoteResponse struct {
	Quote      any    `json:"quote"`
	Provider   string `json:"provider"`
	FeeBps     int    `json:"feeBps"`
	IsDryQuote bool   `json:"isDryQuote"`
	ExpiresAt  int64  `json:"expiresAt"`
	// Timing is written when the issued quote carries one.
	Timing *timingJSON `json:"timing,omitempty"`
}

// TestShapeAEncodingMatchesEncodingJSON compares the appended Shape A with
// json.Marshal of the struct form, byte for byte.
func TestShapeAEncodingMatchesEncodingJSON(t *testing.T) {
	from := &registry.Chain{ID: 42161}
	to := &registry.Chain{ID: 8453}
	usdcA := &registry.Token{ChainID: 42161, Address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", Symbol: "USDC", Decimals: 6, PriceUSD: "1.00"}
	usdcB := &registry.Token{ChainID: 8453, Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Symbol: "U<S>&\"\\\n\x01\u2028é\xff", Decimals: 18, PriceUSD: "0.5"}
	prices := goldenPrices("0xaf88d065e77c8cc2239327c5edb3a432268e5831")
	huge, _ := new(big.Int).SetString("123456789012345678901234567890123456789", 10)
	full := &Route{Provider: "aggregator", Tool: "sbx-canal", ToolName: "Canal", StepType: "cross",
		FromAmount: big.NewInt(1_000_000_000), ToAmount: huge, ToAmountMin: big.NewInt(0),
		FromAmountUSD: 1000, ToAmountUSD: 0.004321, ApprovalAddress: "0x1111111111111111111111111111111111111111",
		GasCosts: []GasCost{
			{Type: "APPROVE", Price: big.NewInt(10_000_000), Estimate: 46000, Limit: 57500, Amount: big.NewInt(575_000_000_000), AmountUSD: 0.0019, Token: usdcA},
			{Type: "SEND", Amount: big.NewInt(1), AmountUSD: -3.5},
		},
		FeeCosts: []FeeCost{
			{Name: "Canal fee", Description: "Canal charges 5 bps", Amount: big.NewInt(500000), AmountUSD: 0.5, Percentage: 0.0005, Token: usdcA, Included: true},
			{Name: "Partner fee", Amount: huge, AmountUSD: 12345.678, Percentage: 0.0025},
		},
		ExecutionDuration: 120,
		Tx: &TxRequest{To: "0xRouter", From: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", Data: []byte{0xde, 0xad, 0xbe, 0xef},
			Value: huge, ChainID: 42161, GasLimit: 312500, GasPrice: big.NewInt(10_000_000)},
	}
	bare := &Route{Provider: "intents", Tool: "sbx-intents", StepType: "intents", DepositAddress: "dep<&>", DepositMemo: "memo 7",
		Tx: &TxRequest{To: "0xabc", Value: new(big.Int), ChainID: 1}}
	empty := &Route{Provider: "aggregator", Tool: "x"}
	// A Solana source: the upstream's serialized transaction, base64.
	solana := &Route{Provider: "aggregator", Tool: "mayan", StepType: "lifi", FromAmount: big.NewInt(5), ToAmount: big.NewInt(4),
		ToAmountMin: big.NewInt(3), Tx: &TxRequest{ChainID: 1151111081099710, Encoding: EncodingBase64, Data: []byte{0x01, 0xfb, 0xff, 0x00, 0x7e}}}
	// A route valued without its prices: every USD figure unknown.
	unpriced := &Route{Provider: "pulseroute", Tool: "pulsex", StepType: "swap", FromAmount: big.NewInt(5), ToAmount: big.NewInt(4),
		ToAmountMin: big.NewInt(3), FromAmountUSD: NoUSD(), ToAmountUSD: NoUSD(),
		GasCosts: []GasCost{{Type: "SEND", Amount: big.NewInt(1), AmountUSD: NoUSD()}},
		FeeCosts: []FeeCost{{Name: "Partner fee", Amount: big.NewInt(1), AmountUSD: NoUSD(), Percentage: 0.0025}}}
	for i, c := range []struct {
		rt       *Route
		slippage float64
		dry      bool
		// exact makes the request an exact-output one (toAmount, no
		// fromAmount); refundTo names a refund address.
		exact    bool
		refundTo string
	}{{full, 0.005, false, false, ""}, {bare, 1e-7, true, false, ""}, {empty, 0, false, false, ""}, {full, 0.5, true, false, ""},
		{unpriced, 0.01, false, false, ""}, {full, 0.005, false, true, "0x<Refund>\"\u2028"}, {unpriced, 0.01, true, true, ""},
		{bare, 0, false, false, "0x2222222222222222222222222222222222222222"}, {solana, 0.005, false, false, ""}, {solana, 0.01, true, false, ""}} {
		req := &Request{ID: "qt_0123", From: from, To: to, FromToken: usdcA, ToToken: usdcB, FromAmount: big.NewInt(1_000_000_000),
			FromAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", ToAddress: "Recipient\t\"x\"", Slippage: c.slippage, Dry: c.dry,
			RefundTo: c.refundTo}
		if c.exact {
			req.FromAmount, req.ToAmount = nil, huge
		}
		// Every other answer carries its race's timing, as served ones do.
		var tm *Timing
		var tmJSON *timingJSON
		if i%2 == 1 {
			tm = &Timing{Total: 12345 * time.Microsecond, Reason: StopExpectedResults, Legs: []LegTiming{
				{Provider: c.rt.Provider, Tool: c.rt.Tool, Elapsed: 250 * time.Microsecond, Status: LegWon},
				{Provider: "intents", Tool: "sbx-<slow>", Elapsed: 12345 * time.Microsecond, Status: LegTimedOut}}}
			tmJSON = timingForm(tm)
		}
		want, err := json.Marshal(quoteResponse{Quote: shapeA(prices, req, c.rt, 1_700_000_060), Provider: c.rt.Provider, FeeBps: 25,
			IsDryQuote: req.Dry, ExpiresAt: 1_700_000_060, Timing: tmJSON})
		if err != nil {
			t.Fatal(err)
		}
		is := &Issued{ID: req.ID, Request: req, Route: c.rt, Provider: c.rt.Provider, FeeBps: 25, ExpiresAt: time.Unix(1_700_000_060, 0), Timing: tm}
		got, err := AppendResponse(nil, prices, req, is)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestShapeASerializedTx: a non-EVM source's transaction shows as
// {chainId, encoding, data}, the bytes in standard base64, with nothing of
// an EVM call.
func TestShapeASerializedTx(t *testing.T) {
	sol := &registry.Chain{ID: 1151111081099710}
	tok := &registry.Token{ChainID: sol.ID, Address: "11111111111111111111111111111111", Symbol: "SOL", Decimals: 9}
	req := &Request{ID: "qt_1", From: sol, To: sol, FromToken: tok, ToToken: tok, FromAmount: big.NewInt(1)}
	rt := &Route{Tool: "x", Tx: &TxRequest{ChainID: sol.ID, Encoding: EncodingBase64, Data: []byte{0x01, 0xfb, 0xff, 0x00, 0x7e}}}
	got := string(AppendShapeA(nil, nil, req, rt, 0))
	if want := `"transactionRequest":{"chainId":1151111081099710,"encoding":"base64","data":"Afv/AH4="}`; !strings.Contains(got, want) {
		t.Fatalf("%s lacks %s", got, want)
	}
}

// TestShapeAApprovalAddress: an ERC-20 input names its spender; an input
// that needs no approval (native) shows null, never "".
func TestShapeAApprovalAddress(t *testing.T) {
	from := &registry.Chain{ID: 1}
	eth := &registry.Token{ChainID: 1, Address: registry.NativeAddressEVM, Symbol: "ETH", Decimals: 18, PriceUSD: "3400"}
	usdc := &registry.Token{ChainID: 1, Address: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", Symbol: "USDC", Decimals: 6, PriceUSD: "1"}
	for _, c := range []struct {
		name     string
		in       *registry.Token
		approval string
		want     string
	}{
		{"native input", eth, "", `"approvalAddress":null`},
		{"ERC-20 input", usdc, "0x1111111111111111111111111111111111111111", `"approvalAddress":"0x1111111111111111111111111111111111111111"`},
	} {
		req := &Request{ID: "qt_1", From: from, To: from, FromToken: c.in, ToToken: usdc, FromAmount: big.NewInt(1)}
		got := string(AppendShapeA(nil, nil, req, &Route{Tool: "x", ApprovalAddress: c.approval}, 0))
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %s lacks %s", c.name, got, c.want)
		}
		var v struct {
			Estimate struct {
				ApprovalAddress *string `json:"approvalAddress"`
			} `json:"estimate"`
		}
		if err := json.Unmarshal([]byte(got), &v); err != nil || (v.Estimate.ApprovalAddress == nil) != (c.approval == "") {
			t.Errorf("%s: %v %v", c.name, v.Estimate.ApprovalAddress, err)
		}
	}
}

// The struct form of Shape A below is the oracle the appender is compared
// with: what json.Marshal makes of it is the contract the appender keeps.

type actionToken struct {
	Address  string `json:"address"`
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
	PriceUSD string `json:"priceUSD,omitempty"`
}

type gasCostJSON struct {
	Type      string `json:"type"`
	Price     string `json:"price,omitempty"`
	Estimate  string `json:"estimate,omitempty"`
	Limit     string `json:"limit,omitempty"`
	Amount    string `json:"amount"`
	AmountUSD string `json:"amountUSD,omitempty"`
	Token     struct {
		Address  string `json:"address"`
		Symbol   string `json:"symbol"`
		Decimals uint8  `json:"decimals"`
	} `json:"token"`
}

type feeCostJSON struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Amount      string `json:"amount"`
	AmountUSD   string `json:"amountUSD,omitempty"`
	Percentage  string `json:"percentage"`
	Included    bool   `json:"included"`
	Token       *struct {
		Address  string `json:"address"`
		Symbol   string `json:"symbol"`
		Decimals uint8  `json:"decimals"`
	} `json:"token,omitempty"`
}

type txJSON struct {
	To       string `json:"to"`
	From     string `json:"from,omitempty"`
	Data     string `json:"data"`
	Value    string `json:"value"`
	ChainID  uint64 `json:"chainId"`
	GasLimit string `json:"gasLimit"`
	GasPrice string `json:"gasPrice,omitempty"`
}

// serializedTxJSON is a non-EVM source's transaction: the upstream's
// serialized transaction, in its encoding.
type serializedTxJSON struct {
	ChainID  uint64 `json:"chainId"`
	Encoding string `json:"encoding"`
	Data     string `json:"data"`
}

// standardQuote is Shape A of the specification.
type standardQuote struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Tool        string `json:"tool"`
	ToolDetails struct {
		Key  string `json:"key"`
		Name string `json:"name"`
	} `json:"toolDetails"`
	Action struct {
		FromChainID uint64      `json:"fromChainId"`
		ToChainID   uint64      `json:"toChainId"`
		FromToken   actionToken `json:"fromToken"`
		ToToken     actionToken `json:"toToken"`
		FromAmount  string      `json:"fromAmount"`
		ToAmount    string      `json:"toAmount,omitempty"`
		FromAddress string      `json:"fromAddress"`
		ToAddress   string      `json:"toAddress"`
		RefundTo    string      `json:"refundTo,omitempty"`
		Slippage    float64     `json:"slippage"`
	} `json:"action"`
	Estimate struct {
		Tool              string        `json:"tool"`
		FromAmount        string        `json:"fromAmount"`
		FromAmountUSD     string        `json:"fromAmountUSD,omitempty"`
		ToAmount          string        `json:"toAmount"`
		ToAmountUSD       string        `json:"toAmountUSD,omitempty"`
		ToAmountMin       string        `json:"toAmountMin"`
		ApprovalAddress   *string       `json:"approvalAddress"`
		GasCosts          []gasCostJSON `json:"gasCosts"`
		FeeCosts          []feeCostJSON `json:"feeCosts"`
		ExecutionDuration int           `json:"executionDuration"`
	} `json:"estimate"`
	// TransactionRequest is a *txJSON, or a *serializedTxJSON for a
	// non-EVM source.
	TransactionRequest any      `json:"transactionRequest,omitempty"`
	DepositAddress     string   `json:"depositAddress,omitempty"`
	DepositMemo        string   `json:"depositMemo,omitempty"`
	ExpiresAt          int64    `json:"expiresAt"`
	Tags               []string `json:"tags,omitempty"`
}

// shapeA renders a route in Shape A.
func shapeA(prices LivePrices, req *Request, rt *Route, expiresAt int64) *standardQuote {
	q := &standardQuote{ID: req.ID, Type: rt.StepType, Tool: rt.Tool, ExpiresAt: expiresAt,
		DepositAddress: rt.DepositAddress, DepositMemo: rt.DepositMemo}
	q.ToolDetails.Key, q.ToolDetails.Name = rt.Tool, rt.ToolName
	a := &q.Action
	a.FromChainID, a.ToChainID = req.From.ID, req.To.ID
	a.FromToken = oracleActionToken(prices, req.FromToken)
	a.ToToken = oracleActionToken(prices, req.ToToken)
	a.FromAddress, a.ToAddress, a.RefundTo, a.Slippage = req.FromAddress, req.ToAddress, req.RefundTo, req.Slippage
	if req.ExactOutput() {
		a.FromAmount, a.ToAmount = rt.FromAmount.String(), req.ToAmount.String()
	} else {
		a.FromAmount = req.FromAmount.String()
	}
	e := &q.Estimate
	e.Tool = rt.Tool
	e.FromAmount, e.ToAmount, e.ToAmountMin = decStr(rt.FromAmount), decStr(rt.ToAmount), decStr(rt.ToAmountMin)
	e.FromAmountUSD, e.ToAmountUSD = usd(rt.FromAmountUSD), usd(rt.ToAmountUSD)
	if rt.ApprovalAddress != "" {
		e.ApprovalAddress = &rt.ApprovalAddress
	}
	e.ExecutionDuration = rt.ExecutionDuration
	e.GasCosts = make([]gasCostJSON, 0, len(rt.GasCosts))
	for _, g := range rt.GasCosts {
		gj := gasCostJSON{Type: g.Type, Price: decStr(g.Price), Amount: decStr(g.Amount), AmountUSD: usd(g.AmountUSD)}
		if g.Estimate > 0 {
			gj.Estimate = strconv.FormatUint(g.Estimate, 10)
		}
		if g.Limit > 0 {
			gj.Limit = strconv.FormatUint(g.Limit, 10)
		}
		if g.Token != nil {
			gj.Token.Address, gj.Token.Symbol, gj.Token.Decimals = g.Token.Address, g.Token.Symbol, g.Token.Decimals
		}
		e.GasCosts = append(e.GasCosts, gj)
	}
	e.FeeCosts = make([]feeCostJSON, 0, len(rt.FeeCosts))
	for _, f := range rt.FeeCosts {
		fj := feeCostJSON{Name: f.Name, Description: f.Description, Amount: decStr(f.Amount), AmountUSD: usd(f.AmountUSD),
			Percentage: strconv.FormatFloat(f.Percentage, 'f', -1, 64), Included: f.Included}
		if f.Token != nil {
			fj.Token = &struct {
				Address  string `json:"address"`
				Symbol   string `json:"symbol"`
				Decimals uint8  `json:"decimals"`
			}{f.Token.Address, f.Token.Symbol, f.Token.Decimals}
		}
		e.FeeCosts = append(e.FeeCosts, fj)
	}
	if tx := rt.Tx; tx != nil && tx.Encoding == EncodingBase64 {
		q.TransactionRequest = &serializedTxJSON{ChainID: tx.ChainID, Encoding: tx.Encoding, Data: base64.StdEncoding.EncodeToString(tx.Data)}
	} else if tx != nil {
		t := &txJSON{To: tx.To, From: tx.From, Data: "0x" + hex.EncodeToString(tx.Data),
			Value: hexBig(tx.Value), ChainID: tx.ChainID, GasLimit: "0x" + strconv.FormatUint(tx.GasLimit, 16)}
		if tx.GasPrice != nil {
			t.GasPrice = hexBig(tx.GasPrice)
		}
		q.TransactionRequest = t
	}
	return q
}

func oracleActionToken(prices LivePrices, t *registry.Token) actionToken {
	at := actionToken{Address: t.Address, Symbol: t.Symbol, Decimals: t.Decimals}
	if byAddress, ok := prices(t.ChainID); ok {
		if p, ok := byAddress[strings.ToLower(t.Address)]; ok {
			at.PriceUSD = strconv.FormatFloat(p, 'f', -1, 64)
		}
	}
	return at
}

func decStr(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}

func hexBig(v *big.Int) string {
	if v == nil || v.Sign() == 0 {
		return "0x0"
	}
	return "0x" + v.Text(16)
}

// usd renders a USD figure: two decimals from a dollar up, six below; an
// unknown one is empty, and so left out.
func usd(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	if v >= 1 || v <= -1 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}
