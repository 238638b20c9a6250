package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// EventStream is the media type of a Server-Sent Events answer.
const EventStream = "text/event-stream"

// Event is one Server-Sent Event as a client's EventSource dispatches it:
// its type (the event field; "message" when it has none), its data (the
// data fields joined by line feeds) and its id field, if any.
type Event struct {
	Name string
	Data string
	ID   string
	// Retry is the retry field, if any.
	Retry string
}

// EventReader reads Server-Sent Events from a stream as the HTML
// standard's parser does: lines end in LF, CRLF or CR; lines that start
// with a colon are comments; a blank line dispatches the event gathered
// so far, unless it has no data.
type EventReader struct {
	r *bufio.Reader
	// comments counts the comment lines read so far.
	comments int
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{r: bufio.NewReader(r)}
}

// Comments is how many comment lines were read so far.
func (er *EventReader) Comments() int { return er.comments }

// Next returns the next event: io.EOF when the stream ended between
// events, io.ErrUnexpectedEOF when it ended in the middle of one (the
// HTML standard drops such an event), or the read's error.
func (er *EventReader) Next() (Event, error) {
	var ev Event
	var data strings.Builder
	hasData, started := false, false
	for {
		line, err := er.line()
		if err != nil {
			if errors.Is(err, io.EOF) && started {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if line == "" {
			if !hasData {
				ev, started = Event{}, false
				continue
			}
			ev.Data = data.String()
			if ev.Name == "" {
				ev.Name = "message"
			}
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			er.comments++
			continue
		}
		started = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID = value
			}
		case "retry":
			ev.Retry = value
		}
	}
}

// line reads one line without its end (LF, CRLF or CR).
func (er *EventReader) line() (string, error) {
	var b []byte
	for {
		c, err := er.r.ReadByte()
		if err != nil {
			if len(b) > 0 && errors.Is(err, io.EOF) {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
		switch c {
		case '\n':
			return string(b), nil
		case '\r':
			if next, err := er.r.Peek(1); err == nil && next[0] == '\n' {
				_, _ = er.r.ReadByte()
			}
			return string(b), nil
		}
		b = append(b, c)
	}
}

// ReadEvents reads every event of a whole stream; a stream that ends in
// the middle of an event is an error.
func ReadEvents(r io.Reader) ([]Event, error) {
	er := NewEventReader(r)
	var out []Event
	for {
		ev, err := er.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

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
	events, err := ReadEvents(bytes.NewReader(body))
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
