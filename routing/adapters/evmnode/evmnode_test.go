package evmnode

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// node answers eth_chainId with chain 0xa4b1 (42161) and holds every other
// call until the request ends.
func node(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "eth_chainId") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0xa4b1"}`)
			return
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestDialChecksTheChainAndBoundsEachCall(t *testing.T) {
	ctx := context.Background()
	url := node(t)
	if _, err := Dial(ctx, 1, url, time.Second); err == nil || !strings.Contains(err.Error(), "serves chain 42161") {
		t.Fatalf("a node of another chain: %v", err)
	}
	n, err := Dial(ctx, 42161, url, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	done := make(chan error, 1)
	go func() { _, err := n.BlockNumber(ctx); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a node that never answers answered")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call to a hung node was not bounded by the timeout")
	}
}
