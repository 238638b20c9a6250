package mailbox

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestMailbox(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	n := 0
	b := New(func() time.Time { n++; return t0.Add(time.Duration(n) * time.Second) })
	ctx := context.Background()
	for i := range PerAddress + 3 {
		_ = b.Send(ctx, "Ops@Acme.example", "code", fmt.Sprint(i))
	}
	_ = b.Send(ctx, "other@acme.example", "code", "x")
	got := b.Messages(" ops@acme.EXAMPLE")
	if len(got) != PerAddress || got[0].Text != fmt.Sprint(PerAddress+2) || got[len(got)-1].Text != "3" || !got[0].SentAt.After(got[1].SentAt) {
		t.Fatalf("messages: %d, newest %+v", len(got), got[0])
	}
	if got := b.Messages("nobody@acme.example"); len(got) != 0 {
		t.Fatalf("nobody's: %v", got)
	}
}

func TestMailboxBoundsAddresses(t *testing.T) {
	b := New(nil)
	for i := range Addresses + 1 {
		_ = b.Send(context.Background(), fmt.Sprintf("a%d@b.co", i), "s", "t")
	}
	if len(b.Messages("a0@b.co")) != 0 || len(b.Messages(fmt.Sprintf("a%d@b.co", Addresses))) != 1 {
		t.Fatal("the oldest address was not dropped")
	}
}
