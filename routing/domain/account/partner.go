package account

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
)

// Policy constants of the account model. Each exists here once; the quote
// engine, the operator CLI and the store all read them from here.
const (
	// AnonymousSwapFeeBps is the swap fee of the anonymous tier, and the fee
	// a new partner gets unless the operator sets another.
	AnonymousSwapFeeBps = 30
	// AnonymousOnrampFeeBps is the on-ramp fee of the anonymous tier, and a
	// new partner's default.
	AnonymousOnrampFeeBps = 150
	// MaxFeeBps is the platform maximum of a partner fee. The operator CLI
	// refuses fees above it; a partner stored above it (an older record) has
	// its quotes refused with PARTNER_FEE_EXCEEDS_MAX.
	MaxFeeBps = 500
	// AnonymousHeavyPerMin and AnonymousReadPerMin are the anonymous tier's
	// limits per client IP on heavy and read endpoints per 60-second window
	// (the operator may change them for a deployment).
	AnonymousHeavyPerMin = 30
	AnonymousReadPerMin  = 240
	// DefaultHeavyPerMin is a partner key's default limit on heavy
	// endpoints (quote, routes, execute, status) per 60-second window.
	DefaultHeavyPerMin = 2000
	// DefaultReadPerMin is a partner key's default limit on read endpoints
	// (reference data, ping, the partner endpoints) per window.
	DefaultReadPerMin = 6000
	// MaxPerMin bounds a configurable limit: far above any real load, low
	// enough that window arithmetic never overflows.
	MaxPerMin = 1_000_000_000
)

// FeeTier is the fee terms the operator set for a partner, in basis points.
type FeeTier struct {
	SwapFeeBps   int
	OnrampFeeBps int
}

// CheckFeeBps refuses a fee outside 0 to MaxFeeBps.
func CheckFeeBps(bps int) error {
	if bps < 0 || bps > MaxFeeBps {
		return fmt.Errorf("must be between 0 and %d bps (the platform maximum), got %d", MaxFeeBps, bps)
	}
	return nil
}

// Limits are a partner key's requests per 60-second window in each bucket.
type Limits struct {
	HeavyPerMin int
	ReadPerMin  int
}

// CheckPerMin refuses a per-minute limit outside 1 to MaxPerMin.
func CheckPerMin(n int) error {
	if n <= 0 || n > MaxPerMin {
		return fmt.Errorf("must be between 1 and %d, got %d", MaxPerMin, n)
	}
	return nil
}

// Partner is an operator-provisioned account. KeyDigest is the SHA-256 of
// its current API key; the key itself is never kept.
type Partner struct {
	ID    string
	Name  string
	Email string
	FeeTier
	Limits
	// EnabledEcosystems are the fee ecosystems the partner may quote in.
	EnabledEcosystems []string
	// KeyDigest is excluded from JSON so that no accidental marshalling of
	// a Partner can publish it.
	KeyDigest       [32]byte `json:"-"`
	Disabled        bool
	WebhooksEnabled bool
	// AllowedOrigins are the browser origins (scheme://host[:port], as
	// CheckAllowedOrigins normalizes them) whose pages may call the API with
	// this partner's key; none means no page may.
	AllowedOrigins []string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Clone returns a deep copy, so that holders never alias one another's
// state.
func (p *Partner) Clone() *Partner {
	c := *p
	c.EnabledEcosystems = slices.Clone(p.EnabledEcosystems)
	c.AllowedOrigins = slices.Clone(p.AllowedOrigins)
	return &c
}

// AllowsOrigin reports whether a page of origin, as the browser's Origin
// header names it, may call the API with the partner's key.
func (p *Partner) AllowsOrigin(origin string) bool {
	return slices.Contains(p.AllowedOrigins, origin)
}

// Enabled reports whether the partner may quote in ecosystem.
func (p *Partner) Enabled(ecosystem string) bool {
	return slices.Contains(p.EnabledEcosystems, ecosystem)
}

// partnerIDPrefix starts generated partner IDs.
const partnerIDPrefix = "ptn_"

// NewPartnerID returns a fresh random partner ID, "ptn_" and 24 hex digits.
func NewPartnerID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("account: generate partner id: %w", err)
	}
	return partnerIDPrefix + hex.EncodeToString(b[:]), nil
}

// MaxIDLen bounds identifiers so that they stay cheap as storage key
// components.
const MaxIDLen = 64

// ValidID reports whether id is a well-formed identifier: 1 to 64
// characters from [A-Za-z0-9_-]. Every identifier the service generates
// (partner, quote, webhook, delivery, batch) has this shape, which is what
// lets storage end a key component with '/' unambiguously.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
