package edge

import (
	"context"
	"io"
	"testing"

	"github.com/swapgate/swapgate/internal/metricstest"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// anyPartner finds one partner for every key, with a read limit of two a
// minute.
type anyPartner struct{}

func (anyPartner) PartnerByKeyDigest(context.Context, [32]byte) (*account.Partner, error) {
	return &account.Partner{ID: "ptn_a", Limits: account.Limits{HeavyPerMin: 100, ReadPerMin: 2}}, nil
}

// TestCacheAndRefusalMetrics: the partner cache misses a key once and hits
// it after; a reference answer is encoded once and served from the cache
// after; the read bucket's refusals are counted by bucket.
func TestCacheAndRefusalMetrics(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	s.auth.finder = anyPartner{}
	key, _, err := account.NewAPIKey()
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"X-API-Key": key}
	for i, want := range []int{200, 200, 429} {
		if got := serve(s, "GET", "/v1/chains", "127.0.0.1:5000", hdr).Response.StatusCode(); got != want {
			t.Fatalf("request %d: status %d, want %d", i, got, want)
		}
	}
	stats := map[string][2]uint64{}
	s.CacheStats(func(cache string, hits, misses uint64) { stats[cache] = [2]uint64{hits, misses} })
	want := map[string][2]uint64{
		"partner_auth": {2, 1}, "ref_chains": {1, 1},
		"ref_tokens": {0, 0}, "ref_gas": {0, 0}, "ref_connections": {0, 0},
	}
	for k, w := range want {
		if stats[k] != w {
			t.Errorf("cache %s: hits and misses %v, want %v", k, stats[k], w)
		}
	}
	if len(stats) != len(want) {
		t.Errorf("caches reported: %v", stats)
	}
	v := metricstest.Values(t, limiterCollector{s.limiter})
	if v[`swapgate_ratelimit_refusals_total{bucket="read"}`] != 1 || v[`swapgate_ratelimit_refusals_total{bucket="heavy"}`] != 0 {
		t.Fatalf("refusals: %v", v)
	}
}
