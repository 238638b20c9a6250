package relay

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/standin/kit"
	adapter "github.com/swapgate/swapgate/routing/adapters/relay"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

const (
	usdcArb   = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase  = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	wallet    = "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0"
	feeWallet = "0x1111111111111111111111111111111111111111"
	refund    = "0x2222222222222222222222222222222222222222"
)

// table is a small price table with round prices, so the expected amounts
// are plain arithmetic.
func table() *kit.Table {
	return kit.NewTable([]kit.Token{
		{ChainID: 42161, Address: nativeAddress, Symbol: "ETH", Name: "ETH", Decimals: 18, PriceUSD: 2000},
		{ChainID: 42161, Address: usdcArb, Symbol: "USDC", Name: "USD Coin", Decimals: 6, PriceUSD: 1},
		{ChainID: 8453, Address: usdcBase, Symbol: "USDC", Name: "USD Coin", Decimals: 6, PriceUSD: 1},
	})
}

func start(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Prices == nil {
		cfg.Prices = table()
	}
	s, srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func client(t *testing.T, url string, cfg adapter.Config) (*adapter.Client, *registry.Registry) {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.BaseURL, cfg.Timeout = url, 5*time.Second
	c, err := adapter.New(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	return c, reg
}

func request(t *testing.T, reg *registry.Registry, fromTok string, amount int64, feeBps int) *quote.Request {
	t.Helper()
	arb, _ := reg.Chain(42161)
	base, _ := reg.Chain(8453)
	ft, ok1 := reg.Token(42161, fromTok)
	tt, ok2 := reg.Token(8453, usdcBase)
	if !ok1 || !ok2 {
		t.Fatal("registry lacks the tokens")
	}
	return &quote.Request{ID: "q1", From: arb, To: base, FromToken: ft, ToToken: tt, FromAmount: big.NewInt(amount),
		FromAddress: wallet, ToAddress: wallet, Slippage: 0.005, FeeBps: feeBps, Now: time.Now()}
}

// TestQuoteThroughAdapter: the adapter maps the stand-in's quote: the
// input less Relay's 0.05% and the app fee, bought at the table and moved
// by the edge; the approval to the router and the deposit, the request id,
// and the body the adapter sent as the stand-in recorded it.
func TestQuoteThroughAdapter(t *testing.T) {
	cases := []struct {
		name            string
		fromTok         string
		amount          int64
		feeBps, edge    int
		wantTo, wantMin int64
		wantFee         int64
		wantValue       int64
		wantApproval    string
		wantAppFees     bool
	}{
		// 100 USDC: 0.05 Relay's fee, 0.3 the app fee, 99.65 bought; min 0.5% less.
		{"token with a fee", usdcArb, 100_000_000, 30, 0, 99_650_000, 99_151_750, 300_000 * 99_650_000 / 99_700_000, 0, DefaultRouter, true},
		{"token without a fee, 1% better", usdcArb, 100_000_000, 0, 100, 100_949_500, 100_444_752, 0, 0, DefaultRouter, false},
		{"token without a fee, 1% worse", usdcArb, 100_000_000, 0, -100, 98_950_500, 98_455_747, 0, 0, DefaultRouter, false},
		// 0.01 ETH at 2000: 19.99 USDC after Relay's fee; value carries the amount, no approval.
		{"native", nativeAddress, 10_000_000_000_000_000, 0, 0, 19_990_000, 19_890_050, 0, 10_000_000_000_000_000, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, url := start(t, Config{EdgeBps: tc.edge})
			c, reg := client(t, url, adapter.Config{FeeRecipient: feeWallet})
			r, err := c.QuoteLeg(context.Background(), request(t, reg, tc.fromTok, tc.amount, tc.feeBps), adapter.Tool)
			if err != nil {
				t.Fatal(err)
			}
			if r.Tool != adapter.Tool || r.ToAmount.Int64() != tc.wantTo || r.ToAmountMin.Int64() != tc.wantMin || r.PartnerFee.Int64() != tc.wantFee {
				t.Errorf("route %s: to %s min %s fee %s, want %d %d %d", r.Tool, r.ToAmount, r.ToAmountMin, r.PartnerFee, tc.wantTo, tc.wantMin, tc.wantFee)
			}
			if r.ApprovalAddress != tc.wantApproval || r.Tx == nil || r.Tx.To != DefaultRouter || r.Tx.Value.Int64() != tc.wantValue {
				t.Errorf("approval %q tx %+v", r.ApprovalAddress, r.Tx)
			}
			if !strings.HasPrefix(r.UpstreamRef, "0x") || len(r.UpstreamRef) != 66 {
				t.Errorf("request id %q", r.UpstreamRef)
			}
			body := s.LastQuote()
			if body["tradeType"] != "EXACT_INPUT" || body["amount"] != big.NewInt(tc.amount).String() {
				t.Errorf("asked %v", body)
			}
			if _, has := body["appFees"]; has != tc.wantAppFees {
				t.Errorf("appFees %v", body["appFees"])
			}
		})
	}
}

// TestExactOutputAndRefundToReachRelay: an exact output goes as
// EXACT_OUTPUT with the refund address, and the stand-in sizes the least
// input that delivers it exactly.
func TestExactOutputAndRefundToReachRelay(t *testing.T) {
	s, url := start(t, Config{})
	c, reg := client(t, url, adapter.Config{FeeRecipient: feeWallet})
	req := request(t, reg, usdcArb, 0, 30)
	req.FromAmount, req.ToAmount, req.RefundTo = nil, big.NewInt(50_000_000), refund
	if reason, msg := quote.Unsupported(c, req); reason != "" {
		t.Fatalf("left out: %s %s", reason, msg)
	}
	r, err := c.QuoteLeg(context.Background(), req, adapter.Tool)
	if err != nil {
		t.Fatal(err)
	}
	body := s.LastQuote()
	if body["tradeType"] != "EXACT_OUTPUT" || body["amount"] != "50000000" || body["refundTo"] != refund {
		t.Errorf("asked %v", body)
	}
	if r.ToAmountMin.Int64() != 50_000_000 || r.ToAmount.Int64() != 50_000_000 {
		t.Errorf("route delivers %s (min %s)", r.ToAmount, r.ToAmountMin)
	}
	// The least input: one unit less would not deliver 50 USDC.
	from, _ := s.Prices().Lookup(42161, usdcArb)
	to, _ := s.Prices().Lookup(8453, usdcBase)
	less := s.price(from, to, new(big.Int).Sub(r.FromAmount, big.NewInt(1)), 30)
	if less.toAmount.Cmp(req.ToAmount) >= 0 {
		t.Errorf("input %s is not the least", r.FromAmount)
	}
}

// TestStatusThroughAdapter: a request's status goes waiting, pending, then
// success with a destination hash, as the adapter maps them; SetStatus
// makes it what a test wants.
func TestStatusThroughAdapter(t *testing.T) {
	s, url := start(t, Config{StatusPolls: 2})
	c, _ := client(t, url, adapter.Config{})
	sw := &swap.Swap{ID: "0xabc", ToChain: 8453, ToToken: usdcBase, UpstreamRef: "0x" + strings.Repeat("ab", 32)}
	want := []string{swap.WaitSourceConfirmations, swap.WaitDestinationTransaction, swap.Completed}
	for i, sub := range want {
		o, err := c.SwapStatus(context.Background(), sw)
		if err != nil {
			t.Fatal(err)
		}
		if o.Substatus != sub {
			t.Fatalf("poll %d: %+v, want %s", i+1, o, sub)
		}
		if sub == swap.Completed && (o.Status != swap.StatusDone || o.Receiving.TxHash == "") {
			t.Fatalf("success: %+v", o)
		}
	}
	other := &swap.Swap{ID: "0xdef", UpstreamRef: "0x" + strings.Repeat("cd", 32)}
	for status, want := range map[string]string{"refund": swap.Refunded, "failure": swap.UnknownFailedError, "delayed": swap.WaitDestinationTransaction} {
		s.SetStatus(other.UpstreamRef, status)
		o, err := c.SwapStatus(context.Background(), other)
		if err != nil || o.Substatus != want {
			t.Errorf("%s: %+v %v, want %s", status, o, err, want)
		}
	}
}

// TestChainsThroughAdapter: /chains lists the registry's EVM chains,
// the disabled ones marked, which the adapter leaves out.
func TestChainsThroughAdapter(t *testing.T) {
	_, url := start(t, Config{Disabled: []uint64{137}})
	c, reg := client(t, url, adapter.Config{})
	ids, err := c.Chains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want int
	for _, ch := range reg.Chains() {
		if ch.ChainType == registry.EVM && ch.ID != 137 {
			want++
		}
	}
	if len(ids) != want {
		t.Errorf("%d chains, want %d", len(ids), want)
	}
	if err := c.LoadChains(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Serves(137, 8453) || !c.Serves(42161, 8453) {
		t.Error("Serves does not follow the disabled chain")
	}
}

// TestRefusals: a key the stand-in does not accept, a currency it does not
// price and a disabled chain reach the adapter as Relay's refusals.
func TestRefusals(t *testing.T) {
	t.Run("api key", func(t *testing.T) {
		_, url := start(t, Config{APIKey: "secret"})
		c, reg := client(t, url, adapter.Config{})
		_, err := c.QuoteLeg(context.Background(), request(t, reg, usdcArb, 1_000_000, 0), adapter.Tool)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError || !strings.Contains(ae.Message, "credentials") {
			t.Fatalf("without the key: %v", err)
		}
		c, _ = client(t, url, adapter.Config{APIKey: "secret"})
		if _, err := c.QuoteLeg(context.Background(), request(t, reg, usdcArb, 1_000_000, 0), adapter.Tool); err != nil {
			t.Fatalf("with the key: %v", err)
		}
	})
	t.Run("currency not priced", func(t *testing.T) {
		_, url := start(t, Config{})
		c, reg := client(t, url, adapter.Config{})
		req := request(t, reg, usdcArb, 1_000_000, 0)
		req.ToToken, _ = reg.TokenBySymbol(8453, "DAI")
		_, err := c.QuoteLeg(context.Background(), req, adapter.Tool)
		var nr *quote.NoRoute
		if !errors.As(err, &nr) || nr.Reason != adapter.ReasonUnsupportedRoute {
			t.Fatalf("%v", err)
		}
	})
	t.Run("amount too low", func(t *testing.T) {
		_, url := start(t, Config{})
		c, reg := client(t, url, adapter.Config{})
		_, err := c.QuoteLeg(context.Background(), request(t, reg, usdcArb, 1, 0), adapter.Tool)
		var nr *quote.NoRoute
		if !errors.As(err, &nr) || nr.Reason != "AMOUNT_TOO_LOW" {
			t.Fatalf("%v", err)
		}
	})
	t.Run("tampered answer", func(t *testing.T) {
		_, url := start(t, Config{Tamper: func(m map[string]any) {
			m["steps"].([]any)[0].(map[string]any)["kind"] = "signature"
		}})
		c, reg := client(t, url, adapter.Config{})
		_, err := c.QuoteLeg(context.Background(), request(t, reg, usdcArb, 1_000_000, 0), adapter.Tool)
		var nr *quote.NoRoute
		if !errors.As(err, &nr) || nr.Reason != adapter.ReasonUnsupportedRoute {
			t.Fatalf("%v", err)
		}
	})
}
