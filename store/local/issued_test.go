package local

import (
	"math/big"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// issued is an issued quote of route r at now.
func issued(now time.Time, r *quote.Route) *quote.Issued {
	req := &quote.Request{ID: quote.NewID(now), From: &registry.Chain{ID: 42161}, To: &registry.Chain{ID: 8453},
		FromToken:  &registry.Token{Address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"},
		ToToken:    &registry.Token{Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		FromAmount: big.NewInt(1000), FromAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
		ToAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", PartnerID: "ptn_a", Dry: true, Now: now}
	return &quote.Issued{ID: req.ID, Request: req, Route: r, Provider: "aggregator", FeeBps: 25, ExpiresAt: now.Add(quote.TTL)}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
