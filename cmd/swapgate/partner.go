package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// partnerTimeout bounds one partner command, including a round trip to a
// running server's admin listener.
const partnerTimeout = 30 * time.Second

const partnerUsage = `usage: swapgate partner <subcommand> [flags]

subcommands:
  create       --name N --email E [--swap-fee-bps B] [--onramp-fee-bps B] [--heavy N] [--read N]
  list
  rotate-key   --id ID
  set-fees     --id ID [--swap-fee-bps B] [--onramp-fee-bps B]
  set-limits   --id ID [--heavy N] [--read N]
  set-origins  --id ID --origins O[,O...]   (--origins "" clears them)
  disable      --id ID

Every subcommand takes --data DIR (default $SWAPGATE_DATA, else ./data) and
--store URL (default $SWAPGATE_STORE: the PostgreSQL database to use instead
of the Pebble store under --data, as for serve), and prints JSON. When a server
runs on the data directory, the command goes through its admin listener. An
API key is printed only by create and rotate-key.
`

// runPartner runs `swapgate partner ...`; args start at the subcommand. It
// prints one JSON document on stdout, or {"error": ...} on stderr with exit
// status 1 (2 for usage errors, including invalid values).
func runPartner(args []string, stdout, stderr io.Writer) int {
	return runPartnerEnv(args, stdout, stderr, os.Getenv)
}

// partnerOp is one subcommand's action once its flags are parsed.
type partnerOp func(ctx context.Context, pa admin.PartnerAdmin) (any, error)

// runPartnerEnv is runPartner with the environment injected for tests.
func runPartnerEnv(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		return usageFailure(stderr, "missing partner subcommand (create, list, rotate-key, set-fees, set-limits, set-origins, disable)")
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprint(stdout, partnerUsage)
		return 0
	}
	fs := flag.NewFlagSet("swapgate partner "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported as JSON below
	dataDir := fs.String("data", defaultDataDir(getenv), "data directory")
	storeURL := storeFlag(fs, getenv)
	op, required, err := definePartnerOp(sub, fs)
	if err != nil {
		return usageFailure(stderr, err.Error())
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintf(stdout, "usage: swapgate partner %s [flags]\n", sub)
			fs.PrintDefaults()
			return 0
		}
		return usageFailure(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, fmt.Sprintf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			return usageFailure(stderr, fmt.Sprintf("--%s is required for partner %s", name, sub))
		}
	}
	return partnerAccess().run(stdout, stderr, *dataDir, *storeURL, op)
}

