package edge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// statusFakes stand in for the quote engine, the tracker, the store and
// the chains behind GET /v1/status.
type statusFakes struct {
	tickets map[string]*quote.Ticket // retained tickets by id
	swaps   map[string]*swap.Swap    // tracked swaps by hash
	onChain map[string]*swap.SourceTx
	pending map[string]bool
	readErr error
	refs    map[[32]byte]string
}

func (f *statusFakes) Lookup(_ context.Context, id string) (*quote.Ticket, error) {
	return nil, quote.ErrExpired // execute's view: every quote here has expired
}

func (f *statusFakes) Ticket(_ context.Context, id string) (*quote.Ticket, error) {
	if t, ok := f.tickets[id]; ok {
		return t, nil
	}
	return nil, quote.ErrUnknown
}

func (f *statusFakes) Track(_ context.Context, s *swap.Swap) (*swap.Swap, error) {
	if old, ok := f.swaps[s.ID]; ok {
		return old, nil
	}
	f.swaps[s.ID] = s
	return s, nil
}

func (f *statusFakes) Swap(_ context.Context, hash string) (*swap.Swap, error) {
	if s, ok := f.swaps[swap.NormalizeHash(hash)]; ok {
		return s, nil
	}
	return nil, account.ErrNotFound
}

func (f *statusFakes) SwapByQuote(_ context.Context, id string) (*swap.Swap, error) {
	for _, s := range f.swaps {
		if s.QuoteID == id {
			return s, nil
		}
	}
	return nil, account.ErrNotFound
}

func (f *statusFakes) SourceTx(_ context.Context, chainID uint64, hash string) (*swap.SourceTx, bool, error) {
	if f.readErr != nil {
		return nil, false, f.readErr
	}
	return f.onChain[hash], f.pending[hash], nil
}

func (f *statusFakes) Reads(chainID uint64) bool { return chainID == 42161 }

func (f *statusFakes) QuoteByCallRef(_ context.Context, ref [32]byte) (string, error) {
	if id, ok := f.refs[ref]; ok {
		return id, nil
	}
	return "", account.ErrNotFound
}

