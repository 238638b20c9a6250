package app

import (
	"context"
	"fmt"

	"github.com/swapgate/swapgate/actors/onrampdesk"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/adapters/moonpay"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// OnrampMoonPay is the live on-ramp provider MoonPay (--onramp-provider).
const OnrampMoonPay = "moonpay"

// MoonPayWebhookPath is where MoonPay is to post its webhooks: outside /v1,
// since MoonPay, not an integrator, calls it. The operator enters
// <public URL>/onramp/webhooks/moonpay in MoonPay's dashboard.
const MoonPayWebhookPath = "/onramp/webhooks/moonpay"

// checkOnrampProvider refuses a live provider in sandbox mode, whose
// on-ramp is the hosted sandbox checkout, and an unknown provider.
func checkOnrampProvider(cfg Config) error {
	switch cfg.OnrampProvider {
	case "":
		return nil
	case OnrampMoonPay:
		if cfg.Mode != ModeLive {
			return fmt.Errorf("app: on-ramp provider %s serves live mode only; sandbox mode's on-ramp is the hosted sandbox checkout", cfg.OnrampProvider)
		}
		return nil
	}
	return fmt.Errorf("app: on-ramp provider %q: want %s or none", cfg.OnrampProvider, OnrampMoonPay)
}

// startLiveOnramp starts the on-ramp desk in live mode on MoonPay: the
// catalogue of the assets MoonPay sells, no delivery (MoonPay delivers),
// orders moved by MoonPay's webhooks at MoonPayWebhookPath and by lookups.
func (a *App) startLiveOnramp(ctx context.Context, cfg Config, reg *registry.Registry) (*edge.ProviderWebhookRoute, error) {
	p, err := moonpay.New(cfg.MoonPay)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	if a.onramp, err = onrampdesk.Start(ctx, a.stores.Onramp, onrampdesk.Options{Catalogue: moonpay.Catalogue(reg), Provider: p,
		LookupInterval: cfg.OnrampLookupInterval, Published: a.hooks.Wake, Owner: a.onrampOwner(), Logger: a.log, Now: cfg.Now}); err != nil {
		return nil, fmt.Errorf("app: start the on-ramp desk: %w", err)
	}
	return &edge.ProviderWebhookRoute{Path: MoonPayWebhookPath, SignatureHeader: moonpay.SignatureHeader, Receiver: a.onramp}, nil
}
