package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store/local"
)

// grepDir fails the test if any file under dir holds needle, raw bytes.
func grepDir(t *testing.T, dir string, needles ...string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				t.Errorf("%s holds %q", path, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dirHolds reports whether a file under dir holds needle.
func dirHolds(t *testing.T, dir, needle string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		found = found || bytes.Contains(b, []byte(needle))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestWebhookSecretSealedAtRest: a registration's secret is sealed before
// it reaches Pebble (its record carries only the sealed form), reads back
// in clear for the delivery pool, and appears in no file of the data
// directory, write-ahead logs and tables included, before or after a
// flush. The key file is 0600 and holds 64 hex digits.
func TestWebhookSecretSealedAtRest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const secret = "sealed-at-rest-secret-5f3c9a"
	s, err := Open(dir, Options{uncompressedTables: true})
	if err != nil {
		t.Fatal(err)
	}
	w := &webhook.Registration{PartnerID: "ptn_a", URL: "https://example.com/hook", Events: []string{webhook.SwapCompleted}, Secret: secret, Active: true}
	must(t, s.CreateWebhook(ctx, w))
	raw, err := s.get(webhookKey(w.PartnerID, w.ID))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec["v"] != float64(2) || rec["secret"] != nil || rec["sealedSecret"] == nil || strings.Contains(string(raw), secret) {
		t.Fatalf("stored record %s", raw)
	}
	for _, get := range []func() (*webhook.Registration, error){
		func() (*webhook.Registration, error) { return s.Webhook(ctx, w.PartnerID, w.ID) },
		func() (*webhook.Registration, error) { return s.WebhookByID(ctx, w.ID) },
		func() (*webhook.Registration, error) {
			l, err := s.Webhooks(ctx, w.PartnerID)
			if err != nil || len(l) != 1 {
				return nil, errors.Join(err, errors.New("not one webhook listed"))
			}
			return l[0], nil
		},
	} {
		if got, err := get(); err != nil || got.Secret != secret {
			t.Fatalf("read back %+v %v", got, err)
		}
	}
	grepDir(t, dir, secret) // in the write-ahead log
	must(t, s.DB().Flush())
	must(t, s.Close())
	grepDir(t, dir, secret) // in a table, written uncompressed

	fi, err := os.Stat(filepath.Join(dir, local.SecretKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, local.SecretKeyFile)); len(b) != 65 || b[64] != '\n' {
		t.Fatalf("key file holds %d bytes", len(b))
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Webhook(ctx, w.PartnerID, w.ID); err != nil || got.Secret != secret {
		t.Fatalf("after reopening %+v %v", got, err)
	}
}

// TestSealedSecretBoundToItsRecord: a sealed secret copied into another
// webhook's record does not open there.
func TestSealedSecretBoundToItsRecord(t *testing.T) {
	ctx := context.Background()
	s := openWebhookStore(t, t.TempDir(), &fakeClock{t: time.Now()})
	a := newHook("ptn_a", webhook.SwapCompleted)
	b := newHook("ptn_b", webhook.SwapCompleted)
	must(t, s.CreateWebhook(ctx, a))
	must(t, s.CreateWebhook(ctx, b))
	rawA, err := s.get(webhookKey(a.PartnerID, a.ID))
	if err != nil {
		t.Fatal(err)
	}
	rawB, err := s.get(webhookKey(b.PartnerID, b.ID))
	if err != nil {
		t.Fatal(err)
	}
	var recA, recB webhookRecord
	must(t, json.Unmarshal(rawA, &recA))
	must(t, json.Unmarshal(rawB, &recB))
	recB.SealedSecret = recA.SealedSecret
	swapped, err := json.Marshal(recB)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.DB().Set(webhookKey(b.PartnerID, b.ID), swapped, pebble.Sync))
	if got, err := s.Webhook(ctx, b.PartnerID, b.ID); err == nil {
		t.Fatalf("a secret sealed for %s opened in %s: %+v", a.ID, b.ID, got)
	}
}

// TestSecretKeyFileGuards: a directory refuses to open without the key its
// secrets were sealed with (rather than make a new one), with another key,
// or with a key file others may read; a key file linked from elsewhere is
// followed.
func TestSecretKeyFileGuards(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, local.SecretKeyFile)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newHook("ptn_a", webhook.SwapCompleted)
	must(t, s.CreateWebhook(ctx, w))
	must(t, s.Close())
	key, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	reopen := func(want error) {
		t.Helper()
		s, err := Open(dir, Options{})
		if want == nil {
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			if got, err := s.Webhook(ctx, w.PartnerID, w.ID); err != nil || got.Secret != w.Secret {
				t.Fatalf("webhook %+v %v", got, err)
			}
			return
		}
		if err == nil {
			_ = s.Close()
		}
		if !errors.Is(err, want) {
			t.Fatalf("open: %v, want %v", err, want)
		}
	}

	must(t, os.Remove(keyPath))
	reopen(local.ErrSecretKeyMissing)
	if _, err := os.Stat(keyPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a new key file was made: %v", err)
	}
	must(t, os.WriteFile(keyPath, []byte(strings.Repeat("ab", 32)+"\n"), 0o600))
	reopen(local.ErrSecretKeyMismatch)
	must(t, os.WriteFile(keyPath, key, 0o600))
	must(t, os.Chmod(keyPath, 0o644))
	reopen(local.ErrSecretKeyExposed)
	must(t, os.Chmod(keyPath, 0o600))
	reopen(nil)

	// Kept on another volume and linked here.
	elsewhere := filepath.Join(t.TempDir(), "swapgate.key")
	must(t, os.Rename(keyPath, elsewhere))
	must(t, os.Symlink(elsewhere, keyPath))
	reopen(nil)
	must(t, os.Chmod(elsewhere, 0o640))
	reopen(local.ErrSecretKeyExposed)
}

// TestMigrateSchema3SealsWebhookSecrets: a schema 3 directory, its webhook
// secrets in clear, opens as schema 4 with every record sealed and every
// secret intact, and no file of the directory holds a clear secret any
// more, whether the clear records had reached a table or were still only
// in the write-ahead log.
func TestMigrateSchema3SealsWebhookSecrets(t *testing.T) {
	for _, flushed := range []bool{true, false} {
		name := "in the log"
		if flushed {
			name = "in a table of the bottom level"
		}
		t.Run(name, func(t *testing.T) { testMigrateSchema3(t, flushed) })
	}
}

func testMigrateSchema3(t *testing.T, flushed bool) {
	ctx := context.Background()
	dir := t.TempDir()
	// Tables uncompressed, so that a grep of their bytes sees the records.
	opts := Options{uncompressedTables: true}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	secrets := map[string]string{}
	b := s.DB().NewBatch()
	for i, pid := range []string{"ptn_a", "ptn_a", "ptn_b"} {
		id := "wh_legacy" + string(rune('0'+i))
		secret := "legacy-clear-secret-" + id
		secrets[id] = secret
		reg := webhook.Registration{ID: id, PartnerID: pid, URL: "https://example.com/" + id, Events: []string{webhook.SwapCompleted},
			Active: true, CreatedAt: at.Add(time.Duration(i) * time.Second), UpdatedAt: at}
		val, err := json.Marshal(webhookRecord{V: 1, Registration: reg, Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(val, []byte(`"secret":"`+secret+`"`)) {
			t.Fatalf("legacy record %s", val)
		}
		must(t, b.Set(webhookKey(pid, id), val, nil))
		must(t, b.Set(webhookIDKey(id), []byte(pid), nil))
	}
	must(t, b.Set(keySchema, []byte{0, 0, 0, 3}, nil))
	must(t, b.Commit(pebble.Sync))
	if flushed {
		// Down to the bottom level, where a record stays until a
		// compaction reaches it.
		must(t, s.DB().Compact(ctx, []byte(prefixWebhook), prefixUpperBound(prefixWebhook), false))
	}
	must(t, s.Close())
	var needles []string
	for _, secret := range secrets {
		needles = append(needles, secret)
	}
	if !dirHolds(t, dir, needles[0]) {
		t.Fatal("the clear records are in no file before the migration: the grep below would prove nothing")
	}

	s, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.get(keySchema); err != nil || binary.BigEndian.Uint32(v) != SchemaVersion {
		t.Fatalf("schema after open %v %v", v, err)
	}
	for id, secret := range secrets {
		w, err := s.WebhookByID(ctx, id)
		if err != nil || w.Secret != secret || w.URL != "https://example.com/"+id {
			t.Fatalf("%s after migration: %+v %v", id, w, err)
		}
	}
	list, err := s.Webhooks(ctx, "ptn_a")
	if err != nil || len(list) != 2 || list[0].ID != "wh_legacy0" {
		t.Fatalf("ptn_a's webhooks %+v %v", list, err)
	}
	must(t, s.Close())
	grepDir(t, dir, needles...)
	// Opening again migrates nothing more and reads the same.
	s, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if w, err := s.WebhookByID(ctx, "wh_legacy2"); err != nil || w.Secret != secrets["wh_legacy2"] {
		t.Fatalf("after a second open %+v %v", w, err)
	}
}