// definePartnerOp declares sub's flags on fs and returns its action and the
// names of its required flags.
func definePartnerOp(sub string, fs *flag.FlagSet) (partnerOp, []string, error) {
	switch sub {
	case "create":
		name := fs.String("name", "", "partner display name (required)")
		email := fs.String("email", "", "partner contact email (required)")
		swap := optionalInt(fs, "swap-fee-bps", fmt.Sprintf("swap fee in basis points, at most %d (default %d)", account.MaxFeeBps, account.AnonymousSwapFeeBps))
		onramp := optionalInt(fs, "onramp-fee-bps", fmt.Sprintf("on-ramp fee in basis points, at most %d (default %d)", account.MaxFeeBps, account.AnonymousOnrampFeeBps))
		heavy := optionalInt(fs, "heavy", fmt.Sprintf("heavy requests per minute (default %d)", account.DefaultHeavyPerMin))
		read := optionalInt(fs, "read", fmt.Sprintf("read requests per minute (default %d)", account.DefaultReadPerMin))
		return func(ctx context.Context, pa admin.PartnerAdmin) (any, error) {
			return pa.Create(ctx, admin.CreateRequest{
				Name: *name, Email: *email,
				SwapFeeBps: swap.ptr(), OnrampFeeBps: onramp.ptr(),
				HeavyPerMin: heavy.ptr(), ReadPerMin: read.ptr(),
			})
		}, []string{"name", "email"}, nil
	case "list":
		return func(ctx context.Context, pa admin.PartnerAdmin) (any, error) {
			return pa.List(ctx)
		}, nil, nil
	case "rotate-key":
		id := fs.String("id", "", "partner ID (required)")
		return func(ctx context.Context, pa admin.PartnerAdmin) (any, error) {
			return pa.RotateKey(ctx, *id)
		}, []string{"id"}, nil
	case "set-fees":
		id := fs.String("id", "", "partner ID (required)")
		swap := optionalInt(fs, "swap-fee-bps", "swap fee in basis points")
		onramp := optionalInt(fs, "onramp-fee-bps", "on-ramp fee in basis points")
		return func(ctx context.Context, pa admin.PartnerAdmin) (any, error) {
			return pa.SetFees(ctx, *id, swap.ptr(), onramp.ptr())
		}, []string{"id"}, nil
	case "set-limits":
		id := fs.String("id", "", "partner ID (required)")
		heavy := optionalInt(fs, "heavy", "heavy requests per minute")
		read := optionalInt(fs, "read", "read requests per minute")
		return func(ctx context.Context, pa admin.PartnerAdmin) (any, error) {
			return pa.SetLimits(ctx, *id, heavy.ptr(), read.ptr())
		}, []string{"id"}, nil
	case "set-origins":
		id := fs.String("id", "", "partner ID (required)")
		origins := &listFlag{}
		fs.Var(origins, "origins", "the browser origins (scheme://host[:port], comma-separated) whose pages may call the API with the partner's key; \"\" clears them (required)")
		return func(ctx context.Context, pa admin.PartnerAdmin) (any, error) {
			if !origins.set {
				return nil, fmt.Errorf("%w: --origins is required for partner set-origins (--origins \"\" clears them)", admin.ErrInvalid)
			}
			list, err := account.CheckAllowedOrigins(origins.list())
			if err != nil {
				return nil, fmt.Errorf("%w: --origins: %v", admin.ErrInvalid, err)
			}
			return pa.SetOrigins(ctx, *id, list)
		}, []string{"id"}, nil
	case "disable":
		id := fs.String("id", "", "partner ID (required)")
		return func(ctx context.Context, pa admin.PartnerAdmin) (any, error) {
			return pa.Disable(ctx, *id)
		}, []string{"id"}, nil
	}
	return nil, nil, fmt.Errorf("unknown partner subcommand %q (want create, list, rotate-key, set-fees, set-limits, set-origins or disable)", sub)
}

// partnerAccess reaches the partners: through a running server whenever
// one holds the data directory, so that it drops an edited partner from
// its authentication cache at once.
func partnerAccess() adminAccess[admin.PartnerAdmin] {
	return adminAccess[admin.PartnerAdmin]{
		local:     func(s *app.Stores) admin.PartnerAdmin { return admin.NewLocal(s.Partners, nil) },
		remote:    func(c *admin.Client) admin.PartnerAdmin { return c },
		viaServer: true,
	}
}

// defaultDataDir is $SWAPGATE_DATA, else ./data, as for `swapgate serve`.
func defaultDataDir(getenv func(string) string) string {
	if d := getenv("SWAPGATE_DATA"); d != "" {
		return d
	}
	return "./data"
}

// intFlag is an integer flag that remembers whether it was given, so that
// "not given" (leave unchanged, or use the default) differs from 0.
type intFlag struct {
	v   int
	set bool
}

func optionalInt(fs *flag.FlagSet, name, usage string) *intFlag {
	f := &intFlag{}
	fs.Var(f, name, usage)
	return f
}

func (f *intFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.Itoa(f.v)
}

func (f *intFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %q", s)
	}
	f.v, f.set = v, true
	return nil
}

// ptr returns the value, or nil when the flag was not given.
func (f *intFlag) ptr() *int {
	if !f.set {
		return nil
	}
	v := f.v
	return &v
}

// listFlag is a comma-separated list flag that remembers whether it was
// given, so that "" (an empty list) differs from not given.
type listFlag struct {
	v   string
	set bool
}

func (f *listFlag) String() string {
	if f == nil {
		return ""
	}
	return f.v
}

func (f *listFlag) Set(s string) error {
	f.v, f.set = s, true
	return nil
}

// list returns the values, trimmed, without empty ones; never nil.
func (f *listFlag) list() []string {
	out := []string{}
	for _, v := range strings.Split(f.v, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// writeJSONLine prints v as one line of JSON.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// failure reports err as JSON on stderr; invalid input is a usage error.
func failure(stderr io.Writer, err error) int {
	_ = writeJSONLine(stderr, map[string]string{"error": err.Error()})
	if errors.Is(err, admin.ErrInvalid) {
		return 2
	}
	return 1
}

// usageFailure reports a usage error as JSON on stderr.
func usageFailure(stderr io.Writer, msg string) int {
	_ = writeJSONLine(stderr, map[string]string{"error": msg})
	return 2
}
