package apitest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// streamDoc describes one event-stream operation the way api/openapi.json
// does: items {event, data}, data JSON with a contentSchema per event.
const streamDoc = `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "paths": {"/s": {"get": {"responses": {"200": {
    "description": "a stream",
    "headers": {"X-Request-Id": {"required": true, "schema": {"type": "string"}}},
    "content": {"text/event-stream": {"schema": {
      "type": "array",
      "items": {"oneOf": [
        {"type": "object", "required": ["event", "data"], "additionalProperties": false, "properties": {
          "event": {"const": "tick"},
          "data": {"type": "string", "contentMediaType": "application/json",
                   "contentSchema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}, "additionalProperties": false}}}},
        {"type": "object", "required": ["event", "data"], "additionalProperties": false, "properties": {
          "event": {"const": "done"},
          "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": {"type": "object"}}}}
      ]}
    }}}
  }}}}}
}`

// TestCheckEventStream: a stream whose events and their data match the
// document passes; an undocumented event, data its event's contentSchema
// refuses, data that is not JSON, a stream cut short and a missing
// documented header each fail.
func TestCheckEventStream(t *testing.T) {
	c, err := Parse([]byte(streamDoc))
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{"Content-Type": {"text/event-stream"}, "X-Request-Id": {"x"}}
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
		ok     bool
	}{
		{"valid", hdr, "event: tick\ndata: {\"n\":1}\n\nevent: tick\ndata: {\"n\":2}\n\nevent: done\ndata: {}\n\n", true},
		{"comments and no events", hdr, ": nothing yet\n\n", true},
		{"undocumented event", hdr, "event: tock\ndata: {\"n\":1}\n\n", false},
		{"data refused", hdr, "event: tick\ndata: {\"n\":\"one\"}\n\n", false},
		{"data with an extra member", hdr, "event: tick\ndata: {\"n\":1,\"m\":2}\n\n", false},
		{"data not JSON", hdr, "event: tick\ndata: n=1\n\n", false},
		{"cut short", hdr, "event: tick\ndata: {\"n\":1}\n", false},
		{"an id the document does not give", hdr, "event: done\ndata: {}\nid: 1\n\n", false},
		{"no X-Request-Id", http.Header{"Content-Type": {"text/event-stream"}}, "event: done\ndata: {}\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckResponse(httptest.NewRequest("GET", "/s", nil), 200, tc.header, []byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("ok %v, got %v", tc.ok, err)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
}
