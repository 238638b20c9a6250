package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The fuzz targets of the webhook URL policy and secret rule (see
// scripts/fuzz-targets). Names resolve through a table, never DNS.

var fuzzResolver = tableResolver{
	"example.com":      {netip.MustParseAddr("93.184.215.14")},
	"rebind.test":      {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
	"localhost":        {netip.MustParseAddr("127.0.0.1")},
	"metadata.example": {netip.MustParseAddr("169.254.169.254")},
	"v6.example":       {netip.MustParseAddr("2606:4700:4700::1111")},
}

// FuzzCheckURL: every refusal wraps one of the policy's four errors (the
// edge names the reason from them); an accepted URL is at most MaxURLLen
// bytes of absolute https with a host and no user information, and every
// address of its host passes CheckAddr.
func FuzzCheckURL(f *testing.F) {
	for _, u := range []string{"https://example.com/hook", "http://example.com/", "https://user@example.com/", "https://10.0.0.1/",
		"https://[::1]:9443/", "https://rebind.test/", "https://localhost/", "HTTPS://EXAMPLE.COM", "https://example.com:0/",
		"https://example.com:99999/", "https://[fe80::1%25eth0]/", "https://0x7f000001/", "https://2130706433/", "//example.com",
		"https://example.com\x00/", "https://v6.example/h?x#y"} {
		f.Add(u, false)
		f.Add(u, true)
	}
	f.Fuzz(func(t *testing.T, raw string, loopback bool) {
		p := Policy{AllowLoopback: loopback, Resolver: fuzzResolver}
		err := p.CheckURL(context.Background(), raw)
		if err != nil {
			if !errors.Is(err, ErrBadURL) && !errors.Is(err, ErrNotHTTPS) && !errors.Is(err, ErrForbiddenAddress) && !errors.Is(err, ErrUnresolvable) {
				t.Fatalf("CheckURL(%q) = %v, none of the policy's errors", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if len(raw) > MaxURLLen || perr != nil || !strings.EqualFold(u.Scheme, "https") || u.User != nil || u.Hostname() == "" {
			t.Fatalf("CheckURL accepted %q", raw)
		}
		host := strings.TrimSuffix(strings.TrimPrefix(u.Hostname(), "["), "]")
		addrs := fuzzResolver[host]
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		}
		if len(addrs) == 0 {
			t.Fatalf("CheckURL accepted %q, whose host %q does not resolve", raw, host)
		}
		for _, a := range addrs {
			if p.CheckAddr(a) != nil {
				t.Fatalf("CheckURL accepted %q, which reaches forbidden %s", raw, a)
			}
		}
	})
}

// FuzzCheckAddr: an address passes only when it is a public unicast one
// (loopback too with AllowLoopback), and an IPv4 address and its
// IPv4-mapped IPv6 form get the same answer; Control, which the dialer
// calls, agrees with CheckAddr.
func FuzzCheckAddr(f *testing.F) {
	for _, a := range []string{"93.184.215.14", "10.0.0.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "::1", "fd00:ec2::254",
		"2606:4700:4700::1111", "::ffff:10.0.0.1", "0.0.0.0", "255.255.255.255", "224.0.0.1", "100::1", "64:ff9b::a00:1"} {
		f.Add(netip.MustParseAddr(a).AsSlice(), false)
	}
	f.Fuzz(func(t *testing.T, ip []byte, loopback bool) {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			return
		}
		p := Policy{AllowLoopback: loopback}
		err := p.CheckAddr(a)
		if err != nil && !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("CheckAddr(%s) = %v", a, err)
		}
		u := a.Unmap()
		if err == nil {
			public := u.IsGlobalUnicast() && !u.IsPrivate()
			if !(public || (loopback && u.IsLoopback())) {
				t.Fatalf("CheckAddr accepted %s", a)
			}
			for _, pr := range extraForbidden {
				// ::1 lies in ::/96, and is allowed as loopback.
				if pr.Contains(u) && !(loopback && u.IsLoopback()) {
					t.Fatalf("CheckAddr accepted %s in %s", a, pr)
				}
			}
			// A NAT64 or 6to4 address reaches the IPv4 address it embeds,
			// which may not be loopback even where loopback is allowed.
			if v4, ok := embeddedIPv4(u); ok && (Policy{}).CheckAddr(v4) != nil {
				t.Fatalf("CheckAddr accepted %s, which carries forbidden %s", a, v4)
			}
		}
		if a.Is4() {
			mapped := netip.AddrFrom16(a.As16())
			if (p.CheckAddr(mapped) == nil) != (err == nil) {
				t.Fatalf("CheckAddr(%s) = %v but %v for %s", a, err, p.CheckAddr(mapped), mapped)
			}
		}
		if cerr := p.Control("tcp", net.JoinHostPort(a.String(), "443"), nil); (cerr == nil) != (err == nil) {
			t.Fatalf("Control(%s) = %v, CheckAddr = %v", a, cerr, err)
		}
	})
}

// FuzzCheckSecret: a secret is accepted exactly when it is 16 to 256
// bytes of valid UTF-8 without control characters.
func FuzzCheckSecret(f *testing.F) {
	for _, s := range []string{"whsec_local_0123456789", "short", strings.Repeat("s", 257), "whsec_local_01234\x00", "whsec_local_01234\xff", "ünïcode secret, long enough"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s) >= MinSecretLen && len(s) <= MaxSecretLen && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
		if err := CheckSecret(s); (err == nil) != want {
			t.Fatalf("CheckSecret(%q) = %v, want accepted %v", s, err, want)
		}
	})
}
