package local

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SecretKeyFile is the file in the data directory holding the key that
// seals webhook signing secrets at rest: 64 hex digits (32 random bytes)
// and a newline, mode 0600, created when a directory is first opened
// without one.
//
// A webhook's secret has to be kept in a form the service can use, since
// every delivery is signed with it (API keys, which are only compared, are
// kept as SHA-256 digests instead). Sealing it with AES-256-GCM under a key
// kept outside Pebble means that Pebble's files (tables, write-ahead logs,
// a backup or a copy of them, a support bundle) give nobody the secrets:
// only the key file opens them. It does not protect against someone who
// can read the key file too (the whole directory, or the process's
// memory): an operator who copies the directory elsewhere keeps the key
// file out of that copy, or keeps it on another volume and links it here
// (a symbolic link is followed, and its target is held to the same mode).
//
// The key is the service's own: it is never shown, and nothing but this
// package reads it. Losing it loses the secrets (partners register their
// webhooks again); a directory whose records were sealed refuses to open
// without its key rather than make a new one, and refuses a different key.
const SecretKeyFile = "secrets.key"

var (
	// ErrSecretKeyMissing means the data directory's webhook secrets were
	// sealed with a key whose file is gone.
	ErrSecretKeyMissing = errors.New("local: the key sealing webhook secrets is missing")
	// ErrSecretKeyMismatch means the key file is not the one the data
	// directory's webhook secrets were sealed with.
	ErrSecretKeyMismatch = errors.New("local: the key file does not match the key webhook secrets were sealed with")
	// ErrSecretKeyExposed means the key file may be read by other users.
	ErrSecretKeyExposed = errors.New("local: the key file is readable by group or others")
)

// secretKeyLen is the length of the key in the file, and of each key
// derived from it.
const secretKeyLen = 32

// Purposes of the keys derived from the file's key (HKDF-SHA256 info
// strings), so that the file can serve later purposes without reusing a
// key across two of them.
const (
	hkdfWebhookSecret = "swapgate/v1/webhook-secret"
	hkdfKeyCheck      = "swapgate/v1/key-check"
	hkdfPortalCode    = "swapgate/v1/portal-code"
)

// sealer seals and opens webhook secrets, and holds the portal's code key.
type sealer struct {
	aead  cipher.AEAD
	check []byte
	// codeKey keys the portal's login code digests (PortalCodeKey).
	codeKey []byte
}

// loadSealer reads dir's key file, creating one when stored (the check
// value kept with the records, nil when none was ever kept) is nil and the
// file does not exist, and checks the key against stored. The caller keeps
// the sealer's check value when stored was nil.
func loadSealer(dir string, stored []byte) (*sealer, error) {
	path := filepath.Join(dir, SecretKeyFile)
	key, err := readSecretKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		if stored != nil {
			return nil, fmt.Errorf("%w: %s does not exist, and the webhook secrets in this directory were sealed with it; restore it from where it was kept", ErrSecretKeyMissing, path)
		}
		key, err = createSecretKey(dir, path)
	}
	if err != nil {
		return nil, err
	}
	sl, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	if stored != nil && !hmac.Equal(stored, sl.check) {
		return nil, fmt.Errorf("%w: %s", ErrSecretKeyMismatch, path)
	}
	return sl, nil
}

// SecretSealer seals webhook signing secrets with a data directory's
// secrets.key for a store that keeps its records elsewhere than in that
// directory's Pebble (the PostgreSQL store): the same key, the same
// derivation and the same binding of each sealed secret to its partner and
// webhook IDs as the Pebble store's own records.
type SecretSealer struct{ sl *sealer }

// LoadSecretSealer reads dir's secrets.key and checks it against stored,
// the check value the caller's store kept when the key was first used (nil
// when it never kept one: then a missing file is created, mode 0600). The
// caller keeps Check's value when stored was nil, so that a later open
// with the file missing or swapped fails with ErrSecretKeyMissing or
// ErrSecretKeyMismatch instead of sealing with another key.
func LoadSecretSealer(dir string, stored []byte) (*SecretSealer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local: create data directory %q: %w", dir, err)
	}
	sl, err := loadSealer(dir, stored)
	if err != nil {
		return nil, err
	}
	return &SecretSealer{sl: sl}, nil
}

// PortalCodeKey is the key the partner portal's login code digests are
// keyed with (portal.CodeDigest), derived from secrets.key for that alone:
// the same on every node that shares the key file, as a cluster's nodes
// must (the store's check value refuses a node with another one).
func (s *SecretSealer) PortalCodeKey() []byte { return slices.Clone(s.sl.codeKey) }

// Check is the key's check value (16 bytes revealing nothing of the key).
func (s *SecretSealer) Check() []byte { return slices.Clone(s.sl.check) }

// Seal returns the nonce and AES-256-GCM ciphertext of a webhook's secret,
// bound to its partner and webhook IDs.
func (s *SecretSealer) Seal(partnerID, webhookID, secret string) ([]byte, error) {
	return s.sl.sealSecret(secret, webhookSecretAAD(partnerID, webhookID))
}

