package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// Errors of the URL policy. Each reason is wrapped with the offending part, so
// the edge can show the partner why a URL was refused.
var (
	ErrBadURL           = errors.New("webhook: malformed URL")
	ErrNotHTTPS         = errors.New("webhook: URL must use https")
	ErrForbiddenAddress = errors.New("webhook: URL points at a forbidden address")
	ErrUnresolvable     = errors.New("webhook: URL host does not resolve")
)

// Resolver looks a host name up. *net.Resolver satisfies it; tests inject a
// table so that no unit test depends on real DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var _ Resolver = (*net.Resolver)(nil)

// Cloud metadata endpoints. Both already fall in forbidden ranges
// (link-local, unique-local); they are listed on their own so that no future
// relaxation of a range (say, AllowLoopback growing) can reopen them.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
}

// extraForbidden are ranges that are neither private nor link-local in the
// net/netip sense but still reach internal systems: "this network", carrier
// NAT (where some clouds put metadata, e.g. 100.100.100.200), IETF protocol
// assignments, benchmarking, reserved and broadcast, and IPv6 discard.
var extraForbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("64:ff9b:1::/48"), // NAT64 for local use (RFC 8215)
}

// nat64 is the NAT64 well-known prefix (RFC 6052): on a network with a NAT64
// gateway, an address in it reaches the IPv4 address of its last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Policy decides which webhook URLs and addresses deliveries may reach.
// The zero value forbids loopback and resolves with net.DefaultResolver.
type Policy struct {
	// AllowLoopback admits loopback addresses (127.0.0.0/8, ::1) and nothing
	// else, for local testing (--allow-loopback-webhooks).
	AllowLoopback bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// CheckAddr returns nil when a delivery may connect to a.
func (p Policy) CheckAddr(a netip.Addr) error {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if err := p.CheckAddr(v4); err != nil {
			return fmt.Errorf("%w: %s is the NAT64 form of %s", ErrForbiddenAddress, a, v4)
		}
		return nil
	}
	for _, m := range metadataAddrs {
		if a == m {
			return fmt.Errorf("%w: %s is a cloud metadata address", ErrForbiddenAddress, a)
		}
	}
	var kind string
	switch {
	case !a.IsValid():
		kind = "an invalid"
	case a.IsLoopback():
		if p.AllowLoopback {
			return nil
		}
		kind = "a loopback"
	case a.IsUnspecified():
		kind = "an unspecified"
	case a.IsPrivate():
		kind = "a private"
	case a.IsLinkLocalUnicast():
		kind = "a link-local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		kind = "a multicast"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		kind = "a broadcast"
	default:
		for _, pr := range extraForbidden {
			if pr.Contains(a) {
				kind = "a reserved"
				break
			}
		}
		if kind == "" {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is %s address", ErrForbiddenAddress, a, kind)
}

// MaxURLLen bounds a webhook URL, in bytes.
const MaxURLLen = 2048

// CheckURL validates a webhook URL at registration: at most MaxURLLen
// bytes, absolute https with a host, no user information, and a host whose every address passes
// CheckAddr. Every address must pass, not just one, because the dialer may
// pick any of them. The same addresses are checked again at delivery time by
// Control, which is what defeats a name re-pointed after registration.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	if len(raw) > MaxURLLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrBadURL, MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	if !strings.EqualFold(u.Scheme, "https") {
		return fmt.Errorf("%w, got %q", ErrNotHTTPS, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: user information is not allowed", ErrBadURL)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: no host", ErrBadURL)
	}
	if port := u.Port(); port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("%w: port %q", ErrBadURL, port)
		}
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		return p.CheckAddr(a)
	}
	res := p.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnresolvable, host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: %s has no addresses", ErrUnresolvable, host)
	}
	for _, a := range addrs {
		if err := p.CheckAddr(a); err != nil {
			return fmt.Errorf("%s: %w", host, err)
		}
	}
	return nil
}

// Control is a net.Dialer Control function that refuses to connect to an
// address CheckAddr forbids. It sees the address actually being dialled,
// after resolution, so DNS rebinding between registration and delivery is
// caught.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: dial address %q: %v", ErrForbiddenAddress, address, err)
	}
	return p.CheckAddr(ap.Addr())
}
