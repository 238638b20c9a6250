package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

const txUsage = `usage: swapgate tx <subcommand> [flags]

subcommands:
  list   [--state S] [--purpose P] [--chain ID] [--after ID] [--limit N]
  show   ID

The transaction manager's intents, each with every transaction signed for
it (hash, nonce, fees, its state: signed, pending, replaced, mined or
reverted; the block of the mined one). list prints them in creation order,
at most --limit (default 100, at most 1000); --after continues after an
intent. --state is one of queued, signed, sent, mined, confirmed, failed.
Every subcommand takes --data DIR and --store URL as partner does, and
prints JSON; when a server holds the data directory, it reads through the
server's admin listener.
`

// txOp is one subcommand's action once its flags are parsed.
type txOp func(ctx context.Context, ta admin.TxAdmin) (any, error)

// runTx runs `swapgate tx ...`; args start at the subcommand.
func runTx(args []string, stdout, stderr io.Writer) int {
	return runTxEnv(args, stdout, stderr, os.Getenv)
}

// runTxEnv is runTx with the environment injected for tests.
func runTxEnv(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		return usageFailure(stderr, "missing tx subcommand (list, show)")
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprint(stdout, txUsage)
		return 0
	}
	fs := flag.NewFlagSet("swapgate tx "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", defaultDataDir(getenv), "data directory")
	storeURL := storeFlag(fs, getenv)
	rest := args[1:]
	var op txOp
	switch sub {
	case "list":
		state := fs.String("state", "", "only intents in this state: "+statesList())
		purpose := fs.String("purpose", "", "only intents of this purpose (payout, inbound.bridge, …)")
		chain := fs.String("chain", "", "only intents on this chain ID")
		after := fs.String("after", "", "continue after the intent with this ID")
		limit := optionalInt(fs, "limit", fmt.Sprintf("at most this many intents (default %d, at most %d)", admin.DefaultTxLimit, admin.MaxTxLimit))
		op = func(ctx context.Context, ta admin.TxAdmin) (any, error) {
			f := admin.TxFilter{State: *state, Purpose: *purpose, After: *after}
			if *chain != "" {
				id, err := strconv.ParseUint(*chain, 10, 64)
				if err != nil || id == 0 {
					return nil, fmt.Errorf("%w: --chain %q is not a chain ID", admin.ErrInvalid, *chain)
				}
				f.ChainID = id
			}
			if *state != "" && !txintent.State(*state).Valid() {
				return nil, fmt.Errorf("%w: --state %q is not one of %s", admin.ErrInvalid, *state, statesList())
			}
			if p := limit.ptr(); p != nil {
				if *p < 1 || *p > admin.MaxTxLimit {
					return nil, fmt.Errorf("%w: --limit %d is not between 1 and %d", admin.ErrInvalid, *p, admin.MaxTxLimit)
				}
				f.Limit = *p
			}
			return ta.ListTxs(ctx, f)
		}
	case "show":
		// The ID may come before the flags or after them.
		var id string
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			id, rest = rest[0], rest[1:]
		}
		if err := fs.Parse(rest); err != nil {
			return txFlagFailure(stdout, stderr, fs, sub, err)
		}
		if id == "" && fs.NArg() > 0 {
			id = fs.Arg(0)
			if err := fs.Parse(fs.Args()[1:]); err != nil {
				return txFlagFailure(stdout, stderr, fs, sub, err)
			}
		}
		switch {
		case id == "":
			return usageFailure(stderr, "tx show needs the intent's ID: swapgate tx show ID")
		case fs.NArg() > 0:
			return usageFailure(stderr, "unexpected arguments: "+strings.Join(fs.Args(), " "))
		}
		return txAccess().run(stdout, stderr, *dataDir, *storeURL, func(ctx context.Context, ta admin.TxAdmin) (any, error) {
			return ta.ShowTx(ctx, id)
		})
	default:
		return usageFailure(stderr, fmt.Sprintf("unknown tx subcommand %q (want list or show)", sub))
	}
	if err := fs.Parse(rest); err != nil {
		return txFlagFailure(stdout, stderr, fs, sub, err)
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, "unexpected arguments: "+strings.Join(fs.Args(), " "))
	}
	return txAccess().run(stdout, stderr, *dataDir, *storeURL, op)
}

// statesList is the intent states, comma-separated.
func statesList() string {
	s := make([]string, len(txintent.States))
	for i, st := range txintent.States {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

// txFlagFailure answers a flag that did not parse, or -h.
func txFlagFailure(stdout, stderr io.Writer, fs *flag.FlagSet, sub string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "usage: swapgate tx %s [flags]\n", sub)
		fs.PrintDefaults()
		return 0
	}
	return usageFailure(stderr, err.Error())
}

// txAccess reaches the intents: the store directly or, when a running
// server holds the Pebble store, its admin listener. On PostgreSQL the
// intents are read directly whatever runs: a reading changes nothing a
// server caches.
func txAccess() adminAccess[admin.TxAdmin] {
	return adminAccess[admin.TxAdmin]{
		local:  func(s *app.Stores) admin.TxAdmin { return admin.NewTxLocal(s.TxIntents) },
		remote: func(c *admin.Client) admin.TxAdmin { return c },
	}
}
