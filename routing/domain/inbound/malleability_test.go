package inbound

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// secp256k1N is the curve order: s and N-s both verify, the high-s twin
// with the other recovery parity.
var secp256k1N = crypto.S256().Params().N

// withSig returns reg with the signature's r, s and v replaced.
func withSig(reg Registration, r, s *big.Int, v byte) Registration {
	copy(reg.Signature[:32], common.LeftPadBytes(r.Bytes(), 32))
	copy(reg.Signature[32:64], common.LeftPadBytes(s.Bytes(), 32))
	reg.Signature[64] = v
	return reg
}

// TestSignatureMalleabilityRefused: of the forms one signature can be
// written in, only v as 27/28 or 0/1 is accepted, and both are the same
// registration; the high-s twin (a valid ECDSA signature of the same key
// and message), other v values (EIP-155's among them), out-of-range r or s
// and the other parity are refused, by SourceChain when the registration
// is new and by SameRegistration when its txHash is already registered,
// so no second form of a registered body is taken as a replay.
func TestSignatureMalleabilityRefused(t *testing.T) {
	chains := pulseroute.DefaultContracts().SenderChains()
	stored := signedRegistration(t, "alice", 8453)
	r := new(big.Int).SetBytes(stored.Signature[:32])
	s := new(big.Int).SetBytes(stored.Signature[32:64])
	v := stored.Signature[64] // 27 or 28
	highS := new(big.Int).Sub(secp256k1N, s)
	flip := func(v byte) byte { return 27 + ((v - 27) ^ 1) }

	cases := []struct {
		name string
		reg  Registration
		want error // nil: accepted on 8453 and the same registration
	}{
		{"as signed, v 27/28", stored, nil},
		{"v 0/1", withSig(stored, r, s, v-27), nil},
		{"high-s twin, v 27/28", withSig(stored, r, highS, flip(v)), pulseroute.ErrSignatureValues},
		{"high-s twin, v 0/1", withSig(stored, r, highS, flip(v)-27), pulseroute.ErrSignatureValues},
		{"high s, parity kept", withSig(stored, r, highS, v), pulseroute.ErrSignatureValues},
		{"other parity", withSig(stored, r, s, flip(v)), pulseroute.ErrSignerMismatch},
		{"r zero", withSig(stored, new(big.Int), s, v), pulseroute.ErrSignatureValues},
		{"s zero", withSig(stored, r, new(big.Int), v), pulseroute.ErrSignatureValues},
		{"r the curve order", withSig(stored, secp256k1N, s, v), pulseroute.ErrSignatureValues},
		{"r past the curve order", withSig(stored, new(big.Int).Add(r, secp256k1N), s, v), pulseroute.ErrSignatureValues},
		{"s the curve order", withSig(stored, r, secp256k1N, v), pulseroute.ErrSignatureValues},
	}
	for _, bad := range []byte{2, 3, 4, 26, 29, 30, 31, 35, 36, 37, 38, 127, 128, 255} {
		cases = append(cases, struct {
			name string
			reg  Registration
			want error
		}{"v " + strconv.Itoa(int(bad)), withSig(stored, r, s, bad), pulseroute.ErrSignatureValues})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SourceChain(tc.reg, chains)
			same := SameRegistration(stored, tc.reg)
			if tc.want == nil {
				if err != nil || got != 8453 || same != nil {
					t.Fatalf("SourceChain = %d, %v; SameRegistration = %v; want 8453 and the same registration", got, err, same)
				}
				return
			}
			wantAPIError(t, err, apierr.InvalidParams, FieldSignature)
			if !isErr(err, tc.want) || got != 0 {
				t.Fatalf("SourceChain = %d, %v; want a refusal wrapping %v", got, err, tc.want)
			}
			wantAPIError(t, same, apierr.InvalidParams, FieldTxHash)
		})
	}
}

// TestRegistrationReplayOnAnotherChain: a registration body binds the
// source chain its signature's domain names, and only that one. Sent again
// unchanged it is found on that chain alone, so its txHash is looked up
// there and nowhere else; no candidate list without that chain accepts
// it; the same message signed for another chain (another source chain, or
// chain 369 itself) is another registration, refused as a replay of the
// stored one.
func TestRegistrationReplayOnAnotherChain(t *testing.T) {
	chains := pulseroute.DefaultContracts().SenderChains()
	key, _ := testKey(t, "alice")
	for _, signed := range chains {
		t.Run("signed for "+strconv.FormatUint(signed, 10), func(t *testing.T) {
			stored := signedRegistration(t, "alice", signed)
			if got, err := SourceChain(stored, chains); err != nil || got != signed {
				t.Fatalf("SourceChain = %d, %v; want %d", got, err, signed)
			}
			var others []uint64
			for _, c := range chains {
				if c != signed {
					others = append(others, c)
					if err := VerifySignature(stored, c); !isErr(err, pulseroute.ErrSignerMismatch) {
						t.Fatalf("verified on chain %d: %v", c, err)
					}
				}
			}
			if got, err := SourceChain(stored, others); !isErr(err, pulseroute.ErrSignerMismatch) || got != 0 {
				t.Fatalf("SourceChain without %d = %d, %v", signed, got, err)
			}
			if err := SameRegistration(stored, stored); err != nil {
				t.Fatalf("the same body again: %v", err)
			}
			for _, other := range append(others, 369) {
				resigned := sign(t, key, other, stored)
				if err := SameRegistration(stored, resigned); err == nil {
					t.Fatalf("the message signed for chain %d taken as a replay of the one for %d", other, signed)
				}
			}
		})
	}
}
