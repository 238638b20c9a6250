// Package admin is the operator's control plane for partner accounts.
//
// The operations live behind one interface, PartnerAdmin, with two
// implementations: Local works directly on an open store (either backend), and
// Client talks to the admin listener of a running server. The operator CLI
// needs both because Pebble allows one process per data directory: when
// `swapgate serve` holds the directory, the CLI cannot open the store and goes
// through the listener instead, and the server sees every change at once
// (its auth cache is invalidated through the OnChange callback).
//
// The admin listener (Server) binds to loopback only, on a random port, and
// requires a bearer token. It advertises itself in <dataDir>/admin.json, mode
// 0600, so only a user who can read the data directory can find and use it.
// API keys appear in responses of create and rotate-key only, and are never
// logged or stored; the store keeps their SHA-256 digests.
package admin

import (
	"context"
	"errors"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
)

var (
	// ErrInvalid marks a request that fails validation. The CLI reports it
	// as a usage error.
	ErrInvalid = errors.New("invalid request")
	// ErrUnauthorized means the admin listener refused the bearer token.
	ErrUnauthorized = errors.New("admin token refused")
	// ErrUnreachable means the admin listener could not be reached.
	ErrUnreachable = errors.New("admin listener unreachable")
	// ErrNoListener means no admin.json advertises a listener for the data
	// directory.
	ErrNoListener = errors.New("no admin listener advertised")
)

// PartnerAdmin is the set of partner operations an operator can perform. It
// is declared here, where both the CLI and the admin listener consume it.
type PartnerAdmin interface {
	// Create provisions a partner and returns its first API key.
	Create(ctx context.Context, req CreateRequest) (CreateResult, error)
	// List returns every partner, without keys or digests.
	List(ctx context.Context) ([]PartnerView, error)
	// RotateKey replaces a partner's API key; the old key stops working at
	// once.
	RotateKey(ctx context.Context, id string) (CreateResult, error)
	// SetFees changes the fee terms given; nil leaves a fee as it is.
	SetFees(ctx context.Context, id string, swapBps, onrampBps *int) (PartnerView, error)
	// SetLimits changes the per-minute rate limits given; nil leaves a limit
	// as it is.
	SetLimits(ctx context.Context, id string, heavy, read *int) (PartnerView, error)
	// Disable stops a partner's key from authenticating. It is idempotent.
	Disable(ctx context.Context, id string) (PartnerView, error)
	// SetOrigins replaces the browser origins whose pages may call the API
	// with the partner's key (account.CheckAllowedOrigins); an empty,
	// non-nil list clears them.
	SetOrigins(ctx context.Context, id string, origins []string) (PartnerView, error)
}

// CreateRequest describes a new partner. Nil or empty optional fields take the
// defaults of the account model (package account).
type CreateRequest struct {
	Name              string   `json:"name"`
	Email             string   `json:"email"`
	SwapFeeBps        *int     `json:"swapFeeBps,omitempty"`
	OnrampFeeBps      *int     `json:"onrampFeeBps,omitempty"`
	HeavyPerMin       *int     `json:"heavyPerMin,omitempty"`
	ReadPerMin        *int     `json:"readPerMin,omitempty"`
	EnabledEcosystems []string `json:"enabledEcosystems,omitempty"`
}

// CreateResult is the answer to Create and RotateKey: the only place an API
// key is ever shown.
type CreateResult struct {
	ID      string      `json:"id"`
	APIKey  string      `json:"apiKey"`
	Partner PartnerView `json:"partner"`
}

// PartnerView is a partner as shown to the operator. It mirrors the public
// profile (feeTier, rateLimit.requestsPerMinute) and adds the operator-only
// fields; it has no key or digest by construction.
type PartnerView struct {
	ID                string    `json:"id"`
	Name              string    `json:"name"`
	Email             string    `json:"email"`
	FeeTier           FeeTier   `json:"feeTier"`
	RateLimit         RateLimit `json:"rateLimit"`
	EnabledEcosystems []string  `json:"enabledEcosystems"`
	WebhooksEnabled   bool      `json:"webhooksEnabled"`
	AllowedOrigins    []string  `json:"allowedOrigins"`
	Disabled          bool      `json:"disabled"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
}

// FeeTier is a partner's fee terms in basis points.
type FeeTier struct {
	SwapFeeBps   int `json:"swapFeeBps"`
	OnrampFeeBps int `json:"onrampFeeBps"`
}

// RateLimit is a partner's per-minute limits. RequestsPerMinute repeats the
// heavy figure because that is what the public profile reports.
type RateLimit struct {
	RequestsPerMinute int `json:"requestsPerMinute"`
	HeavyPerMinute    int `json:"heavyPerMinute"`
	ReadPerMinute     int `json:"readPerMinute"`
}

// ViewOf converts a stored partner to its operator view.
func ViewOf(p *account.Partner) PartnerView {
	eco := p.EnabledEcosystems
	if eco == nil {
		eco = []string{}
	}
	return PartnerView{
		ID:                p.ID,
		Name:              p.Name,
		Email:             p.Email,
		FeeTier:           FeeTier{SwapFeeBps: p.SwapFeeBps, OnrampFeeBps: p.OnrampFeeBps},
		RateLimit:         RateLimit{RequestsPerMinute: p.HeavyPerMin, HeavyPerMinute: p.HeavyPerMin, ReadPerMinute: p.ReadPerMin},
		EnabledEcosystems: append([]string(nil), eco...),
		WebhooksEnabled:   p.WebhooksEnabled,
		AllowedOrigins:    append([]string{}, p.AllowedOrigins...),
		Disabled:          p.Disabled,
		CreatedAt:         p.CreatedAt,
		UpdatedAt:         p.UpdatedAt,
	}
}
