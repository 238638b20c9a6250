package pulseroute

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

const referenceTypeHash = "0058a8bf26f978e291c1ead4ec728a6db8b5f0c5b58c2039f92cb5ce8bdbc6b2"

func sampleMessage() RegisterMessage {
	return RegisterMessage{
		TxHash:            common.HexToHash("0x9f1c5e0d2b7a4c3e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a"),
		ToAddress:         common.HexToAddress("0x3333333333333333333333333333333333333333"),
		OutputToken:       common.HexToAddress(WPLSAddress),
		DestinationDomain: 369,
	}
}

func TestRegisterTypeHash(t *testing.T) {
	td := TypedData(8453, sampleMessage())
	if got := hex.EncodeToString(td.TypeHash(RegisterPrimaryType)); got != referenceTypeHash {
		t.Fatalf("typehash %s, want %s", got, referenceTypeHash)
	}
}

// TestHashMatchesManualEncoding recomputes the digest from the EIP-712 rules
// without apitypes.
func TestHashMatchesManualEncoding(t *testing.T) {
	msg := sampleMessage()
	word := func(b []byte) []byte { return common.LeftPadBytes(b, 32) }
	domainSep := crypto.Keccak256(
		crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId)")),
		crypto.Keccak256([]byte("ServiceInboundReceiver")),
		crypto.Keccak256([]byte("1")),
		word(big.NewInt(42161).Bytes()),
	)
	structHash := crypto.Keccak256(
		crypto.Keccak256([]byte("RegisterDeposit(bytes32 txHash,address toAddress,address outputToken,uint32 destinationDomain)")),
		msg.TxHash.Bytes(),
		word(msg.ToAddress.Bytes()),
		word(msg.OutputToken.Bytes()),
		word(big.NewInt(369).Bytes()),
	)
	want := crypto.Keccak256([]byte{0x19, 0x01}, domainSep, structHash)
	got, err := Hash(TypedData(42161, msg))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("digest %x, want %x", got, want)
	}
}

// secp256k1N is the curve order; s > N/2 is the high-s twin of a signature.
var secp256k1N = crypto.S256().Params().N

func sign(t *testing.T, chainID uint64, msg RegisterMessage) ([]byte, common.Address) {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	digest, err := Hash(TypedData(chainID, msg))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	return sig, crypto.PubkeyToAddress(key.PublicKey)
}

func TestRecoverAndVerify(t *testing.T) {
	const chain = 8453
	msg := sampleMessage()
	sig, signer := sign(t, chain, msg)

	wallet := bytes.Clone(sig)
	wallet[64] += 27 // as wallets return it

	highS := bytes.Clone(sig)
	s := new(big.Int).SetBytes(sig[32:64])
	copy(highS[32:64], common.LeftPadBytes(new(big.Int).Sub(secp256k1N, s).Bytes(), 32))
	highS[64] ^= 1 // the twin recovers the same key with the other parity

	badV := bytes.Clone(sig)
	badV[64] = 29

	zeroR := bytes.Clone(sig)
	copy(zeroR[:32], make([]byte, 32))

	tampered := func(f func(*RegisterMessage)) RegisterMessage { m := msg; f(&m); return m }

	cases := []struct {
		name    string
		chain   uint64
		msg     RegisterMessage
		sig     []byte
		wantErr error // nil: must verify
	}{
		{"v 0/1", chain, msg, sig, nil},
		{"v 27/28", chain, msg, wallet, nil},
		{"wrong chain", 1, msg, sig, ErrSignerMismatch},
		{"tampered txHash", chain, tampered(func(m *RegisterMessage) { m.TxHash[31] ^= 1 }), sig, ErrSignerMismatch},
		{"tampered toAddress", chain, tampered(func(m *RegisterMessage) { m.ToAddress = alice }), sig, ErrSignerMismatch},
		{"tampered outputToken", chain, tampered(func(m *RegisterMessage) { m.OutputToken = tokenA }), sig, ErrSignerMismatch},
		{"tampered domain", chain, tampered(func(m *RegisterMessage) { m.DestinationDomain = 1 }), sig, ErrSignerMismatch},
		{"high s", chain, msg, highS, ErrSignatureValues},
		{"v 29", chain, msg, badV, ErrSignatureValues},
		{"zero r", chain, msg, zeroR, ErrSignatureValues},
		{"64 bytes", chain, msg, sig[:64], ErrSignatureLength},
		{"66 bytes", chain, msg, append(bytes.Clone(sig), 0), ErrSignatureLength},
		{"empty", chain, msg, nil, ErrSignatureLength},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.chain, tc.msg, tc.sig, signer)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("verify: %v", err)
				}
				got, err := Recover(tc.chain, tc.msg, tc.sig)
				if err != nil || got != signer {
					t.Fatalf("recover %s, %v; want %s", got, err, signer)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.InvalidParams || ae.Details["param"] != "signature" {
				t.Fatalf("error %#v is not INVALID_PARAMS on signature", err)
			}
		})
	}
	// The unaltered high-s twin is a valid ECDSA signature of the same key:
	// refusing it is the check, not a corrupted signature.
	digest, _ := Hash(TypedData(chain, msg))
	if pub, err := crypto.SigToPub(digest, highS); err != nil || crypto.PubkeyToAddress(*pub) != signer {
		t.Fatalf("high-s twin does not recover the signer (%v): the case tests nothing", err)
	}
}

func TestRegisterSpecAndBody(t *testing.T) {
	spec := RegisterSpec(10)
	if spec.Domain != (quote.EIP712Domain{Name: "ServiceInboundReceiver", Version: "1", ChainID: 10}) || spec.PrimaryType != "RegisterDeposit" {
		t.Errorf("spec %+v", spec)
	}
	td := TypedData(10, sampleMessage())
	fields := spec.Types.RegisterDeposit
	if len(fields) != len(td.Types[RegisterPrimaryType]) {
		t.Fatalf("spec fields %v, typed data %v", fields, td.Types[RegisterPrimaryType])
	}
	for i, f := range fields {
		if td.Types[RegisterPrimaryType][i].Name != f.Name || td.Types[RegisterPrimaryType][i].Type != f.Type {
			t.Errorf("field %d: spec %v, typed data %v", i, f, td.Types[RegisterPrimaryType][i])
		}
	}
	body := RegisterBodyTemplate(alice, bob, tokenB, 369)
	if body.FromAddress != alice.Hex() || body.ToAddress != bob.Hex() || body.OutputToken != tokenB.Hex() ||
		body.DestinationDomain != 369 || body.TxHash != PlaceholderTxHash || body.Signature != PlaceholderSignature {
		t.Errorf("body %+v", body)
	}
}