// TestStatusScript walks GET /v1/status through its cases against fakes,
// on a fixed clock: a quote past its expiry (execute refuses it) but
// within retention is still matched and tracked from its transaction on
// chain, and then found by quoteId; the reasons of NOT_FOUND, a failed
// read of the chain and the parameters' refusals.
func TestStatusScript(t *testing.T) {
	now := time.Unix(1_767_225_600, 0).UTC()
	const (
		wallet = "0x2222222222222222222222222222222222222222"
		router = "0x1111111111111111111111111111111111111111"
	)
	issued := now.Add(-10 * time.Minute)
	old := quote.NewID(issued)
	data := []byte{0xab, 0xcd}
	expired := &quote.Ticket{ID: old, PartnerID: "ptn_a", IssuedAt: issued, ExpiresAt: issued.Add(quote.TTL), FromChain: 42161, ToChain: 8453,
		FromAddress: wallet, Txs: []quote.TicketTx{{To: router, Data: "0xabcd", Value: "0x0", ChainID: 42161}}}
	gone := quote.NewID(now.Add(-2 * time.Hour))
	hash := func(b byte) string { return "0x" + strings.Repeat(string("0123456789abcdef"[b]), 64) }
	f := &statusFakes{
		tickets: map[string]*quote.Ticket{old: expired},
		swaps:   map[string]*swap.Swap{},
		onChain: map[string]*swap.SourceTx{
			hash(1): {ChainID: 42161, From: wallet, To: router, Value: big.NewInt(0), CallRef: quote.CallRef(data)},
			hash(2): {ChainID: 42161, From: wallet, To: router, CallRef: quote.CallRef([]byte{0x01})},
			hash(3): {ChainID: 42161, From: wallet, To: router, CallRef: quote.CallRef([]byte{0x02})},
		},
		pending: map[string]bool{hash(4): true},
		refs:    map[[32]byte]string{quote.CallRef(data): old, quote.CallRef([]byte{0x02}): gone},
	}
	reg, cat := testCatalog(t)
	s, err := New(DefaultConfig(), Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: func() time.Time { return now },
		Tickets: f, Swaps: f, QuoteSwaps: f, RetainedTickets: f, SourceTxs: f, QuoteRetention: time.Hour, Idempotency: forgetful{}})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, query string
		code        int
		status      string // data.status, or error.code when code is not 200
		want        string // in substatusMessage, or error.details.param / message
	}{
		{"the quote before its transaction", "quoteId=" + old, 200, swap.StatusNotFound, "no transaction of it was reported"},
		{"a quote issued past retention", "quoteId=" + gone, 200, swap.StatusNotFound, "no longer retained"},
		{"a quote never issued", "quoteId=" + quote.NewID(now), 200, swap.StatusNotFound, "was issued"},
		{"not followed, no fromChain", "txHash=" + hash(1), 200, swap.StatusNotFound, "give fromChain"},
		{"pending on chain", "txHash=" + hash(4) + "&fromChain=42161", 200, swap.StatusNotFound, "pending"},
		{"not on chain", "txHash=" + hash(5) + "&fromChain=42161", 200, swap.StatusNotFound, "does not show"},
		{"no quote's calldata", "txHash=" + hash(2) + "&fromChain=42161", 200, swap.StatusNotFound, "not the transaction of any quote"},
		{"its quote no longer retained", "txHash=" + hash(3) + "&fromChain=42161", 200, swap.StatusNotFound, "no longer retained"},
		{"expired, retained: tracked", "txHash=" + hash(1) + "&fromChain=42161", 200, swap.StatusPending, ""},
		{"then by quote id", "quoteId=" + old, 200, swap.StatusPending, ""},
		{"then by hash alone", "txHash=" + hash(1), 200, swap.StatusPending, ""},
		{"both parameters", "txHash=" + hash(1) + "&quoteId=" + old, 400, "INVALID_PARAMS", "quoteId"},
		{"neither", "", 400, "INVALID_PARAMS", "txHash"},
		{"a malformed quote id", "quoteId=nope", 400, "INVALID_PARAMS", "quoteId"},
		{"a non-EVM source", "txHash=" + hash(5) + "&fromChain=1151111081099710", 400, "INVALID_PARAMS", "fromChain"},
		{"an unknown chain", "txHash=" + hash(5) + "&fromChain=7", 400, "INVALID_PARAMS", "fromChain"},
		{"an EVM chain without a node", "txHash=" + hash(5) + "&fromChain=8453", 400, "INVALID_PARAMS", "fromChain"},
	}
	for _, st := range steps {
		ctx := serve(s, "GET", "/v1/status?"+st.query, "127.0.0.1:5000", nil)
		var env struct {
			Data struct {
				Status, SubstatusMessage, QuoteID string
			}
			Error struct {
				Code    string
				Details map[string]any
			}
		}
		if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil {
			t.Fatalf("%s: %v: %s", st.name, err, ctx.Response.Body())
		}
		got := env.Data.Status
		if st.code != 200 {
			got = env.Error.Code
		}
		ok := ctx.Response.StatusCode() == st.code && got == st.status
		switch {
		case st.code != 200:
			ok = ok && env.Error.Details["param"] == st.want
		case st.want != "":
			ok = ok && strings.Contains(env.Data.SubstatusMessage, st.want)
		default:
			ok = ok && env.Data.QuoteID == old
		}
		if !ok {
			t.Errorf("%s: %d %s", st.name, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	if sw := f.swaps[hash(1)]; sw == nil || sw.PartnerID != "ptn_a" || sw.QuoteID != old {
		t.Fatalf("tracked %+v, want quote %s's swap for its partner", sw, old)
	}
	f.readErr = errors.New("node down")
	if ctx := serve(s, "GET", "/v1/status?txHash="+hash(6)+"&fromChain=42161", "127.0.0.1:5000", nil); ctx.Response.StatusCode() != 503 {
		t.Fatalf("a failed read: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}
