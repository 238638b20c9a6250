// Package webhook is the delivery pool: a dispatcher actor that reads due
// entries from the durable outbox and hands them to a fixed set of worker
// actors, each of which makes one signed HTTPS attempt at a time and passes
// its outcome (delivered, rescheduled with backoff, or dead-lettered) to a
// committer actor. Entries the pool commits itself (Publish, SendTest) are
// handed to the dispatcher after their commit; it reads the outbox when
// another event source wakes it (at most every scanGap), when the next
// retry comes due, and every ScanInterval in full. A webhook's entries
// beyond its in-memory queue are parked by key and read again by key, so
// that delivering a backlog costs the same per entry however long it is. The committer records the outcomes of many attempts in one
// synced batch, the same batch that removes or moves their outbox entries,
// and only then does the dispatcher forget the entries, so a crash at any
// point leaves an unrecorded attempt in the outbox to be repeated.
//
// Deliveries use net/http rather than fasthttp's client: its Dialer.Control
// hook sees the address actually dialled, which is where the URL policy is
// enforced again at delivery time (DNS rebinding), its per-request context
// cancels a hung attempt and shutdown alike, and its TLS configuration takes
// a custom root pool for tests while defaulting to the system roots.
package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/actors"
	hook "github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Store is what the pool needs of the store: the outbox it drains, the
// registrations it delivers to, and the delivery history it records. A
// missing webhook, or another partner's, is account.ErrNotFound.
type Store interface {
	DueDeliveries(ctx context.Context, from, now time.Time, skip func(due time.Time, deliveryID, webhookID []byte) bool, fn func(*hook.OutboxEntry) bool) error
	// OutboxEntries reads again entries a scan left in the outbox, by key;
	// NextDue is the due time of the first entry due after a time.
	OutboxEntries(ctx context.Context, keys []store.OutboxKey, fn func(i int, e *hook.OutboxEntry)) error
	NextDue(ctx context.Context, after time.Time) (time.Time, bool, error)
	WebhookByID(ctx context.Context, id string) (*hook.Registration, error)
	FinishAttempts(ctx context.Context, outs []hook.AttemptOutcome) error
	DropDelivery(ctx context.Context, e *hook.OutboxEntry) error
	Publish(ctx context.Context, partnerID string, ev hook.Event) ([]*hook.OutboxEntry, error)
	PublishTo(ctx context.Context, w *hook.Registration, ev hook.Event) (*hook.OutboxEntry, error)
	Webhook(ctx context.Context, partnerID, id string) (*hook.Registration, error)
	// ResendDelivery owes a failed delivery again with its original payload
	// and returns the entry it owed (nil when none: the delivery was not
	// failed, or its retry is imminent) and its history row.
	ResendDelivery(ctx context.Context, partnerID, webhookID, deliveryID string, now time.Time) (*hook.OutboxEntry, *hook.DeliveryRecord, error)
	// CountOutbox counts the deliveries owed, due by now and due later,
	// reading at most limit entries; metrics call it at scrape time.
	CountOutbox(ctx context.Context, now time.Time, limit int) (due, scheduled int, err error)
}

// Pool delivers webhook events. It is safe for concurrent use.
type Pool struct {
	cfg     Config
	store   Store
	policy  hook.Policy
	backoff hook.Backoff
	client  *http.Client
	root    *actor.RootContext
	pid     *actor.PID

	// ctx ends at Stop; it cancels attempts in flight and scans.
	ctx    context.Context
	cancel context.CancelFunc
	// woken coalesces wake-ups: at most one scan request waits in the
	// dispatcher's mailbox however many events are published meanwhile.
	woken    atomic.Bool
	stopTick func()

	// busy counts scans and attempts touching the store, so Stop can wait
	// for them before the caller closes it; stopped refuses new ones.
	mu      sync.Mutex
	stopped bool
	busy    sync.WaitGroup
	once    sync.Once

	stats Stats
}

// Stats are the pool's counters, for metrics and tests. Commits counts the
// synced batches that recorded attempt outcomes; Attempts over Commits is how
// many attempts share one sync. A failed attempt is Retried or, at its last,
// Dead. CommitFailures and ScanFailures count the store's refusals to
// record outcomes and to list or read due entries. Busy, Queued and Parked
// are gauges the dispatcher keeps: workers making an attempt, due entries it
// holds in memory waiting for one, and due entries it left in the outbox
// behind those, remembering their keys.
type Stats struct {
	Attempts       atomic.Int64
	Delivered      atomic.Int64
	Retried        atomic.Int64
	Dead           atomic.Int64
	Commits        atomic.Int64
	CommitFailures atomic.Int64
	ScanFailures   atomic.Int64
	Busy           atomic.Int64
	Queued         atomic.Int64
	Parked         atomic.Int64
}

