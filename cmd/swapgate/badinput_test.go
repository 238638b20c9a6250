package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// The bad-input table: every endpoint the edge registers, sent every kind of
// bad input a client or an attacker can produce — missing, repeated and
// conflicting parameters, wrong types, huge, negative and non-finite
// numbers, over-long strings, invalid UTF-8, NUL bytes, unknown and
// repeated JSON keys, deep nesting, wrong or absent Content-Type, empty,
// truncated and oversized bodies, path traversal in path parameters, and
// request heads beyond the server's limit — through the real server over raw
// TCP, so that nothing a Go client would refuse to send is left out. Each
// case is generated from the endpoint's description below and must be
// answered within badTimeout with a 4xx in the envelope (an HTML page on the
// checkout's page routes), with the contract's code for it and the parameter
// named: details.param for INVALID_PARAMS and NOT_FOUND, details.field for
// VALIDATION_ERROR and for INVALID_BODY where the fault sits in one field.
// Never a 5xx, never a panic, never a hang.

// badTimeout bounds every request of the table.
const badTimeout = 5 * time.Second

// badKind is what a parameter or a body field holds, which decides the bad
// values it is sent.
type badKind int

const (
	badID       badKind = iota // an identifier, address, hash or enum: checked for its form
	badText                    // free text: bounded, valid UTF-8, no control characters
	badUint                    // a positive integer (a chain id, a limit)
	badAmount                  // a positive integer of base units, up to 2^256-1
	badUintList                // comma-separated positive integers
	badNumber                  // a non-negative decimal number
	badTime                    // a date or an RFC 3339 time
	badArray                   // (bodies) an array of strings
	badObject                  // (bodies) an object with fields of its own
)

// badParam is a query or path parameter: its name, a valid value ("" when
// the endpoint has none to offer without state) and whether it is required.
type badParam struct {
	name     string
	valid    string
	kind     badKind
	required bool
}

// badField is a JSON body field: valid is its valid JSON value.
type badField struct {
	name     string
	valid    string
	kind     badKind
	required bool
	fields   []badField // of a badObject
	// extra are bad values of this field alone (name, JSON value).
	extra [][2]string
}

// badEndpoint is one registered endpoint as the table drives it.
type badEndpoint struct {
	method string
	path   string // the registered pattern, {name} for path parameters
	params []badParam
	query  []badParam
	body   []badField // nil: the endpoint takes no body
	key    bool       // a partner key is sent (required on /v1/partner/...)
	html   bool       // a page route: refusals are HTML pages
	idem   bool       // honours Idempotency-Key
	// formBody is sent as a form (the checkout's buttons) instead of JSON.
	formBody string
	// conflicts are members added to the valid body that contradict it
	// (name, JSON members, the field or parameter the refusal must name).
	conflicts [][3]string
}

// badWant is what a case must be answered with.
type badWant struct {
	codes []string // one of these codes; empty: any 4xx code of the contract
	name  string   // the parameter or field the refusal must name; "" for none
}

type badCase struct {
	name string
	raw  []byte
	want badWant
	html bool
}

// badFixture holds what the table's valid values come from.
type badFixture struct {
	key            string
	quoteID        string
	depositAddress string
}

const (
	badWallet   = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	badArbUSDC  = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	badBaseUSDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	badPLSX     = "0x95B303987A60C71504D99Aa1b13B4DA07b0790ab"
)

var (
	badHash = "0x" + strings.Repeat("ab", 32)
	badSig  = "0x" + strings.Repeat("cd", 65)
)

func badQuoteParams() []badParam {
	return []badParam{
		{"fromChain", "42161", badUint, true},
		{"toChain", "8453", badUint, true},
		{"fromToken", badArbUSDC, badID, true},
		{"toToken", badBaseUSDC, badID, true},
		{"fromAmount", "100000000", badAmount, true},
		{"fromAddress", badWallet, badID, true},
		{"toAddress", badWallet, badID, false},
		// toAmount has no valid value beside fromAmount (exactly one of the
		// two is given), so it is sent only bad, each refusal naming it.
		{"toAmount", "", badAmount, false},
		{"refundTo", badWallet, badID, false},
		{"slippage", "0.005", badNumber, false},
		{"tools", "sbx-canal", badID, false},
		{"denyTools", "sbx-intents", badID, false},
		{"preferredTool", "sbx-canal", badID, false},
		{"order", "FASTEST", badID, false},
		{"approvalAmount", "max", badID, false},
	}
}

