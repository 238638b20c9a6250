package edge

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The fuzz targets of the edge's own parsers (see scripts/fuzz-targets):
// the one JSON body decoder, and the query and path parameter readers.

// fuzzBodies are the body types decodeJSON is given, one per endpoint
// shape: flat pointers, a nested object, an array, an embedded struct,
// plain strings.
var fuzzBodies = []func() any{
	func() any { return new(executeBody) },
	func() any { return new(broadcastBody) },
	func() any { return new(webhookBody) },
	func() any { return new(onramp.CheckoutBody) },
	func() any { return new(feeWalletBody) },
	func() any { return new(faucetBody) },
}

// FuzzDecodeBody: decodeJSON never panics; a refusal is INVALID_BODY or
// VALIDATION_ERROR (400), naming a field whenever the fault is in one; an
// accepted body is valid UTF-8 JSON with no key twice and decodes the same
// under encoding/json alone, and the value it gave, encoded again, decodes
// to the same value.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"quoteId":"qt_1","txHash":"0x00"}`,
		`{"chainId":42161,"from":"0x8ba1f109551bD432803012645Ac136ddd64DBA72","transactionRequest":{"to":"0x1","data":"0x","gasPrice":"0x1"}}`,
		`{"url":"https://a.example/h","events":["swap.completed"],"secret":"0123456789abcdef"}`,
		`{"fiatAmount":100.5,"fiatCurrency":"EUR","chainId":8453,"cryptoAsset":"USDC","walletAddress":"0x1","email":"a@b.c"}`,
		`{"ecosystem":"evm","address":"0x1"}`,
		`{"chainId":1,"address":"0x1","token":"native","amount":"1"}`,
		`{"quoteId":"a","quoteId":"b"}`, `{"QUOTEID":"a"}`, `{"transactionRequest":{"to":"a","to":"b"}}`,
		"{\"quoteId\":\"\xff\"}", `{"chainId":1e400}`, `{"chainId":-1}`, `{"fiatAmount":1e400}`, `{"events":[1]}`,
		`[]`, `null`, `{`, ``, `{"a":1} x`, `{"quoteId":null}`, `{"transactionRequest":[]}`,
	} {
		for i := range fuzzBodies {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		mk := fuzzBodies[int(which)%len(fuzzBodies)]
		v := mk()
		err := decodeJSON(body, v)
		if err != nil {
			switch {
			case err.HTTPStatus() != 400:
				t.Fatalf("status %d for %s", err.HTTPStatus(), err.Code)
			case err.Code == apierr.InvalidBody:
			case err.Code == apierr.ValidationError:
				// Only a body that is not an object is refused without a field.
				trimmed := bytes.Trim(body, jsonSpace)
				if _, named := err.Details["field"].(string); !named && len(trimmed) > 0 && trimmed[0] == '{' {
					t.Fatalf("VALIDATION_ERROR without a field: %s", err.Message)
				}
			default:
				t.Fatalf("code %s: %s", err.Code, err.Message)
			}
			return
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted a body that is not valid UTF-8 JSON: %q", body)
		}
		if dup, ok := repeatedKey(body); ok {
			t.Fatalf("accepted a repeated key %q", dup)
		}
		// encoding/json, strict, agrees.
		std := mk()
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if e := dec.Decode(std); e != nil {
			t.Fatalf("encoding/json refuses what decodeJSON accepted: %v", e)
		}
		if !reflect.DeepEqual(v, std) {
			t.Fatalf("decodeJSON and encoding/json disagree:\n%+v\n%+v", v, std)
		}
		// Round trip.
		enc, e := json.Marshal(v)
		if e != nil {
			t.Fatalf("encode: %v", e)
		}
		back := mk()
		if err := decodeJSON(enc, back); err != nil {
			t.Fatalf("its own encoding %s is refused: %v", enc, err)
		}
		if !reflect.DeepEqual(v, back) {
			t.Fatalf("round trip changed the value:\n%+v\n%+v", v, back)
		}
	})
}

