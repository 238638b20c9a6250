// Package mailbox is the sandbox's mail: in sandbox mode without an SMTP
// relay, the messages the service sends (the partner portal's sign-in
// codes) are kept here, in memory, and read back through the sandbox's
// mailbox endpoint instead of being sent. Nothing is kept across restarts:
// a code is valid for minutes, and the mailbox only stands in for an inbox.
package mailbox

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Bounds of what is kept: the newest PerAddress messages of an address,
// and at most Addresses addresses (the oldest address written dropped
// first), so that a stream of sign-in requests cannot grow memory.
const (
	PerAddress = 20
	Addresses  = 10_000
)

// Message is one message as it was sent.
type Message struct {
	To, Subject, Text string
	SentAt            time.Time
}

// Box keeps the sandbox's messages. It is safe for concurrent use.
type Box struct {
	mu    sync.Mutex
	now   func() time.Time
	byTo  map[string][]Message
	order []string // addresses, oldest first written
}

// New returns an empty mailbox; now nil means time.Now.
func New(now func() time.Time) *Box {
	if now == nil {
		now = time.Now
	}
	return &Box{now: now, byTo: map[string][]Message{}}
}

func key(addr string) string { return strings.ToLower(strings.TrimSpace(addr)) }

// Send keeps a message for to.
func (b *Box) Send(_ context.Context, to, subject, text string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := key(to)
	msgs, seen := b.byTo[k]
	if !seen {
		if len(b.order) >= Addresses {
			delete(b.byTo, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, k)
	}
	msgs = append(msgs, Message{To: to, Subject: subject, Text: text, SentAt: b.now().UTC()})
	if len(msgs) > PerAddress {
		msgs = msgs[len(msgs)-PerAddress:]
	}
	b.byTo[k] = msgs
	return nil
}

// Messages returns the messages kept for an address, newest first.
func (b *Box) Messages(to string) []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	msgs := b.byTo[key(to)]
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[len(msgs)-1-i] = m
	}
	return out
}