// badEndpoints describes every endpoint the edge registers (the test below
// holds the list to edge's s.Handle calls).
func badEndpoints(f badFixture) []badEndpoint {
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []badEndpoint{
		{method: "GET", path: "/healthz"},
		{method: "GET", path: "/readyz"},
		{method: "GET", path: "/v1/ping"},
		{method: "GET", path: "/v1/openapi.json"},
		{method: "GET", path: "/docs"},
		{method: "GET", path: "/docs/{name}", params: []badParam{{"name", "docs.css", badID, true}}},
		{method: "GET", path: "/logos/tokens/{chainId}/{file}", params: []badParam{{"chainId", "42161", badUint, true},
			{"file", "0xaf88d065e77c8cc2239327c5edb3a432268e5831.svg", badID, true}}},
		{method: "GET", path: "/logos/chains/{file}", params: []badParam{{"file", "42161.svg", badID, true}}},
		{method: "GET", path: "/logos/tools/{file}", params: []badParam{{"file", "sbx-canal.svg", badID, true}}},
		{method: "GET", path: "/v1/chains"},
		{method: "GET", path: "/v1/tools"},
		{method: "GET", path: "/v1/tokens", query: []badParam{
			{"chains", "1,137", badUintList, false},
			{"chainTypes", "EVM", badID, false},
			{"search", "usdc", badText, false},
			{"minPriceUSD", "0.5", badNumber, false},
			{"limit", "3", badUint, false},
		}},
		{method: "GET", path: "/v1/connections", query: []badParam{
			{"fromChain", "42161", badUint, false},
			{"toChain", "8453", badUint, false},
			{"fromToken", badArbUSDC, badID, false},
			{"toToken", badBaseUSDC, badID, false},
		}},
		{method: "GET", path: "/v1/gas-prices", query: []badParam{{"chainId", "1,137", badUintList, true}}},
		{method: "GET", path: "/v1/partner/me", key: true},
		{method: "GET", path: "/v1/partner/usage", key: true},
		{method: "GET", path: "/v1/partner/me/fee-wallets", key: true},
		{method: "PUT", path: "/v1/partner/me/fee-wallets", key: true, body: []badField{
			{name: "ecosystem", valid: str("evm"), kind: badID, required: true},
			{name: "address", valid: str(badWallet), kind: badID, required: true},
		}},
		{method: "DELETE", path: "/v1/partner/me/fee-wallets/{ecosystem}", key: true,
			params: []badParam{{"ecosystem", "sui", badID, true}}},
		{method: "GET", path: "/v1/partner/me/earnings", key: true},
		{method: "GET", path: "/v1/partner/stats", key: true, query: []badParam{
			{"from", "2026-01-01", badTime, false},
			{"to", "2026-02-01T00:00:00Z", badTime, false},
		}},
		{method: "GET", path: "/v1/partner/transactions", key: true, query: []badParam{
			{"limit", "10", badUint, false},
			{"cursor", "", badID, false},
			{"status", "DONE", badText, false},
			{"chain", "1", badUint, false},
			{"minFeeUsd", "0.01", badNumber, false},
			{"wallet", badWallet, badID, false},
		}},
		{method: "GET", path: "/v1/quote", query: badQuoteParams()},
		{method: "GET", path: "/v1/quote/stream", query: badQuoteParams()},
		{method: "GET", path: "/v1/routes", query: append(badQuoteParams(), badParam{"sortBy", "speed", badID, false})},
		{method: "POST", path: "/v1/partner/webhooks", key: true, idem: true, body: []badField{
			{name: "url", valid: str("https://127.0.0.1:9443/hook"), kind: badID, required: true,
				extra: [][2]string{{"10 kB https", str("https://127.0.0.1:9443/" + strings.Repeat("a", 10<<10))}, {"http", str("http://127.0.0.1:9443/hook")}}},
			{name: "events", valid: `["swap.completed"]`, kind: badArray, required: true},
			{name: "secret", valid: str("whsec_local_0123456789"), kind: badText, required: true},
		}},
		{method: "GET", path: "/v1/partner/webhooks", key: true},
		{method: "DELETE", path: "/v1/partner/webhooks/{id}", key: true, params: []badParam{{"id", "", badID, true}}},
		{method: "GET", path: "/v1/partner/webhooks/{id}/deliveries", key: true, params: []badParam{{"id", "", badID, true}}},
		{method: "POST", path: "/v1/partner/webhooks/{id}/test", key: true, idem: true, params: []badParam{{"id", "", badID, true}}},
		{method: "POST", path: "/v1/partner/webhooks/{id}/deliveries/{deliveryId}/resend", key: true, idem: true,
			params: []badParam{{"id", "", badID, true}, {"deliveryId", "dlv_000000000000000000000000", badID, true}}},
		{method: "GET", path: "/v1/sandbox/mailbox", query: []badParam{{"email", "ops@acme.example", badID, true}}},
		// The partner portal's pages and forms, signed out: every form is
		// refused (403) before it is read, every page with an unknown key.
		{method: "GET", path: "/portal", html: true},
		{method: "GET", path: "/portal/assets/{name}", html: true, params: []badParam{{"name", "portal.css", badID, true}}},
		{method: "POST", path: "/portal/sign-in/code", html: true, formBody: "csrf=x&email=ops%40acme.example"},
		{method: "POST", path: "/portal/sign-in", html: true, formBody: "csrf=x&email=ops%40acme.example&code=123456"},
		{method: "POST", path: "/portal/sign-out", html: true, formBody: "csrf=x"},
		{method: "GET", path: "/portal/transactions", html: true},
		{method: "GET", path: "/portal/transactions.csv", html: true},
		{method: "GET", path: "/portal/key", html: true},
		{method: "POST", path: "/portal/key/rotate", html: true, formBody: "csrf=x"},
		{method: "POST", path: "/portal/key/origins", html: true, formBody: "csrf=x&origins=https%3A%2F%2Fapp.example%2Fpath"},
		{method: "GET", path: "/portal/wallets", html: true},
		{method: "POST", path: "/portal/wallets", html: true, formBody: "csrf=x&ecosystem=evm&address=x"},
		{method: "POST", path: "/portal/wallets/{ecosystem}/delete", html: true, formBody: "csrf=x", params: []badParam{{"ecosystem", "evm", badID, true}}},
		{method: "GET", path: "/portal/webhooks", html: true},
		{method: "POST", path: "/portal/webhooks", html: true, formBody: "csrf=x&url=https%3A%2F%2Fexample.com&events=swap.completed"},
		{method: "POST", path: "/portal/webhooks/{id}/delete", html: true, formBody: "csrf=x", params: []badParam{{"id", "", badID, true}}},
		{method: "POST", path: "/portal/webhooks/{id}/test", html: true, formBody: "csrf=x", params: []badParam{{"id", "", badID, true}}},
		{method: "POST", path: "/portal/webhooks/{id}/deliveries/{deliveryId}/resend", html: true, formBody: "csrf=x",
			params: []badParam{{"id", "", badID, true}, {"deliveryId", "", badID, true}}},
		{method: "POST", path: "/v1/inbound-receiver/register", idem: true, body: []badField{
			{name: "txHash", valid: str(badHash), kind: badID, required: true},
			{name: "fromAddress", valid: str(badWallet), kind: badID, required: true},
			{name: "toAddress", valid: str(badWallet), kind: badID, required: true},
			{name: "outputToken", valid: str(badPLSX), kind: badID, required: true},
			{name: "destinationDomain", valid: "369", kind: badUint, required: true},
			{name: "signature", valid: str(badSig), kind: badID, required: true},
		}},
		{method: "GET", path: "/v1/inbound-receiver/deposits/{txHash}", params: []badParam{{"txHash", badHash, badID, true}}},
		{method: "POST", path: "/v1/execute", idem: true, body: []badField{
			{name: "quoteId", valid: str(f.quoteID), kind: badID, required: true},
			{name: "txHash", valid: str(badHash), kind: badID},
			{name: "depositMode", valid: "", kind: badID},
		}},
		// quoteId conflicts with txHash: TestStatusWithoutExecuteE2E sends it.
		{method: "GET", path: "/v1/status", query: []badParam{{"txHash", badHash, badID, true}, {"fromChain", "42161", badUint, false}}},
		// The stream's other ways (depositAddress, orderUid) conflict with
		// txHash: TestStatusStreamRefusals sends those.
		{method: "GET", path: "/v1/status/stream", query: []badParam{{"txHash", badHash, badID, true}}},
		{method: "POST", path: "/v1/execute/deposit/submit", idem: true, body: []badField{
			{name: "txHash", valid: str(badHash), kind: badID, required: true},
			{name: "depositAddress", valid: str(f.depositAddress), kind: badID, required: true},
			{name: "memo", valid: "", kind: badText},
		}},
		{method: "GET", path: "/v1/execute/deposit/status", query: []badParam{
			{"depositAddress", f.depositAddress, badID, true},
			{"depositMemo", "", badText, false},
		}},
		{method: "POST", path: "/v1/onramp/quote", body: badOnrampFields(str, false), conflicts: badOnrampConflicts},
		{method: "POST", path: "/v1/onramp/checkout", idem: true, body: badOnrampFields(str, true),
			conflicts: append([][3]string{{"returnUrl other than redirectUrl", `"returnUrl":"https://other.example/"`, "returnUrl"}}, badOnrampConflicts...)},
		{method: "GET", path: "/v1/onramp/status", query: []badParam{{"orderUid", "", badID, true}}},
		{method: "GET", path: "/v1/onramp/config"},
		{method: "GET", path: "/v1/onramp/assets", query: []badParam{{"chainId", "8453", badUint, false}}},
		{method: "GET", path: "/checkout/assets/{name}", html: true, params: []badParam{{"name", "checkout.css", badID, true}}},
		{method: "GET", path: "/checkout/{orderUid}", html: true, params: []badParam{{"orderUid", "", badID, true}}},
		{method: "GET", path: "/checkout/{orderUid}/state", params: []badParam{{"orderUid", "", badID, true}}},
		{method: "POST", path: "/checkout/{orderUid}/{action}", html: true, formBody: "csrf=x",
			params: []badParam{{"orderUid", "", badID, true}, {"action", "pay", badID, true}}},
		{method: "POST", path: "/v1/sandbox/broadcast", idem: true, body: []badField{
			{name: "chainId", valid: "42161", kind: badUint, required: true},
			{name: "from", valid: str(badWallet), kind: badID, required: true},
			{name: "transactionRequest", kind: badObject, required: true, fields: []badField{
				{name: "to", valid: str(badArbUSDC), kind: badID, required: true},
				{name: "data", valid: str("0x095ea7b3"), kind: badID},
				{name: "value", valid: str("0x0"), kind: badID},
				{name: "gasLimit", valid: str("100000"), kind: badID},
				{name: "from", valid: str(badWallet), kind: badID,
					extra: [][2]string{{"another address", str("0x1111111111111111111111111111111111111111")}}},
				{name: "chainId", valid: "42161", kind: badUint, extra: [][2]string{{"another chain", "8453"}}},
				{name: "gasPrice", valid: str("0x1"), kind: badID},
			}},
		}},
		{method: "POST", path: "/v1/sandbox/faucet", idem: true, body: []badField{
			{name: "chainId", valid: "42161", kind: badUint, required: true},
			{name: "address", valid: str(badWallet), kind: badID, required: true},
			{name: "token", valid: str(badArbUSDC), kind: badID, required: true},
			{name: "amount", valid: str("1000000"), kind: badID, required: true},
		}},
		{method: "POST", path: "/v1/sandbox/gas", idem: true, body: []badField{
			{name: "chainId", valid: "42161", kind: badUint, required: true},
			{name: "baseFeePerGas", valid: str("1000000"), kind: badID, required: true},
		}},
		{method: "GET", path: "/v1/sandbox/tx/{txHash}", params: []badParam{{"txHash", badHash, badID, true}}},
		{method: "GET", path: "/v1/balances", query: []badParam{
			{"address", badWallet, badID, true},
			{"chains", "42161,8453", badUintList, false},
		}},
	}
}

