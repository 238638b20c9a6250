package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// cliFails runs the command line, expects exit code want and returns its
// stderr.
func cliFails(t *testing.T, want int, args ...string) string {
	t.Helper()
	args = withSuiteStore(args)
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != want {
		t.Fatalf("swapgate %v: exit %d, want %d: %s%s", args, code, want, stdout.String(), stderr.String())
	}
	return stderr.String()
}

// withSuiteStore adds --store when the suite runs on PostgreSQL and the
// data directory has its database, as cli does.
func withSuiteStore(args []string) []string {
	for i, a := range args {
		if a == "--data" && i+1 < len(args) {
			if dsn, ok := suiteStores.Load(args[i+1]); ok {
				return append(args[:len(args):len(args)], "--store", dsn.(string))
			}
			break
		}
	}
	return args
}

// suiteDir is a data directory with its own database in the PostgreSQL
// pass, so that the CLI and a server started on it share one store.
func suiteDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if suitePostgres != nil {
		suiteStores.Store(dir, suitePostgres.DSN(t))
	}
	return dir
}

// openSuiteStore opens the store of dir as the CLI does.
func openSuiteStore(t *testing.T, dir string) *app.Stores {
	t.Helper()
	url := ""
	if dsn, ok := suiteStores.Load(dir); ok {
		url = dsn.(string)
	}
	st, err := app.OpenStore(context.Background(), app.StoreConfig{URL: url, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOperatorKeyAndTransactionsE2E: `operator-key create` prints the
// account's address and never the key, refuses a second key naming the
// first's address, and `show` prints it; `tx list` and `tx show` give each
// intent with its transactions, on the store and through a running
// server's admin listener; bad input is refused naming the flag. On both
// stores.
func TestOperatorKeyAndTransactionsE2E(t *testing.T) {
	dir := suiteDir(t)

	if msg := cliFails(t, 1, "operator-key", "show", "--data", dir); !strings.Contains(msg, "operator-key create") {
		t.Errorf("show without a key: %s", msg)
	}
	var created admin.OperatorKeyView
	cli(t, &created, "operator-key", "create", "--data", dir)
	if !strings.HasPrefix(created.Address, "0x") || len(created.Address) != 42 || created.Signer != "sealed" {
		t.Fatalf("create printed %+v", created)
	}
	msg := cliFails(t, 1, "operator-key", "create", "--data", dir)
	if !strings.Contains(msg, created.Address) || !strings.Contains(msg, "already stored") {
		t.Errorf("a second create: %s", msg)
	}
	var shown admin.OperatorKeyView
	cli(t, &shown, "operator-key", "show", "--data", dir)
	if shown != created {
		t.Errorf("show printed %+v, create %+v", shown, created)
	}

	// The key is the one stored, sealed, and it was printed nowhere.
	st := openSuiteStore(t, dir)
	ctx := context.Background()
	raw, err := st.TxIntents.OperatorKey(ctx, app.OperatorKeyName)
	if err != nil {
		t.Fatal(err)
	}
	k, err := crypto.ToECDSA(raw)
	if err != nil || crypto.PubkeyToAddress(k.PublicKey).Hex() != created.Address {
		t.Fatalf("the stored key is not the address's: %v", err)
	}
	keyHex := hex.EncodeToString(raw)
	for _, args := range [][]string{{"operator-key", "show", "--data", dir}} {
		var out, errb bytes.Buffer
		run(withSuiteStore(args), &out, &errb)
		if s := strings.ToLower(out.String() + errb.String() + msg); strings.Contains(s, keyHex) {
			t.Fatal("the key was printed")
		}
	}

	// Two intents: a payout replaced once and mined, an inbound bridge
	// queued; on chains no sandbox node serves, so that the server's own
	// manager leaves them as they are.
	at := time.Now().UTC().Truncate(time.Millisecond)
	payout := &txintent.Intent{ID: "txi_e2e_1", Purpose: "payout", Key: "payout:e2e:1", ChainID: 990001, From: created.Address,
		To: "0x1111111111111111111111111111111111111111", Value: "0", Data: []byte{0xa9, 0x05, 0x9c, 0xbb}, GasLimit: 65000,
		State: txintent.Queued, CreatedAt: at, UpdatedAt: at, Txs: []txintent.Tx{}}
	bridge := &txintent.Intent{ID: "txi_e2e_2", Purpose: "inbound.bridge", Key: "inbound:e2e:1", ChainID: 990002, From: created.Address,
		To: "0x2222222222222222222222222222222222222222", Value: "5", GasLimit: 21000, State: txintent.Queued, CreatedAt: at, UpdatedAt: at, Txs: []txintent.Tx{}}
	for _, in := range []*txintent.Intent{payout, bridge} {
		if _, _, err := st.TxIntents.PutTxIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	p, err := st.TxIntents.TxIntent(ctx, payout.ID)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func(*txintent.Intent) error{
		func(in *txintent.Intent) error {
			if err := in.AddTx(txintent.Tx{Hash: "0xaa01", Nonce: 3, MaxFeePerGas: "1000", MaxPriorityFeePerGas: "100", Raw: []byte{1}}); err != nil {
				return err
			}
			return in.Move(txintent.Signed, at)
		},
		func(in *txintent.Intent) error {
			in.Txs[0].SentAt = at
			return in.Move(txintent.Sent, at)
		},
		func(in *txintent.Intent) error {
			return in.AddTx(txintent.Tx{Hash: "0xaa02", Nonce: 3, MaxFeePerGas: "1125", MaxPriorityFeePerGas: "113", Raw: []byte{2}, SentAt: at})
		},
		func(in *txintent.Intent) error {
			in.Txs[1].BlockNumber, in.Txs[1].BlockHash, in.Txs[1].Status = 90, "0xbb90", 1
			return in.Move(txintent.Mined, at)
		},
	}
	for _, step := range steps {
		if err := step(p); err != nil {
			t.Fatal(err)
		}
		if err := st.TxIntents.UpdateTxIntents(ctx, []*txintent.Intent{p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	check := func(how string) {
		var all []admin.IntentView
		cli(t, &all, "tx", "list", "--data", dir)
		if got := intentIDs(all); !reflect.DeepEqual(got, []string{payout.ID, bridge.ID}) {
			t.Errorf("%s: tx list gave %v", how, got)
		}
		var mined []admin.IntentView
		cli(t, &mined, "tx", "list", "--data", dir, "--state", "mined", "--purpose", "payout", "--chain", "990001")
		if got := intentIDs(mined); !reflect.DeepEqual(got, []string{payout.ID}) {
			t.Errorf("%s: tx list --state mined gave %v", how, got)
		}
		var none []admin.IntentView
		cli(t, &none, "tx", "list", "--data", dir, "--chain", "1")
		if len(none) != 0 {
			t.Errorf("%s: tx list --chain 1 gave %v", how, intentIDs(none))
		}
		var v admin.IntentView
		cli(t, &v, "tx", "show", payout.ID, "--data", dir)
		if v.State != "mined" || v.Nonce == nil || *v.Nonce != 3 || len(v.Txs) != 2 {
			t.Fatalf("%s: tx show gave %+v", how, v)
		}
		if a, b := v.Txs[0], v.Txs[1]; a.Hash != "0xaa01" || a.State != admin.TxReplaced || a.MaxFeePerGas != "1000" ||
			b.Hash != "0xaa02" || b.State != admin.TxMined || b.BlockNumber != 90 || b.MaxPriorityFeePerGas != "113" {
			t.Errorf("%s: the payout's transactions: %+v", how, v.Txs)
		}
		if msg := cliFails(t, 1, "tx", "show", "txi_nope", "--data", dir); !strings.Contains(msg, "not found") {
			t.Errorf("%s: an unknown intent: %s", how, msg)
		}
		for _, bad := range []struct {
			args []string
			flag string
		}{
			{[]string{"tx", "list", "--state", "pending"}, "--state"},
			{[]string{"tx", "list", "--chain", "arbitrum"}, "--chain"},
			{[]string{"tx", "list", "--limit", "0"}, "--limit"},
			{[]string{"tx", "list", "--limit", "x"}, "-limit"},
			{[]string{"tx", "show"}, "ID"},
			{[]string{"tx", "frob"}, "list or show"},
			{[]string{"operator-key", "rotate"}, "create or show"},
		} {
			if msg := cliFails(t, 2, append(bad.args, "--data", dir)...); !strings.Contains(msg, bad.flag) {
				t.Errorf("%s: %v: %s does not name %s", how, bad.args, msg, bad.flag)
			}
		}
	}
	check("on the store")

	// With a server on the data directory: through its admin listener
	// (Pebble's store is the server's alone) or the shared database.
	srv := startServer(t, func(c *app.Config) { c.DataDir = dir })
	check("with a server running")
	cli(t, &shown, "operator-key", "show", "--data", dir)
	if shown.Address != created.Address {
		t.Errorf("show with a server running: %+v", shown)
	}
	if suitePostgres == nil {
		if msg := cliFails(t, 1, "operator-key", "create", "--data", dir); !strings.Contains(msg, "stop it") {
			t.Errorf("create with a server holding the store: %s", msg)
		}
	}
	srv.stop()
}

func intentIDs(list []admin.IntentView) []string {
	out := []string{}
	for _, v := range list {
		out = append(out, v.ID)
	}
	return out
}
