package account

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "https://app.example", want: "https://app.example"},
		{in: " HTTPS://App.Example:8443 ", want: "https://app.example:8443"},
		{in: "https://app.example:443", want: "https://app.example"},
		{in: "http://localhost:80", want: "http://localhost"},
		{in: "http://127.0.0.1:5173", want: "http://127.0.0.1:5173"},
		{in: "http://[::1]:3000", want: "http://[::1]:3000"},
		{in: "", err: "empty"},
		{in: "*", err: "wildcard"},
		{in: "https://*.example", err: "wildcard"},
		{in: "https://app.example/", err: "path"},
		{in: "https://app.example/x", err: "path"},
		{in: "https://app.example?q=1", err: "path, query"},
		{in: "https://app.example#f", err: "fragment"},
		{in: "https://u:p@app.example", err: "user info"},
		{in: "ftp://app.example", err: "http or https"},
		{in: "app.example", err: "http or https"},
		{in: "null", err: "http or https"},
		{in: "https://", err: "no host"},
		{in: "https://app.example:0", err: "port"},
		{in: "https://app.example:70000", err: "port"},
		{in: "https://app.example:", err: "empty port"},
		{in: "https://app example", err: "spaces"},
		{in: "https://bücher.example", err: "punycode"},
		{in: "https://xn--bcher-kva.example", want: "https://xn--bcher-kva.example"},
		{in: "https://" + strings.Repeat("a", 300), err: "longer"},
	} {
		got, err := NormalizeOrigin(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalizeOrigin(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckAllowedOrigins(t *testing.T) {
	got, err := CheckAllowedOrigins([]string{"https://a.example", "HTTPS://A.example:443", "http://localhost:5173"})
	if err != nil || !slices.Equal(got, []string{"https://a.example", "http://localhost:5173"}) {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := CheckAllowedOrigins(nil); err != nil || len(got) != 0 {
		t.Fatalf("empty: %q, %v", got, err)
	}
	many := make([]string, MaxAllowedOrigins+1)
	for i := range many {
		many[i] = fmt.Sprintf("https://s%d.example", i)
	}
	if _, err := CheckAllowedOrigins(many); err == nil {
		t.Fatal("more than the maximum accepted")
	}
	if _, err := CheckAllowedOrigins([]string{"https://a.example", "https://b.example/"}); err == nil {
		t.Fatal("an origin with a path accepted")
	}
}