// badOnrampConflicts give both names of one input with different values.
var badOnrampConflicts = [][3]string{
	{"cryptoToken other than cryptoAsset", `"cryptoToken":"ETH"`, "cryptoAsset"},
	{"cryptoChain other than chainId", `"cryptoChain":"arb"`, "chainId"},
	{"paymentMode other than paymentMethod", `"paymentMode":"bank_transfer"`, "paymentMode"},
	{"cryptoChain unknown beside chainId", `"cryptoChain":"nowhere"`, "cryptoChain"},
}

func badOnrampFields(str func(string) string, checkout bool) []badField {
	fs := []badField{
		{name: "fiatAmount", valid: "100", kind: badNumber, required: true},
		{name: "fiatCurrency", valid: str("EUR"), kind: badID, required: true},
		{name: "chainId", valid: "8453", kind: badUint, required: true},
		{name: "cryptoAsset", valid: str("USDC"), kind: badID, required: true},
		{name: "paymentMethod", valid: str("credit_card"), kind: badID},
		{name: "walletAddress", valid: str(badWallet), kind: badID, required: checkout},
		{name: "userCountry", valid: str("DE"), kind: badID},
	}
	if checkout {
		fs = append(fs,
			badField{name: "redirectUrl", valid: str("https://shop.example/done?order=UID"), kind: badID,
				extra: [][2]string{{"10 kB https", str("https://shop.example/" + strings.Repeat("a", 10<<10))}, {"javascript", str("javascript:alert(1)")}}},
			badField{name: "email", valid: str("buyer@shop.example"), kind: badID,
				extra: [][2]string{{"NUL before the @", `"a\u0000@shop.example"`}, {"tab in the domain", `"a@shop\t.example"`}, {"two @", `"a@@shop.example"`}}},
			badField{name: "externalId", valid: str("order-42"), kind: badText,
				extra: [][2]string{{"C1 control", `"a\u0085b"`}, {"129 bytes", str(strings.Repeat("x", 129))}}},
		)
	}
	return fs
}