// repeatedKey is an independent check for a key given twice in one object,
// at any depth.
func repeatedKey(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object  bool
		seen    map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].wantKey = true
				}
				stack = append(stack, &frame{object: d == '{', seen: map[string]bool{}, wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			top := stack[n-1]
			if top.wantKey {
				k := tok.(string)
				if top.seen[k] {
					return k, true
				}
				top.seen[k], top.wantKey = true, false
			} else {
				top.wantKey = true
			}
		}
	}
}

// FuzzQueryParams: the readers of query and path parameters never panic,
// refuse with INVALID_PARAMS naming the parameter they were given, and
// what they accept reads back the same.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"1", "1,137", "0", "-1", "1e400", "NaN", "2026-01-01", "2026-02-01T00:00:00Z", "2026-13-45",
		"0x" + strings.Repeat("ab", 32), "0X" + strings.Repeat("AB", 32), "usdc", "a\x00b", "\xff", "007", " 1 ", "1,,2", ",",
		"99999999999999999999999", "10000000000000000000000000000000000000000"} {
		f.Add(s)
	}
	reg, err := registry.Load()
	if err != nil {
		f.Fatal(err)
	}
	s := &Server{deps: Deps{Registry: reg}}
	f.Fuzz(func(t *testing.T, v string) {
		named := func(e *apierr.Error, param string) {
			t.Helper()
			if e.Code != apierr.InvalidParams || e.HTTPStatus() != 400 || e.Details["param"] != param {
				t.Fatalf("%q refused as %s %v, want INVALID_PARAMS naming %s", v, e.Code, e.Details, param)
			}
		}
		if c, e := s.chainParam("chain", v); e != nil {
			named(e, "chain")
		} else if c2, e := s.chainParam("chain", strconv.FormatUint(c.ID, 10)); e != nil || c2 != c {
			t.Fatalf("chain %q = %d does not read back", v, c.ID)
		}
		if cs, e := s.chainListParam("chains", v); e != nil {
			named(e, "chains")
		} else {
			ids := make([]string, len(cs))
			for i, c := range cs {
				ids[i] = strconv.FormatUint(c.ID, 10)
			}
			if cs2, e := s.chainListParam("chains", strings.Join(ids, ",")); e != nil || !reflect.DeepEqual(cs, cs2) {
				t.Fatalf("chains %q does not read back", v)
			}
		}
		if n, e := positiveIntParam("limit", v); e != nil {
			named(e, "limit")
		} else if n <= 0 || strconv.Itoa(n) != strings.TrimLeft(strings.TrimPrefix(v, "+"), "0") {
			t.Fatalf("limit %q = %d", v, n)
		}
		if tm, dateOnly, e := timeParam("from", v); e != nil {
			named(e, "from")
		} else {
			layout := time.RFC3339Nano
			if dateOnly {
				layout = time.DateOnly
			}
			if back, _, e := timeParam("from", tm.Format(layout)); e != nil || !back.Equal(tm) {
				t.Fatalf("time %q = %v does not read back", v, tm)
			}
		}
		if h, e := txHashParam("txHash", v); e != nil {
			named(e, "txHash")
			if isTxHash(v) {
				t.Fatalf("txHashParam refuses %q, isTxHash accepts it", v)
			}
		} else if !isTxHash(v) || !strings.EqualFold(h.Hex(), v) {
			t.Fatalf("txHash %q = %s", v, h.Hex())
		}
		if a, ok := decimalAmount(v); ok {
			want, _ := new(big.Int).SetString(v, 10)
			if a.Sign() <= 0 || a.Cmp(want) != 0 || a.String() != strings.TrimLeft(v, "0") {
				t.Fatalf("amount %q = %s", v, a)
			}
		}
		if e := textParam("search", v, 64); e != nil {
			named(e, "search")
		} else if len(v) > 64 || !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\n\r\t\x7f") {
			t.Fatalf("text %q accepted", v)
		}
	})
}
