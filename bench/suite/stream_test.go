package suite

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestReadEventsSplitsTheStream: events are split at blank lines, data
// lines joined, comments skipped, CRLF accepted, and a stream that ends
// before done is an error.
func TestReadEventsSplitsTheStream(t *testing.T) {
	var got []string
	err := readEvents(strings.NewReader(": hi\r\nevent: route\r\ndata: {\"a\":1}\r\n\r\nevent: best\ndata: x\ndata: y\n\nevent: done\ndata: {}\n\nevent: late\ndata: z\n\n"),
		func(name, data string) bool {
			got = append(got, name+"="+data)
			return name != "done"
		})
	if err != nil || strings.Join(got, "|") != `route={"a":1}|best=x`+"\n"+`y|done={}` {
		t.Fatalf("%q: %v", got, err)
	}
	if err := readEvents(strings.NewReader("event: route\ndata: {}\n\n"), func(string, string) bool { return true }); err == nil {
		t.Fatal("a stream without done read as complete")
	}
}

// TestRunStreamsMeasuresTheFirstRoute runs the stream load against a
// server that sends its first route 20 ms after the request and says in
// its best event that the route's leg took 15 ms: the figures find the
// first route about 20 ms after the request, the leg at 15 ms and the gap
// between them; an error event counts as an error. Bounds are generous:
// only the arithmetic is checked, not a machine's speed.
func TestRunStreamsMeasuresTheFirstRoute(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.URL.Query().Get("fail") != "" {
			fmt.Fprint(w, "event: error\ndata: {\"code\":\"NO_ROUTE_FOUND\",\"message\":\"x\"}\n\nevent: done\ndata: {}\n\n")
			return
		}
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(w, "event: route\ndata: {\"tool\":\"sbx-canal\"}\n\n")
		w.(http.Flusher).Flush()
		fmt.Fprint(w, "event: route\ndata: {\"tool\":\"sbx-wormway\"}\n\n")
		fmt.Fprint(w, "event: best\ndata: {\"timing\":{\"legs\":[{\"tool\":\"sbx-wormway\",\"ms\":1},{\"tool\":\"sbx-canal\",\"ms\":15}]}}\n\n")
		fmt.Fprint(w, "event: done\ndata: {}\n\n")
	}))
	defer srv.Close()
	sum, fig, err := runStreams(context.Background(), streamLoad{base: srv.URL, paths: []string{"/s?a=1", "/s?fail=1"},
		rate: 50, warmup: 100 * time.Millisecond, duration: 600 * time.Millisecond, workers: 8, timeout: 5 * time.Second,
		interval: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Requests < 10 || sum.Errors == 0 || sum.Errors == sum.Requests || fig.Streams != sum.Requests-sum.Errors {
		t.Fatalf("summary %+v, figure %+v", sum.Counts, fig)
	}
	if fig.RoutesPerStream != 2 || fig.FirstLeg.P50 != 15_000 || fig.FirstRoute.P50 < 20_000 || fig.FirstRoute.P50 > 2_000_000 ||
		fig.Gap.P50 != fig.FirstRoute.P50-15_000 {
		t.Fatalf("figure %+v", fig)
	}
}
