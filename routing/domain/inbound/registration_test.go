package inbound

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// field is one member of a test body, its value as raw JSON.
type field struct{ name, raw string }

type body []field

func quoted(s string) string { return strconv.Quote(s) }

func bodyOf(reg Registration) body {
	return body{
		{FieldTxHash, quoted(reg.TxHash.Hex())},
		{FieldFromAddress, quoted(reg.FromAddress.Hex())},
		{FieldToAddress, quoted(reg.ToAddress.Hex())},
		{FieldOutputToken, quoted(reg.OutputToken.Hex())},
		{FieldDestinationDomain, strconv.FormatUint(uint64(reg.DestinationDomain), 10)},
		{FieldSignature, quoted(hexutil.Encode(reg.Signature[:]))},
	}
}

func (b body) String() string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, f := range b {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(quoted(f.name) + ":" + f.raw)
	}
	sb.WriteByte('}')
	return sb.String()
}

// set replaces a field's value, keeping its place.
func (b body) set(name, raw string) body {
	out := append(body(nil), b...)
	for i := range out {
		if out[i].name == name {
			out[i].raw = raw
			return out
		}
	}
	panic("no field " + name)
}

// drop removes fields.
func (b body) drop(names ...string) body {
	var out body
next:
	for _, f := range b {
		for _, n := range names {
			if f.name == n {
				continue next
			}
		}
		out = append(out, f)
	}
	return out
}

// plus appends a member, known or not.
func (b body) plus(name, raw string) body { return append(append(body(nil), b...), field{name, raw}) }

// reversed is the body with its members in the opposite order.
func (b body) reversed() body {
	out := make(body, len(b))
	for i, f := range b {
		out[len(b)-1-i] = f
	}
	return out
}

