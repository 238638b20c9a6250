package relay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The addresses and request ids of the recorded answers.
const (
	user         = "0x03508bB71268BBA25ECaCC8F620e01866650532c"
	router       = "0x00000000bb6dd3b0032d930f72cac8e56166d93c"
	feeWallet    = "0x1111111111111111111111111111111111111111"
	refundWallet = "0x2222222222222222222222222222222222222222"
	requestUSDC  = "0x7e13a4a944b62ee6e378a15cfb29659351f69fedf7780406279a47cdf895499e"
	requestETH   = "0x309405e2136f8f5c621689eb4ac085434de69361e38b28a4e56c1e00bec7c6cf"
	requestExact = "0x9c1f6a8e2d4b7035f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
)

// seen is what the fake upstream saw of the last request.
type seen struct {
	mu     sync.Mutex
	method string
	uri    string
	body   map[string]any
	header http.Header
	calls  int
}

func (s *seen) get() (method, uri string, body map[string]any, header http.Header, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.method, s.uri, s.body, s.header, s.calls
}

// serve answers every request with a recorded fixture, edited by change
// (nil: as recorded) when it is a JSON object.
func serve(t *testing.T, status int, fixture string, change func(m map[string]any)) (*httptest.Server, *seen) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		if raw, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	rec := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		rec.mu.Lock()
		rec.method, rec.uri, rec.body, rec.header = r.Method, r.URL.RequestURI(), body, r.Header.Clone()
		rec.calls++
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(raw)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func newClient(t *testing.T, base string, cfg Config) (*Client, *registry.Registry) {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.BaseURL = base
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	c, err := New(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c, reg
}

// usdcArbToBase is the request behind quote_usdc_arb_base.json.
func usdcArbToBase(t *testing.T, reg *registry.Registry) *quote.Request {
	t.Helper()
	arb, _ := reg.Chain(42161)
	base, _ := reg.Chain(8453)
	from, _ := reg.TokenBySymbol(42161, "USDC")
	to, _ := reg.TokenBySymbol(8453, "USDC")
	return &quote.Request{ID: "q1", From: arb, To: base, FromToken: from, ToToken: to,
		FromAmount: big.NewInt(100_000_000), FromAddress: user, ToAddress: user,
		Slippage: 0.005, Order: quote.Recommended, FeeBps: 30, Now: time.Now()}
}

// ethMainnetToBase is the request behind quote_eth_mainnet_base.json.
func ethMainnetToBase(t *testing.T, reg *registry.Registry) *quote.Request {
	t.Helper()
	eth, _ := reg.Chain(1)
	base, _ := reg.Chain(8453)
	from, _ := reg.Token(1, registry.NativeAddressEVM)
	to, _ := reg.Token(8453, registry.NativeAddressEVM)
	return &quote.Request{ID: "q2", From: eth, To: base, FromToken: from, ToToken: to,
		FromAmount: big.NewInt(1001599368867232), FromAddress: user, ToAddress: user,
		Slippage: 0.005, Order: quote.Recommended, Now: time.Now()}
}

func checkInt(t *testing.T, name string, got *big.Int, want string) {
	t.Helper()
	if got == nil || got.String() != want {
		t.Errorf("%s = %v, want %s", name, got, want)
	}
}

// TestQuoteLegRequestBody: what Relay is asked, for each kind of request:
// the trade type and amount (exact input, exact output), the refund
// address, the partner fee as appFees to the configured recipient, the
// slippage in basis points, native coins as the zero address, and the key.
func TestQuoteLegRequestBody(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		req     func(*registry.Registry) *quote.Request
		want    map[string]any
		absent  []string
	}{
		{name: "exact input with a fee", fixture: "quote_usdc_arb_base.json",
			req: func(reg *registry.Registry) *quote.Request { return usdcArbToBase(t, reg) },
			want: map[string]any{"user": user, "recipient": user, "originChainId": 42161.0, "destinationChainId": 8453.0,
				"originCurrency": "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "destinationCurrency": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
				"amount": "100000000", "tradeType": "EXACT_INPUT", "slippageTolerance": "50",
				"appFees": []any{map[string]any{"recipient": feeWallet, "fee": "30"}}},
			absent: []string{"refundTo"}},
		{name: "exact output with refundTo", fixture: "quote_exact_output_usdc_arb_base.json",
			req: func(reg *registry.Registry) *quote.Request {
				r := usdcArbToBase(t, reg)
				r.FromAmount, r.ToAmount, r.RefundTo = nil, big.NewInt(100_000_000), refundWallet
				return r
			},
			want: map[string]any{"amount": "100000000", "tradeType": "EXACT_OUTPUT", "refundTo": refundWallet}},
		{name: "native coins and no fee", fixture: "quote_eth_mainnet_base.json",
			req: func(reg *registry.Registry) *quote.Request { return ethMainnetToBase(t, reg) },
			want: map[string]any{"originCurrency": registry.NativeAddressEVM, "destinationCurrency": registry.NativeAddressEVM,
				"originChainId": 1.0, "amount": "1001599368867232", "tradeType": "EXACT_INPUT"},
			absent: []string{"appFees", "refundTo"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, http.StatusOK, tc.fixture, nil)
			c, reg := newClient(t, srv.URL, Config{APIKey: "k1", FeeRecipient: feeWallet})
			if _, err := c.QuoteLeg(context.Background(), tc.req(reg), Tool); err != nil {
				t.Fatal(err)
			}
			method, uri, body, header, _ := rec.get()
			if method != http.MethodPost || uri != "/quote/v2" {
				t.Errorf("%s %s, want POST /quote/v2", method, uri)
			}
			if got := header.Get("x-api-key"); got != "k1" {
				t.Errorf("x-api-key %q", got)
			}
			for k, v := range tc.want {
				got, _ := json.Marshal(body[k])
				want, _ := json.Marshal(v)
				if string(got) != string(want) {
					t.Errorf("body %s = %s, want %s", k, got, want)
				}
			}
			for _, k := range tc.absent {
				if _, ok := body[k]; ok {
					t.Errorf("body has %s: %v", k, body[k])
				}
			}
		})
	}
}

