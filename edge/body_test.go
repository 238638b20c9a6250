package edge

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/apierr"
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
		{"unknown nested field", "application/json", `{"nested":{"off":true}}`, apierr.ValidationError, "off"},
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
