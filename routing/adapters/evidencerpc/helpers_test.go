package evidencerpc

import (
	"crypto/ecdsa"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// testKey is the depositor's key: keccak256 of a fixed seed, the same
// derivation as the domain's tests (the recorded transactions are signed
// with "rpc-depositor"'s).
func testKey(t testing.TB, seed string) (*ecdsa.PrivateKey, common.Address) {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/inbound-test/" + seed)))
	if err != nil {
		t.Fatal(err)
	}
	return key, crypto.PubkeyToAddress(key.PublicKey)
}

// transferTopic is the ERC-20 Transfer event's topic, which the recorded
// receipt's logs carry.
var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

func addrTopic(a common.Address) common.Hash { return common.BytesToHash(a.Bytes()) }

// wantAPIError checks an INVALID_PARAMS refusal's code and the parameter
// it names.
func wantAPIError(t *testing.T, got *apierr.Error, code, param string) {
	t.Helper()
	if got == nil {
		t.Fatalf("no error, want %s naming %q", code, param)
	}
	if got.Code != code || got.Details["param"] != param || got.Message == "" {
		t.Fatalf("refusal %s %q %v, want %s naming %q", got.Code, got.Message, got.Details, code, param)
	}
}
