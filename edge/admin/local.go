package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// PartnerStore is the partner storage Local works on; the store's Partners is
// one. UpdatePartner applies fn to a copy of the stored partner and stores
// the result atomically with respect to other updates.
type PartnerStore interface {
	CreatePartner(ctx context.Context, p *account.Partner) error
	ListPartners(ctx context.Context) ([]*account.Partner, error)
	UpdatePartner(ctx context.Context, id string, fn func(*account.Partner) error) (*account.Partner, error)
}

// Local performs partner operations directly on an open store. The CLI uses
// it when no server holds the data directory; the admin listener uses it to
// serve requests.
type Local struct {
	store    PartnerStore
	onChange func(partnerID string)
}

var _ PartnerAdmin = (*Local)(nil)

// NewLocal returns partner operations over store. onChange, if not nil, is
// called with the partner's ID after every successful change, so a running
// server can drop cached authentication for that partner.
func NewLocal(store PartnerStore, onChange func(partnerID string)) *Local {
	return &Local{store: store, onChange: onChange}
}

func (l *Local) changed(id string) {
	if l.onChange != nil {
		l.onChange(id)
	}
}

// Create validates req, applies the defaults, generates a key and stores the
// partner with the key's digest.
func (l *Local) Create(ctx context.Context, req CreateRequest) (CreateResult, error) {
	name, err := validateName(req.Name)
	if err != nil {
		return CreateResult{}, err
	}
	email, err := validateEmail(req.Email)
	if err != nil {
		return CreateResult{}, err
	}
	for _, check := range []error{
		validateFee("swapFeeBps", req.SwapFeeBps),
		validateFee("onrampFeeBps", req.OnrampFeeBps),
		validateLimit("heavyPerMin", req.HeavyPerMin),
		validateLimit("readPerMin", req.ReadPerMin),
	} {
		if check != nil {
			return CreateResult{}, check
		}
	}
	eco, err := validateEcosystems(req.EnabledEcosystems)
	if err != nil {
		return CreateResult{}, err
	}
	key, digest, err := account.NewAPIKey()
	if err != nil {
		return CreateResult{}, fmt.Errorf("create partner: %w", err)
	}
	p := &account.Partner{
		Name:  name,
		Email: email,
		FeeTier: account.FeeTier{
			SwapFeeBps:   valueOr(req.SwapFeeBps, account.AnonymousSwapFeeBps),
			OnrampFeeBps: valueOr(req.OnrampFeeBps, account.AnonymousOnrampFeeBps),
		},
		Limits: account.Limits{
			HeavyPerMin: valueOr(req.HeavyPerMin, account.DefaultHeavyPerMin),
			ReadPerMin:  valueOr(req.ReadPerMin, account.DefaultReadPerMin),
		},
		EnabledEcosystems: eco,
		KeyDigest:         digest,
		WebhooksEnabled:   true,
	}
	if err := l.store.CreatePartner(ctx, p); err != nil {
		return CreateResult{}, fmt.Errorf("create partner: %w", err)
	}
	l.changed(p.ID)
	return CreateResult{ID: p.ID, APIKey: key, Partner: ViewOf(p)}, nil
}

// List returns every partner ordered by ID; never nil, so it encodes as [].
func (l *Local) List(ctx context.Context) ([]PartnerView, error) {
	ps, err := l.store.ListPartners(ctx)
	if err != nil {
		return nil, fmt.Errorf("list partners: %w", err)
	}
	out := make([]PartnerView, 0, len(ps))
	for _, p := range ps {
		out = append(out, ViewOf(p))
	}
	return out, nil
}

// RotateKey generates a new key and swaps the digest index in one batch.
func (l *Local) RotateKey(ctx context.Context, id string) (CreateResult, error) {
	if err := validateID(id); err != nil {
		return CreateResult{}, err
	}
	key, digest, err := account.NewAPIKey()
	if err != nil {
		return CreateResult{}, fmt.Errorf("rotate key: %w", err)
	}
	p, err := l.store.UpdatePartner(ctx, id, func(p *account.Partner) error {
		p.KeyDigest = digest
		return nil
	})
	if err != nil {
		return CreateResult{}, fmt.Errorf("rotate key: %w", err)
	}
	l.changed(id)
	l.endSessions(ctx, id, true)
	return CreateResult{ID: p.ID, APIKey: key, Partner: ViewOf(p)}, nil
}

