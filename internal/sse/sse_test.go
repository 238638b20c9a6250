package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// TestReader: the reader splits a stream as an EventSource does:
// every line ending, comments skipped, data lines joined, an event without
// a name is a message, one without data is dropped, and a stream cut in
// the middle of an event is an error.
func TestReader(t *testing.T) {
	stream := ": opening comment\n" +
		"event: route\ndata: {\"a\":1}\n\n" +
		"event: best\r\ndata: line one\r\ndata: line two\r\nid: 7\r\n\r\n" +
		"data: plain\r\r" +
		"event: empty\n\n" +
		":heartbeat\n\n" +
		"event: done\ndata:{}\nretry: 10\n\n"
	er := NewReader(strings.NewReader(stream))
	var got []Event
	for {
		ev, err := er.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	want := []Event{
		{Name: "route", Data: `{"a":1}`},
		{Name: "best", Data: "line one\nline two", ID: "7"},
		{Name: "message", Data: "plain"},
		{Name: "done", Data: "{}", Retry: "10"},
	}
	if !reflect.DeepEqual(got, want) || er.Comments() != 2 {
		t.Fatalf("got %+v (%d comments), want %+v", got, er.Comments(), want)
	}
	if _, err := ReadAll(strings.NewReader("event: route\ndata: {}\n")); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a stream cut in an event: %v", err)
	}
	if _, err := ReadAll(strings.NewReader("event: route\ndata: {")); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a stream cut in a line: %v", err)
	}
}