// TestQuoteLegMapsApproveAndDeposit: the recorded quote's approve step
// becomes the route's approval (the spender its calldata names) and its one
// other transaction the route's transaction; the amounts, the partner fee
// (Relay's app fee, in the source token, at the route's rate), the costs,
// the duration and the request id come from the answer.
func TestQuoteLegMapsApproveAndDeposit(t *testing.T) {
	srv, _ := serve(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
	c, reg := newClient(t, srv.URL, Config{FeeRecipient: feeWallet})
	req := usdcArbToBase(t, reg)
	if legs := c.Legs(req); len(legs) != 1 || legs[0] != Tool {
		t.Fatalf("Legs = %q", legs)
	}
	r, err := c.QuoteLeg(context.Background(), req, Tool)
	if err != nil {
		t.Fatal(err)
	}
	if r.Provider != "aggregator" || r.Tool != "relay" || r.ToolName != "Relay" || r.StepType != "cross" || r.Shape != quote.ShapeStandard {
		t.Errorf("identity %+v", r)
	}
	checkInt(t, "FromAmount", r.FromAmount, "100000000")
	checkInt(t, "ToAmount", r.ToAmount, "99680000")
	checkInt(t, "ToAmountMin", r.ToAmountMin, "99181600")
	// 300000 of the source token bought 99680000 × 300000 / (100000000 − 300000).
	checkInt(t, "PartnerFee", r.PartnerFee, "299939")
	checkInt(t, "PreFeeToAmount", r.PreFeeToAmount, "99979939")
	if r.FromAmountUSD != 99.99 || r.ToAmountUSD != 99.67 || r.ExecutionDuration != 4 {
		t.Errorf("USD %v %v, duration %d", r.FromAmountUSD, r.ToAmountUSD, r.ExecutionDuration)
	}
	if r.ApprovalAddress != router {
		t.Errorf("ApprovalAddress %q", r.ApprovalAddress)
	}
	if r.UpstreamRef != requestUSDC {
		t.Errorf("UpstreamRef %q", r.UpstreamRef)
	}
	if r.Tx == nil || r.Tx.To != router || r.Tx.From != user || r.Tx.ChainID != 42161 || r.Tx.GasLimit != 120000 {
		t.Fatalf("tx %+v", r.Tx)
	}
	checkInt(t, "tx value", r.Tx.Value, "0")
	if len(r.Tx.Data) != 68 || r.Tx.Data[0] != 0x33 {
		t.Errorf("tx data %x", r.Tx.Data)
	}
	native, _ := reg.Token(42161, registry.NativeAddressEVM)
	if len(r.GasCosts) != 1 || r.GasCosts[0].Type != "SEND" || r.GasCosts[0].Token != native || r.GasCosts[0].AmountUSD != 0.00595 {
		t.Fatalf("gas costs %+v", r.GasCosts)
	}
	checkInt(t, "gas amount", r.GasCosts[0].Amount, "1750000000000")
	if len(r.FeeCosts) != 2 {
		t.Fatalf("fee costs %+v", r.FeeCosts)
	}
	if f := r.FeeCosts[0]; f.Name != "Relayer fee" || !f.Included || f.Token != req.FromToken || f.AmountUSD != 0.02 {
		t.Errorf("relayer fee %+v", f)
	}
	if f := r.FeeCosts[1]; f.Name != "Integrator fee" || !f.Included || f.Token != req.FromToken || f.Percentage != 0.003 {
		t.Errorf("app fee %+v", f)
	}
	checkInt(t, "app fee", r.FeeCosts[1].Amount, "300000")
}

// TestQuoteLegNativeSingleDeposit: a native input has no approval; its one
// deposit step is the transaction, its value the amount.
func TestQuoteLegNativeSingleDeposit(t *testing.T) {
	srv, _ := serve(t, http.StatusOK, "quote_eth_mainnet_base.json", nil)
	c, reg := newClient(t, srv.URL, Config{})
	r, err := c.QuoteLeg(context.Background(), ethMainnetToBase(t, reg), Tool)
	if err != nil {
		t.Fatal(err)
	}
	if r.ApprovalAddress != "" || r.UpstreamRef != requestETH || r.ExecutionDuration != 12 {
		t.Errorf("route %+v", r)
	}
	checkInt(t, "ToAmount", r.ToAmount, "1000000000000000")
	checkInt(t, "PartnerFee", r.PartnerFee, "0")
	if r.Tx == nil || r.Tx.To != "0xa5f565650890fba1824ee0f21ebbbf660a179934" || r.Tx.ChainID != 1 {
		t.Fatalf("tx %+v", r.Tx)
	}
	checkInt(t, "tx value", r.Tx.Value, "1001599368867232")
}

// TestQuoteLegExactOutput: Relay's EXACT_OUTPUT answer is the route, with
// the input Relay sized; an answer whose minimum falls short of toAmount is
// a reasoned no-route, never a quote that under-delivers.
func TestQuoteLegExactOutput(t *testing.T) {
	cases := []struct {
		name     string
		toAmount int64
		refused  bool
	}{
		{"met", 100_000_000, false},
		{"short by one", 100_000_001, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, http.StatusOK, "quote_exact_output_usdc_arb_base.json", nil)
			c, reg := newClient(t, srv.URL, Config{FeeRecipient: feeWallet})
			req := usdcArbToBase(t, reg)
			req.FromAmount, req.ToAmount = nil, big.NewInt(tc.toAmount)
			if why := c.ExactOutputUnsupported(req); why != "" {
				t.Fatalf("exact output unsupported: %s", why)
			}
			r, err := c.QuoteLeg(context.Background(), req, Tool)
			if tc.refused {
				var nr *quote.NoRoute
				if !errors.As(err, &nr) || nr.Reason != "NO_POSSIBLE_ROUTE" || !strings.Contains(nr.Message, "100000001") {
					t.Fatalf("%v, %v: want a no-route naming toAmount", r, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkInt(t, "FromAmount", r.FromAmount, "100321000")
			checkInt(t, "ToAmountMin", r.ToAmountMin, "100000000")
			if r.UpstreamRef != requestExact || r.Tool != Tool {
				t.Errorf("route %+v", r)
			}
		})
	}
}

// TestQuoteLegRefundTo: Relay takes any refund address.
func TestQuoteLegRefundTo(t *testing.T) {
	c, reg := newClient(t, "http://127.0.0.1:1", Config{})
	req := usdcArbToBase(t, reg)
	req.RefundTo = refundWallet
	if reason, msg := quote.Unsupported(c, req); reason != "" {
		t.Errorf("refundTo left out: %s %s", reason, msg)
	}
	req.FromAmount, req.ToAmount = nil, big.NewInt(1)
	if reason, msg := quote.Unsupported(c, req); reason != "" {
		t.Errorf("exact output left out: %s %s", reason, msg)
	}
}

// TestQuoteLegLeftOut: quotes the service cannot express or will not ask
// for are reasoned no-routes: a signature step, more transactions than an
// approval and one, a fee without a recipient to pay it to, a chain Relay
// does not serve. The first two reach Relay; the last two do not.
func TestQuoteLegLeftOut(t *testing.T) {
	threeTxs := func(m map[string]any) {
		steps := m["steps"].([]any)
		m["steps"] = append(steps, steps[1])
	}
	twoItems := func(m map[string]any) {
		st := m["steps"].([]any)[1].(map[string]any)
		st["items"] = append(st["items"].([]any), st["items"].([]any)[0])
	}
	cases := []struct {
		name    string
		fixture string
		change  func(map[string]any)
		cfg     Config
		req     func(*quote.Request)
		reason  string
		message string
		called  bool
	}{
		{name: "signature step", fixture: "quote_signature_step.json", cfg: Config{FeeRecipient: feeWallet},
			reason: "UNSUPPORTED_ROUTE", message: "signature", called: true},
		{name: "two transaction steps after the approval", fixture: "quote_usdc_arb_base.json", change: threeTxs, cfg: Config{FeeRecipient: feeWallet},
			reason: "UNSUPPORTED_ROUTE", message: "2 transactions", called: true},
		{name: "two items in the deposit step", fixture: "quote_usdc_arb_base.json", change: twoItems, cfg: Config{FeeRecipient: feeWallet},
			reason: "UNSUPPORTED_ROUTE", message: "2 transactions", called: true},
		{name: "fee without a recipient", fixture: "quote_usdc_arb_base.json",
			reason: "FEE_UNSUPPORTED", message: "fee recipient"},
		{name: "chain Relay does not serve", fixture: "quote_usdc_arb_base.json", cfg: Config{FeeRecipient: feeWallet},
			req: func(r *quote.Request) {
				r.To = &registry.Chain{ID: 1151111081099710, ChainType: registry.SVM, AddressFormat: "solana"}
			},
			reason: "UNSUPPORTED_ROUTE", message: "1151111081099710"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, http.StatusOK, tc.fixture, tc.change)
			c, reg := newClient(t, srv.URL, tc.cfg)
			req := usdcArbToBase(t, reg)
			if tc.req != nil {
				tc.req(req)
			}
			r, err := c.QuoteLeg(context.Background(), req, Tool)
			var nr *quote.NoRoute
			if !errors.As(err, &nr) || nr.Reason != tc.reason || nr.Provider != "aggregator" || nr.Tool != Tool || !strings.Contains(nr.Message, tc.message) {
				t.Fatalf("%+v, %v: want a %s no-route saying %q", r, err, tc.reason, tc.message)
			}
			if _, _, _, _, calls := rec.get(); (calls > 0) != tc.called {
				t.Errorf("Relay called %d times", calls)
			}
		})
	}
}

