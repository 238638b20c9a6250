package edge

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// fakeWallets answers ReadWallet with read, on the chains it serves.
type fakeWallets struct {
	serves bool
	read   func(ctx context.Context) (quote.WalletState, error)
	calls  int
}

func (f *fakeWallets) Serves(uint64) bool { return f.serves }

func (f *fakeWallets) ReadWallet(ctx context.Context, _ quote.WalletQuery) (quote.WalletState, error) {
	f.calls++
	return f.read(ctx)
}

// nodeError is a node's JSON-RPC error, as go-ethereum's client returns it.
type nodeError struct{}

func (nodeError) Error() string  { return "header not found" }
func (nodeError) ErrorCode() int { return -32000 }

// TestPreflightReadsWithinTheDeadline: the wallet is read only for an EVM
// route, within the quote's deadline; every way the read can fail answers
// checks null with a reason that never shows what the node's URL said,
// and a read that answers is judged.
func TestPreflightReadsWithinTheDeadline(t *testing.T) {
	reg, _ := testCatalog(t)
	arb, _ := reg.Chain(42161)
	usdc, _ := reg.Token(42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	req := &quote.Request{From: arb, FromToken: usdc, FromAmount: big.NewInt(100), FromAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72"}
	route := &quote.Route{FromAmount: big.NewInt(100), ApprovalAddress: "0x1111111111111111111111111111111111111111",
		Tx: &quote.TxRequest{To: "0x2222222222222222222222222222222222222222", Value: new(big.Int), ChainID: 42161}}
	enough := func(context.Context) (quote.WalletState, error) {
		return quote.WalletState{Native: big.NewInt(1e18), Token: big.NewInt(100), Allowance: big.NewInt(100)}, nil
	}
	fail := func(err error) func(context.Context) (quote.WalletState, error) {
		return func(context.Context) (quote.WalletState, error) { return quote.WalletState{}, err }
	}
	hang := func(ctx context.Context) (quote.WalletState, error) {
		<-ctx.Done()
		return quote.WalletState{}, fmt.Errorf("post http://node.example/key-123: %w", ctx.Err())
	}
	const soon = 50 * time.Millisecond
	for _, c := range []struct {
		name    string
		wallets *fakeWallets
		in      time.Duration // the deadline, from the case's start
		route   *quote.Route
		says    string // "" for checks read
		reads   int
	}{
		{"read", &fakeWallets{serves: true, read: enough}, soon, route, "", 1},
		{"indicative: not checked", &fakeWallets{serves: true, read: enough}, soon, &quote.Route{}, "-", 0},
		{"no node", &fakeWallets{serves: false, read: enough}, soon, route, "no node reads chain 42161", 0},
		{"no reader", nil, soon, route, "no node reads chain 42161", 0},
		{"deadline already passed", &fakeWallets{serves: true, read: enough}, -time.Millisecond, route, "deadline passed before the wallet", 0},
		{"a node that hangs past the deadline", &fakeWallets{serves: true, read: hang}, soon, route, "deadline passed before the node of chain 42161 answered", 1},
		{"--rpc-timeout", &fakeWallets{serves: true, read: fail(fmt.Errorf("evmcheck: %w", noderead.ErrTimeout))}, soon, route, "did not answer within --rpc-timeout", 1},
		{"a node's error", &fakeWallets{serves: true, read: fail(fmt.Errorf("evmcheck: %w", nodeError{}))}, soon, route, "refused the wallet's read: header not found", 1},
		{"unreachable", &fakeWallets{serves: true, read: fail(errors.New("post http://node.example/key-123: connection refused"))}, soon, route, "could not be read", 1},
	} {
		s := &Server{}
		if c.wallets != nil {
			s.deps.Wallets = c.wallets
		}
		pf := s.preflight(context.Background(), time.Now().Add(c.in), req, c.route)
		switch {
		case c.says == "-":
			if pf != nil {
				t.Errorf("%s: %+v", c.name, pf)
			}
		case c.says == "":
			if pf == nil || pf.Checks == nil || pf.Error != "" || len(pf.Calls) != 1 {
				t.Errorf("%s: %+v", c.name, pf)
			}
		default:
			if pf == nil || pf.Checks != nil || !strings.Contains(pf.Error, c.says) || strings.Contains(pf.Error, "key-123") || pf.Calls != nil {
				t.Errorf("%s: %+v, want checks null saying %q", c.name, pf, c.says)
			}
		}
		if c.wallets != nil && c.wallets.calls != c.reads {
			t.Errorf("%s: %d reads, want %d", c.name, c.wallets.calls, c.reads)
		}
	}
}