// Start spawns the dispatcher and its workers and begins the periodic scan;
// the first scan runs at once, resuming whatever a previous process left in
// the outbox.
func Start(sys *actor.ActorSystem, store Store, cfg Config) (*Pool, error) {
	cfg = cfg.withDefaults()
	p := &Pool{
		cfg:     cfg,
		store:   store,
		policy:  hook.Policy{AllowLoopback: cfg.AllowLoopback, Resolver: cfg.Resolver},
		backoff: hook.Backoff{Base: cfg.RetryBase, MaxAttempts: cfg.MaxAttempts, Jitter: cfg.Jitter, Rand: cfg.Rand},
		root:    sys.Root,
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.client = newClient(cfg, p.policy)
	props := actor.PropsFromProducer(func() actor.Actor { return newDispatcher(p) })
	pid, err := sys.Root.SpawnNamed(props, "webhook-dispatcher")
	if err != nil {
		p.cancel()
		return nil, fmt.Errorf("webhook: spawn dispatcher: %w", err)
	}
	p.pid = pid
	p.stopTick = actors.Every(sys.Root, pid, cfg.ScanInterval, scanMsg{full: true})
	p.Wake()
	return p, nil
}

// newClient builds the delivery HTTP client: no proxy (a proxy would hide the
// dialled address from the policy), the policy as the dialer's Control hook,
// no redirects (a 3xx is a failed attempt: following it could lead anywhere).
//
// Deliveries go over HTTP/1.1 with keep-alive, one connection per attempt in
// flight to a host, each kept open for the next: at most PerWebhook
// connections to one webhook's receiver, none opened twice while busy. A
// delivery is one small POST; over HTTP/2 each also paid HPACK, framing and a
// write per frame on both ends, which on two shared cores held a webhook
// storm of 6,000 events/s to 6,500-7,100 deliveries/s at the receiver where
// HTTP/1.1 keeps up with all 7,500 (and the receiver spends less).
func newClient(cfg Config, policy hook.Policy) *http.Client {
	dialer := &net.Dialer{Timeout: cfg.Timeout, Control: policy.Control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     false,
		TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		// Every worker's connection is kept: receivers often share a host,
		// and a TLS handshake costs more than the delivery itself.
		MaxIdleConns:        cfg.PoolSize,
		MaxIdleConnsPerHost: cfg.PoolSize,
		IdleConnTimeout:     90 * time.Second,
	}
	if cfg.TLSConfig != nil {
		tr.TLSClientConfig = cfg.TLSConfig.Clone()
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Wake asks the dispatcher to scan the outbox now (at most every scanGap).
// Event sources that commit EnqueueEvent in their own batch call it after
// the commit.
func (p *Pool) Wake() {
	if p.woken.CompareAndSwap(false, true) {
		p.root.Send(p.pid, scanMsg{})
	}
}

// Publish makes ev durable for every subscribed webhook of the partner and
// hands the entries to the dispatcher.
func (p *Pool) Publish(ctx context.Context, partnerID string, ev hook.Event) error {
	entries, err := p.store.Publish(ctx, partnerID, ev)
	if err != nil {
		return err
	}
	p.arrived(entries...)
	return nil
}

// arrived hands entries the pool committed itself to the dispatcher, which
// then needs no scan to find them. The entries are the dispatcher's from
// then on.
func (p *Pool) arrived(entries ...*hook.OutboxEntry) {
	if len(entries) > 0 {
		p.root.Send(p.pid, &arrivedMsg{entries: entries})
	}
}

// SendTest enqueues a test event (hook.TestEvent with data.test true) for one
// of the partner's webhooks, through the same outbox and workers as real
// events, and returns its delivery ID. Another partner's webhook is
// account.ErrNotFound.
func (p *Pool) SendTest(ctx context.Context, partnerID, webhookID string) (string, error) {
	w, err := p.store.Webhook(ctx, partnerID, webhookID)
	if err != nil {
		return "", err
	}
	now := p.cfg.Now()
	ref := fmt.Sprintf("%s_%d", webhookID, now.UnixNano())
	e, err := p.store.PublishTo(ctx, w, hook.Event{Name: hook.TestEvent, Time: now, Data: hook.TestPayloadData(ref)})
	if err != nil {
		return "", err
	}
	id := e.DeliveryID
	p.arrived(e)
	return id, nil
}

// Resend delivers one of the partner's failed deliveries again, with the
// body and delivery ID of the original, so that it carries the same
// X-Service-Signature and the receiver can deduplicate it: a dead delivery
// gets one more attempt, a retrying one its next attempt now. It returns
// the delivery's history row and whether an attempt was owed; a pending or
// delivered delivery is left as it is (false), so a resend repeated sends
// once. Another partner's webhook or delivery is account.ErrNotFound.
func (p *Pool) Resend(ctx context.Context, partnerID, webhookID, deliveryID string) (*hook.DeliveryRecord, bool, error) {
	e, rec, err := p.store.ResendDelivery(ctx, partnerID, webhookID, deliveryID, p.cfg.Now())
	if err != nil {
		return nil, false, err
	}
	if e != nil {
		p.arrived(e)
	}
	return rec, e != nil, nil
}

// CheckURL applies the pool's URL policy to a URL being registered: the
// same policy its dialer enforces at delivery time, so that a URL accepted
// at registration is refused later only if its host has been re-pointed.
func (p *Pool) CheckURL(ctx context.Context, raw string) error { return p.policy.CheckURL(ctx, raw) }

// Stats returns the pool's counters.
func (p *Pool) Stats() *Stats { return &p.stats }

// Stop cancels attempts in flight (their entries stay in the outbox and are
// retried by the next process), stops the actors and waits until nothing of
// the pool touches the store any more, so the caller may close it. It is
// safe to call more than once.
func (p *Pool) Stop() {
	p.once.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		p.cancel()
		p.stopTick()
		p.root.Stop(p.pid)
		p.busy.Wait()
		p.client.CloseIdleConnections()
	})
}

// enter registers a unit of store work, refusing once Stop has begun.
func (p *Pool) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.busy.Add(1)
	return true
}

func (p *Pool) leave() { p.busy.Done() }

// isShutdown reports whether err is the pool's own cancellation.
func (p *Pool) isShutdown(err error) bool {
	return p.ctx.Err() != nil && (errors.Is(err, context.Canceled) || err == nil)
}
