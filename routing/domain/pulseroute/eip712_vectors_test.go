package pulseroute

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// eip712Vector is one RegisterDeposit message signed by ethers v6
// (testdata/gen_eip712_vectors.mjs writes them; see its header to rerun).
type eip712Vector struct {
	Name       string `json:"name"`
	PrivateKey string `json:"privateKey"`
	Address    string `json:"address"`
	ChainID    uint64 `json:"chainId"`
	Message    struct {
		TxHash            string `json:"txHash"`
		ToAddress         string `json:"toAddress"`
		OutputToken       string `json:"outputToken"`
		DestinationDomain uint32 `json:"destinationDomain"`
	} `json:"message"`
	DomainSeparator string `json:"domainSeparator"`
	StructHash      string `json:"structHash"`
	Digest          string `json:"digest"`
	Signature       string `json:"signature"`
}

// decoded is a vector with every field parsed strictly: a malformed vector
// fails the test instead of being read leniently into something else.
type decoded struct {
	eip712Vector
	signer          common.Address
	msg             RegisterMessage
	domainSeparator []byte
	structHash      []byte
	digest          []byte
	sig             []byte // as ethers gives it: v is 27 or 28
}

func hexBytes(t *testing.T, what, s string, n int) []byte {
	t.Helper()
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != n {
		t.Fatalf("%s %q: want 0x and %d bytes (%v)", what, s, n, err)
	}
	return b
}

func checksummed(t *testing.T, what, s string) common.Address {
	t.Helper()
	a, err := common.NewMixedcaseAddressFromString(s)
	if err != nil || !a.ValidChecksum() {
		t.Fatalf("%s %q is not an EIP-55 address (%v)", what, s, err)
	}
	return a.Address()
}

