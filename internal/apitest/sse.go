package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/swapgate/swapgate/internal/sse"
)

// EventStream is the media type of a Server-Sent Events answer.
const EventStream = "text/event-stream"

// isEventStream tells whether a Content-Type header names an event stream.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == EventStream
}

// checkEventStream validates an event-stream answer: its status and
// headers as any answer's, then its events. The document describes a
// stream as OpenAPI 3.2 does with itemSchema, in 3.1's words: the
// media type's schema is an array whose items are the events as objects,
// {event, data} (and id or retry where a stream sends them), data a string
// whose contentMediaType is application/json and whose contentSchema is
// the schema of its JSON. The events are checked against the items'
// schema, and each one's data, parsed, against the contentSchema of the
// item schema that names its event (a const), since JSON Schema only
// annotates content, never asserts it.
func (c *Contract) checkEventStream(req *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte, opts *openapi3filter.Options) error {
	noBody := *opts
	noBody.ExcludeResponseBody = true
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &noBody,
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s %s answered %d, which the document refuses: %s", req.Method, req.URL.Path, status, fmt.Sprintf(format, args...))
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s answered %d, which the document refuses: %w", req.Method, req.URL.Path, status, err)
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return fail("status %d is not documented", status)
	}
	media := resp.Value.Content.Get(EventStream)
	if media == nil || media.Schema == nil || media.Schema.Value == nil {
		return fail("the document gives no %s answer for %d", EventStream, status)
	}
	events, err := sse.ReadAll(bytes.NewReader(body))
	if err != nil {
		return fail("the stream does not parse as Server-Sent Events: %v", err)
	}
	items := make([]any, 0, len(events))
	for _, ev := range events {
		item := map[string]any{"event": ev.Name, "data": ev.Data}
		if ev.ID != "" {
			item["id"] = ev.ID
		}
		if ev.Retry != "" {
			item["retry"] = ev.Retry
		}
		items = append(items, item)
	}
	vopts := []openapi3.SchemaValidationOption{openapi3.EnableJSONSchema2020(), openapi3.MultiErrors(), openapi3.VisitAsResponse(),
		openapi3.SetSchemaErrorMessageCustomizer(schemaErrorMessage)}
	schema := media.Schema.Value
	if err := schema.VisitJSON(items, vopts...); err != nil {
		return fail("the events do not match the stream's schema: %v", err)
	}
	for i, ev := range events {
		content := eventContentSchema(schema, ev.Name)
		if content == nil {
			return fail("event %d (%s): the document gives its data no contentSchema", i, ev.Name)
		}
		var v any
		if err := json.Unmarshal([]byte(ev.Data), &v); err != nil {
			return fail("event %d (%s): data is not JSON: %v", i, ev.Name, err)
		}
		if err := content.VisitJSON(v, vopts...); err != nil {
			return fail("event %d (%s): data does not match its contentSchema: %v", i, ev.Name, err)
		}
	}
	return nil
}

// eventContentSchema finds, among the item schemas of a stream's schema
// (its items, or the oneOf or anyOf alternatives of its items), the one
// whose event property is the const name, and returns the contentSchema
// of its data; nil when there is none.
func eventContentSchema(stream *openapi3.Schema, name string) *openapi3.Schema {
	if stream.Items == nil || stream.Items.Value == nil {
		return nil
	}
	candidates := []*openapi3.SchemaRef{stream.Items}
	candidates = append(candidates, stream.Items.Value.OneOf...)
	candidates = append(candidates, stream.Items.Value.AnyOf...)
	for _, ref := range candidates {
		s := ref.Value
		if s == nil {
			continue
		}
		ev := s.Properties["event"]
		data := s.Properties["data"]
		if ev == nil || ev.Value == nil || data == nil || data.Value == nil {
			continue
		}
		if ev.Value.Const != name {
			continue
		}
		if cs := data.Value.ContentSchema; cs != nil {
			return cs.Value
		}
	}
	return nil
}