func TestParse(t *testing.T) {
	reg := signedRegistration(t, "alice", 8453)
	good := bodyOf(reg)
	lower := good.set(FieldFromAddress, quoted(strings.ToLower(reg.FromAddress.Hex()))).
		set(FieldToAddress, quoted(strings.ToLower(reg.ToAddress.Hex())))
	upper := good.set(FieldFromAddress, quoted("0x"+strings.ToUpper(reg.FromAddress.Hex()[2:]))).
		set(FieldTxHash, quoted("0X"+strings.ToUpper(reg.TxHash.Hex()[2:]))).
		set(FieldSignature, quoted("0x"+strings.ToUpper(hexutil.Encode(reg.Signature[:])[2:])))
	rawV := reg
	rawV.Signature[64] -= 27
	native := reg
	native.OutputToken = common.Address{}

	// badChecksum flips the case of the first letter of a checksummed
	// address, which EIP-55 then refuses.
	badChecksum := func(a common.Address) string {
		s := []byte(a.Hex())
		for i := 2; i < len(s); i++ {
			if c := s[i]; c >= 'a' && c <= 'f' {
				s[i] = c - 'a' + 'A'
				return string(s)
			} else if c >= 'A' && c <= 'F' {
				s[i] = c - 'A' + 'a'
				return string(s)
			}
		}
		panic("address without letters")
	}
	hash := reg.TxHash.Hex()
	sig := hexutil.Encode(reg.Signature[:])
	zero := common.Address{}.Hex()

	ok := []struct {
		name string
		body string
		want Registration
	}{
		{"checksummed", good.String(), reg},
		{"lower-case addresses", lower.String(), reg},
		{"upper-case hex, 0X", upper.String(), reg},
		{"members in another order", good.reversed().String(), reg},
		{"whitespace around and inside", " \n\t{ " + strings.ReplaceAll(good.String()[1:], ",", " ,\n "), reg},
		{"v as 0/1 is kept as sent", bodyOf(rawV).String(), rawV},
		{"outputToken zero: native PLS", bodyOf(native).String(), native},
		{"escaped characters in a string", good.set(FieldToAddress, `"\u0030x`+reg.ToAddress.Hex()[2:]+`"`).String(), reg},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.body))
			if err != nil {
				t.Fatalf("Parse(%s): %v", tc.body, err)
			}
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}

	refused := []struct {
		name string
		body string
		code string
		// field is details.param (INVALID_PARAMS) or details.field
		// (VALIDATION_ERROR); empty when no field is to blame.
		field string
	}{
		{"nil body", "", apierr.InvalidBody, ""},
		{"whitespace only", " \n ", apierr.InvalidBody, ""},
		{"not JSON", "txHash=0x00", apierr.InvalidBody, ""},
		{"truncated", good.String()[:40], apierr.InvalidBody, ""},
		{"two objects", good.String() + " {}", apierr.InvalidBody, ""},
		{"data after the object", good.String() + "x", apierr.InvalidBody, ""},
		{"trailing comma", strings.TrimSuffix(good.String(), "}") + ",}", apierr.InvalidBody, ""},

		{"array", "[" + good.String() + "]", apierr.ValidationError, ""},
		{"string", `"hello"`, apierr.ValidationError, ""},
		{"number", "369", apierr.ValidationError, ""},
		{"null", "null", apierr.ValidationError, ""},

		{"unknown field", good.plus("amount", `"1"`).String(), apierr.ValidationError, "amount"},
		{"unknown field first", good.reversed().plus("chainId", "8453").reversed().String(), apierr.ValidationError, "chainId"},
		{"name in another case", good.drop(FieldTxHash).plus("TxHash", quoted(hash)).String(), apierr.ValidationError, "TxHash"},
		{"field twice, same value", good.plus(FieldTxHash, quoted(hash)).String(), apierr.ValidationError, FieldTxHash},
		{"field twice, null first", good.reversed().plus(FieldSignature, "null").reversed().String(), apierr.ValidationError, FieldSignature},
		{"txHash a number", good.set(FieldTxHash, "1").String(), apierr.ValidationError, FieldTxHash},
		{"fromAddress a boolean", good.set(FieldFromAddress, "true").String(), apierr.ValidationError, FieldFromAddress},
		{"toAddress an object", good.set(FieldToAddress, `{"address":"x"}`).String(), apierr.ValidationError, FieldToAddress},
		{"outputToken an array", good.set(FieldOutputToken, `["0x"]`).String(), apierr.ValidationError, FieldOutputToken},
		{"destinationDomain a string", good.set(FieldDestinationDomain, `"369"`).String(), apierr.ValidationError, FieldDestinationDomain},
		{"destinationDomain a boolean", good.set(FieldDestinationDomain, `false`).String(), apierr.ValidationError, FieldDestinationDomain},
		{"signature a number", good.set(FieldSignature, "0").String(), apierr.ValidationError, FieldSignature},
		{"wrong type beats a missing field", good.drop(FieldTxHash).set(FieldSignature, "0").String(), apierr.ValidationError, FieldSignature},
		{"first shape error in body order", good.set(FieldSignature, "0").set(FieldFromAddress, "1").String(), apierr.ValidationError, FieldFromAddress},
		{"invalid UTF-8 value", strings.Replace(good.String(), `"`+reg.ToAddress.Hex()+`"`, "\"0x\xff\"", 1), apierr.InvalidBody, FieldToAddress},
		{"invalid UTF-8 in an unknown key", strings.Replace(good.String(), "{", "{\"a\xffb\":1,", 1), apierr.InvalidBody, "a\ufffdb"},

		{"empty object", "{}", apierr.InvalidParams, FieldTxHash},
		{"txHash missing", good.drop(FieldTxHash).String(), apierr.InvalidParams, FieldTxHash},
		{"fromAddress missing", good.drop(FieldFromAddress).String(), apierr.InvalidParams, FieldFromAddress},
		{"toAddress missing", good.drop(FieldToAddress).String(), apierr.InvalidParams, FieldToAddress},
		{"outputToken missing", good.drop(FieldOutputToken).String(), apierr.InvalidParams, FieldOutputToken},
		{"destinationDomain missing", good.drop(FieldDestinationDomain).String(), apierr.InvalidParams, FieldDestinationDomain},
		{"signature missing", good.drop(FieldSignature).String(), apierr.InvalidParams, FieldSignature},
		{"txHash null", good.set(FieldTxHash, "null").String(), apierr.InvalidParams, FieldTxHash},
		{"destinationDomain null", good.set(FieldDestinationDomain, "null").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"signature null", good.set(FieldSignature, "null").String(), apierr.InvalidParams, FieldSignature},
		{"toAddress empty", good.set(FieldToAddress, `""`).String(), apierr.InvalidParams, FieldToAddress},
		{"outputToken empty", good.set(FieldOutputToken, `""`).String(), apierr.InvalidParams, FieldOutputToken},
		{"two missing: the first in field order", good.drop(FieldSignature, FieldFromAddress).String(), apierr.InvalidParams, FieldFromAddress},
		{"missing before malformed in field order", good.drop(FieldToAddress).set(FieldSignature, `"0x"`).String(), apierr.InvalidParams, FieldToAddress},
		{"malformed before missing in field order", good.drop(FieldSignature).set(FieldTxHash, `"0x"`).String(), apierr.InvalidParams, FieldTxHash},

		{"txHash without 0x", good.set(FieldTxHash, quoted(hash[2:])).String(), apierr.InvalidParams, FieldTxHash},
		{"txHash 0x only", good.set(FieldTxHash, `"0x"`).String(), apierr.InvalidParams, FieldTxHash},
		{"txHash 63 digits", good.set(FieldTxHash, quoted(hash[:65])).String(), apierr.InvalidParams, FieldTxHash},
		{"txHash 65 digits", good.set(FieldTxHash, quoted(hash+"0")).String(), apierr.InvalidParams, FieldTxHash},
		{"txHash non-hex", good.set(FieldTxHash, quoted(hash[:65]+"g")).String(), apierr.InvalidParams, FieldTxHash},
		{"txHash padded", good.set(FieldTxHash, quoted(" "+hash)).String(), apierr.InvalidParams, FieldTxHash},
		{"fromAddress bad checksum", good.set(FieldFromAddress, quoted(badChecksum(reg.FromAddress))).String(), apierr.InvalidParams, FieldFromAddress},
		{"fromAddress short", good.set(FieldFromAddress, quoted(reg.FromAddress.Hex()[:41])).String(), apierr.InvalidParams, FieldFromAddress},
		{"fromAddress not an EVM address", good.set(FieldFromAddress, `"alice.near"`).String(), apierr.InvalidParams, FieldFromAddress},
		{"fromAddress zero", good.set(FieldFromAddress, quoted(zero)).String(), apierr.InvalidParams, FieldFromAddress},
		{"toAddress bad checksum", good.set(FieldToAddress, quoted(badChecksum(common.HexToAddress("0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D")))).String(), apierr.InvalidParams, FieldToAddress},
		{"toAddress without 0x", good.set(FieldToAddress, quoted(reg.ToAddress.Hex()[2:])).String(), apierr.InvalidParams, FieldToAddress},
		{"toAddress zero", good.set(FieldToAddress, quoted(zero)).String(), apierr.InvalidParams, FieldToAddress},
		{"outputToken bad checksum", good.set(FieldOutputToken, quoted(badChecksum(testOutput))).String(), apierr.InvalidParams, FieldOutputToken},
		{"outputToken the word native", good.set(FieldOutputToken, `"native"`).String(), apierr.InvalidParams, FieldOutputToken},
		{"destinationDomain 368", good.set(FieldDestinationDomain, "368").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"destinationDomain 0", good.set(FieldDestinationDomain, "0").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"destinationDomain the source chain", good.set(FieldDestinationDomain, "8453").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"destinationDomain max uint32", good.set(FieldDestinationDomain, "4294967295").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"destinationDomain beyond uint32", good.set(FieldDestinationDomain, "4294967665").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"destinationDomain negative", good.set(FieldDestinationDomain, "-369").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"destinationDomain a fraction", good.set(FieldDestinationDomain, "369.0").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"destinationDomain an exponent", good.set(FieldDestinationDomain, "3.69e2").String(), apierr.InvalidParams, FieldDestinationDomain},
		{"signature 64 bytes", good.set(FieldSignature, quoted(sig[:130])).String(), apierr.InvalidParams, FieldSignature},
		{"signature 66 bytes", good.set(FieldSignature, quoted(sig+"00")).String(), apierr.InvalidParams, FieldSignature},
		{"signature odd length", good.set(FieldSignature, quoted(sig+"0")).String(), apierr.InvalidParams, FieldSignature},
		{"signature non-hex", good.set(FieldSignature, quoted(sig[:131]+"z")).String(), apierr.InvalidParams, FieldSignature},
		{"signature without 0x", good.set(FieldSignature, quoted(sig[2:]+"00")).String(), apierr.InvalidParams, FieldSignature},
		{"signature the template placeholder", good.set(FieldSignature, quoted(pulseroute.PlaceholderSignature)).String(), apierr.InvalidParams, FieldSignature},
		{"txHash the template placeholder", good.set(FieldTxHash, quoted(pulseroute.PlaceholderTxHash)).String(), apierr.InvalidParams, FieldTxHash},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.body))
			if got != (Registration{}) {
				t.Errorf("a refusal returned a registration: %+v", got)
			}
			wantAPIError(t, err, tc.code, tc.field)
			if s := err.HTTPStatus(); s != http.StatusBadRequest {
				t.Errorf("status %d, want 400", s)
			}
		})
	}
}

