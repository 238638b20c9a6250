package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's partner tests (store/pebble/partner_test.go), run
// against PostgreSQL: the same cases, the same expectations.

func newPartner(id, key string) *account.Partner {
	return &account.Partner{
		ID:                id,
		Name:              "Acme " + id,
		Email:             "ops@acme.example",
		FeeTier:           account.FeeTier{SwapFeeBps: account.AnonymousSwapFeeBps, OnrampFeeBps: account.AnonymousOnrampFeeBps},
		Limits:            account.Limits{HeavyPerMin: account.DefaultHeavyPerMin, ReadPerMin: account.DefaultReadPerMin},
		EnabledEcosystems: account.Ecosystems(),
		KeyDigest:         digestOf(key),
		WebhooksEnabled:   true,
	}
}

func TestPartnerLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	db := newTestDB(t)
	s := db.open(t, Options{Now: clock.Now})

	p := newPartner("", "key-a")
	if err := s.CreatePartner(ctx, p); err != nil {
		t.Fatalf("CreatePartner: %v", err)
	}
	if !account.ValidID(p.ID) || p.ID[:4] != "ptn_" {
		t.Fatalf("generated id %q", p.ID)
	}
	if !p.CreatedAt.Equal(clock.Now()) || !p.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("timestamps = %v, %v", p.CreatedAt, p.UpdatedAt)
	}

	got, err := s.Partner(ctx, p.ID)
	if err != nil {
		t.Fatalf("Partner: %v", err)
	}
	assertSamePartner(t, got, p)

	byKey, err := s.PartnerByKeyDigest(ctx, digestOf("key-a"))
	if err != nil {
		t.Fatalf("PartnerByKeyDigest: %v", err)
	}
	assertSamePartner(t, byKey, p)

	clock.Advance(time.Minute)
	rotated, err := s.UpdatePartner(ctx, p.ID, func(q *account.Partner) error {
		q.KeyDigest = digestOf("key-b")
		q.SwapFeeBps = 45
		return nil
	})
	if err != nil {
		t.Fatalf("UpdatePartner: %v", err)
	}
	if rotated.SwapFeeBps != 45 || !rotated.UpdatedAt.Equal(clock.Now()) || !rotated.CreatedAt.Equal(p.CreatedAt) {
		t.Fatalf("updated partner = %+v", rotated)
	}
	if _, err := s.PartnerByKeyDigest(ctx, digestOf("key-a")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("old digest after rotation: %v, want store.ErrNotFound", err)
	}
	if q, err := s.PartnerByKeyDigest(ctx, digestOf("key-b")); err != nil || q.ID != p.ID {
		t.Fatalf("new digest after rotation: %v, %v", q, err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = db.open(t, Options{})
	reopened, err := s.Partner(ctx, p.ID)
	if err != nil {
		t.Fatalf("Partner after reopen: %v", err)
	}
	assertSamePartner(t, reopened, rotated)
	if _, err := s.PartnerByKeyDigest(ctx, digestOf("key-b")); err != nil {
		t.Fatalf("digest index after reopen: %v", err)
	}
}

func assertSamePartner(t *testing.T, got, want *account.Partner) {
	t.Helper()
	if got.ID != want.ID || got.Name != want.Name || got.Email != want.Email ||
		got.SwapFeeBps != want.SwapFeeBps || got.OnrampFeeBps != want.OnrampFeeBps ||
		got.HeavyPerMin != want.HeavyPerMin || got.ReadPerMin != want.ReadPerMin ||
		!slices.Equal(got.EnabledEcosystems, want.EnabledEcosystems) ||
		got.KeyDigest != want.KeyDigest || got.Disabled != want.Disabled ||
		got.WebhooksEnabled != want.WebhooksEnabled ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Fatalf("partner mismatch:\n got  %+v\n want %+v", got, want)
	}
}

func TestListPartnersOrderedByID(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	ids := []string{"ptn_c", "ptn_a", "ptn_b", "ptn_a-2"}
	for _, id := range ids {
		if err := s.CreatePartner(ctx, newPartner(id, "key-"+id)); err != nil {
			t.Fatalf("CreatePartner(%s): %v", id, err)
		}
	}
	list, err := s.ListPartners(ctx)
	if err != nil {
		t.Fatalf("ListPartners: %v", err)
	}
	var got []string
	for _, p := range list {
		got = append(got, p.ID)
	}
	want := []string{"ptn_a", "ptn_a-2", "ptn_b", "ptn_c"}
	if !slices.Equal(got, want) {
		t.Fatalf("ListPartners ids = %v, want %v", got, want)
	}
}

func TestListPartnersEmpty(t *testing.T) {
	s := openTest(t, Options{})
	list, err := s.ListPartners(context.Background())
	if err != nil || len(list) != 0 {
		t.Fatalf("ListPartners on empty store = %v, %v", list, err)
	}
}

func TestCreatePartnerErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if err := s.CreatePartner(ctx, newPartner("ptn_one", "k1")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		p       *account.Partner
		wantErr error
	}{
		{"duplicate id", newPartner("ptn_one", "k2"), store.ErrExists},
		{"duplicate digest", newPartner("ptn_two", "k1"), store.ErrExists},
		{"slash in id", newPartner("ptn/x", "k3"), nil},
		{"long id", newPartner(string(make([]byte, 65)), "k4"), nil},
		{"zero digest", &account.Partner{ID: "ptn_z", Name: "z"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CreatePartner(ctx, tt.p)
			if err == nil {
				t.Fatal("CreatePartner succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
		})
	}
	list, err := s.ListPartners(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("failed creates left records behind: %d, %v", len(list), err)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.Partner(ctx, "ptn_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Partner = %v", err)
	}
	if _, err := s.Partner(ctx, "../etc"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Partner with invalid id = %v", err)
	}
	if _, err := s.PartnerByKeyDigest(ctx, digestOf("nope")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PartnerByKeyDigest = %v", err)
	}
	_, err := s.UpdatePartner(ctx, "ptn_missing", func(*account.Partner) error { return nil })
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdatePartner = %v", err)
	}
}

func TestUpdatePartnerRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	for _, id := range []string{"ptn_a", "ptn_b"} {
		if err := s.CreatePartner(ctx, newPartner(id, "key-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	errAbort := errors.New("abort")
	tests := []struct {
		name    string
		fn      func(*account.Partner) error
		wantErr error
	}{
		{"fn error", func(p *account.Partner) error { p.Name = "changed"; return errAbort }, errAbort},
		{"id change", func(p *account.Partner) error { p.ID = "ptn_c"; return nil }, nil},
		{"createdAt change", func(p *account.Partner) error { p.CreatedAt = p.CreatedAt.Add(time.Hour); return nil }, nil},
		{"digest taken", func(p *account.Partner) error { p.KeyDigest = digestOf("key-ptn_b"); return nil }, store.ErrExists},
		{"zero digest", func(p *account.Partner) error { p.KeyDigest = [32]byte{}; return nil }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.UpdatePartner(ctx, "ptn_a", tt.fn)
			if err == nil {
				t.Fatal("UpdatePartner succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
		})
	}
	p, err := s.Partner(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Acme ptn_a" || p.KeyDigest != digestOf("key-ptn_a") {
		t.Fatalf("refused updates changed the record: %+v", p)
	}
	if _, err := s.PartnerByKeyDigest(ctx, digestOf("key-ptn_a")); err != nil {
		t.Fatalf("refused update broke the index: %v", err)
	}
}

func TestUpdatePartnerConcurrentNoLostUpdates(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	p := newPartner("ptn_c", "k")
	p.HeavyPerMin = 0
	if err := s.CreatePartner(ctx, p); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.UpdatePartner(ctx, "ptn_c", func(q *account.Partner) error {
				q.HeavyPerMin++
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := s.Partner(ctx, "ptn_c")
	if err != nil {
		t.Fatal(err)
	}
	if got.HeavyPerMin != n {
		t.Fatalf("HeavyPerMin = %d after %d increments", got.HeavyPerMin, n)
	}
}

func TestReturnedPartnersDoNotAlias(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if err := s.CreatePartner(ctx, newPartner("ptn_x", "k")); err != nil {
		t.Fatal(err)
	}
	a, err := s.Partner(ctx, "ptn_x")
	if err != nil {
		t.Fatal(err)
	}
	a.EnabledEcosystems[0] = "mutated"
	var first string
	if _, err := s.UpdatePartner(ctx, "ptn_x", func(q *account.Partner) error {
		first = q.EnabledEcosystems[0]
		q.EnabledEcosystems = append(q.EnabledEcosystems[:0], "near")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if first != "evm" {
		t.Fatalf("a caller's mutation reached the store: first ecosystem %q", first)
	}
	b, err := s.Partner(ctx, "ptn_x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.EnabledEcosystems, []string{"near"}) {
		t.Fatalf("ecosystems = %v", b.EnabledEcosystems)
	}
}

// TestOnPartnerChange: a node hears of every partner change made by
// another (a creation, an update), and is told that anything may have
// changed when it listens again after losing its connection.
func TestOnPartnerChange(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	heard := make(chan string, 16)
	b.OnPartnerChange(func(id string) { heard <- id })
	waitListening(t, b)
	drain := func() {
		for {
			select {
			case <-heard:
			default:
				return
			}
		}
	}
	drain()
	// expect waits for want; an "" heard before it (the store's first
	// listening may be told after drain) is passed over when want is an ID.
	expect := func(want string) {
		t.Helper()
		for {
			select {
			case got := <-heard:
				if got == "" && want != "" {
					continue
				}
				if got != want {
					t.Fatalf("heard %q, want %q", got, want)
				}
				return
			case <-time.After(5 * time.Second):
				t.Fatalf("heard nothing, want %q", want)
			}
		}
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"create", func() error { return a.CreatePartner(ctx, newPartner("ptn_w", "key-w")) }},
		{"rotate", func() error {
			_, err := a.UpdatePartner(ctx, "ptn_w", func(p *account.Partner) error { p.KeyDigest = digestOf("key-w2"); return nil })
			return err
		}},
		{"disable", func() error {
			_, err := a.UpdatePartner(ctx, "ptn_w", func(p *account.Partner) error { p.Disabled = true; return nil })
			return err
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		expect("ptn_w")
	}
	// A refused write tells nobody.
	if err := a.CreatePartner(ctx, newPartner("ptn_w", "key-x")); err == nil {
		t.Fatal("a duplicate partner was created")
	}
	if _, err := a.UpdatePartner(ctx, "ptn_w", func(*account.Partner) error { return errors.New("abort") }); err == nil {
		t.Fatal("an aborted update succeeded")
	}
	select {
	case got := <-heard:
		if got != "" {
			t.Fatalf("heard %q of a refused write", got)
		}
	case <-time.After(200 * time.Millisecond):
	}
	// The server ends b's listening connection: once b listens again, it
	// says that anything may have changed.
	if _, err := a.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'swapgate-listen' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	expect("")
}
