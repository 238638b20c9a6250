package extsigner

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/internal/standin/signer"
)

const testChain = 42161

var (
	operatorKey, _ = crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	otherKey, _    = crypto.HexToECDSA("8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f")
	recipient      = common.HexToAddress("0x1111111111111111111111111111111111111111")
)

func dynamicTx(nonce uint64) *types.Transaction {
	return types.NewTx(&types.DynamicFeeTx{
		ChainID: big.NewInt(testChain), Nonce: nonce, GasTipCap: big.NewInt(1_000_000_000), GasFeeCap: big.NewInt(30_000_000_000),
		Gas: 65_000, To: &recipient, Value: big.NewInt(12345), Data: []byte{0xa9, 0x05, 0x9c, 0xbb, 1, 2, 3},
	})
}

func legacyTx(nonce uint64) *types.Transaction {
	return types.NewTx(&types.LegacyTx{Nonce: nonce, GasPrice: big.NewInt(20_000_000_000), Gas: 21_000, To: &recipient, Value: big.NewInt(7)})
}

// dial starts a stand-in answering in shape and a Signer for its address.
func dial(t *testing.T, shape signer.Shape) (*signer.Server, *Signer) {
	t.Helper()
	st, srv := signer.Start(operatorKey, shape)
	t.Cleanup(srv.Close)
	s, err := Dial(context.Background(), srv.URL, st.Address())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return st, s
}

// TestSignsInBothAnswerShapes: web3signer's hex string and Clef's {raw, tx}
// both give the transaction asked for, signed by the operator, the same
// bytes a local signature gives (secp256k1 signatures are deterministic).
func TestSignsInBothAnswerShapes(t *testing.T) {
	for _, shape := range []signer.Shape{signer.Web3Signer, signer.Clef} {
		for _, tx := range []*types.Transaction{dynamicTx(7), legacyTx(8)} {
			st, s := dial(t, shape)
			chain := big.NewInt(testChain)
			got, err := s.SignTx(context.Background(), chain, tx)
			if err != nil {
				t.Fatalf("shape %d type %d: %v", shape, tx.Type(), err)
			}
			want, err := types.SignTx(tx, types.LatestSignerForChainID(chain), operatorKey)
			if err != nil {
				t.Fatal(err)
			}
			if got.Hash() != want.Hash() {
				t.Errorf("shape %d type %d: hash %s, a local signature gives %s", shape, tx.Type(), got.Hash(), want.Hash())
			}
			if st.Signed() != 1 {
				t.Errorf("stand-in signed %d transactions, want 1", st.Signed())
			}
		}
	}
}

// TestRefusesAnAnswerThatIsNotTheTransaction: every field a signer could
// change is checked, and the refusal names it; so is a signature by
// another key and the signer's own refusal.
func TestRefusesAnAnswerThatIsNotTheTransaction(t *testing.T) {
	other := common.HexToAddress("0x2222222222222222222222222222222222222222")
	cases := []struct {
		name   string
		setup  func(*signer.Server)
		reason string
	}{
		{"nonce", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.Nonce++ }) }, "nonce is 8, not 7"},
		{"chain id", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.ChainID = big.NewInt(1) }) }, "chain id is 1, not 42161"},
		{"recipient", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.To = &other }) }, "recipient is 0x2222"},
		{"value", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.Value = big.NewInt(1e18) }) }, "value is 1000000000000000000, not 12345"},
		{"data", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.Data = []byte{1} }) }, "data is 0x01"},
		{"gas", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.Gas = 1_000_000 }) }, "gas limit is 1000000, not 65000"},
		{"fee cap", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.GasFeeCap = big.NewInt(1e12) }) }, "fee cap is 1000000000000"},
		{"tip cap", func(s *signer.Server) { s.Tamper(func(d *types.DynamicFeeTx) { d.GasTipCap = big.NewInt(2e9) }) }, "tip cap is 2000000000"},
		{"another key", func(s *signer.Server) { s.SignWith(otherKey) }, "signed by " + crypto.PubkeyToAddress(otherKey.PublicKey).Hex()},
		{"denied", func(s *signer.Server) { s.Refuse("Request denied") }, "Request denied"},
	}
	for _, shape := range []signer.Shape{signer.Web3Signer, signer.Clef} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st, s := dial(t, shape)
				tc.setup(st)
				got, err := s.SignTx(context.Background(), big.NewInt(testChain), dynamicTx(7))
				if !errors.Is(err, ErrRefused) {
					t.Fatalf("got %v, %v; want ErrRefused", got, err)
				}
				if !strings.Contains(err.Error(), tc.reason) {
					t.Errorf("refusal %q does not say %q", err, tc.reason)
				}
			})
		}
	}
}