// TestParseEchoes checks what a malformed value's refusal shows: the value
// for hashes, addresses and domains, only the length for a signature.
func TestParseEchoes(t *testing.T) {
	good := bodyOf(signedRegistration(t, "alice", 1))
	cases := []struct {
		field, raw string
		key        string
		want       any
	}{
		{FieldTxHash, `"0x12"`, "value", "0x12"},
		{FieldToAddress, `"0x12"`, "value", "0x12"},
		{FieldDestinationDomain, `368`, "value", "368"},
		{FieldSignature, `"0x1234"`, "length", 6},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(good.set(tc.field, tc.raw).String()))
		wantAPIError(t, err, apierr.InvalidParams, tc.field)
		if err.Details[tc.key] != tc.want {
			t.Errorf("%s: details %v, want %s %v", tc.field, err.Details, tc.key, tc.want)
		}
		if tc.field == FieldSignature {
			if _, ok := err.Details["value"]; ok {
				t.Errorf("signature refusal echoes the value: %v", err.Details)
			}
		}
	}
}

func TestSignature(t *testing.T) {
	c := pulseroute.DefaultContracts()
	chains := c.SenderChains()
	if len(chains) < 2 {
		t.Fatalf("sender chains %v: too few to tell chains apart", chains)
	}
	for _, chain := range chains {
		t.Run("signed for "+strconv.FormatUint(chain, 10), func(t *testing.T) {
			reg := signedRegistration(t, "alice", chain)
			if err := VerifySignature(reg, chain); err != nil {
				t.Fatalf("verify on the signed chain: %v", err)
			}
			got, err := SourceChain(reg, chains)
			if err != nil || got != chain {
				t.Fatalf("SourceChain = %d, %v; want %d", got, err, chain)
			}
			for _, other := range chains {
				if other == chain {
					continue
				}
				err := VerifySignature(reg, other)
				wantAPIError(t, err, apierr.InvalidParams, FieldSignature)
				if !isErr(err, pulseroute.ErrSignerMismatch) {
					t.Fatalf("chain %d: %v, want a signer mismatch", other, err)
				}
			}
		})
	}

	base := signedRegistration(t, "alice", 8453)
	_, bob := testKey(t, "bob")
	notSigner := base
	notSigner.FromAddress = bob
	onlyOther := signedRegistration(t, "alice", 369) // chain 369 is no source chain
	tampered := base
	tampered.ToAddress[0] ^= 1
	highV := base
	highV.Signature[64] = 29
	rawV := base
	rawV.Signature[64] -= 27

	cases := []struct {
		name       string
		reg        Registration
		candidates []uint64
		want       error // nil: found on 8453
		code       string
	}{
		{"v 27/28", base, chains, nil, ""},
		{"v 0/1", rawV, chains, nil, ""},
		{"found among one", base, []uint64{8453}, nil, ""},
		{"fromAddress is not the signer", notSigner, chains, pulseroute.ErrSignerMismatch, apierr.InvalidParams},
		{"a field changed after signing", tampered, chains, pulseroute.ErrSignerMismatch, apierr.InvalidParams},
		{"signed for chain 369", onlyOther, chains, pulseroute.ErrSignerMismatch, apierr.InvalidParams},
		{"signed chain not among the candidates", base, []uint64{1, 10}, pulseroute.ErrSignerMismatch, apierr.InvalidParams},
		{"v 29", highV, chains, pulseroute.ErrSignatureValues, apierr.InvalidParams},
		{"no candidates", base, nil, nil, apierr.Internal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SourceChain(tc.reg, tc.candidates)
			if tc.code == "" {
				if err != nil || got != 8453 {
					t.Fatalf("SourceChain = %d, %v; want 8453", got, err)
				}
				return
			}
			if tc.code == apierr.InvalidParams {
				wantAPIError(t, err, tc.code, FieldSignature)
			} else if err == nil || err.Code != tc.code {
				t.Fatalf("error %v, want %s", err, tc.code)
			}
			if tc.want != nil && !isErr(err, tc.want) {
				t.Fatalf("error %v does not wrap %v", err, tc.want)
			}
			if got != 0 {
				t.Fatalf("chain %d with an error", got)
			}
		})
	}
}

