package storecontract

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/portal"
)

// Portal is the partner portal's sign-in state (edge.PortalStore) and the
// operator's partner edits that set up its partners (admin.PartnerStore).
type Portal interface {
	edge.PortalStore
	admin.PartnerStore
	// PortalCodeKey keys the login codes' digests: portal.CodeKeyLen
	// bytes, the same after a reopen.
	PortalCodeKey() []byte
}

// portalRand is a deterministic random source: bytes counting up from
// seed, so that two draws differ.
func portalRand(seed byte) *bytes.Reader {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return bytes.NewReader(b)
}

// RunPortal holds a Portal implementation to its contract.
func RunPortal(t *testing.T, open Factory[Portal]) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Portal])
	}{
		{"partner by email: case and spaces ignored, oldest enabled first, none not found", func(t *testing.T, h *Handle[Portal]) {
			a := partner("ptn_a", "key-a")
			a.Email = "Ops@Acme.example"
			mustNil(t, "create a", h.Store.CreatePartner(ctx, a))
			b := partner("ptn_b", "key-b")
			b.Email = "ops@acme.example"
			mustNil(t, "create b", h.Store.CreatePartner(ctx, b))
			p, err := h.Store.PartnerByEmail(ctx, "  OPS@acme.EXAMPLE ")
			if err != nil || p.ID != "ptn_a" {
				t.Fatalf("by email: %+v %v, want ptn_a", p, err)
			}
			_, err = h.Store.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error { p.Disabled = true; return nil })
			mustNil(t, "disable", err)
			if p, err := h.Store.PartnerByEmail(ctx, "ops@acme.example"); err != nil || p.ID != "ptn_b" {
				t.Fatalf("by email with the oldest disabled: %+v %v, want ptn_b", p, err)
			}
			for _, e := range []string{"nobody@acme.example", ""} {
				if _, err := h.Store.PartnerByEmail(ctx, e); !errors.Is(err, account.ErrNotFound) {
					t.Fatalf("by email %q: %v, want ErrNotFound", e, err)
				}
			}
		}},
		{"a login code is replaced, checked once under its lock, and survives a crash", func(t *testing.T, h *Handle[Portal]) {
			if err := h.Store.UpdateLoginCode(ctx, "a@b.co", func(*portal.LoginCode) error { t.Fatal("fn called"); return nil }); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("update of no code: %v", err)
			}
			_, first, err := portal.NewCode(portalRand(1), h.Store.PortalCodeKey(), "A@b.co", "ptn_a", t0)
			mustNil(t, "draw", err)
			mustNil(t, "put first", h.Store.PutLoginCode(ctx, first))
			code, c, err := portal.NewCode(portalRand(2), h.Store.PortalCodeKey(), "a@b.co", "ptn_a", t0.Add(time.Minute))
			mustNil(t, "draw", err)
			mustNil(t, "put second", h.Store.PutLoginCode(ctx, c))
			// A wrong try is kept although the check failed.
			err = h.Store.UpdateLoginCode(ctx, "a@B.co", func(c *portal.LoginCode) error {
				return c.Check(h.Store.PortalCodeKey(), "xxxxxx", t0.Add(time.Minute))
			})
			if !errors.Is(err, portal.ErrWrongCode) {
				t.Fatalf("wrong code: %v", err)
			}
			s := h.Store
			if h.Crash != nil {
				s = h.Crash(t)
			}
			// Many browsers sending the right code at once: one signs in.
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok := 0
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if s.UpdateLoginCode(ctx, "a@b.co", func(c *portal.LoginCode) error { return c.Check(s.PortalCodeKey(), code, t0.Add(2*time.Minute)) }) == nil {
						mu.Lock()
						ok++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if ok != 1 {
				t.Fatalf("%d checks of one code passed, want 1", ok)
			}
			var got portal.LoginCode
			mustNil(t, "read", s.UpdateLoginCode(ctx, "a@b.co", func(c *portal.LoginCode) error { got = *c; return nil }))
			if !got.Used || got.Tries != 1 || got.PartnerID != "ptn_a" || got.Email != "a@b.co" || !got.ExpiresAt.Equal(c.ExpiresAt) || got.Digest != c.Digest {
				t.Fatalf("stored code %+v, want used with 1 try, as issued", got)
			}
		}},
		{"a stored code's digest is keyed with the store's code key, which a reopen keeps", func(t *testing.T, h *Handle[Portal]) {
			key := h.Store.PortalCodeKey()
			if len(key) < portal.CodeKeyLen || bytes.Equal(key, make([]byte, len(key))) {
				t.Fatalf("code key of %d bytes: %x", len(key), key)
			}
			code, c, err := portal.NewCode(portalRand(3), key, "k@b.co", "ptn_a", t0)
			mustNil(t, "draw", err)
			mustNil(t, "put", h.Store.PutLoginCode(ctx, c))
			s := h.Store
			if h.Crash != nil {
				s = h.Crash(t)
			}
			if !bytes.Equal(s.PortalCodeKey(), key) {
				t.Fatal("the code key changed across a reopen: every code issued before it fails")
			}
			var got portal.LoginCode
			mustNil(t, "read", s.UpdateLoginCode(ctx, "k@b.co", func(c *portal.LoginCode) error { got = *c; return nil }))
			for name, plain := range map[string][32]byte{"SHA-256 of the code": sha256.Sum256([]byte(code)),
				"SHA-256 of address and code": sha256.Sum256([]byte("k@b.co\x00" + code))} {
				if got.Digest == plain {
					t.Fatalf("the stored digest is the %s: reading the store gives the code away", name)
				}
			}
			if got.Digest != portal.CodeDigest(key, "k@b.co", code) {
				t.Fatal("the stored digest is not the code's under the store's key")
			}
		}},
		{"sign-in counters: zero when new, kept as fn left them, untouched when fn fails, one count at a time", func(t *testing.T, h *Handle[Portal]) {
			keys := []string{"k1", "k2"}
			mustNil(t, "first", h.Store.UpdateSignInCounts(ctx, t0, keys, func(cs []portal.Counter) error {
				if len(cs) != 2 || cs[0] != (portal.Counter{}) || cs[1] != (portal.Counter{}) {
					t.Fatalf("new counters %+v", cs)
				}
				cs[0], cs[1] = portal.Counter{Start: t0, N: 1}, portal.Counter{Start: t0, N: 7}
				return nil
			}))
			refused := errors.New("refused")
			if err := h.Store.UpdateSignInCounts(ctx, t0, []string{"k2", "k3"}, func(cs []portal.Counter) error {
				if !cs[0].Start.Equal(t0) || cs[0].N != 7 || cs[1] != (portal.Counter{}) {
					t.Fatalf("counters %+v", cs)
				}
				cs[0].N, cs[1].N = 100, 100
				return refused
			}); !errors.Is(err, refused) {
				t.Fatalf("fn's error: %v", err)
			}
			mustNil(t, "read", h.Store.UpdateSignInCounts(ctx, t0, []string{"k3", "k2", "k1"}, func(cs []portal.Counter) error {
				if cs[0] != (portal.Counter{}) || cs[1].N != 7 || cs[2].N != 1 || !cs[2].Start.Equal(t0) {
					t.Fatalf("after a refused update %+v", cs)
				}
				return nil
			}))
			// Many requests at once under a limit of 5: five pass.
			limits := []portal.Limit{{Key: "busy", Max: 5}, {Key: "k1", Max: 1000}}
			var wg sync.WaitGroup
			var mu sync.Mutex
			passed := 0
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := h.Store.UpdateSignInCounts(ctx, t0, []string{"busy", "k1"}, func(cs []portal.Counter) error {
						if !portal.Take(cs, limits, t0) {
							return refused
						}
						return nil
					})
					if err == nil {
						mu.Lock()
						passed++
						mu.Unlock()
					} else if !errors.Is(err, refused) {
						t.Errorf("take: %v", err)
					}
				}()
			}
			wg.Wait()
			if passed != 5 {
				t.Fatalf("%d of 16 concurrent requests passed a limit of 5", passed)
			}
		}},
		{"sessions: create, read, update, end all but one, delete, crash", func(t *testing.T, h *Handle[Portal]) {
			var ids []*portal.Session
			for i := range 3 {
				_, se, err := portal.NewSession(portalRand(byte(10+i)), "ptn_a", digest("key-a"), t0)
				mustNil(t, "draw", err)
				mustNil(t, "create", h.Store.CreateSession(ctx, se))
				ids = append(ids, se)
			}
			_, other, _ := portal.NewSession(portalRand(40), "ptn_b", digest("key-b"), t0)
			mustNil(t, "create other", h.Store.CreateSession(ctx, other))
			got, err := h.Store.Session(ctx, ids[0].IDDigest)
			if err != nil || got.PartnerID != "ptn_a" || got.CSRF != ids[0].CSRF || got.KeyFingerprint != ids[0].KeyFingerprint || !got.LastSeen.Equal(t0) {
				t.Fatalf("read %+v %v", got, err)
			}
			mustNil(t, "update", h.Store.UpdateSession(ctx, ids[0].IDDigest, func(s *portal.Session) {
				s.LastSeen, s.KeyFingerprint = t0.Add(time.Hour), "fp2"
			}))
			if err := h.Store.UpdateSession(ctx, portal.SessionDigest("nope"), func(*portal.Session) {}); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("update of none: %v", err)
			}
			s := h.Store
			if h.Crash != nil {
				s = h.Crash(t)
			}
			got, err = s.Session(ctx, ids[0].IDDigest)
			if err != nil || !got.LastSeen.Equal(t0.Add(time.Hour)) || got.KeyFingerprint != "fp2" {
				t.Fatalf("after update and crash %+v %v", got, err)
			}
			n, err := s.EndPartnerSessions(ctx, "ptn_a", ids[1].IDDigest)
			if err != nil || n != 2 {
				t.Fatalf("end sessions: %d %v, want 2", n, err)
			}
			for i, se := range ids {
				_, err := s.Session(ctx, se.IDDigest)
				if (i == 1) != (err == nil) || (err != nil && !errors.Is(err, account.ErrNotFound)) {
					t.Fatalf("session %d after ending all but 1: %v", i, err)
				}
			}
			if _, err := s.Session(ctx, other.IDDigest); err != nil {
				t.Fatalf("another partner's session ended: %v", err)
			}
			mustNil(t, "delete", s.DeleteSession(ctx, ids[1].IDDigest))
			mustNil(t, "delete again", s.DeleteSession(ctx, ids[1].IDDigest))
			if _, err := s.Session(ctx, ids[1].IDDigest); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("deleted session: %v", err)
			}
			if n, err := s.EndPartnerSessions(ctx, "ptn_a", ""); err != nil || n != 0 {
				t.Fatalf("end of none: %d %v", n, err)
			}
			if n, err := s.EndPartnerSessions(ctx, "ptn_b", ""); err != nil || n != 1 {
				t.Fatalf("end all of ptn_b: %d %v", n, err)
			}
		}},
		{"key rotation date: zero until recorded, then the latest", func(t *testing.T, h *Handle[Portal]) {
			at, err := h.Store.KeyRotatedAt(ctx, "ptn_a")
			if err != nil || !at.IsZero() {
				t.Fatalf("before: %v %v", at, err)
			}
			mustNil(t, "record", h.Store.RecordKeyRotation(ctx, "ptn_a", t0))
			mustNil(t, "record again", h.Store.RecordKeyRotation(ctx, "ptn_a", t0.Add(time.Hour)))
			s := h.Store
			if h.Crash != nil {
				s = h.Crash(t)
			}
			if at, err := s.KeyRotatedAt(ctx, "ptn_a"); err != nil || !at.Equal(t0.Add(time.Hour)) {
				t.Fatalf("after: %v %v", at, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t)
			tc.run(t, &h)
		})
	}
}
