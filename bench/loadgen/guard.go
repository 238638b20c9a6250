package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// ErrNotLoopback is returned for a target that is, or resolves to, an
// address outside 127.0.0.0/8 and ::1.
var ErrNotLoopback = errors.New("target is not on loopback")

// Resolver looks up a host name; *net.Resolver satisfies it. Tests pass a
// fake so that the guard is checked without DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var _ Resolver = (*net.Resolver)(nil)

// Target is a base URL that passed the loopback guard, with the address the
// client dials pinned to the resolved loopback IP, so that a later DNS answer
// cannot move the load elsewhere.
type Target struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is the host[:port] of the URL as the user wrote it, sent as the
	// Host header.
	Host string
	// Dial is the loopback ip:port the client connects to.
	Dial string
	// PathPrefix is the URL path of the base URL without a trailing slash,
	// prepended to every scenario path.
	PathPrefix string
}

// ResolveTarget parses rawURL and checks that its host is a loopback
// literal or a name all of whose addresses are loopback. A name with any
// non-loopback address is refused, because the dialer could pick it.
func ResolveTarget(ctx context.Context, r Resolver, rawURL string) (Target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Target{}, fmt.Errorf("parse base URL %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Target{}, fmt.Errorf("base URL %q: scheme must be http or https", rawURL)
	}
	host := u.Hostname()
	if host == "" {
		return Target{}, fmt.Errorf("base URL %q has no host", rawURL)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	ip, err := loopbackAddr(ctx, r, host)
	if err != nil {
		return Target{}, err
	}
	return Target{
		Scheme:     u.Scheme,
		Host:       u.Host,
		Dial:       net.JoinHostPort(ip.String(), port),
		PathPrefix: strings.TrimRight(u.EscapedPath(), "/"),
	}, nil
}

// loopbackAddr returns the loopback address host stands for, preferring
// IPv4, or ErrNotLoopback.
func loopbackAddr(ctx context.Context, r Resolver, host string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !isLoopback(ip) {
			return netip.Addr{}, fmt.Errorf("%w: %s", ErrNotLoopback, host)
		}
		return ip.Unmap(), nil
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolve %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("resolve %q: no addresses", host)
	}
	var pick netip.Addr
	for _, a := range addrs {
		if !isLoopback(a) {
			return netip.Addr{}, fmt.Errorf("%w: %s resolves to %s", ErrNotLoopback, host, a)
		}
		if !pick.IsValid() || (a.Unmap().Is4() && !pick.Is4()) {
			pick = a.Unmap()
		}
	}
	return pick, nil
}

// isLoopback accepts exactly 127.0.0.0/8 (also IPv4-mapped) and ::1.
func isLoopback(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.As4()[0] == 127
	}
	return ip == netip.IPv6Loopback()
}