func TestSameRegistration(t *testing.T) {
	stored := signedRegistration(t, "alice", 8453)
	key, _ := testKey(t, "alice")
	_, bob := testKey(t, "bob")
	change := func(f func(*Registration)) Registration { r := stored; f(&r); return r }
	resigned := func(f func(*Registration)) Registration {
		r := change(f)
		return sign(t, key, 8453, r)
	}
	cases := []struct {
		name  string
		fresh Registration
		same  bool
	}{
		{"identical", stored, true},
		{"v as 0/1", change(func(r *Registration) { r.Signature[64] -= 27 }), true},
		{"parsed again from its body", mustParse(t, bodyOf(stored).String()), true},
		{"parsed from lower-case hex", mustParse(t, bodyOf(stored).
			set(FieldFromAddress, quoted(strings.ToLower(stored.FromAddress.Hex()))).
			set(FieldOutputToken, quoted(strings.ToLower(stored.OutputToken.Hex()))).String()), true},
		{"another signature (s changed)", change(func(r *Registration) { r.Signature[40] ^= 1 }), false},
		{"v flipped", change(func(r *Registration) { r.Signature[64] ^= 1 }), false},
		{"another fromAddress", change(func(r *Registration) { r.FromAddress = bob }), false},
		{"another toAddress, signed", resigned(func(r *Registration) { r.ToAddress = bob }), false},
		{"another outputToken, signed", resigned(func(r *Registration) { r.OutputToken = common.Address{} }), false},
		{"another destinationDomain", change(func(r *Registration) { r.DestinationDomain = 1 }), false},
		{"another signature of the same message for another chain", sign(t, key, 1, stored), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := SameRegistration(stored, tc.fresh)
			if tc.same {
				if err != nil {
					t.Fatalf("refused a replay: %v", err)
				}
				return
			}
			wantAPIError(t, err, apierr.InvalidParams, FieldTxHash)
			if err.Details["value"] != stored.TxHash.Hex() {
				t.Errorf("details %v do not echo the txHash", err.Details)
			}
		})
	}
}

func mustParse(t *testing.T, body string) Registration {
	t.Helper()
	reg, err := Parse([]byte(body))
	if err != nil {
		t.Fatalf("Parse(%s): %v", body, err)
	}
	return reg
}