// TestQuoteLegRefusesTamperedAnswers: every field the route passes on is
// checked; an answer that fails one is refused whole as UPSTREAM_ERROR
// with the reason.
func TestQuoteLegRefusesTamperedAnswers(t *testing.T) {
	step := func(m map[string]any, i int) map[string]any { return m["steps"].([]any)[i].(map[string]any) }
	item := func(m map[string]any, i int) map[string]any {
		return step(m, i)["items"].([]any)[0].(map[string]any)["data"].(map[string]any)
	}
	out := func(m map[string]any) map[string]any {
		return m["details"].(map[string]any)["currencyOut"].(map[string]any)
	}
	cases := []struct {
		name   string
		change func(map[string]any)
		reason string
	}{
		{"deposit to is no address", func(m map[string]any) { item(m, 1)["to"] = "0x1234" }, "to"},
		{"deposit to the zero address", func(m map[string]any) { item(m, 1)["to"] = registry.NativeAddressEVM }, "zero address"},
		{"calldata not hex", func(m map[string]any) { item(m, 1)["data"] = "0xzz" }, "data"},
		{"value too big", func(m map[string]any) { item(m, 1)["value"] = "1" + strings.Repeat("0", 80) }, "value"},
		{"another chain", func(m map[string]any) { item(m, 1)["chainId"] = 1 }, "chainId"},
		{"approve of another token", func(m map[string]any) { item(m, 0)["to"] = "0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8" }, "approve"},
		{"approve calldata of another function", func(m map[string]any) { item(m, 0)["data"] = "0xa9059cbb" + strings.Repeat("0", 128) }, "approve"},
		{"approve of the zero address", func(m map[string]any) {
			item(m, 0)["data"] = "0x095ea7b3" + strings.Repeat("0", 64) + strings.Repeat("f", 64)
		}, "spender"},
		{"approve of too little", func(m map[string]any) {
			item(m, 0)["data"] = "0x095ea7b3" + strings.Repeat("0", 24) + router[2:] + strings.Repeat("0", 63) + "1"
		}, "less than"},
		{"approve calldata short", func(m map[string]any) { item(m, 0)["data"] = "0x095ea7b3" + strings.Repeat("0", 24) + router[2:] }, "approve"},
		{"output above 2^256", func(m map[string]any) { out(m)["amount"] = "1" + strings.Repeat("0", 80) }, "currencyOut.amount"},
		{"minimum above the amount", func(m map[string]any) { out(m)["minimumAmount"] = "99680001" }, "minimumAmount"},
		{"output in another token", func(m map[string]any) {
			out(m)["currency"].(map[string]any)["address"] = "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2"
		}, "currencyOut.currency"},
		{"input more than asked", func(m map[string]any) {
			m["details"].(map[string]any)["currencyIn"].(map[string]any)["amount"] = "100000001"
		}, "currencyIn.amount"},
		{"no request id", func(m map[string]any) {
			for _, s := range m["steps"].([]any) {
				delete(s.(map[string]any), "requestId")
			}
			delete(step(m, 1)["items"].([]any)[0].(map[string]any), "check")
		}, "requestId"},
		{"request ids disagree", func(m map[string]any) { step(m, 0)["requestId"] = requestETH }, "requestId"},
		{"unknown step kind", func(m map[string]any) { step(m, 1)["kind"] = "teleport" }, "kind"},
		{"no transaction", func(m map[string]any) { m["steps"] = m["steps"].([]any)[:1] }, "no transaction"},
		{"no app fee taken", func(m map[string]any) {
			m["fees"].(map[string]any)["app"].(map[string]any)["amount"] = "0"
		}, "fees.app"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, http.StatusOK, "quote_usdc_arb_base.json", tc.change)
			c, reg := newClient(t, srv.URL, Config{FeeRecipient: feeWallet})
			r, err := c.QuoteLeg(context.Background(), usdcArbToBase(t, reg), Tool)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError || !strings.Contains(ae.Message, "invalid answer") || !strings.Contains(ae.Message, tc.reason) {
				t.Fatalf("%+v, %v: want UPSTREAM_ERROR saying %q", r, err, tc.reason)
			}
		})
	}
	t.Run("native input with an approve step", func(t *testing.T) {
		srv, _ := serve(t, http.StatusOK, "quote_usdc_arb_base.json", func(m map[string]any) {
			m["details"].(map[string]any)["currencyIn"].(map[string]any)["currency"].(map[string]any)["address"] = registry.NativeAddressEVM
		})
		c, reg := newClient(t, srv.URL, Config{FeeRecipient: feeWallet})
		req := usdcArbToBase(t, reg)
		req.FromToken, _ = reg.Token(42161, registry.NativeAddressEVM)
		_, err := c.QuoteLeg(context.Background(), req, Tool)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError || !strings.Contains(ae.Message, "approve") {
			t.Fatalf("%v: want UPSTREAM_ERROR about the approve step", err)
		}
	})
}