// Bad values of query and path parameters, percent-encoded as sent.
var (
	badLongValue  = strings.Repeat("a", 3000) // within the head limit: reaches the handler
	badQueryMixed = [][2]string{
		{"invalid UTF-8", "%FF%FE"},
		{"NUL", "%00"},
		{"control character", "%0A"},
		{"3 kB", badLongValue},
	}
	badQueryForm = [][2]string{
		{"traversal", "..%2F..%2Fv1%2Fping"},
		{"encoded slash", "a%2Fb"},
		{"dot-dot", ".."},
		{"spaces", "%20%20"},
	}
	badQueryUint = [][2]string{
		{"not a number", "abc"}, {"1e400", "1e400"}, {"negative", "-1"}, {"NaN", "NaN"},
		{"Infinity", "Infinity"}, {"fraction", "1.5"}, {"hex", "0x10"}, {"zero", "0"},
		{"beyond uint64", "99999999999999999999999"},
	}
	badQueryNumber = [][2]string{
		{"negative", "-1"}, {"NaN", "NaN"}, {"Inf", "Inf"}, {"-Inf", "-Inf"}, {"1e400", "1e400"}, {"not a number", "abc"},
	}
	badQueryTime = [][2]string{
		{"words", "yesterday"}, {"month 13", "2025-13-45"}, {"negative", "-1"}, {"1e400", "1e400"},
	}
)

// badQueryValues are the bad values of a parameter of kind k.
func badQueryValues(k badKind) [][2]string {
	vals := append([][2]string{}, badQueryMixed...)
	switch k {
	case badID:
		vals = append(vals, badQueryForm...)
	case badUint:
		vals = append(vals, badQueryUint...)
		vals = append(vals, badQueryForm...)
	case badAmount:
		for _, v := range badQueryUint {
			if v[0] != "beyond uint64" {
				vals = append(vals, v)
			}
		}
		vals = append(vals, [2]string{"2^256", "115792089237316195423570985008687907853269984665640564039457584007913129639936"})
	case badUintList:
		vals = append(vals, badQueryUint...)
		vals = append(vals, [][2]string{{"trailing comma", "1,"}, {"empty item", "1,,137"}, {"bad item", "1,abc"}}...)
	case badNumber:
		vals = append(vals, badQueryNumber...)
	case badTime:
		vals = append(vals, badQueryTime...)
	}
	return vals
}

// badPathValues are the bad values of a path parameter, as sent.
var badPathValues = [][2]string{
	{"traversal", "..%2F..%2Fv1%2Fping"},
	{"encoded traversal", "%2E%2E%2F%2E%2E%2Fv1%2Fping"},
	{"encoded slash", "a%2Fb"},
	{"backslash", "..%5C..%5Cv1"},
	{"NUL", "%00"},
	{"invalid UTF-8", "%FF%FE"},
	{"3 kB", badLongValue},
	{"dot", "."},
}

// Bad JSON values of body fields.
var (
	badJSONWrongTypeString = [][2]string{{"number", "1"}, {"boolean", "true"}, {"array", "[]"}, {"object", "{}"}}
	badJSONStringValues    = [][2]string{
		{"10 kB", `"` + strings.Repeat("a", 10<<10) + `"`},
		{"NUL", `"\u0000"`},
		{"control character", `"a\nb"`},
		{"traversal", `"..%2F..%2Fv1%2Fping"`},
	}
	badJSONNumberValues = [][2]string{
		{"1e400", "1e400"}, {"negative", "-1"}, {"fraction", "1.5"}, {"beyond uint64", "99999999999999999999999"}, {"zero", "0"},
		{"huge", "1e308"},
	}
	badJSONWrongTypeNumber = [][2]string{{"string", `"1"`}, {"boolean", "true"}, {"array", "[1]"}, {"object", "{}"}}
	badJSONArrayValues     = [][2]string{
		{"empty", "[]"}, {"unknown item", `["bogus"]`}, {"10 kB item", `["` + strings.Repeat("a", 10<<10) + `"]`},
		{"NUL item", `["\u0000"]`},
	}
	badJSONWrongTypeArray = [][2]string{{"string", `"swap.completed"`}, {"number item", "[1]"}, {"object", "{}"}, {"nested array", `[["swap.completed"]]`}}
)

