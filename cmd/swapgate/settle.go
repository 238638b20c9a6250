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
       swapgate settle record --payout ID --tx HASH [--data DIR] [--store URL]

Pays every partner's pending earnings in ecosystem E (evm, solana, bitcoin,
sui, near) to the fee wallet each partner has registered now: per partner,
chain and token, one transfer of the summed fees (an ERC-20 transfer, or the
chain's coin) from the operator's account. On an EVM chain the transaction
manager sends it; an earning is settled once its transfer is confirmed, and a
transfer that fails leaves its earnings pending for the next run, which lists
it under "failed" with the reason. Transfers the manager cannot sign (solana,
bitcoin, sui, near, or an EVM chain it has no node for) are listed with state
"manual": pay each and record it with
  swapgate settle record --payout ID --tx HASH
(the hash checked with the ecosystem's transaction-id rules). Partners
without a wallet in E stay pending and are listed under "skipped". A run
never plans an earning twice, even after a kill: a second run finds nothing
new. --dry-run lists the transfers and writes nothing. Prints the run as
JSON. When a server holds the data directory (or, on --store, answers on
its admin listener), the run goes through it and its manager sends the
transfers at once; on a store opened here, they wait for the service's
next start. --store URL (default $SWAPGATE_STORE) names a PostgreSQL
database instead of the Pebble store under --data.
`

// runSettle runs `swapgate settle ...`.
func runSettle(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "record" {
		return runSettleRecord(args[1:], stdout, stderr)
	}
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

// settle runs the settlement through a running server's admin listener
// when one holds the data directory (Pebble) or answers for it (a
// PostgreSQL store: so that the server's transaction manager sends the
// transfers at once), else on the store opened here.
func settle(ctx context.Context, dir, storeURL, eco string, dryRun bool) (*account.SettlementBatch, error) {
	if storeURL != "" {
		if c := runningAdmin(ctx, dir); c != nil {
			defer c.Close()
			return c.Settle(ctx, eco, dryRun)
		}
	}
	var b *account.SettlementBatch
	err := onStoreOrServer(ctx, dir, storeURL, func(st *app.Stores) (err error) {
		b, err = app.SettlePayouts(ctx, st, eco, dryRun, time.Now())
		return err
	}, func(c *admin.Client) (err error) {
		b, err = c.Settle(ctx, eco, dryRun)
		return err
	})
	return b, err
}

// onStoreOrServer runs local on the store opened here or, when a running
// server holds the data directory's Pebble store, remote through its
// admin listener.
func onStoreOrServer(ctx context.Context, dir, storeURL string, local func(*app.Stores) error, remote func(*admin.Client) error) error {
	store, err := openCLIStore(ctx, dir, storeURL)
	if err == nil {
		serr := local(store)
		if cerr := store.Close(); serr == nil && cerr != nil {
			serr = cerr
		}
		return serr
	}
	if !errors.Is(err, pebblestore.ErrLocked) {
		return err
	}
	c, derr := admin.Dial(dir)
	if derr != nil {
		return fmt.Errorf("data directory %q is in use by another process (a running swapgate serve?) that advertises no admin listener: %w", dir, derr)
	}
	defer c.Close()
	err = remote(c)
	if errors.Is(err, admin.ErrUnreachable) {
		err = fmt.Errorf("data directory %q is in use by another process, but its admin listener does not answer (a stale %s?): %w",
			dir, admin.FileName, err)
	}
	return err
}

// runSettleRecord runs `swapgate settle record --payout ID --tx HASH`.
func runSettleRecord(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swapgate settle record", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", defaultDataDir(os.Getenv), "data directory")
	storeURL := storeFlag(fs, os.Getenv)
	id := fs.String("payout", "", "the manual payout's id, as the settlement run listed it (required)")
	tx := fs.String("tx", "", "the transaction that paid it (required)")
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
	if !account.ValidTransferID(*id) {
		return usageFailure(stderr, fmt.Sprintf("--payout must be a payout id (pay_ and 24 hex digits), got %q", *id))
	}
	if *tx == "" {
		return usageFailure(stderr, "--tx is required: the transaction that paid the payout")
	}
	if err := app.CheckStoreURL(*storeURL); err != nil {
		return usageFailure(stderr, "--store "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	var t *account.Transfer
	err := onStoreOrServer(ctx, *dataDir, *storeURL, func(st *app.Stores) (err error) {
		t, err = app.RecordPayout(ctx, st, *id, *tx, time.Now())
		return err
	}, func(c *admin.Client) (err error) {
		t, err = c.RecordPayout(ctx, *id, *tx)
		return err
	})
	if errors.Is(err, admin.ErrInvalid) {
		return usageFailure(stderr, "--tx or --payout: "+err.Error())
	}
	if err != nil {
		return failure(stderr, err)
	}
	if err := writeJSONLine(stdout, t); err != nil {
		return failure(stderr, err)
	}
	return 0
}