// TestVerifyRefusesAnswersThatAreNoTransaction holds the answer's decoding
// to refusals, never a panic.
func TestVerifyRefusesAnswersThatAreNoTransaction(t *testing.T) {
	chain := big.NewInt(testChain)
	from := crypto.PubkeyToAddress(operatorKey.PublicKey)
	unprotected, err := types.SignTx(legacyTx(8), types.HomesteadSigner{}, operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	rawUnprotected, _ := unprotected.MarshalBinary()
	cases := []struct{ name, answer, reason string }{
		{"null", `null`, "empty answer"},
		{"number", `12`, "neither a hex string"},
		{"not hex", `"0xzz"`, "not hex"},
		{"no raw", `{"tx":{}}`, "no raw transaction"},
		{"raw not hex", `{"raw":"nope"}`, "raw is not hex"},
		{"garbage bytes", `"0x02c0ffee"`, "does not decode"},
		{"unprotected legacy", `"` + hexOf(rawUnprotected) + `"`, "chain id is 0, not 42161"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(json.RawMessage(tc.answer), from, chain, legacyTx(8))
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("got %v, want ErrRefused saying %q", err, tc.reason)
			}
		})
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := []byte("0x")
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// TestRequestIsWhatTheSignersRead: the request's field names and hex
// quantities are web3signer's and Clef's.
func TestRequestIsWhatTheSignersRead(t *testing.T) {
	from := crypto.PubkeyToAddress(operatorKey.PublicKey)
	a, err := argsOf(from, big.NewInt(testChain), dynamicTx(7))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(a)
	want := `{"from":"` + strings.ToLower(from.Hex()) + `","to":"0x1111111111111111111111111111111111111111","gas":"0xfde8",` +
		`"maxFeePerGas":"0x6fc23ac00","maxPriorityFeePerGas":"0x3b9aca00","value":"0x3039","nonce":"0x7","data":"0xa9059cbb010203","chainId":"0xa4b1"}`
	if string(b) != want {
		t.Errorf("request\n got %s\nwant %s", b, want)
	}
	blob := types.NewTx(&types.AccessListTx{ChainID: big.NewInt(testChain), Nonce: 1, GasPrice: big.NewInt(1), Gas: 21000, To: &recipient})
	if _, err := argsOf(from, big.NewInt(testChain), blob); err == nil {
		t.Error("an access-list transaction was accepted for signing")
	}
}

// TestCheckFindsTheAddress: the start-up check passes when the signer
// lists the address, and fails naming it when it does not or the signer
// cannot be reached; a signer that refuses to list passes.
func TestCheckFindsTheAddress(t *testing.T) {
	st, s := dial(t, signer.Web3Signer)
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("signer holding the address: %v", err)
	}
	_, srv := signer.Start(operatorKey, signer.Clef)
	defer srv.Close()
	wrong := common.HexToAddress("0x3333333333333333333333333333333333333333")
	w, err := Dial(context.Background(), srv.URL, wrong)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Check(context.Background()); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), wrong.Hex()) {
		t.Errorf("signer without the address: %v", err)
	}
	_ = st

	denying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Request denied"}}`))
	}))
	defer denying.Close()
	d, err := Dial(context.Background(), denying.URL, wrong)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Check(context.Background()); err != nil {
		t.Errorf("a signer refusing eth_accounts failed the check: %v", err)
	}

	gone := httptest.NewServer(http.NotFoundHandler())
	url := gone.URL
	gone.Close()
	g, err := Dial(context.Background(), url, wrong)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Check(context.Background()); err == nil {
		t.Error("an unreachable signer passed the check")
	}
	if _, err := Dial(context.Background(), url, common.Address{}); err == nil {
		t.Error("the zero address was accepted")
	}
}

func TestRedactDropsCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:secret@signer.example:9000/rpc": "https://…@signer.example:9000/rpc",
		"http://127.0.0.1:8550":                       "http://127.0.0.1:8550",
		"/run/clef.ipc":                               "/run/clef.ipc",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