// Open returns the secret that Seal sealed for the same partner and webhook.
func (s *SecretSealer) Open(partnerID, webhookID string, sealed []byte) (string, error) {
	return s.sl.openSecret(sealed, webhookSecretAAD(partnerID, webhookID))
}

func newSealer(key []byte) (*sealer, error) {
	sealKey, err := hkdf.Key(sha256.New, key, nil, hkdfWebhookSecret, secretKeyLen)
	if err != nil {
		return nil, fmt.Errorf("local: derive the sealing key: %w", err)
	}
	checkKey, err := hkdf.Key(sha256.New, key, nil, hkdfKeyCheck, secretKeyLen)
	if err != nil {
		return nil, fmt.Errorf("local: derive the key check: %w", err)
	}
	codeKey, err := hkdf.Key(sha256.New, key, nil, hkdfPortalCode, secretKeyLen)
	if err != nil {
		return nil, fmt.Errorf("local: derive the portal code key: %w", err)
	}
	block, err := aes.NewCipher(sealKey)
	if err != nil {
		return nil, fmt.Errorf("local: sealing cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("local: sealing cipher: %w", err)
	}
	m := hmac.New(sha256.New, checkKey)
	m.Write([]byte("swapgate secret key check"))
	return &sealer{aead: aead, check: m.Sum(nil)[:16], codeKey: codeKey}, nil
}

// readSecretKey reads the key file, refusing one that group or others may
// read or write.
func readSecretKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("local: %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o; chmod 600 it", ErrSecretKeyExposed, path, perm)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("local: read %s: %w", path, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != secretKeyLen {
		return nil, fmt.Errorf("local: %s does not hold %d hex digits", path, 2*secretKeyLen)
	}
	return key, nil
}

// createSecretKey writes a new random key to path, mode 0600, synced, in
// a temporary file linked into place so that a crash leaves the whole file
// or none; when another process put one there first, that one is returned.
func createSecretKey(dir, path string) ([]byte, error) {
	key := make([]byte, secretKeyLen)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("local: generate the secret key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+SecretKeyFile+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("local: create the secret key: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	werr := tmp.Chmod(0o600)
	if werr == nil {
		_, werr = tmp.WriteString(hex.EncodeToString(key) + "\n")
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// A link, not a rename: it never replaces a key another process
		// wrote meanwhile (processes sharing a PostgreSQL store take no
		// directory lock, and two may start on one directory at once);
		// that process's key, whole once linked, is the one used.
		werr = os.Link(tmp.Name(), path)
		if errors.Is(werr, fs.ErrExist) {
			return readSecretKey(path)
		}
	}
	if werr == nil {
		werr = syncDir(dir)
	}
	if werr != nil {
		return nil, fmt.Errorf("local: write %s: %w", path, werr)
	}
	return key, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// webhookSecretAAD binds a sealed secret to its webhook: sealed for one
// record, it does not open in another.
func webhookSecretAAD(partnerID, webhookID string) []byte {
	return []byte("webhook/" + partnerID + "/" + webhookID)
}

// sealSecret returns the nonce and the AES-256-GCM ciphertext of secret.
func (sl *sealer) sealSecret(secret string, aad []byte) ([]byte, error) {
	nonce := make([]byte, sl.aead.NonceSize(), sl.aead.NonceSize()+len(secret)+sl.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("local: seal webhook secret: %w", err)
	}
	return sl.aead.Seal(nonce, nonce, []byte(secret), aad), nil
}

// openSecret opens what sealSecret sealed.
func (sl *sealer) openSecret(sealed, aad []byte) (string, error) {
	n := sl.aead.NonceSize()
	if len(sealed) < n+sl.aead.Overhead() {
		return "", errors.New("local: sealed webhook secret too short")
	}
	plain, err := sl.aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return "", fmt.Errorf("local: open sealed webhook secret: %w", err)
	}
	return string(plain), nil
}

// operatorKeyAAD binds a sealed operator key to its name, so that a
// webhook secret's ciphertext cannot be passed off as a key or the other
// way round.
func operatorKeyAAD(name string) []byte { return []byte("operatorkey/" + name) }

// SealOperatorKey seals the operator's signing key (the transaction
// manager's account) under name with the same key and cipher as webhook
// secrets: a store holding only the sealed bytes gives nothing without
// secrets.key.
func (s *SecretSealer) SealOperatorKey(name string, key []byte) ([]byte, error) {
	return s.sl.sealSecret(string(key), operatorKeyAAD(name))
}

// OpenOperatorKey returns the key SealOperatorKey sealed under name.
func (s *SecretSealer) OpenOperatorKey(name string, sealed []byte) ([]byte, error) {
	k, err := s.sl.openSecret(sealed, operatorKeyAAD(name))
	return []byte(k), err
}
