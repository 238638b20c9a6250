package inbound

import (
	"encoding/json"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// The fuzz targets of the registration of multi-step deposits (see
// scripts/fuzz-targets): its body parser and its EIP-712 signature check.

var fieldNames = map[string]bool{FieldTxHash: true, FieldFromAddress: true, FieldToAddress: true,
	FieldOutputToken: true, FieldDestinationDomain: true, FieldSignature: true}

// encodeRegistration writes a registration as a client sends it.
func encodeRegistration(r Registration) []byte {
	b, _ := json.Marshal(map[string]any{
		FieldTxHash: r.TxHash.Hex(), FieldFromAddress: r.FromAddress.Hex(), FieldToAddress: r.ToAddress.Hex(),
		FieldOutputToken: r.OutputToken.Hex(), FieldDestinationDomain: r.DestinationDomain,
		FieldSignature: hexutil.Encode(r.Signature[:]),
	})
	return b
}

// FuzzParse: Parse is total. A refusal is INVALID_BODY, VALIDATION_ERROR
// or INVALID_PARAMS (400); INVALID_PARAMS names one of the six fields,
// VALIDATION_ERROR the field at fault of a body that is an object. What it
// accepts is a registration that, written out again, parses to itself.
func FuzzParse(f *testing.F) {
	reg := signedRegistration(f, "fuzz", 8453)
	good := encodeRegistration(reg)
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"txHash":"0x00","txHash":"0x00"}`))
	f.Add([]byte(`{"TXHASH":1}`))
	f.Add([]byte("{\"txHash\":\"\xff\"}"))
	f.Add([]byte(`{"destinationDomain":369.0}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := Parse(body)
		if err != nil {
			if got != (Registration{}) {
				t.Fatal("a refusal returned a registration")
			}
			if err.HTTPStatus() != 400 {
				t.Fatalf("status %d (%s)", err.HTTPStatus(), err.Code)
			}
			switch err.Code {
			case apierr.InvalidParams:
				if p, _ := err.Details["param"].(string); !fieldNames[p] {
					t.Fatalf("INVALID_PARAMS names %q: %s", p, err.Message)
				}
			case apierr.ValidationError:
				if _, ok := err.Details["field"].(string); !ok && err.Message != "request body must be a JSON object" {
					t.Fatalf("VALIDATION_ERROR names no field: %s", err.Message)
				}
			case apierr.InvalidBody:
			default:
				t.Fatalf("code %s: %s", err.Code, err.Message)
			}
			return
		}
		if got.DestinationDomain != DestinationDomain || got.FromAddress == (common.Address{}) || got.ToAddress == (common.Address{}) {
			t.Fatalf("accepted %+v", got)
		}
		again, err := Parse(encodeRegistration(got))
		if err != nil || again != got {
			t.Fatalf("%+v written out again parses to %+v, %v", got, again, err)
		}
	})
}

// FuzzSourceChain: the signature check never panics and refuses any
// signature that is not the depositor's with INVALID_PARAMS naming
// signature; a signature it accepts recovers fromAddress on the chain it
// names, and the v it was sent with does not matter (27/28 or 0/1).
func FuzzSourceChain(f *testing.F) {
	chains := []uint64{1, 10, 56, 137, 8453, 42161, 43114}
	reg := signedRegistration(f, "fuzz", 8453)
	f.Add(reg.Signature[:], reg.FromAddress.Bytes(), reg.ToAddress.Bytes(), uint32(369))
	f.Add(make([]byte, 65), reg.FromAddress.Bytes(), reg.ToAddress.Bytes(), uint32(369))
	high := reg.Signature
	high[32] |= 0x80 // s in the upper half
	f.Add(high[:], reg.FromAddress.Bytes(), reg.ToAddress.Bytes(), uint32(369))
	f.Fuzz(func(t *testing.T, sig, from, to []byte, domain uint32) {
		r := reg
		copy(r.Signature[:], sig)
		r.FromAddress = common.BytesToAddress(from)
		r.ToAddress = common.BytesToAddress(to)
		r.DestinationDomain = domain
		id, err := SourceChain(r, chains)
		if err != nil {
			if err.Code != apierr.InvalidParams || err.HTTPStatus() != 400 || err.Details["param"] != FieldSignature {
				t.Fatalf("refusal %s %v: %s", err.Code, err.Details, err.Message)
			}
			return
		}
		got, e := pulseroute.Recover(id, r.Message(), r.Signature[:])
		if e != nil || got != r.FromAddress {
			t.Fatalf("accepted for chain %d, but the signature recovers %s (%v), not %s", id, got.Hex(), e, r.FromAddress.Hex())
		}
		flipped := r
		if v := &flipped.Signature[SignatureLength-1]; *v >= 27 {
			*v -= 27
		} else {
			*v += 27
		}
		if id2, err := SourceChain(flipped, chains); err != nil || id2 != id {
			t.Fatalf("the same signature with v written the other way: %d, %v", id2, err)
		}
	})
}
