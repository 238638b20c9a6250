package admin

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/portal"
)

// TestRotateAndDisableEndPortalSessions: over a store that keeps portal
// sessions, a key rotation is dated and ends every session of the partner,
// and so does disabling it, locally and through the admin listener alike;
// another partner's sessions stay.
func TestRotateAndDisableEndPortalSessions(t *testing.T) {
	for name, mk := range map[string]backend{"local": localBackend, "remote": remoteBackend} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			pa, store, _ := mk(t)
			a, err := pa.Create(ctx, CreateRequest{Name: "A", Email: "a@acme.example"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := pa.Create(ctx, CreateRequest{Name: "B", Email: "b@acme.example"})
			if err != nil {
				t.Fatal(err)
			}
			open := func(partnerID string) string {
				_, se, err := portal.NewSession(rand.Reader, partnerID, [32]byte{}, time.Now())
				if err == nil {
					err = store.CreateSession(ctx, se)
				}
				if err != nil {
					t.Fatal(err)
				}
				return se.IDDigest
			}
			alive := func(d string) bool {
				_, err := store.Session(ctx, d)
				if err != nil && !errors.Is(err, account.ErrNotFound) {
					t.Fatal(err)
				}
				return err == nil
			}
			s1, other := open(a.ID), open(b.ID)
			before := time.Now()
			if _, err := pa.RotateKey(ctx, a.ID); err != nil {
				t.Fatal(err)
			}
			if alive(s1) || !alive(other) {
				t.Fatalf("after rotation: partner's session alive %v, other's %v", alive(s1), alive(other))
			}
			if at, err := store.KeyRotatedAt(ctx, a.ID); err != nil || at.Before(before.Add(-time.Second)) {
				t.Fatalf("rotation dated %v (%v)", at, err)
			}
			s2 := open(a.ID)
			if _, err := pa.Disable(ctx, a.ID); err != nil {
				t.Fatal(err)
			}
			if alive(s2) || !alive(other) {
				t.Fatalf("after disable: partner's session alive %v, other's %v", alive(s2), alive(other))
			}
		})
	}
}
