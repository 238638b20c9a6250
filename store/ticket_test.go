package store

import (
	"encoding/json"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// issued is an issued quote of route r at now.
func issued(now time.Time, r *quote.Route) *quote.Issued {
	req := &quote.Request{ID: quote.NewID(now), From: &registry.Chain{ID: 42161}, To: &registry.Chain{ID: 8453},
		FromToken:  &registry.Token{Address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"},
		ToToken:    &registry.Token{Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		FromAmount: big.NewInt(1000), FromAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
		ToAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", PartnerID: "ptn_a", Dry: true, Now: now}
	return &quote.Issued{ID: req.ID, Request: req, Route: r, Provider: "aggregator", FeeBps: 25, ExpiresAt: now.Add(quote.TTL)}
}

// The hand-appended ticket decodes to the ticket the quote describes, for
// every shape, and is valid JSON whatever the strings hold.
func TestEncodeTicket(t *testing.T) {
	now := time.Unix(1_767_225_600, 0).UTC()
	tests := []struct {
		name  string
		route *quote.Route
		txs   []quote.TicketTx
		// exact and refundTo make the quote an exact-output one with a
		// refund address.
		exact    bool
		refundTo string
	}{
		{"shape A", &quote.Route{Tool: "sbx-arcbridge", FromAmount: big.NewInt(1000), ToAmount: big.NewInt(990),
			ToAmountMin: big.NewInt(985), ApprovalAddress: "0xspender", ExecutionDuration: 30,
			Tx: &quote.TxRequest{To: "0xrouter", From: "0xfrom", Data: []byte{0xab, 0xcd}, Value: big.NewInt(255), ChainID: 42161,
				GasLimit: 300000, GasPrice: big.NewInt(16)}},
			[]quote.TicketTx{{To: "0xrouter", From: "0xfrom", Data: "0xabcd", Value: "0xff", ChainID: 42161, GasLimit: "0x493e0", GasPrice: "0x10"}}, false, ""},
		{"shape A, empty calldata, no value, no gas price", &quote.Route{Tx: &quote.TxRequest{To: "0xr", ChainID: 1, GasLimit: 21000}},
			[]quote.TicketTx{{To: "0xr", Data: "0x", Value: "0x0", ChainID: 1, GasLimit: "0x5208"}}, false, ""},
		{"shape A, a Solana source's serialized transaction", &quote.Route{Tool: "mayan", Tx: &quote.TxRequest{ChainID: 1151111081099710,
			Encoding: quote.EncodingBase64, Data: []byte{0x01, 0xfb, 0xff, 0x00, 0x7e}}},
			[]quote.TicketTx{{Data: "Afv/AH4=", ChainID: 1151111081099710, Encoding: "base64"}}, false, ""},
		{"intents, strings that need escaping", &quote.Route{Tool: "sbx-\"near\"\u2028", DepositAddress: "dep<&>", DepositMemo: "memo\n"}, nil, false, ""},
		{"shape B", &quote.Route{Shape: quote.ShapeDirect, Direct: &quote.DirectQuote{TransactionRequest: quote.DirectTx{
			To: "0xs", Data: "0x01", Value: "0x0", ChainID: 8453, GasLimit: "0x1"}}},
			[]quote.TicketTx{{To: "0xs", Data: "0x01", Value: "0x0", ChainID: 8453, GasLimit: "0x1"}}, false, ""},
		{"shape C: step 1 only", &quote.Route{Shape: quote.ShapeMultiStep, MultiStep: &quote.MultiStepQuote{Steps: []quote.Step{
			{Step: 1, TransactionRequest: &quote.StepTx{To: "0xr", Data: "0x02", Value: "0x0", ChainID: 10}}, {Step: 2, Automated: true}}}},
			[]quote.TicketTx{{To: "0xr", Data: "0x02", Value: "0x0", ChainID: 10}}, false, ""},
		{"exact output with a refund address", &quote.Route{Tool: "sbx-intents", FromAmount: big.NewInt(1234), ToAmount: big.NewInt(1001),
			ToAmountMin: big.NewInt(1000), DepositAddress: "0xdep"}, nil, true, "0x1111111111111111111111111111111111111111"},
		{"refund address with escapes", &quote.Route{Tool: "x"}, nil, false, "r\"<&>\u2028"},
		{"an upstream's reference", &quote.Route{Tool: "relay", UpstreamRef: "0x7e13a4a944b62ee6e378a15cfb29659351f69fedf7780406279a47cdf895499e"}, nil, false, ""},
		{"an upstream's reference with escapes", &quote.Route{Tool: "relay", UpstreamRef: "req\"<&>\u2028"}, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := issued(now, tt.route)
			is.Request.RefundTo = tt.refundTo
			exact := ""
			if tt.exact {
				is.Request.FromAmount, is.Request.ToAmount = nil, big.NewInt(1000)
				exact = "1000"
			}
			enc, err := EncodeTicket(is)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(enc.val) {
				t.Fatalf("not JSON: %s", enc.val)
			}
			got, err := DecodeTicket(enc)
			if err != nil {
				t.Fatal(err)
			}
			r := tt.route
			want := &quote.Ticket{ID: is.ID, PartnerID: "ptn_a", Provider: "aggregator", Tool: r.Tool, Shape: r.Shape,
				IssuedAt: now, ExpiresAt: now.Add(quote.TTL), FromChain: 42161, ToChain: 8453,
				FromToken: is.Request.FromToken.Address, ToToken: is.Request.ToToken.Address,
				FromAmount: amount(r.FromAmount), ToAmount: amount(r.ToAmount), ToAmountMin: amount(r.ToAmountMin),
				FromAddress: is.Request.FromAddress, ToAddress: is.Request.ToAddress, RefundTo: tt.refundTo, ExactToAmount: exact,
				FeeBps: 25, Dry: true,
				ExecutionDuration: r.ExecutionDuration, ApprovalAddress: r.ApprovalAddress, Txs: tt.txs,
				DepositAddress: r.DepositAddress, DepositMemo: r.DepositMemo, UpstreamRef: r.UpstreamRef}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %+v\nwant    %+v", got, want)
			}
		})
	}
	if _, err := EncodeTicket(&quote.Issued{ID: "qt_short"}); err == nil {
		t.Fatal("a malformed id was encoded")
	}
}

func amount(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}

// A route's upstream reference (Relay's request id, which its status
// endpoint is asked with) survives the ticket's encoding into the swap an
// execute makes of it; a ticket written before the field existed reads
// back without one.
func TestUpstreamRefRouteToTicketToSwap(t *testing.T) {
	const ref = "0x7e13a4a944b62ee6e378a15cfb29659351f69fedf7780406279a47cdf895499e"
	now := time.Unix(1_767_225_600, 0).UTC()
	enc, err := EncodeTicket(issued(now, &quote.Route{Tool: "relay", UpstreamRef: ref}))
	if err != nil {
		t.Fatal(err)
	}
	tk, err := DecodeTicketRecord(enc.ID, enc.Record())
	if err != nil {
		t.Fatal(err)
	}
	if s := swap.FromTicket(tk, "0xABC"); s.UpstreamRef != ref || s.Tool != "relay" {
		t.Fatalf("swap %+v", s)
	}
	old := []byte(`{"v":1,"id":"` + enc.ID + `","provider":"aggregator","tool":"across","fromChain":42161}`)
	tk, err = DecodeTicketRecord(enc.ID, old)
	if err != nil || tk.UpstreamRef != "" || swap.FromTicket(tk, "0xabc").UpstreamRef != "" {
		t.Fatalf("old record: %+v %v", tk, err)
	}
}

// A multi-step quote's ticket keeps step 1's minimum USDC and is found by
// its step-1 calldata too (CallRef: keccak256 of the calldata the quote
// gave); another quote has neither.
func TestMultiStepTicketStep1MinimumAndCallRef(t *testing.T) {
	now := time.Unix(1_767_225_600, 0).UTC()
	ms := &quote.Route{Shape: quote.ShapeMultiStep, Step1AmountMin: big.NewInt(24_875_000), MultiStep: &quote.MultiStepQuote{Steps: []quote.Step{
		{Step: 1, TransactionRequest: &quote.StepTx{To: "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE", Data: "0x4630a0d8beef", Value: "0x0", ChainID: 42161}},
		{Step: 2, Automated: true}}}}
	enc, err := EncodeTicket(issued(now, ms))
	if err != nil {
		t.Fatal(err)
	}
	tk, err := DecodeTicketRecord(enc.ID, enc.Record())
	if err != nil || tk.Step1AmountMin != "24875000" {
		t.Fatalf("ticket %+v %v, want step1AmountMin 24875000", tk, err)
	}
	if ref, ok := enc.CallRef(); !ok || ref != quote.CallRef([]byte{0x46, 0x30, 0xa0, 0xd8, 0xbe, 0xef}) {
		t.Fatalf("step-1 reference %x %v", ref, ok)
	}
	plain, err := EncodeTicket(issued(now, &quote.Route{Tool: "relay"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.CallRef(); ok {
		t.Fatal("a plain quote has a step-1 reference")
	}
	if tk, err := DecodeTicketRecord(plain.ID, plain.Record()); err != nil || tk.Step1AmountMin != "" {
		t.Fatalf("plain ticket %+v %v", tk, err)
	}
}

// Every quote that hands the wallet an EVM transaction is found by its
// calldata (CallRef), so that a transaction broadcast without execute is
// matched back to its quote; a non-EVM source's serialized transaction, an
// intents deposit and a quote without a transaction have no call
// reference.
func TestTicketCallRefOfEveryEVMTransaction(t *testing.T) {
	now := time.Unix(1_767_225_600, 0).UTC()
	cases := []struct {
		name  string
		route *quote.Route
		data  []byte // nil: no call reference
	}{
		{"shape A", &quote.Route{Tx: &quote.TxRequest{To: "0xr", Data: []byte{0xab, 0xcd}, ChainID: 42161}}, []byte{0xab, 0xcd}},
		{"shape A, a native transfer without calldata", &quote.Route{Tx: &quote.TxRequest{To: "0xr", ChainID: 1}}, nil},
		{"shape B", &quote.Route{Shape: quote.ShapeDirect, Direct: &quote.DirectQuote{TransactionRequest: quote.DirectTx{
			To: "0xs", Data: "0x0102", Value: "0x0", ChainID: 8453}}}, []byte{0x01, 0x02}},
		{"shape C's step 1", &quote.Route{Shape: quote.ShapeMultiStep, MultiStep: &quote.MultiStepQuote{Steps: []quote.Step{
			{Step: 1, TransactionRequest: &quote.StepTx{To: "0xr", Data: "0x02", Value: "0x0", ChainID: 10}}}}}, []byte{0x02}},
		{"a Solana source's serialized transaction", &quote.Route{Tx: &quote.TxRequest{ChainID: 1151111081099710,
			Encoding: quote.EncodingBase64, Data: []byte{0x01}}}, nil},
		{"intents", &quote.Route{DepositAddress: "dep"}, nil},
		{"no transaction", &quote.Route{Tool: "relay"}, nil},
	}
	for _, c := range cases {
		enc, err := EncodeTicket(issued(now, c.route))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ref, ok := enc.CallRef()
		switch {
		case c.data == nil && ok:
			t.Errorf("%s: call reference %x, want none", c.name, ref)
		case c.data != nil && (!ok || ref != quote.CallRef(c.data)):
			t.Errorf("%s: call reference %x %v, want keccak256 of %x", c.name, ref, ok, c.data)
		}
	}
}
