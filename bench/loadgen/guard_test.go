package loadgen

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

// fakeResolver answers from a fixed table, so the guard is tested without
// DNS.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	out := make([]netip.Addr, len(ips))
	for i, s := range ips {
		out[i] = netip.MustParseAddr(s)
	}
	return out, nil
}

func TestResolveTarget(t *testing.T) {
	res := fakeResolver{
		"localhost":      {"::1", "127.0.0.1"},
		"example.com":    {"93.184.215.14"},
		"mixed.test":     {"127.0.0.1", "10.1.2.3"},
		"v6only.test":    {"::1"},
		"loopback2.test": {"127.0.1.1"},
	}
	tests := []struct {
		url      string
		wantDial string
		wantErr  error // nil: allowed; ErrNotLoopback or errAny otherwise
	}{
		{"http://127.0.0.1:8080", "127.0.0.1:8080", nil},
		{"http://127.5.6.7:9000/", "127.5.6.7:9000", nil},
		{"http://localhost:8080", "127.0.0.1:8080", nil},
		{"http://[::1]:8080", "[::1]:8080", nil},
		{"http://v6only.test:81", "[::1]:81", nil},
		{"http://loopback2.test", "127.0.1.1:80", nil},
		{"https://localhost", "127.0.0.1:443", nil},
		{"http://[::ffff:127.0.0.1]:8080", "127.0.0.1:8080", nil},
		{"http://10.0.0.1:8080", "", ErrNotLoopback},
		{"http://192.168.1.1", "", ErrNotLoopback},
		{"http://example.com", "", ErrNotLoopback},
		{"http://mixed.test:8080", "", ErrNotLoopback},
		{"http://0.0.0.0:8080", "", ErrNotLoopback},
		{"http://[::]:8080", "", ErrNotLoopback},
		{"http://[::ffff:10.0.0.1]:8080", "", ErrNotLoopback},
		{"http://nowhere.test", "", errAny},
		{"ftp://127.0.0.1", "", errAny},
		{"127.0.0.1:8080", "", errAny},
		{"http://:8080", "", errAny},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			got, err := ResolveTarget(context.Background(), res, tc.url)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr == nil && got.Dial != tc.wantDial:
				t.Fatalf("dial = %q, want %q", got.Dial, tc.wantDial)
			case tc.wantErr == ErrNotLoopback && !errors.Is(err, ErrNotLoopback):
				t.Fatalf("err = %v, want ErrNotLoopback", err)
			case tc.wantErr == errAny && err == nil:
				t.Fatalf("allowed %q, dial %q", tc.url, got.Dial)
			}
		})
	}
}

// errAny marks a case that must fail for a reason other than the address.
var errAny = errors.New("any error")

func TestResolveTargetKeepsHostAndPrefix(t *testing.T) {
	got, err := ResolveTarget(context.Background(), fakeResolver{"localhost": {"127.0.0.1"}}, "http://localhost:8080/api/")
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Scheme: "http", Host: "localhost:8080", Dial: "127.0.0.1:8080", PathPrefix: "/api"}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
