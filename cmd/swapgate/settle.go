package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// settleTimeout bounds one settlement run, which touches every pending row
// of an ecosystem.
const settleTimeout = 5 * time.Minute

const settleUsage = `usage: swapgate settle --ecosystem E [--dry-run] [--data DIR] [--store URL]

Marks every partner's pending earnings in ecosystem E (evm, solana, bitcoin,
sui, near) as settled to the fee wallet each partner has registered now, and
records the payout batch. Partners without a wallet in E stay pending and are
listed under "skipped". Running it again settles nothing twice. --dry-run
reports what would be paid and writes nothing. Prints the batch as JSON. When
a server holds the data directory, the run goes through its admin listener.
--store URL (default $SWAPGATE_STORE) runs it on that PostgreSQL database
instead of the Pebble store under --data, directly.
`

// runSettle runs `swapgate settle ...`.
func runSettle(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swapgate settle", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported as JSON below
	dataDir := fs.String("data", defaultDataDir(os.Getenv), "data directory")
	storeURL := storeFlag(fs, os.Getenv)
	eco := fs.String("ecosystem", "", "settlement ecosystem: evm, solana, bitcoin, sui or near (required)")
	dry := fs.Bool("dry-run", false, "report what would be paid without writing anything")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, settleUsage)
			return 0
		}
		return usageFailure(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, "unexpected arguments: "+strings.Join(fs.Args(), " "))
	}
	if !slices.Contains(account.Ecosystems(), *eco) {
		return usageFailure(stderr, fmt.Sprintf("--ecosystem must be one of %s, got %q",
			strings.Join(account.Ecosystems(), ", "), *eco))
	}
	if err := app.CheckStoreURL(*storeURL); err != nil {
		return usageFailure(stderr, "--store "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	batch, err := settle(ctx, *dataDir, *storeURL, *eco, *dry)
	if err != nil {
		return failure(stderr, err)
	}
	if err := writeJSONLine(stdout, batch); err != nil {
		return failure(stderr, err)
	}
	return 0
}

// settle runs the settlement on the store directly or, when a running server
// holds the data directory's Pebble store, through its admin listener, as
// the partner commands do. On PostgreSQL it always runs here: runs on one
// database are serialised by the database itself, whichever process makes
// them, and a settlement leaves no server's cache stale.
func settle(ctx context.Context, dir, storeURL, eco string, dryRun bool) (*account.SettlementBatch, error) {
	store, err := openCLIStore(ctx, dir, storeURL)
	if err == nil {
		b, serr := admin.Settle(ctx, store.Settlement, eco, dryRun, time.Now())
		if cerr := store.Close(); serr == nil && cerr != nil {
			serr = cerr
		}
		return b, serr
	}
	if !errors.Is(err, pebblestore.ErrLocked) {
		return nil, err
	}
	c, derr := admin.Dial(dir)
	if derr != nil {
		return nil, fmt.Errorf("data directory %q is in use by another process (a running swapgate serve?) that advertises no admin listener: %w", dir, derr)
	}
	defer c.Close()
	b, err := c.Settle(ctx, eco, dryRun)
	if errors.Is(err, admin.ErrUnreachable) {
		err = fmt.Errorf("data directory %q is in use by another process, but its admin listener does not answer (a stale %s?): %w",
			dir, admin.FileName, err)
	}
	return b, err
}
