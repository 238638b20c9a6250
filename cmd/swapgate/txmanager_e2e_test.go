package main

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// TestOperatorTransactionsE2E: a sandbox server makes the operator's key
// on its first start and funds the account from the faucet on every
// sandbox chain; a payment submitted to its transaction manager is signed,
// sent over the in-process JSON-RPC node, mined and confirmed, and
// GET /v1/balances shows it. Restarted on the same data, the server signs
// with the same key and the same idempotency key pays nothing twice. On
// both stores (PG_E2E).
func TestOperatorTransactionsE2E(t *testing.T) {
	ts := startServer(t, nil)
	m := ts.app.TxManager()
	if m == nil {
		t.Fatal("no transaction manager in sandbox mode")
	}
	op := m.Account(42161)
	if native, usdc := sandboxBalances(t, ts, op.Hex()); native.Sign() <= 0 || usdc.Sign() <= 0 {
		t.Fatalf("the operator's account is not funded: %s native, %s USDC", native, usdc)
	}
	payee := common.HexToAddress("0x00000000000000000000000000000000000fee01")
	req := txintent.Request{Purpose: "test", Key: "e2e/payee", ChainID: 42161, To: payee, Value: big.NewInt(12345), GasLimit: 21_000}
	ctx := context.Background()
	// Every sandbox address starts with a genesis allocation.
	before, _ := sandboxBalances(t, ts, payee.Hex())
	want := new(big.Int).Add(before, big.NewInt(12345))
	in, err := m.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	in = waitConfirmed(t, m, in.ID)
	if native, _ := sandboxBalances(t, ts, payee.Hex()); native.Cmp(want) != 0 {
		t.Fatalf("the payee holds %s, want %s", native, want)
	}

	dir := ts.dir
	ts.stop()
	again := startServer(t, func(c *app.Config) { c.DataDir = dir })
	m2 := again.app.TxManager()
	if m2.Account(42161) != op {
		t.Fatalf("the restarted server signs as %s, was %s", m2.Account(42161).Hex(), op.Hex())
	}
	same, err := m2.Submit(ctx, req)
	if err != nil || same.ID != in.ID || same.State != txintent.Confirmed || same.MinedTx().Hash != in.MinedTx().Hash {
		t.Fatalf("the same key after a restart: %+v %v", same, err)
	}
	if native, _ := sandboxBalances(t, again, payee.Hex()); native.Cmp(want) != 0 {
		t.Fatalf("the payee holds %s after the restart, want %s", native, want)
	}
}

func waitConfirmed(t *testing.T, m interface {
	Intent(context.Context, string) (*txintent.Intent, error)
}, id string) *txintent.Intent {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		in, err := m.Intent(context.Background(), id)
		if err == nil && in.Final() {
			if in.State != txintent.Confirmed {
				t.Fatalf("intent %s: %s (%s)", id, in.State, in.Reason)
			}
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %s not final: %+v %v", id, in, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sandboxBalances is an address's native and USDC balances on chain 42161
// as GET /v1/balances answers.
func sandboxBalances(t *testing.T, ts *testServer, addr string) (native, usdc *big.Int) {
	t.Helper()
	var b struct {
		Chains []struct {
			ChainID  uint64
			Balances []struct {
				Token  struct{ Address, Symbol string }
				Amount string
			}
		}
	}
	ts.get("/v1/balances?address="+addr+"&chains=42161").decode(t, &b)
	native, usdc = new(big.Int), new(big.Int)
	for _, c := range b.Chains {
		for _, bal := range c.Balances {
			v, _ := new(big.Int).SetString(bal.Amount, 10)
			switch {
			case v == nil:
			case bal.Token.Address == "0x0000000000000000000000000000000000000000":
				native = v
			case bal.Token.Symbol == "USDC":
				usdc = v
			}
		}
	}
	return native, usdc
}
