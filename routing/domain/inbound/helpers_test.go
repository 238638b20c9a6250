package inbound

import (
	"crypto/ecdsa"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// testKey is the depositor's key: keccak256 of a fixed seed.
func testKey(t testing.TB, seed string) (*ecdsa.PrivateKey, common.Address) {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/inbound-test/" + seed)))
	if err != nil {
		t.Fatal(err)
	}
	return key, crypto.PubkeyToAddress(key.PublicKey)
}

// Fixed facts of the tests.
var (
	testTx     = common.HexToHash("0x9f1c5e0d2b7a4c3e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a")
	testTo     = common.HexToAddress("0x3333333333333333333333333333333333333333")
	testOutput = common.HexToAddress(pulseroute.WPLSAddress)
)

// signedRegistration is a registration of testTx signed by the key of seed
// for the domain of chainID, v as wallets give it (27/28).
func signedRegistration(t testing.TB, seed string, chainID uint64) Registration {
	t.Helper()
	key, from := testKey(t, seed)
	reg := Registration{
		TxHash:            testTx,
		FromAddress:       from,
		ToAddress:         testTo,
		OutputToken:       testOutput,
		DestinationDomain: DestinationDomain,
	}
	return sign(t, key, chainID, reg)
}

// sign signs reg's message for chainID with key, v as 27/28.
func sign(t testing.TB, key *ecdsa.PrivateKey, chainID uint64, reg Registration) Registration {
	t.Helper()
	digest, err := pulseroute.Hash(pulseroute.TypedData(chainID, reg.Message()))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	copy(reg.Signature[:], sig)
	return reg
}

// wantAPIError checks an error's code, HTTP status 400 family and the detail
// naming the offending field ("param" for INVALID_PARAMS, "field" for
// VALIDATION_ERROR; none expected when name is empty).
func wantAPIError(t *testing.T, got *apierr.Error, code, name string) {
	t.Helper()
	if got == nil {
		t.Fatalf("no error, want %s naming %q", code, name)
	}
	if got.Code != code {
		t.Fatalf("code %s (%s), want %s", got.Code, got.Message, code)
	}
	key := "param"
	if code == apierr.ValidationError || code == apierr.InvalidBody {
		key = "field"
	}
	if name == "" {
		if _, ok := got.Details[key]; ok {
			t.Fatalf("details %v name a %s, want none", got.Details, key)
		}
		return
	}
	if got.Details[key] != name {
		t.Fatalf("details %v, want %s %q (message %q)", got.Details, key, name, got.Message)
	}
	if got.Message == "" {
		t.Fatal("empty message")
	}
}

// isErr reports whether err wraps target, for sentinel checks.
func isErr(err *apierr.Error, target error) bool { return err != nil && errors.Is(err, target) }