func loadEIP712Vectors(t *testing.T) []decoded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "eip712_vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Generator string         `json:"generator"`
		Vectors   []eip712Vector `json:"vectors"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("eip712_vectors.json: %v", err)
	}
	out := make([]decoded, 0, len(doc.Vectors))
	parity := map[byte]int{}
	chains := map[uint64]bool{}
	for _, v := range doc.Vectors {
		d := decoded{eip712Vector: v}
		d.signer = checksummed(t, v.Name+" address", v.Address)
		key, err := crypto.HexToECDSA(v.PrivateKey[2:])
		if err != nil {
			t.Fatalf("%s private key: %v", v.Name, err)
		}
		if got := crypto.PubkeyToAddress(key.PublicKey); got != d.signer {
			t.Fatalf("%s: key gives %s, vector says %s", v.Name, got.Hex(), d.signer.Hex())
		}
		d.msg = RegisterMessage{
			TxHash:            common.BytesToHash(hexBytes(t, v.Name+" txHash", v.Message.TxHash, 32)),
			ToAddress:         checksummed(t, v.Name+" toAddress", v.Message.ToAddress),
			OutputToken:       checksummed(t, v.Name+" outputToken", v.Message.OutputToken),
			DestinationDomain: v.Message.DestinationDomain,
		}
		d.domainSeparator = hexBytes(t, v.Name+" domainSeparator", v.DomainSeparator, 32)
		d.structHash = hexBytes(t, v.Name+" structHash", v.StructHash, 32)
		d.digest = hexBytes(t, v.Name+" digest", v.Digest, 32)
		d.sig = hexBytes(t, v.Name+" signature", v.Signature, 65)
		parity[d.sig[64]]++
		chains[v.ChainID] = true
		out = append(out, d)
	}
	// The cases below are only as good as the vectors' spread: both
	// recovery parities, several source chains, and more than one signer.
	if len(out) < 4 || parity[27] == 0 || parity[28] == 0 || len(parity) != 2 || len(chains) < 4 {
		t.Fatalf("%d vectors over %d chains, v values %v: too few to test anything", len(out), len(chains), parity)
	}
	return out
}

// rawV returns sig with v as 0/1, the form crypto.Sign produces.
func rawV(sig []byte) []byte {
	c := bytes.Clone(sig)
	c[64] -= 27
	return c
}

// highSTwin returns the other valid ECDSA signature of the same message and
// key: s replaced by n−s and the recovery parity flipped.
func highSTwin(sig []byte) []byte {
	c := bytes.Clone(sig)
	s := new(big.Int).SetBytes(sig[32:64])
	copy(c[32:64], common.LeftPadBytes(new(big.Int).Sub(secp256k1N, s).Bytes(), 32))
	c[64] ^= 1 // 27 <-> 28 and 0 <-> 1 alike
	return c
}

// TestEIP712VectorsHash holds the typed data and its hashing to ethers':
// the domain separator, the struct hash and the digest, each compared so a
// failure says which half of the encoding differs.
func TestEIP712VectorsHash(t *testing.T) {
	for _, v := range loadEIP712Vectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			td := TypedData(v.ChainID, v.msg)
			dom, err := td.HashStruct("EIP712Domain", td.Domain.Map())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dom, v.domainSeparator) {
				t.Errorf("domain separator %x, ethers %x", []byte(dom), v.domainSeparator)
			}
			st, err := td.HashStruct(RegisterPrimaryType, td.Message)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(st, v.structHash) {
				t.Errorf("struct hash %x, ethers %x", []byte(st), v.structHash)
			}
			digest, err := Hash(td)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(digest, v.digest) {
				t.Errorf("digest %x, ethers %x", digest, v.digest)
			}
		})
	}
}

// TestEIP712VectorsAccepted recovers ethers' signatures in both v forms,
// and signs the same digests with go-ethereum for the round trip.
func TestEIP712VectorsAccepted(t *testing.T) {
	for _, v := range loadEIP712Vectors(t) {
		key, err := crypto.HexToECDSA(v.PrivateKey[2:])
		if err != nil {
			t.Fatal(err)
		}
		digest, err := Hash(TypedData(v.ChainID, v.msg))
		if err != nil {
			t.Fatal(err)
		}
		ours, err := crypto.Sign(digest, key)
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			form string
			sig  []byte
		}{
			{"ethers, v 27/28", v.sig},
			{"ethers, v 0/1", rawV(v.sig)},
			{"go-ethereum crypto.Sign, v 0/1", ours},
			{"go-ethereum crypto.Sign, v 27/28", append(bytes.Clone(ours[:64]), ours[64]+27)},
		}
		for _, tc := range cases {
			t.Run(v.Name+"/"+tc.form, func(t *testing.T) {
				got, err := Recover(v.ChainID, v.msg, tc.sig)
				if err != nil {
					t.Fatalf("recover: %v", err)
				}
				if got != v.signer {
					t.Fatalf("recovered %s, want %s", got.Hex(), v.signer.Hex())
				}
				if err := Verify(v.ChainID, v.msg, tc.sig, v.signer); err != nil {
					t.Fatalf("verify: %v", err)
				}
			})
		}
		// Both libraries derive the nonce by RFC 6979 and normalise to low
		// s, so the same key and digest give the same signature.
		if !bytes.Equal(ours, rawV(v.sig)) {
			t.Errorf("%s: crypto.Sign gives %x, ethers %x", v.Name, ours, v.sig)
		}
	}
}

// TestEIP712VectorsRefused alters one thing of a valid vector at a time;
// each must be refused as INVALID_PARAMS on signature, with the sentinel
// that says why.
func TestEIP712VectorsRefused(t *testing.T) {
	vs := loadEIP712Vectors(t)
	for i, v := range vs {
		other := vs[(i+1)%len(vs)]
		if other.signer == v.signer {
			t.Fatal("two vectors share a signer: the wrong-signer case tests nothing")
		}
		otherChain := other.ChainID
		if otherChain == v.ChainID {
			otherChain = v.ChainID + 1
		}
		tamper := func(f func(*RegisterMessage)) RegisterMessage { m := v.msg; f(&m); return m }
		with := func(f func([]byte)) []byte { c := bytes.Clone(v.sig); f(c); return c }

		cases := []struct {
			name    string
			chain   uint64
			msg     RegisterMessage
			sig     []byte
			want    common.Address // the expected signer given to Verify
			wantErr error
		}{
			{"wrong signer", v.ChainID, v.msg, v.sig, other.signer, ErrSignerMismatch},
			{"domain chainId of another source chain", otherChain, v.msg, v.sig, v.signer, ErrSignerMismatch},
			{"domain chainId 369", 369, v.msg, v.sig, v.signer, ErrSignerMismatch},
			{"txHash tampered", v.ChainID, tamper(func(m *RegisterMessage) { m.TxHash[0] ^= 0x80 }), v.sig, v.signer, ErrSignerMismatch},
			{"toAddress tampered", v.ChainID, tamper(func(m *RegisterMessage) { m.ToAddress[19] ^= 1 }), v.sig, v.signer, ErrSignerMismatch},
			{"outputToken tampered", v.ChainID, tamper(func(m *RegisterMessage) { m.OutputToken = other.msg.OutputToken; m.OutputToken[0] ^= 1 }), v.sig, v.signer, ErrSignerMismatch},
			{"destinationDomain tampered", v.ChainID, tamper(func(m *RegisterMessage) { m.DestinationDomain ^= 1 }), v.sig, v.signer, ErrSignerMismatch},
			{"r tampered", v.ChainID, v.msg, with(func(s []byte) { s[31] ^= 1 }), v.signer, nil},
			{"high s, v 27/28", v.ChainID, v.msg, highSTwin(v.sig), v.signer, ErrSignatureValues},
			{"high s, v 0/1", v.ChainID, v.msg, highSTwin(rawV(v.sig)), v.signer, ErrSignatureValues},
			{"v 2", v.ChainID, v.msg, with(func(s []byte) { s[64] = 2 }), v.signer, ErrSignatureValues},
			{"v 26", v.ChainID, v.msg, with(func(s []byte) { s[64] = 26 }), v.signer, ErrSignatureValues},
			{"v 29", v.ChainID, v.msg, with(func(s []byte) { s[64] = 29 }), v.signer, ErrSignatureValues},
			{"v 255", v.ChainID, v.msg, with(func(s []byte) { s[64] = 255 }), v.signer, ErrSignatureValues},
			{"zero s", v.ChainID, v.msg, with(func(s []byte) { clear(s[32:64]) }), v.signer, ErrSignatureValues},
			{"64 bytes (no v)", v.ChainID, v.msg, v.sig[:64], v.signer, ErrSignatureLength},
			{"66 bytes", v.ChainID, v.msg, append(bytes.Clone(v.sig), 0), v.signer, ErrSignatureLength},
			{"empty", v.ChainID, v.msg, nil, v.signer, ErrSignatureLength},
		}
		for _, tc := range cases {
			t.Run(v.Name+"/"+tc.name, func(t *testing.T) {
				err := Verify(tc.chain, tc.msg, tc.sig, tc.want)
				if err == nil {
					t.Fatal("verified")
				}
				// A tampered r either fails to recover or recovers a
				// stranger; which one depends on the curve, both refuse.
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Code != apierr.InvalidParams || ae.Details["param"] != "signature" {
					t.Fatalf("error %#v is not INVALID_PARAMS on signature", err)
				}
			})
		}

		// The high-s twin is a valid signature by the same key (the curve
		// check alone accepts it): refusing it is the malleability rule at
		// work, not a broken signature.
		twin := highSTwin(rawV(v.sig))
		if pub, err := crypto.SigToPub(v.digest, twin); err != nil || crypto.PubkeyToAddress(*pub) != v.signer {
			t.Fatalf("%s: the high-s twin does not recover the signer (%v): that case tests nothing", v.Name, err)
		}
	}
}