// PortalSessions is what Local asks of a store that also keeps the partner
// portal's sessions (both stores do): a rotation is dated and, like a
// disable, ends every session of the partner.
type PortalSessions interface {
	EndPartnerSessions(ctx context.Context, partnerID, except string) (int, error)
	RecordKeyRotation(ctx context.Context, partnerID string, at time.Time) error
}

// endSessions ends the partner's portal sessions and, after a rotation,
// dates it, where the store keeps them. Their failure does not fail the
// operation, which is done: a session opened under the old key is refused
// by its own check anyway (package portal), and only the date shown would
// be missing.
func (l *Local) endSessions(ctx context.Context, id string, rotated bool) {
	ps, ok := l.store.(PortalSessions)
	if !ok {
		return
	}
	if rotated {
		_ = ps.RecordKeyRotation(ctx, id, time.Now())
	}
	_, _ = ps.EndPartnerSessions(ctx, id, "")
}

// SetFees changes the fees given.
func (l *Local) SetFees(ctx context.Context, id string, swapBps, onrampBps *int) (PartnerView, error) {
	if err := validateID(id); err != nil {
		return PartnerView{}, err
	}
	if swapBps == nil && onrampBps == nil {
		return PartnerView{}, invalidf("give swapFeeBps, onrampFeeBps or both")
	}
	if err := validateFee("swapFeeBps", swapBps); err != nil {
		return PartnerView{}, err
	}
	if err := validateFee("onrampFeeBps", onrampBps); err != nil {
		return PartnerView{}, err
	}
	return l.update(ctx, "set fees", id, func(p *account.Partner) {
		p.SwapFeeBps = valueOr(swapBps, p.SwapFeeBps)
		p.OnrampFeeBps = valueOr(onrampBps, p.OnrampFeeBps)
	})
}

// SetLimits changes the rate limits given.
func (l *Local) SetLimits(ctx context.Context, id string, heavy, read *int) (PartnerView, error) {
	if err := validateID(id); err != nil {
		return PartnerView{}, err
	}
	if heavy == nil && read == nil {
		return PartnerView{}, invalidf("give heavyPerMin, readPerMin or both")
	}
	if err := validateLimit("heavyPerMin", heavy); err != nil {
		return PartnerView{}, err
	}
	if err := validateLimit("readPerMin", read); err != nil {
		return PartnerView{}, err
	}
	return l.update(ctx, "set limits", id, func(p *account.Partner) {
		p.HeavyPerMin = valueOr(heavy, p.HeavyPerMin)
		p.ReadPerMin = valueOr(read, p.ReadPerMin)
	})
}

// Disable marks the partner disabled.
func (l *Local) Disable(ctx context.Context, id string) (PartnerView, error) {
	if err := validateID(id); err != nil {
		return PartnerView{}, err
	}
	v, err := l.update(ctx, "disable", id, func(p *account.Partner) { p.Disabled = true })
	if err == nil {
		l.endSessions(ctx, id, false)
	}
	return v, err
}

// SetOrigins validates and normalizes origins and replaces the partner's
// allowedOrigins with them. A nil list is refused, so that a caller that
// forgot the field does not clear them; an empty one clears them.
func (l *Local) SetOrigins(ctx context.Context, id string, origins []string) (PartnerView, error) {
	if err := validateID(id); err != nil {
		return PartnerView{}, err
	}
	if origins == nil {
		return PartnerView{}, invalidf("allowedOrigins is required (an empty list clears them)")
	}
	norm, err := account.CheckAllowedOrigins(origins)
	if err != nil {
		return PartnerView{}, invalidf("allowedOrigins: %v", err)
	}
	return l.update(ctx, "set origins", id, func(p *account.Partner) { p.AllowedOrigins = norm })
}

// update applies fn under the store's read-modify-write and notifies.
func (l *Local) update(ctx context.Context, op, id string, fn func(*account.Partner)) (PartnerView, error) {
	p, err := l.store.UpdatePartner(ctx, id, func(p *account.Partner) error {
		fn(p)
		return nil
	})
	if err != nil {
		return PartnerView{}, fmt.Errorf("%s: %w", op, err)
	}
	l.changed(id)
	return ViewOf(p), nil
}
