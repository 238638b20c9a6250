package pebblestore

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

func TestInboundDepositRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	at := time.Unix(1_767_225_600, 0).UTC()
	d := &inbound.Record{PartnerID: "ptn_a", QuoteID: "qt_x", Deposit: inbound.Deposit{
		Registration: inbound.Registration{TxHash: common.HexToHash("0xAB"), FromAddress: common.HexToAddress("0x01"),
			ToAddress: common.HexToAddress("0x02"), OutputToken: common.HexToAddress("0x03"), DestinationDomain: 369,
			Signature: [65]byte{1, 2, 3, 64: 27}},
		SourceChain: 8453, InputToken: common.HexToAddress("0x04"), AmountIn: big.NewInt(5_000_000), State: inbound.Received,
		CreatedAt: at, UpdatedAt: at}}
	got, created, err := s.CreateInboundDeposit(ctx, d, nil)
	if err != nil || !created || got != d {
		t.Fatalf("create %v %v", created, err)
	}
	again := *d
	again.Deposit.State = inbound.Failed
	if got, created, err := s.CreateInboundDeposit(ctx, &again, nil); err != nil || created || got.Deposit.State != inbound.Received {
		t.Fatalf("second create replaced the first: %+v %v %v", got, created, err)
	}
	read, err := s.InboundDepositByHash(ctx, common.HexToHash("0xab").Hex())
	if err != nil || !reflect.DeepEqual(read, d) {
		t.Fatalf("read back %+v %v\nwant %+v", read, err, d)
	}
	open := 0
	_ = s.EachOpenInboundDeposit(ctx, func(*inbound.Record) bool { open++; return true })
	d.Deposit.State = inbound.Completed
	if err := s.SaveInboundDeposit(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	_ = s.EachOpenInboundDeposit(ctx, func(*inbound.Record) bool { open += 10; return true })
	if open != 1 {
		t.Fatalf("open deposits counted %d, want 1 before completion and 0 after", open)
	}
}

func TestQuoteRefIndex(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
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
}
