package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/swapgate/swapgate/store"
)

// TestChainOpsRoundTrip stores records of two chains out of order and reads
// each chain's back in sequence order, byte for byte.
func TestChainOpsRoundTrip(t *testing.T) {
	s := openTestStore(t, nil)
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
