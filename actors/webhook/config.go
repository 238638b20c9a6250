package webhook

import (
	"crypto/tls"
	"log/slog"
	"time"

	hook "github.com/swapgate/swapgate/routing/domain/webhook"
)

// Defaults of the pool. An attempt that gets no answer within 5 seconds has
// failed (receivers are asked to answer within that time). Retries are read
// from the outbox when they come due; the periodic full scan, every second,
// finds entries committed too late for the wake-up scans (see floorMargin)
// and those a failed commit left behind.
const (
	// DefaultPoolSize workers make at most as many attempts at once. With
	// the in-flight caps derived from it (a partner half of them, a webhook
	// half of its partner's: 32 and 16), one busy webhook whose receiver
	// answers in a millisecond or two can take thousands of deliveries a
	// second, while receivers that hang hold at most half the pool. A worker
	// waiting on its receiver costs a goroutine.
	DefaultPoolSize     = 64
	DefaultTimeout      = 5 * time.Second
	DefaultScanInterval = time.Second
	DefaultScanBatch    = 1024
	// DefaultQueuePerWebhook bounds how many of one webhook's due entries
	// the dispatcher holds in memory. Entries beyond it stay in the outbox,
	// the dispatcher remembering only their keys (up to parkFactor ×
	// ScanBatch of them) and reading each again by its key as the queue
	// drains, so that a scan reads a backlog once, and reads past it to
	// everyone else's entries: a backlog behind one dead receiver sits in
	// the outbox without crowding out anyone else.
	DefaultQueuePerWebhook = 64
	// DefaultCommitBatch bounds how many attempt outcomes one synced batch
	// carries.
	DefaultCommitBatch = 256
	// scanExamineFactor bounds the entries one scan reads, as a multiple of
	// ScanBatch, so a huge backlog costs bounded work per scan.
	scanExamineFactor = 8
	// parkFactor bounds the keys of due entries the dispatcher remembers
	// while leaving the entries in the outbox, as a multiple of ScanBatch:
	// 64 Ki keys, about 6 MiB, by default, a quarter of them at most for
	// one webhook.
	parkFactor = 64
)

// Config tunes the delivery pool. The zero value of each field means its
// default.
type Config struct {
	// PoolSize is the number of worker actors, i.e. concurrent attempts.
	PoolSize int
	// RetryBase, MaxAttempts and Jitter are the retry schedule (see
	// routing/domain/webhook.Backoff). A negative Jitter disables it.
	RetryBase   time.Duration
	MaxAttempts int
	Jitter      float64
	// Timeout bounds one attempt: connect, TLS, request and response
	// headers. The specification gives receivers 5 seconds.
	Timeout time.Duration
	// PerWebhook and PerPartner cap attempts in flight to one webhook and
	// to one partner's webhooks. They default to max(1, PerPartner/2) and
	// max(1, PoolSize/2), so a partner whose receivers hang occupies at most
	// half the pool, whatever its backlog, and the rest keeps flowing, and
	// one webhook half of its partner's share: deliveries to one receiver
	// run at most PerWebhook / its answer time per second.
	PerWebhook int
	PerPartner int
	// ScanInterval is how often the whole outbox is scanned for due
	// entries no wake-up announced: entries committed after later ones
	// were scanned, and those of a failed commit. Retries are scanned when
	// they come due, new events when they are published.
	ScanInterval time.Duration
	// ScanBatch bounds the due entries held in memory at once.
	ScanBatch int
	// QueuePerWebhook bounds the due entries of one webhook held in
	// memory (see DefaultQueuePerWebhook).
	QueuePerWebhook int
	// CommitBatch bounds the attempt outcomes one synced batch records.
	CommitBatch int
	// AllowLoopback admits loopback receivers (--allow-loopback-webhooks).
	AllowLoopback bool
	// TLSConfig is the client TLS configuration; nil verifies against the
	// system roots (which honour SSL_CERT_FILE). Tests set RootCAs to their
	// receiver's certificate.
	TLSConfig *tls.Config
	// Resolver resolves names when a URL is checked at registration (the
	// composition root passes routing/adapters/netresolve's, the system's);
	// nil refuses every host name as unresolvable, judging only address
	// literals. Delivery-time checks see the dialled address itself.
	Resolver hook.Resolver
	Logger   *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rand feeds the retry jitter; nil means math/rand/v2.
	Rand func() float64
}

func (c Config) withDefaults() Config {
	if c.PoolSize <= 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.RetryBase <= 0 {
		c.RetryBase = hook.DefaultRetryBase
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = hook.DefaultMaxAttempts
	}
	switch {
	case c.Jitter == 0:
		c.Jitter = hook.DefaultJitter
	case c.Jitter < 0:
		c.Jitter = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.PerPartner <= 0 {
		c.PerPartner = max(1, c.PoolSize/2)
	}
	if c.PerWebhook <= 0 {
		c.PerWebhook = max(1, c.PerPartner/2)
	}
	if c.ScanInterval <= 0 {
		c.ScanInterval = DefaultScanInterval
	}
	if c.ScanBatch <= 0 {
		c.ScanBatch = DefaultScanBatch
	}
	if c.QueuePerWebhook <= 0 {
		c.QueuePerWebhook = DefaultQueuePerWebhook
	}
	if c.CommitBatch <= 0 {
		c.CommitBatch = DefaultCommitBatch
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
