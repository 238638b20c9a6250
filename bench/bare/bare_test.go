package bare

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

func serve(t *testing.T, cfg Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(cfg)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestPingAnswersSwapgatesBytes(t *testing.T) {
	at := time.Unix(1795501419, 0)
	base := serve(t, Config{Version: "1.0.0", Mode: "sandbox", Now: func() time.Time { return at }})
	resp, body := get(t, base+"/v1/ping")
	if resp.StatusCode != 200 || resp.Header.Get("Server") != "swapgate" || resp.Header.Get("Content-Type") != "application/json" ||
		resp.Header.Get("Date") == "" || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
	}
	id := resp.Header.Get("X-Request-Id")
	if !uuidV4.MatchString(id) {
		t.Fatalf("X-Request-Id %q is not a v4 UUID", id)
	}
	want := `{"data":{"status":"ok","version":"1.0.0","timestamp":1795501419,"mode":"sandbox"},"error":null,"meta":{"requestId":"` + id + `","timestamp":1795501419}}`
	if string(body) != want {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}
	_, again := get(t, base+"/v1/ping")
	var env struct{ Meta struct{ RequestID string } }
	if err := json.Unmarshal(again, &env); err != nil || env.Meta.RequestID == id {
		t.Fatalf("second answer %s: %v (request ids must differ)", again, err)
	}
}

func TestAnythingElseIsNotFound(t *testing.T) {
	base := serve(t, Config{Version: "1.0.0", Mode: "sandbox"})
	resp, body := get(t, base+"/v1/quote")
	var env struct {
		Data  any
		Error struct{ Code string }
		Meta  struct{ RequestID string }
	}
	if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != 404 || env.Error.Code != "NOT_FOUND" ||
		env.Meta.RequestID != resp.Header.Get("X-Request-Id") {
		t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
	}
}