// TestQuoteLegIndicativeHasNoTx: an indicative quote carries no
// transaction, and so needs no request id.
func TestQuoteLegIndicativeHasNoTx(t *testing.T) {
	srv, _ := serve(t, http.StatusOK, "quote_usdc_arb_base.json", nil)
	c, reg := newClient(t, srv.URL, Config{FeeRecipient: feeWallet})
	req := usdcArbToBase(t, reg)
	req.Indicative = true
	r, err := c.QuoteLeg(context.Background(), req, Tool)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tx != nil {
		t.Error("indicative route carries a transaction")
	}
}

// TestQuoteLegErrors: Relay's refusals: the codes that mean "no route"
// are reasoned no-routes; the others, and failures, the service's upstream
// errors.
func TestQuoteLegErrors(t *testing.T) {
	cases := []struct {
		name, fixture string
		status        int
		code          string // "" means a NoRoute
		reason        string
	}{
		{name: "amount too low", fixture: "error_400_amount_too_low.json", status: 400, reason: "AMOUNT_TOO_LOW"},
		{name: "no quotes", fixture: "error_400_no_quotes.json", status: 400, reason: "NO_POSSIBLE_ROUTE"},
		{name: "invalid address", fixture: "error_400_invalid_address.json", status: 400, code: apierr.UpstreamError},
		{name: "key refused", fixture: "error_401.json", status: 401, code: apierr.UpstreamError},
		{name: "rate limited", fixture: "error_429.json", status: 429, code: apierr.UpstreamError},
		{name: "server error", fixture: "error_500.json", status: 500, code: apierr.UpstreamError},
		{name: "gateway timeout", fixture: "error_500.json", status: 504, code: apierr.UpstreamTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, tc.status, tc.fixture, nil)
			c, reg := newClient(t, srv.URL, Config{FeeRecipient: feeWallet})
			_, err := c.QuoteLeg(context.Background(), usdcArbToBase(t, reg), Tool)
			if tc.code == "" {
				var nr *quote.NoRoute
				if !errors.As(err, &nr) || nr.Reason != tc.reason || nr.Tool != Tool {
					t.Fatalf("err = %v, want a %s no-route", err, tc.reason)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != tc.code || ae.Cause == nil {
				t.Fatalf("err = %v, want %s with its cause", err, tc.code)
			}
			if ae.Details["provider"] != "aggregator" {
				t.Errorf("details %v", ae.Details)
			}
		})
	}
}

// TestNewChecksConfig: a base URL, a timeout and a fee recipient that are
// not usable are refused when the client is built.
func TestNewChecksConfig(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{BaseURL: "ftp://relay"},
		{Timeout: -time.Second},
		{FeeRecipient: "0x1234"},
		{FeeRecipient: registry.NativeAddressEVM},
	} {
		if _, err := New(cfg, reg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := New(Config{}, nil); err == nil {
		t.Error("nil registry accepted")
	}
	c, err := New(Config{}, reg)
	if err != nil || c.base != DefaultBaseURL || c.Name() != "aggregator" {
		t.Errorf("defaults: %v %v", c, err)
	}
}
