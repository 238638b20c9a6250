package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// storeFlag binds --store, the PostgreSQL URL of the durable state, with
// $SWAPGATE_STORE as its default, as `swapgate serve` reads it: every
// subcommand that reads or writes the store opens the one the server
// does, through app.OpenStore. Empty is the Pebble store under --data.
func storeFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	return fs.String("store", getenv("SWAPGATE_STORE"), "PostgreSQL URL (postgres://…; default $SWAPGATE_STORE); empty: the Pebble store under --data")
}

// openCLIStore opens the store a CLI subcommand names: the PostgreSQL
// database at storeURL, or the Pebble store in dir. The Pebble store held
// by a running server fails with pebblestore.ErrLocked, which the caller
// answers by going through that server's admin listener.
func openCLIStore(ctx context.Context, dir, storeURL string) (*app.Stores, error) {
	if err := app.CheckStoreURL(storeURL); err != nil {
		return nil, fmt.Errorf("--store %w", err)
	}
	return app.OpenStore(ctx, app.StoreConfig{URL: storeURL, DataDir: dir})
}

// runningAdmin returns the admin listener of a server running on dir when
// one is advertised there and answers, nil otherwise. On PostgreSQL the
// store is open to every process, so a partner edit could be written
// directly; it goes through a running server instead when there is one,
// so that the server drops the partner from its authentication cache at
// once (a rotated or disabled key stops working then, not at its
// restart). A server on another data directory is not reached: each
// caches only what it was told, and a CLI edit reaches the server whose
// --data it names.
func runningAdmin(ctx context.Context, dir string) *admin.Client {
	c, err := admin.Dial(dir)
	if err != nil {
		return nil
	}
	if _, err := c.List(ctx); err != nil {
		// Unreachable (a stale file of a server gone) or refusing: the
		// database is open to this process anyway.
		c.Close()
		return nil
	}
	return c
}

// adminAccess is how a CLI subcommand reaches the state it reads or edits
// (partner's admin.PartnerAdmin, tx's admin.TxAdmin): on the store opened
// directly (local), or through the admin listener of the server holding
// the data directory (remote). viaServer, for PostgreSQL, prefers a
// running server's listener over the open database (runningAdmin says
// why partner edits want it).
type adminAccess[A any] struct {
	local     func(*app.Stores) A
	remote    func(*admin.Client) A
	viaServer bool
}

// open opens the store directly or, when a running server holds the
// Pebble store in dir, goes through its admin listener.
func (a adminAccess[A]) open(ctx context.Context, dir, storeURL string) (A, func() error, error) {
	var zero A
	if a.viaServer && storeURL != "" {
		if c := runningAdmin(ctx, dir); c != nil {
			return a.remote(c), func() error { c.Close(); return nil }, nil
		}
	}
	stores, err := openCLIStore(ctx, dir, storeURL)
	if err == nil {
		return a.local(stores), stores.Close, nil
	}
	if !errors.Is(err, pebblestore.ErrLocked) {
		return zero, nil, err
	}
	c, derr := admin.Dial(dir)
	if derr != nil {
		return zero, nil, fmt.Errorf("data directory %q is in use by another process (a running swapgate serve?) that advertises no admin listener: %w", dir, derr)
	}
	return a.remote(c), func() error { c.Close(); return nil }, nil
}

// run checks --store, opens the access and runs op within partnerTimeout,
// printing its answer as one JSON line on stdout or the error on stderr.
func (a adminAccess[A]) run(stdout, stderr io.Writer, dataDir, storeURL string, op func(context.Context, A) (any, error)) int {
	if err := app.CheckStoreURL(storeURL); err != nil {
		return usageFailure(stderr, "--store "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), partnerTimeout)
	defer cancel()
	access, release, err := a.open(ctx, dataDir, storeURL)
	if err != nil {
		return failure(stderr, err)
	}
	res, err := op(ctx, access)
	if cerr := release(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, admin.ErrUnreachable) {
			err = fmt.Errorf("data directory %q is in use by another process, but its admin listener does not answer (a stale %s?): %w",
				dataDir, admin.FileName, err)
		}
		return failure(stderr, err)
	}
	if err := writeJSONLine(stdout, res); err != nil {
		return failure(stderr, err)
	}
	return 0
}
