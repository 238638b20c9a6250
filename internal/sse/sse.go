// Package sse reads Server-Sent Events as a browser's EventSource does: the
// end-to-end tests' contract checks and the bench suite's streamed quotes
// share it, so that both read the stream the way integrators' clients do.
package sse

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

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

// Reader reads Server-Sent Events from a stream as the HTML
// standard's parser does: lines end in LF, CRLF or CR; lines that start
// with a colon are comments; a blank line dispatches the event gathered
// so far, unless it has no data.
type Reader struct {
	r *bufio.Reader
	// comments counts the comment lines read so far.
	comments int
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReader(r)}
}

// Comments is how many comment lines were read so far.
func (er *Reader) Comments() int { return er.comments }

// Next returns the next event: io.EOF when the stream ended between
// events, io.ErrUnexpectedEOF when it ended in the middle of one (the
// HTML standard drops such an event), or the read's error.
func (er *Reader) Next() (Event, error) {
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
func (er *Reader) line() (string, error) {
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

// ReadAll reads every event of a whole stream; a stream that ends in
// the middle of an event is an error.
func ReadAll(r io.Reader) ([]Event, error) {
	er := NewReader(r)
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
