package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
)

// FileName is the file in the data directory that advertises the admin
// listener of the process holding the store.
const FileName = "admin.json"

// Endpoint is the content of admin.json.
type Endpoint struct {
	Addr  string `json:"addr"`
	Token string `json:"token"`
}

// writeEndpoint writes admin.json atomically with mode 0600: a reader sees
// either no file or a complete one, never a torn write, and the token is never
// readable by other users, not even briefly.
func writeEndpoint(dataDir string, ep Endpoint) error {
	b, err := json.Marshal(ep)
	if err != nil {
		return fmt.Errorf("encode %s: %w", FileName, err)
	}
	tmp, err := os.CreateTemp(dataDir, "."+FileName+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary %s: %w", FileName, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod temporary %s: %w", FileName, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write temporary %s: %w", FileName, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync temporary %s: %w", FileName, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close temporary %s: %w", FileName, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dataDir, FileName)); err != nil {
		return fmt.Errorf("install %s: %w", FileName, err)
	}
	return nil
}

// ReadEndpoint reads admin.json from dataDir. A missing file gives an error
// wrapping ErrNoListener.
func ReadEndpoint(dataDir string) (Endpoint, error) {
	path := filepath.Join(dataDir, FileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Endpoint{}, fmt.Errorf("%w: %s does not exist", ErrNoListener, path)
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("read %s: %w", path, err)
	}
	var ep Endpoint
	if err := json.Unmarshal(b, &ep); err != nil {
		return Endpoint{}, fmt.Errorf("decode %s: %w", path, err)
	}
	if ep.Addr == "" || ep.Token == "" {
		return Endpoint{}, fmt.Errorf("%s lacks addr or token", path)
	}
	// The listener binds loopback only; an advertisement of another
	// address is not the server's, and the token must not travel there.
	if ap, err := netip.ParseAddrPort(ep.Addr); err != nil || !ap.Addr().IsLoopback() {
		return Endpoint{}, fmt.Errorf("%s advertises %q, not a loopback address", path, ep.Addr)
	}
	return ep, nil
}

// removeEndpoint deletes admin.json if it still advertises token, so a
// server never removes a file that another listener wrote after it.
func removeEndpoint(dataDir, token string) error {
	ep, err := ReadEndpoint(dataDir)
	if errors.Is(err, ErrNoListener) {
		return nil
	}
	if err != nil || ep.Token != token {
		return nil //nolint:nilerr // not ours, or unreadable: leave it alone
	}
	if err := os.Remove(filepath.Join(dataDir, FileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", FileName, err)
	}
	return nil
}
