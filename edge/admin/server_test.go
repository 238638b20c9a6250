package admin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func stopServer(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

func TestServerAdvertisesAndWithdraws(t *testing.T) {
	store, dir := openStore(t)
	s, err := Start(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("admin.json: %v", err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Fatalf("admin.json mode = %o, want 600", mode)
	}
	ep, err := ReadEndpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ep.Addr, "127.0.0.1:") || ep.Addr != s.Addr() || ep.Token != s.Token() || len(ep.Token) != 64 {
		t.Fatalf("endpoint = %+v, server addr %s", ep, s.Addr())
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".admin.json.tmp-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left behind: %v", leftovers)
	}

	stopServer(t, s)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("admin.json after Stop: %v", err)
	}
	stopServer(t, s) // idempotent

	c := NewClient(ep)
	defer c.Close()
	if _, err := c.List(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("List after Stop = %v, want ErrUnreachable", err)
	}
	if _, err := Dial(dir); !errors.Is(err, ErrNoListener) {
		t.Fatalf("Dial after Stop = %v, want ErrNoListener", err)
	}
}

func TestServerRejectsWrongToken(t *testing.T) {
	store, dir := openStore(t)
	s, err := Start(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stopServer(t, s)
	for _, token := range []string{"", "00", strings.Repeat("0", 64), s.Token()[:63]} {
		c := NewClient(Endpoint{Addr: s.Addr(), Token: token})
		_, err := c.Create(context.Background(), CreateRequest{Name: "n", Email: "a@b.co"})
		c.Close()
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("token %q: error = %v, want ErrUnauthorized", token, err)
		}
	}
	list, err := NewClient(Endpoint{Addr: s.Addr(), Token: s.Token()}).List(context.Background())
	if err != nil || len(list) != 0 {
		t.Fatalf("refused requests created partners: %v, %v", list, err)
	}
}

func TestServerRejectsMalformedBodies(t *testing.T) {
	store, dir := openStore(t)
	s, err := Start(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stopServer(t, s)
	c := NewClient(Endpoint{Addr: s.Addr(), Token: s.Token()})
	defer c.Close()
	tests := []struct {
		name string
		body any
		want error
	}{
		{"unknown field", map[string]any{"name": "n", "email": "a@b.co", "apiKey": "x"}, ErrInvalid},
		{"wrong type", map[string]any{"name": 5, "email": "a@b.co"}, ErrInvalid},
		{"not an object", json.RawMessage(`[1]`), ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Call(context.Background(), fasthttp.MethodPost, pathPartners, tt.body, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestServerRejectsTrailingData(t *testing.T) {
	store, dir := openStore(t)
	s, err := Start(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stopServer(t, s)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("http://" + s.Addr() + pathPartners)
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+s.Token())
	req.SetBodyString(`{"name":"n","email":"a@b.co"} {}`)
	if err := fasthttp.DoTimeout(req, resp, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var eb errorBody
	if err := json.Unmarshal(resp.Body(), &eb); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != fasthttp.StatusBadRequest || eb.Code != codeInvalid {
		t.Fatalf("status %d, body %s", resp.StatusCode(), resp.Body())
	}
}

func TestServerHandleExtends(t *testing.T) {
	store, dir := openStore(t)
	s, err := New(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(fasthttp.MethodPost, "/admin/echo/{word}", func(ctx *fasthttp.RequestCtx) {
		WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"word": ctx.UserValue("word")})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopServer(t, s)
	if err := s.Handle(fasthttp.MethodGet, "/admin/late", func(*fasthttp.RequestCtx) {}); err == nil {
		t.Fatal("Handle after Start succeeded")
	}
	if err := s.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}

	c := NewClient(Endpoint{Addr: s.Addr(), Token: s.Token()})
	defer c.Close()
	var out struct{ Word string }
	if err := c.Call(context.Background(), fasthttp.MethodPost, "/admin/echo/hello", nil, &out); err != nil || out.Word != "hello" {
		t.Fatalf("extension handler = %+v, %v", out, err)
	}
	bad := NewClient(Endpoint{Addr: s.Addr(), Token: "wrong"})
	defer bad.Close()
	if err := bad.Call(context.Background(), fasthttp.MethodPost, "/admin/echo/hello", nil, nil); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("extension handler without token = %v, want ErrUnauthorized", err)
	}
	if err := c.Call(context.Background(), fasthttp.MethodGet, "/admin/nope", nil, nil); err == nil || !strings.Contains(err.Error(), "no such admin endpoint") {
		t.Fatalf("unknown path = %v", err)
	}
}

func TestReadEndpointErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadEndpoint(dir); !errors.Is(err, ErrNoListener) {
		t.Fatalf("missing file = %v", err)
	}
	for _, content := range []string{"{", `{"addr":"127.0.0.1:1"}`, `{"addr":"10.0.0.1:7000","token":"t"}`,
		`{"addr":"localhost:7000","token":"t"}`, `{"addr":"[::ffff:192.168.1.1]:7000","token":"t"}`, `{"addr":"127.0.0.1","token":"t"}`} {
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadEndpoint(dir); err == nil || errors.Is(err, ErrNoListener) {
			t.Fatalf("ReadEndpoint(%q) = %v, want a refusal", content, err)
		}
	}
}

func TestStopLeavesForeignAdvertisement(t *testing.T) {
	store, dir := openStore(t)
	s, err := Start(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign := Endpoint{Addr: "127.0.0.1:1", Token: "other"}
	if err := writeEndpoint(dir, foreign); err != nil {
		t.Fatal(err)
	}
	stopServer(t, s)
	got, err := ReadEndpoint(dir)
	if err != nil || got != foreign {
		t.Fatalf("Stop removed or changed another listener's admin.json: %+v, %v", got, err)
	}
}
