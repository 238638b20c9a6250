package edge

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

type bodyFixture struct {
	Name   string   `json:"name"`
	Count  int      `json:"count"`
	Events []string `json:"events"`
	Nested struct {
		On bool `json:"on"`
	} `json:"nested"`
}

func TestDecodeBody(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		code, field             string
	}{
		{"ok", "application/json", `{"name":"a","count":2,"events":["x"],"nested":{"on":true}}`, "", ""},
		{"charset allowed", "application/json; charset=utf-8", `{"name":"a"}`, "", ""},
		{"surrounding space", "application/json", " \n{\"name\":\"a\"}\n ", "", ""},
		{"text/plain", "text/plain", `{"name":"a"}`, apierr.InvalidBody, ""},
		{"no content type", "", `{"name":"a"}`, apierr.InvalidBody, ""},
		{"json-ish type", "application/jsonp", `{"name":"a"}`, apierr.InvalidBody, ""},
		{"empty", "application/json", ``, apierr.InvalidBody, ""},
		{"blank", "application/json", "  \n", apierr.InvalidBody, ""},
		{"malformed", "application/json", `{"name":`, apierr.InvalidBody, ""},
		{"trailing", "application/json", `{"name":"a"} {}`, apierr.InvalidBody, ""},
		{"array", "application/json", `[1,2]`, apierr.ValidationError, ""},
		{"null", "application/json", `null`, apierr.ValidationError, ""},
		{"unknown field", "application/json", `{"name":"a","extra":1}`, apierr.ValidationError, "extra"},
		{"wrong type", "application/json", `{"name":5}`, apierr.ValidationError, "name"},
		{"wrong element type", "application/json", `{"events":[1]}`, apierr.ValidationError, "events"},
		{"wrong nesting", "application/json", `{"nested":{"on":"yes"}}`, apierr.ValidationError, "nested.on"},
		{"unknown nested field", "application/json", `{"nested":{"off":true}}`, apierr.ValidationError, "nested.off"},
		{"key twice", "application/json", `{"name":"a","count":1,"name":"b"}`, apierr.ValidationError, "name"},
		{"nested key twice", "application/json", `{"name":"a","nested":{"on":true,"on":false}}`, apierr.ValidationError, "nested.on"},
		{"key in another case", "application/json", `{"NAME":"a"}`, apierr.ValidationError, "NAME"},
		{"key twice in two cases", "application/json", `{"name":"a","Name":"b"}`, apierr.ValidationError, "Name"},
		{"invalid UTF-8 value", "application/json", "{\"name\":\"a\xffb\"}", apierr.InvalidBody, "name"},
		{"invalid UTF-8 item", "application/json", "{\"name\":\"a\",\"events\":[\"\xfe\"]}", apierr.InvalidBody, "events"},
		{"invalid UTF-8 key", "application/json", "{\"na\xffme\":\"a\"}", apierr.InvalidBody, "na\ufffdme"},
		{"number too large", "application/json", `{"name":"a","count":1e400}`, apierr.ValidationError, "count"},
		{"fraction for an integer", "application/json", `{"name":"a","count":1.5}`, apierr.ValidationError, "count"},
		{"integer overflow", "application/json", `{"name":"a","count":99999999999999999999}`, apierr.ValidationError, "count"},
		{"null leaves a field", "application/json", `{"name":"a","count":null,"events":null}`, "", ""},
		{"deep nesting", "application/json", `{"name":"a","events":` + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + `}`, apierr.InvalidBody, ""},
		{"wrong nesting depth", "application/json", `{"name":"a","events":[["x"]]}`, apierr.ValidationError, "events"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod("PUT")
			if tc.contentType != "" {
				ctx.Request.Header.SetContentType(tc.contentType)
			}
			ctx.Request.SetBodyString(tc.body)
			var v bodyFixture
			err := decodeBody(&Request{Ctx: &ctx}, &v)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				if v.Name != "a" {
					t.Fatalf("decoded %+v", v)
				}
				return
			}
			if err == nil || err.Code != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if tc.field != "" && err.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %q", err.Details, tc.field)
			}
		})
	}
}

type embeddedBase struct {
	Amount *float64 `json:"amount"`
	Chain  *uint64  `json:"chainId"`
}

type embeddingBody struct {
	embeddedBase
	Email *string `json:"email"`
}

// TestDecodeBodyEmbedded: the fields of an embedded struct are named as the
// client wrote them, without the Go type that carries them.
func TestDecodeBodyEmbedded(t *testing.T) {
	for body, field := range map[string]string{
		`{"amount":"1"}`:                      "amount",
		`{"amount":1e400}`:                    "amount",
		`{"chainId":-1}`:                      "chainId",
		`{"email":"a","amount":1,"amount":2}`: "amount",
		`{"AMOUNT":1}`:                        "AMOUNT",
	} {
		var v embeddingBody
		err := decodeJSON([]byte(body), &v)
		if err == nil || err.Code != apierr.ValidationError || err.Details["field"] != field {
			t.Errorf("%s: got %v, want VALIDATION_ERROR naming %s", body, err, field)
		}
	}
	var v embeddingBody
	if err := decodeJSON([]byte(`{"amount":12.5,"chainId":8453,"email":"a@b.c"}`), &v); err != nil || *v.Amount != 12.5 || *v.Chain != 8453 {
		t.Fatalf("decoded %+v, %v", v, err)
	}
}
