package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's tests of the sandbox chain log, the quote references
// and the sandbox deliveries (store/pebble/chainop_test.go,
// store/pebble/inbound_test.go), run against PostgreSQL.

// TestChainOpsRoundTrip stores records of two chains out of order and reads
// each chain's back in sequence order, byte for byte.
func TestChainOpsRoundTrip(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	recs := [][]byte{[]byte(`{"v":1,"kind":"send"}`), []byte(`{"v":1,"kind":"send","n":2}`), []byte(`{"v":1,"kind":"faucet"}`), []byte(`{"v":1,"kind":"credit"}`)}
	// Chain 42161 gets them out of order; chain 42162 (the next id, whose
	// keys follow directly) gets one, which must not spill into 42161's.
	for _, i := range []int{2, 0, 3, 1} {
		if err := s.AppendChainOp(ctx, 42161, uint64(i+1), recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendChainOp(ctx, 42162, 1, recs[0]); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	var seqs []uint64
	if err := s.ChainOps(ctx, 42161, func(seq uint64, rec []byte) error {
		seqs, got = append(seqs, seq), append(got, rec)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs, []uint64{1, 2, 3, 4}) {
		t.Fatalf("sequence %v", seqs)
	}
	for i := range recs {
		if !bytes.Equal(got[i], recs[i]) {
			t.Errorf("record %d is %s, want %s", i, got[i], recs[i])
		}
	}
	// A sequence number is written once; an empty record is refused.
	if err := s.AppendChainOp(ctx, 42161, 2, recs[2]); !errors.Is(err, store.ErrExists) {
		t.Fatalf("rewrite of an operation: %v", err)
	}
	if err := s.AppendChainOp(ctx, 42161, 9, nil); err == nil {
		t.Fatal("stored an empty record")
	}
	// fn's error stops the scan.
	stop := errors.New("stop")
	n := 0
	if err := s.ChainOps(ctx, 42161, func(uint64, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("stop: %v after %d", err, n)
	}
	// Nothing stored: no calls.
	if err := s.ChainOps(ctx, 1, func(uint64, []byte) error { t.Fatal("an operation on chain 1"); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestChainOpsManyChunks: a log longer than one read comes back whole, in
// order.
func TestChainOpsManyChunks(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	const n = trackerChunk*2 + 3
	for i := range n {
		if err := s.AppendChainOp(ctx, 7, uint64(i), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	next := uint64(0)
	if err := s.ChainOps(ctx, 7, func(seq uint64, rec []byte) error {
		if seq != next || string(rec) != fmt.Sprint(seq) {
			return fmt.Errorf("operation %d: %q, want %d", seq, rec, next)
		}
		next++
		return nil
	}); err != nil || next != n {
		t.Fatalf("read %d operations: %v", next, err)
	}
}

// issued is a quote issued at now with route r.
func issued(now time.Time, r *quote.Route) *quote.Issued {
	req := &quote.Request{ID: quote.NewID(now), From: &registry.Chain{ID: 42161}, To: &registry.Chain{ID: 8453},
		FromToken:  &registry.Token{Address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"},
		ToToken:    &registry.Token{Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		FromAmount: big.NewInt(1000), FromAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
		ToAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", PartnerID: "ptn_a", Dry: true, Now: now}
	return &quote.Issued{ID: req.ID, Request: req, Route: r, Provider: "aggregator", FeeBps: 25, ExpiresAt: now.Add(quote.TTL)}
}

func TestQuoteRefIndex(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	is := issued(time.Unix(1_767_225_600, 0), &quote.Route{Shape: quote.ShapeMultiStep, MultiStep: &quote.MultiStepQuote{}})
	enc, err := store.EncodeTicket(is)
	if err != nil {
		t.Fatal(err)
	}
	other, err := store.EncodeTicket(issued(time.Unix(1_767_225_600, 0), &quote.Route{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutQuoteRefs(ctx, []store.EncodedTicket{other, enc}); err != nil {
		t.Fatal(err)
	}
	if id, err := s.QuoteByRef(ctx, quote.Ref(is.ID)); err != nil || id != is.ID {
		t.Fatalf("QuoteByRef = %q %v", id, err)
	}
	if id, err := s.QuoteByRef(ctx, quote.Ref(other.ID)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("QuoteByRef of a single-step quote = %q %v", id, err)
	}
	if err := s.PutQuoteRefs(ctx, []store.EncodedTicket{other}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutQuoteRefs(ctx, []store.EncodedTicket{enc}); err != nil {
		t.Fatalf("a reference stored again: %v", err)
	}
	if n := countRows(t, s, "quote_refs"); n != 1 {
		t.Fatalf("%d references stored, want 1", n)
	}
}

func TestSandboxDeliveries(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.SandboxDelivery(ctx, "bridge/0xabc"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before any delivery: %v", err)
	}
	for _, c := range []struct{ ref, hash string }{{"bridge/0xabc", "0x01"}, {"refund/0xabc", "0x02"}, {"bridge/0xabc", "0x03"}} {
		if err := s.PutSandboxDelivery(ctx, c.ref, c.hash); err != nil {
			t.Fatal(err)
		}
		if got, err := s.SandboxDelivery(ctx, c.ref); err != nil || got != c.hash {
			t.Fatalf("SandboxDelivery(%s) = %q %v, want %q", c.ref, got, err, c.hash)
		}
	}
}
