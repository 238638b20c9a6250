package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
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
