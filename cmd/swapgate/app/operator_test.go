package app

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/internal/standin/signer"
)

// TestExternalSignerChosenAtStart: --signer-url gives the external signer
// once it lists --signer-address; a sealed key of another address is a
// start error naming the flags and that address; the sealed key's own
// address is no conflict.
func TestExternalSignerChosenAtStart(t *testing.T) {
	ctx := context.Background()
	key, _ := crypto.GenerateKey()
	st, srv := signer.Start(key, signer.Clef)
	defer srv.Close()
	open := func() *Stores {
		s, err := OpenStore(ctx, StoreConfig{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	o := OperatorConfig{SignerURL: srv.URL, SignerAddress: st.Address().Hex()}

	if s, err := externalSignerFor(ctx, OperatorConfig{}, open().TxIntents); s != nil || err != nil {
		t.Fatalf("without --signer-url: %v, %v", s, err)
	}
	s, err := externalSignerFor(ctx, o, open().TxIntents)
	if err != nil || s.Address() != st.Address() {
		t.Fatalf("external signer: %v, %v", s, err)
	}
	s.Close()

	other := open()
	sealed, _, err := CreateOperatorKey(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	_, err = externalSignerFor(ctx, o, other.TxIntents)
	if err == nil || !strings.Contains(err.Error(), "--signer-url, --signer-address") || !strings.Contains(err.Error(), sealed.Hex()) {
		t.Fatalf("a sealed key of another address: %v", err)
	}

	same := open()
	if _, _, err := same.TxIntents.CreateOperatorKey(ctx, OperatorKeyName, crypto.FromECDSA(key)); err != nil {
		t.Fatal(err)
	}
	if s, err := externalSignerFor(ctx, o, same.TxIntents); err != nil || s.Address() != st.Address() {
		t.Fatalf("the sealed key's own address: %v, %v", s, err)
	} else {
		s.Close()
	}

	notHeld := o
	notHeld.SignerAddress = common.BigToAddress(big.NewInt(0xabc)).Hex()
	if _, err := externalSignerFor(ctx, notHeld, open().TxIntents); err == nil || !strings.Contains(err.Error(), "--signer-url, --signer-address") {
		t.Fatalf("a signer without the address: %v", err)
	}
}
