package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

const operatorKeyUsage = `usage: swapgate operator-key <create|show> [--data DIR] [--store URL]

The operator's account: the EVM key (secp256k1) the transaction manager
signs with on every EVM chain, unless serve runs with --signer-url.

  create   generate the key and store it sealed with the data directory's
           secrets.key (in the Pebble store under --data, or in --store's
           PostgreSQL database); prints its address, never the key. A
           stored key is never replaced: create refuses, naming its address.
           Run it before serve starts on the store.
  show     print the address (through a running server's admin listener
           when one holds the data directory: also whether it signs with
           the sealed key or an external signer).

--data DIR (default $SWAPGATE_DATA, else ./data) and --store URL (default
$SWAPGATE_STORE) name the store as for serve. Prints JSON.
`

// runOperatorKey runs `swapgate operator-key ...`.
func runOperatorKey(args []string, stdout, stderr io.Writer) int {
	return runOperatorKeyEnv(args, stdout, stderr, os.Getenv)
}

// runOperatorKeyEnv is runOperatorKey with the environment injected.
func runOperatorKeyEnv(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		return usageFailure(stderr, "missing operator-key subcommand (create, show)")
	}
	sub := args[0]
	switch sub {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, operatorKeyUsage)
		return 0
	case "create", "show":
	default:
		return usageFailure(stderr, fmt.Sprintf("unknown operator-key subcommand %q (want create or show)", sub))
	}
	fs := flag.NewFlagSet("swapgate operator-key "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", defaultDataDir(getenv), "data directory (its secrets.key seals the key)")
	storeURL := storeFlag(fs, getenv)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, operatorKeyUsage)
			return 0
		}
		return usageFailure(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, "unexpected arguments: "+strings.Join(fs.Args(), " "))
	}
	if err := app.CheckStoreURL(*storeURL); err != nil {
		return usageFailure(stderr, "--store "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), partnerTimeout)
	defer cancel()
	var (
		v   admin.OperatorKeyView
		err error
	)
	if sub == "create" {
		v, err = createOperatorKey(ctx, *dataDir, *storeURL)
	} else {
		v, err = showOperatorKey(ctx, *dataDir, *storeURL)
	}
	if err != nil {
		return failure(stderr, err)
	}
	if err := writeJSONLine(stdout, v); err != nil {
		return failure(stderr, err)
	}
	return 0
}

// createOperatorKey creates the key on the store itself. A Pebble store
// held by a running server is refused: the manager reads its key at start,
// so the key is made before the server that signs with it.
func createOperatorKey(ctx context.Context, dir, storeURL string) (admin.OperatorKeyView, error) {
	stores, err := openCLIStore(ctx, dir, storeURL)
	if errors.Is(err, pebblestore.ErrLocked) {
		return admin.OperatorKeyView{}, fmt.Errorf("data directory %q is in use by a running server: stop it, run operator-key create, then start it again (the transaction manager reads its key at start)", dir)
	}
	if err != nil {
		return admin.OperatorKeyView{}, err
	}
	addr, created, err := app.CreateOperatorKey(ctx, stores)
	if cerr := stores.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return admin.OperatorKeyView{}, err
	}
	if !created {
		// A stored key is never replaced: the account's funds and the
		// nonces of its transactions in flight belong to its address.
		return admin.OperatorKeyView{}, fmt.Errorf("%w (address %s): it is never replaced, since the account's funds and transactions belong to it", app.ErrOperatorKeyExists, addr.Hex())
	}
	return admin.OperatorKeyView{Address: addr.Hex(), Signer: "sealed"}, nil
}

// showOperatorKey reads the address from the store, or through the admin
// listener of the server that holds the Pebble store. On PostgreSQL a
// server running on dir answers when it is there, as for partner
// commands: it says which account it signs with, an external signer's
// included, which the store does not know.
func showOperatorKey(ctx context.Context, dir, storeURL string) (admin.OperatorKeyView, error) {
	if storeURL != "" {
		if c, err := admin.Dial(dir); err == nil {
			v, err := c.OperatorKey(ctx)
			c.Close()
			if !errors.Is(err, admin.ErrUnreachable) {
				return v, err
			}
		}
	}
	stores, err := openCLIStore(ctx, dir, storeURL)
	if err == nil {
		addr, err := app.OperatorAddress(ctx, stores.TxIntents)
		if cerr := stores.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if errors.Is(err, store.ErrNotFound) {
			return admin.OperatorKeyView{}, fmt.Errorf("no operator key is stored (create one with swapgate operator-key create): %w", err)
		}
		if err != nil {
			return admin.OperatorKeyView{}, err
		}
		return admin.OperatorKeyView{Address: addr.Hex(), Signer: "sealed"}, nil
	}
	if !errors.Is(err, pebblestore.ErrLocked) {
		return admin.OperatorKeyView{}, err
	}
	c, derr := admin.Dial(dir)
	if derr != nil {
		return admin.OperatorKeyView{}, fmt.Errorf("data directory %q is in use by another process (a running swapgate serve?) that advertises no admin listener: %w", dir, derr)
	}
	defer c.Close()
	return c.OperatorKey(ctx)
}