// badRequest renders a raw HTTP/1.1 request.
func badRequest(method, target string, headers [][2]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: swapgate.test\r\nConnection: close\r\n", method, target)
	for _, h := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if body != nil || method == "POST" || method == "PUT" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// badPath fills the endpoint's path parameters, overriding one.
func (ep *badEndpoint) badPath(override string, value string) string {
	p := ep.path
	for _, pp := range ep.params {
		v := pp.valid
		if v == "" {
			v = "x"
		}
		if pp.name == override {
			v = value
		}
		p = strings.Replace(p, "{"+pp.name+"}", v, 1)
	}
	return p
}

// badQuery renders the valid query with one parameter removed (drop),
// replaced (set) or repeated.
func (ep *badEndpoint) badQuery(name, raw string, mode string) string {
	var parts []string
	for _, q := range ep.query {
		switch {
		case q.name == name && mode == "drop":
		case q.name == name && mode == "set":
			parts = append(parts, q.name+"="+raw)
		case q.name == name && mode == "repeat":
			v := q.valid
			if v == "" {
				v = "x"
			}
			parts = append(parts, q.name+"="+v, q.name+"="+raw)
		case q.valid != "":
			parts = append(parts, q.name+"="+q.valid)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "?" + strings.Join(parts, "&")
}

// badBody renders a JSON object of fields with one field (by dotted path)
// replaced by raw, removed (raw == "") or, with dup, written twice.
func badBody(fields []badField, prefix, target, raw string, dup bool) string {
	var parts []string
	for _, f := range fields {
		path := prefix + f.name
		val := f.valid
		if f.kind == badObject {
			val = badBody(f.fields, path+".", target, raw, dup)
		}
		if path == target {
			switch {
			case dup:
				val = badValidOr(f)
				parts = append(parts, fmt.Sprintf("%q:%s", f.name, val))
			case raw == "":
				continue
			default:
				val = raw
			}
		}
		if val == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%q:%s", f.name, val))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// badFirstRequired is the first required field of fields, which an empty
// object is refused for.
func badFirstRequired(fields []badField) string {
	for _, f := range fields {
		if f.required {
			return f.name
		}
	}
	return ""
}

// badCases generates every case of one endpoint.
func badCases(ep badEndpoint, f badFixture) []badCase {
	var cases []badCase
	var baseHeaders [][2]string
	if ep.key {
		baseHeaders = append(baseHeaders, [2]string{"X-API-Key", f.key})
	}
	jsonCT := [2]string{"Content-Type", "application/json"}
	validBody := func() []byte {
		switch {
		case ep.formBody != "":
			return []byte(ep.formBody)
		case ep.body != nil:
			return []byte(badBody(ep.body, "", "", "", false))
		}
		return nil
	}
	bodyHeaders := func() [][2]string {
		h := append([][2]string{}, baseHeaders...)
		switch {
		case ep.formBody != "":
			h = append(h, [2]string{"Content-Type", "application/x-www-form-urlencoded"})
		case ep.body != nil:
			h = append(h, jsonCT)
		}
		return h
	}
	name := ep.method + " " + ep.path
	addMethod := func(method, what, target string, headers [][2]string, body []byte, want badWant) {
		// A checkout path answers a wrong method with a page too.
		html := ep.html || (method != ep.method && (strings.HasPrefix(ep.path, "/checkout/") || strings.HasPrefix(ep.path, "/portal")))
		cases = append(cases, badCase{name: name + ": " + what, raw: badRequest(method, target, headers, body), want: want, html: html})
	}
	add := func(what, target string, headers [][2]string, body []byte, want badWant) {
		addMethod(ep.method, what, target, headers, body, want)
	}
	param := func(p string) badWant { return badWant{codes: []string{apierr.InvalidParams}, name: p} }
	path := ep.badPath("", "")
	query := ep.badQuery("", "", "")

	// Request heads beyond the server's limit, and a wrong method.
	huge := strings.Repeat("h", 10<<10)
	add("oversized header", path+query, append(bodyHeaders(), [2]string{"X-Padding", huge}), validBody(), badWant{name: "headers"})
	sep := "?"
	if query != "" {
		sep = "&"
	}
	add("oversized URL", path+query+sep+"pad="+huge, bodyHeaders(), validBody(), badWant{name: "headers"})
	wrong := "DELETE"
	if ep.method == "DELETE" {
		wrong = "PATCH"
	}
	addMethod(wrong, "wrong method", path+query, baseHeaders, nil, badWant{codes: []string{apierr.MethodNotAllowed}})

	// Variants of the path that name no route.
	for _, v := range [][2]string{{"trailing slash", path + "/"}, {"upper case", strings.ToUpper(path)}, {"double slash", strings.Replace(path, "/", "//", 1)},
		{"dot segment", strings.Replace(path, "/", "/./", 1)}, {"NUL in the path", path + "%00"}} {
		if v[0] == "NUL in the path" && strings.HasSuffix(ep.path, "}") {
			continue // the last path parameter's own cases send it
		}
		html := strings.HasPrefix(ep.path, "/checkout/") || strings.HasPrefix(ep.path, "/portal")
		cases = append(cases, badCase{name: name + ": path " + v[0], raw: badRequest(ep.method, v[1]+query, bodyHeaders(), validBody()),
			want: badWant{codes: []string{apierr.NotFound}}, html: html})
	}

	// A key that is not a partner's, on any endpoint.
	unknownKey := [2]string{"X-API-Key", "pk_live_" + strings.Repeat("0", 40)}
	if !ep.key {
		add("unknown API key", path+query, append(bodyHeaders(), unknownKey), validBody(), badWant{codes: []string{apierr.Unauthorized}})
		add("API key with a control character", path+query, append(bodyHeaders(), [2]string{"X-API-Key", "pk_live_\x01"}), validBody(),
			badWant{codes: []string{apierr.Unauthorized, apierr.InvalidBody}})
	}

	add("X-API-Key twice", path+query, append(bodyHeaders(), unknownKey, [2]string{"X-API-Key", f.key}), validBody(),
		badWant{codes: []string{apierr.Unauthorized}})

	// Authentication on partner endpoints.
	if ep.key {
		noKey := bodyHeaders()[1:]
		add("no API key", path+query, noKey, validBody(), badWant{codes: []string{apierr.Unauthorized}})
		add("unknown API key", path+query, append([][2]string{{"X-API-Key", "pk_live_" + strings.Repeat("0", 40)}}, noKey...), validBody(),
			badWant{codes: []string{apierr.Unauthorized}})
		add("3 kB API key", path+query, append([][2]string{{"X-API-Key", badLongValue}}, noKey...), validBody(),
			badWant{codes: []string{apierr.Unauthorized}})
	}

	// Idempotency-Key on the routes that honour it.
	if ep.idem {
		for _, k := range [][2]string{{"300 characters", strings.Repeat("k", 300)}, {"a space", "a b"}, {"empty", ""}, {"non-ASCII", "clé"}} {
			add("Idempotency-Key "+k[0], path+query, append(bodyHeaders(), [2]string{"Idempotency-Key", k[1]}), validBody(), param("Idempotency-Key"))
		}
		add("Idempotency-Key twice", path+query, append(bodyHeaders(), [2]string{"Idempotency-Key", "a"}, [2]string{"Idempotency-Key", "b"}), validBody(),
			param("Idempotency-Key"))
	}

	// Path parameters.
	for _, pp := range ep.params {
		want := param(pp.name)
		if ep.path == "/v1/partner/webhooks/{id}" || strings.HasPrefix(ep.path, "/v1/partner/webhooks/{id}/") {
			want = badWant{codes: []string{apierr.NotFound}, name: pp.name}
		}
		if ep.path == "/checkout/{orderUid}/state" {
			want = badWant{codes: []string{apierr.NotFound}, name: pp.name}
		}
		for _, v := range badPathValues {
			add("path "+pp.name+" "+v[0], ep.badPath(pp.name, v[1])+query, bodyHeaders(), validBody(), want)
		}
	}

	// Query parameters.
	for _, q := range ep.query {
		want := param(q.name)
		if q.required {
			add("missing "+q.name, path+ep.badQuery(q.name, "", "drop"), baseHeaders, nil, want)
			add("empty "+q.name, path+ep.badQuery(q.name, "", "set"), baseHeaders, nil, want)
		}
		other := "1"
		if q.valid == "1" {
			other = "2"
		}
		if q.valid != "" {
			add("repeated "+q.name, path+ep.badQuery(q.name, q.valid, "repeat"), baseHeaders, nil, want)
		}
		add("conflicting "+q.name, path+ep.badQuery(q.name, other, "repeat"), baseHeaders, nil, want)
		for _, v := range badQueryValues(q.kind) {
			add(q.name+" "+v[0], path+ep.badQuery(q.name, v[1], "set"), baseHeaders, nil, want)
		}
	}

	if ep.body == nil {
		return cases
	}
	valid := validBody()
	withCT := func(ct string) [][2]string {
		h := append([][2]string{}, baseHeaders...)
		if ct != "" {
			h = append(h, [2]string{"Content-Type", ct})
		}
		return h
	}
	invalidBody := badWant{codes: []string{apierr.InvalidBody}}
	shape := badWant{codes: []string{apierr.ValidationError}}
	// Content-Type.
	add("no Content-Type", path, withCT(""), valid, invalidBody)
	add("text/plain", path, withCT("text/plain"), valid, invalidBody)
	add("form Content-Type", path, withCT("application/x-www-form-urlencoded"), valid, invalidBody)
	add("malformed Content-Type", path, withCT("application/json; charset"), valid, invalidBody)
	add("Content-Type twice", path, append(withCT("application/json"), [2]string{"Content-Type", "text/plain"}), valid, invalidBody)
	add("Content-Type twice, JSON last", path, append(withCT("text/plain"), [2]string{"Content-Type", "application/json"}), valid, invalidBody)
	h := withCT("application/json")
	// Framing: chunked bodies over the limit or broken, two lengths.
	chunked := func(what string, chunks string) {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: swapgate.test\r\nConnection: close\r\n", ep.method, path)
		for _, hd := range h {
			fmt.Fprintf(&b, "%s: %s\r\n", hd[0], hd[1])
		}
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		b.WriteString(chunks)
		cases = append(cases, badCase{name: name + ": " + what, raw: b.Bytes(), want: invalidBody})
	}
	big := strings.Replace(string(valid), "{", `{"pad":"`+strings.Repeat("p", edge.MaxBodySize)+`",`, 1)
	chunked("chunked body over 64 KiB", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big))
	chunked("broken chunked body", "zz\r\n{}\r\n0\r\n\r\n")
	chunked("chunk longer than sent", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(valid)-1, valid))
	{
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: swapgate.test\r\nConnection: close\r\n", ep.method, path)
		for _, hd := range h {
			fmt.Fprintf(&b, "%s: %s\r\n", hd[0], hd[1])
		}
		fmt.Fprintf(&b, "Content-Length: %d\r\nContent-Length: %d\r\n\r\n%s", len(valid), len(valid)+5, valid)
		cases = append(cases, badCase{name: name + ": two Content-Lengths", raw: b.Bytes(), want: invalidBody})
	}
	// Whole bodies.
	add("empty body", path, h, []byte{}, invalidBody)
	add("whitespace body", path, h, []byte(" \r\n\t "), invalidBody)
	add("truncated body", path, h, valid[:len(valid)/2], invalidBody)
	add("lone brace", path, h, []byte("{"), invalidBody)
	add("trailing data", path, h, append(append([]byte{}, valid...), " {}"...), invalidBody)
	add("trailing garbage", path, h, append(append([]byte{}, valid...), " x"...), invalidBody)
	add("byte-order mark", path, h, append([]byte("\xef\xbb\xbf"), valid...), invalidBody)
	add("NaN body", path, h, []byte("NaN"), invalidBody)
	add("array body", path, h, []byte("[]"), shape)
	add("string body", path, h, []byte(`"x"`), shape)
	add("null body", path, h, []byte("null"), shape)
	add("number body", path, h, []byte("1e400"), shape)
	add("empty object", path, h, []byte("{}"), param(badFirstRequired(ep.body)))
	add("unknown field", path, h, []byte(strings.Replace(string(valid), "{", `{"bogusField":1,`, 1)), badWant{codes: []string{apierr.ValidationError}, name: "bogusField"})
	add("invalid UTF-8 key", path, h, []byte(strings.Replace(string(valid), "{", "{\"bo\xffgus\":1,", 1)), invalidBody)
	add("body over 64 KiB", path, h, []byte(strings.Replace(string(valid), "{", `{"pad":"`+strings.Repeat("p", edge.MaxBodySize)+`",`, 1)), invalidBody)
	deep := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
	add("10,000 levels of nesting", path, h, []byte(`{"`+ep.body[0].name+`":`+deep+`}`), badWant{codes: []string{apierr.InvalidBody, apierr.ValidationError}})
	add("10,000 levels of nesting, whole body", path, h, []byte(deep), badWant{codes: []string{apierr.InvalidBody, apierr.ValidationError}})
	deepObj := strings.Repeat(`{"a":`, 10_000) + "1" + strings.Repeat("}", 10_000)
	add("10,000 levels of objects", path, h, []byte(deepObj), badWant{codes: []string{apierr.InvalidBody, apierr.ValidationError}})

	for _, c := range ep.conflicts {
		code := apierr.ValidationError
		if strings.Contains(c[0], "unknown") {
			code = apierr.InvalidParams
		}
		add("conflict: "+c[0], path, h, []byte(strings.Replace(string(valid), "{", "{"+c[1]+",", 1)), badWant{codes: []string{code}, name: c[2]})
	}

	// Each field.
	var fieldCases func(fields []badField, prefix string)
	fieldCases = func(fields []badField, prefix string) {
		for _, fd := range fields {
			p := prefix + fd.name
			named := func(codes ...string) badWant { return badWant{codes: codes, name: p} }
			body := func(raw string) []byte { return []byte(badBody(ep.body, "", p, raw, false)) }
			if fd.required {
				add("missing "+p, path, h, body(""), param(p))
				add(p+" null", path, h, body("null"), param(p))
				if fd.kind == badID || fd.kind == badText {
					add(p+" empty", path, h, body(`""`), param(p))
				}
			}
			add("duplicate key "+p, path, h, []byte(badBody(ep.body, "", p, "x", true)), named(apierr.ValidationError))
			upper := []byte(badBody(ep.body, "", p, "", false))
			upper = []byte(strings.Replace(string(upper), "{", fmt.Sprintf("{%q:%s,", strings.ToUpper(fd.name), badValidOr(fd)), 1))
			if prefix == "" {
				add("case-folded key "+p, path, h, upper, badWant{codes: []string{apierr.ValidationError}, name: strings.ToUpper(fd.name)})
			}
			add(p+" invalid UTF-8", path, h, body("\"a\xff\xfeb\""), named(apierr.InvalidBody))
			for _, v := range fd.extra {
				add(p+" "+v[0], path, h, body(v[1]), param(p))
			}
			switch fd.kind {
			case badID, badText:
				for _, v := range badJSONWrongTypeString {
					add(p+" as a JSON "+v[0], path, h, body(v[1]), named(apierr.ValidationError))
				}
				for _, v := range badJSONStringValues {
					if fd.kind == badText && v[0] == "traversal" {
						continue // free text may say anything printable
					}
					add(p+" "+v[0], path, h, body(v[1]), param(p))
				}
			case badUint, badNumber:
				for _, v := range badJSONWrongTypeNumber {
					add(p+" as a JSON "+v[0], path, h, body(v[1]), named(apierr.ValidationError))
				}
				for _, v := range badJSONNumberValues {
					if fd.kind == badNumber && v[0] == "fraction" {
						continue
					}
					add(p+" "+v[0], path, h, body(v[1]), named(apierr.ValidationError, apierr.InvalidParams))
				}
			case badArray:
				for _, v := range badJSONWrongTypeArray {
					add(p+" as "+v[0], path, h, body(v[1]), named(apierr.ValidationError))
				}
				for _, v := range badJSONArrayValues {
					add(p+" "+v[0], path, h, body(v[1]), param(p))
				}
			case badObject:
				for _, v := range append(badJSONWrongTypeString[:3:3], [2]string{"string", `"x"`}) {
					add(p+" as a JSON "+v[0], path, h, body(v[1]), named(apierr.ValidationError))
				}
				add("unknown field in "+p, path, h, body(strings.Replace(badBody(fd.fields, "", "", "", false), "{", `{"bogusField":1,`, 1)),
					badWant{codes: []string{apierr.ValidationError}, name: p + ".bogusField"})
				fieldCases(fd.fields, p+".")
			}
		}
	}
	fieldCases(ep.body, "")
	return cases
}

// badValidOr is a field's valid value, or a string when it has none.
func badValidOr(f badField) string {
	if f.valid != "" {
		return f.valid
	}
	if f.kind == badObject {
		return "{}"
	}
	return `"x"`
}

// badAnswer is what came back.
type badAnswer struct {
	status int
	header http.Header
	body   []byte
}

// badSend sends one raw request on its own connection, bounded by
// badTimeout, and reads the answer. The request is written while the answer
// is read, so that an answer sent before the whole request was read (a body
// over the limit) is still seen.
func badSend(addr string, raw []byte) (*badAnswer, error) {
	conn, err := net.DialTimeout("tcp", addr, badTimeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(badTimeout))
	go func() { _, _ = conn.Write(raw) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &badAnswer{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// badCheck returns what is wrong with an answer, or "".
func badCheck(c badCase, a *badAnswer) string {
	if a.status >= 500 {
		return fmt.Sprintf("a %d: %s", a.status, a.body)
	}
	if a.status < 400 {
		return fmt.Sprintf("not refused: %d %s", a.status, badTrim(a.body))
	}
	if c.html && strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
		return "" // the checkout's pages answer a person, in HTML, with the status
	}
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
		Meta *struct {
			RequestID string `json:"requestId"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(a.body, &env); err != nil || env.Error == nil || env.Meta == nil || env.Meta.RequestID == "" || string(env.Data) != "null" {
		return fmt.Sprintf("not the error envelope: %d %s", a.status, badTrim(a.body))
	}
	code := env.Error.Code
	status := apierr.New(code, "").HTTPStatus()
	if status >= 500 || (status != a.status && !(code == apierr.InvalidParams && a.status == 404)) {
		return fmt.Sprintf("code %s with status %d", code, a.status)
	}
	if len(c.want.codes) > 0 && !badContains(c.want.codes, code) {
		return fmt.Sprintf("want %v, got %d %s", c.want.codes, a.status, badTrim(a.body))
	}
	if c.want.name != "" {
		key := "param"
		if code == apierr.ValidationError || code == apierr.InvalidBody {
			key = "field"
		}
		if got, _ := env.Error.Details[key].(string); got != c.want.name {
			return fmt.Sprintf("want details.%s %q, got %d %s", key, c.want.name, a.status, badTrim(a.body))
		}
	}
	return ""
}

func badContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func badTrim(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// badPanics records the server's log lines about panics and failures.
type badPanics struct {
	mu    sync.Mutex
	lines []string
}

func (p *badPanics) Enabled(context.Context, slog.Level) bool { return true }
func (p *badPanics) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") || r.Level >= slog.LevelError {
		p.mu.Lock()
		p.lines = append(p.lines, r.Message)
		p.mu.Unlock()
	}
	return nil
}
func (p *badPanics) WithAttrs([]slog.Attr) slog.Handler { return p }
func (p *badPanics) WithGroup(string) slog.Handler      { return p }

// TestBadInputTable sends every generated case to a real server.
func TestBadInputTable(t *testing.T) {
	panics := &badPanics{}
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 1<<30, 1<<30
		c.AllowLoopbackWebhooks = true
		c.Logger = slog.New(panics)
	})
	id, key := ts.createPartner("BadInput")
	cli(t, nil, "partner", "set-limits", "--data", ts.dir, "--id", id, "--heavy", "1000000000", "--read", "1000000000")
	fx := badFixture{key: key}
	quote := func(q string) map[string]any {
		var data map[string]any
		ts.get("/v1/quote?"+q).decode(t, &data)
		return data
	}
	qa := quote("fromChain=42161&toChain=8453&fromToken=" + badArbUSDC + "&toToken=" + badBaseUSDC +
		"&fromAmount=100000000&fromAddress=" + badWallet + "&toAddress=" + badWallet)
	fx.quoteID, _ = qa["quote"].(map[string]any)["id"].(string)
	qi := quote("fromChain=1&toChain=1151111081099710&fromToken=0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" +
		"&toToken=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&fromAmount=300000000&fromAddress=" + badWallet +
		"&toAddress=7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV&tools=sbx-intents")
	raw, _ := json.Marshal(qi)
	if m := regexp.MustCompile(`"depositAddress":"([^"]+)"`).FindSubmatch(raw); m != nil {
		fx.depositAddress = string(m[1])
	}
	if fx.quoteID == "" || fx.depositAddress == "" {
		t.Fatalf("fixture quotes: id %q, deposit address %q", fx.quoteID, fx.depositAddress)
	}

	var cases []badCase
	for _, ep := range badEndpoints(fx) {
		cases = append(cases, badCases(ep, fx)...)
	}
	addr := strings.TrimPrefix(ts.base, "http://")
	type result struct {
		c   badCase
		msg string
	}
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	start := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := cases[i]
				a, err := badSend(addr, c.raw)
				msg := ""
				if err != nil {
					msg = "no answer: " + err.Error()
				} else {
					msg = badCheck(c, a)
				}
				results[i] = result{c, msg}
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	failed := 0
	for _, r := range results {
		if r.msg != "" {
			failed++
			t.Errorf("%s: %s", r.c.name, r.msg)
		}
	}
	t.Logf("%d cases in %v, %d failed", len(cases), time.Since(start).Round(time.Millisecond), failed)
	if resp := ts.get("/v1/ping"); resp.Status != 200 {
		t.Fatalf("the server no longer answers: %d", resp.Status)
	}
	panics.mu.Lock()
	defer panics.mu.Unlock()
	for _, l := range panics.lines {
		t.Errorf("server logged: %s", l)
	}
}

// TestBadInputCoversEveryEndpoint holds the table to the endpoints the edge
// registers: every s.Handle call of edge/*.go has its row.
func TestBadInputCoversEveryEndpoint(t *testing.T) {
	files, err := filepath.Glob("../../edge/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("edge sources: %v", err)
	}
	re := regexp.MustCompile(`s\.Handle\("([A-Z]+)", ([^,]+), `)
	table := map[string]bool{}
	for _, ep := range badEndpoints(badFixture{}) {
		table[ep.method+" "+ep.path] = true
	}
	// Routes the sandbox server this table runs against does not have,
	// held by tests of their own.
	elsewhere := map[string]string{
		"POST pw.Path":                  "a live on-ramp provider's signed webhooks (live mode only): edge's TestProviderWebhookRoute and TestMoonPayOnrampEndToEnd refuse bad signatures and bodies",
		"GET /portal/transactions/{id}": "a signed-out browser is sent to the sign-in page (303) whatever the id; TestPortalPages holds the signed-in page's refusals",
		"GET /portal/webhooks/{id}":     "a signed-out browser is sent to the sign-in page (303) whatever the id; TestPortalPages holds the signed-in page's refusals",
		"POST /rpc/{chainId}": "the sandbox chains' JSON-RPC nodes answer a bad body with a JSON-RPC error (status 200), not the envelope: " +
			"routing/sim/simrpc's TestNodeScript and TestNodeAnswersEveryBodyInJSONRPC hold the bodies, TestSandboxNodeWalletExecuteE2E the chain ids",
	}
	for k := range elsewhere {
		table[k] = true
	}
	var missing []string
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			path := m[2]
			if strings.HasPrefix(path, "base+") {
				path = "/checkout/" + strings.Trim(strings.TrimPrefix(path, "base+"), `"`)
			} else {
				path = strings.Trim(path, `"`)
			}
			n++
			if !table[m[1]+" "+path] {
				missing = append(missing, m[1]+" "+path)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || n < 40 {
		t.Fatalf("%d endpoints registered; not in the bad-input table: %v", n, missing)
	}
}
