package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
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

// Resolver looks a host name up: network is "ip" (both families), and the
// answer is every address the name has. The domain dials nothing, so the
// service's resolver is an adapter's (routing/adapters/netresolve, over the
// system's *net.Resolver, which satisfies it as it is); tests inject a
// table so that no unit test depends on real DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// errNoResolver is why a name is unresolvable under a Policy without a
// Resolver.
var errNoResolver = errors.New("no resolver configured")

// Cloud metadata endpoints. Both already fall in forbidden ranges
// (link-local, unique-local); they are listed on their own so that no future
// relaxation of a range (say, AllowLoopback growing) can reopen them.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
}

// extraForbidden are ranges that are neither private nor link-local in the
// net/netip sense but still reach internal systems, or nothing anyone should
// be sent to: "this network", carrier NAT (where some clouds put metadata,
// e.g. 100.100.100.200), IETF protocol assignments, the documentation
// networks, the 6to4 relay anycast, benchmarking, reserved and broadcast;
// in IPv6 the IPv4-compatible block (::a.b.c.d, deprecated, which some
// stacks still carry to the IPv4 address; :: and ::1 are caught before),
// discard, Teredo (its server and client addresses are IPv4 addresses in
// disguise), documentation and the deprecated site-local block.
var extraForbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fec0::/10"),
}

// IPv6 prefixes that carry an IPv4 address which the network, not this
// host, turns into an IPv4 destination: NAT64 (RFC 6052's well-known
// prefix and RFC 8215's local-use one, the address in the last 32 bits)
// and 6to4 (the address in bits 16 to 48). A DNS64 resolver on an
// IPv6-only network answers public names with NAT64 addresses, so these
// are not refused as a whole: the IPv4 address inside is checked instead,
// loopback never allowed (it would be the gateway's loopback, not ours).
var (
	nat64Prefixes = []netip.Prefix{
		netip.MustParsePrefix("64:ff9b::/96"),
		netip.MustParsePrefix("64:ff9b:1::/48"),
	}
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address a NAT64 or 6to4 address carries.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	for _, pr := range nat64Prefixes {
		if pr.Contains(a) {
			return netip.AddrFrom4([4]byte(b[12:16])), true
		}
	}
	if sixToFour.Contains(a) {
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// Policy decides which webhook URLs and addresses deliveries may reach.
// The zero value forbids loopback and resolves nothing: it judges address
// literals and refuses host names as unresolvable (failing closed), so the
// service gives it the system's resolver.
type Policy struct {
	// AllowLoopback admits loopback addresses (127.0.0.0/8, ::1) and nothing
	// else, for local testing (--allow-loopback-webhooks).
	AllowLoopback bool
	// Resolver resolves host names; nil refuses every name as
	// ErrUnresolvable.
	Resolver Resolver
}

// CheckAddr returns nil when a delivery may connect to a. An IPv4-mapped
// IPv6 address (::ffff:a.b.c.d) is judged as the IPv4 address it is, and a
// NAT64 or 6to4 address by the IPv4 address it carries.
func (p Policy) CheckAddr(a netip.Addr) error {
	a = a.Unmap()
	if v4, ok := embeddedIPv4(a); ok {
		if err := (Policy{}).CheckAddr(v4); err != nil {
			return fmt.Errorf("%w: %s carries %s", ErrForbiddenAddress, a, v4)
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
	// url.Parse leaves only decimal digits in a port; a port is one that
	// fits 16 bits (leading zeros allowed), as net.LookupPort reads it.
	if port := u.Port(); port != "" {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return fmt.Errorf("%w: port %q", ErrBadURL, port)
		}
	}
	// A literal is judged as it is, without DNS: one trailing dot (an
	// absolute name's) does not make it a name.
	literal := strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(literal); err == nil {
		return p.CheckAddr(a)
	}
	if a, isNumber, err := legacyIPv4(literal); isNumber {
		return refuseLegacyIPv4(host, a, err)
	}
	if p.Resolver == nil {
		return fmt.Errorf("%w: %s: %v", ErrUnresolvable, host, errNoResolver)
	}
	addrs, err := p.Resolver.LookupNetIP(ctx, "ip", host)
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

// refuseLegacyIPv4 refuses a host that ends in a number but is not a
// dotted-decimal IPv4 address: 2130706433, 0x7f.1, 0177.0.0.1, 127.1.
// URL parsers (WHATWG's, browsers') and the C resolver's inet_aton read
// these as IPv4 addresses while Go's resolver takes them for names, so
// whichever reading a component makes, the host is ambiguous: it is
// refused as forbidden when the address it denotes is, and as malformed
// otherwise (write the address in dotted decimal). Loopback is judged
// forbidden here even where the policy allows it: a test receiver has no
// reason to be written this way.
func refuseLegacyIPv4(host string, a netip.Addr, perr error) error {
	if perr != nil {
		return fmt.Errorf("%w: host %q ends in a number but is no IPv4 address: %v", ErrBadURL, host, perr)
	}
	if err := (Policy{}).CheckAddr(a); err != nil {
		return fmt.Errorf("%s is %s: %w", host, a, err)
	}
	return fmt.Errorf("%w: host %q is the IPv4 address %s written in another form; write it in dotted decimal", ErrBadURL, host, a)
}

// legacyIPv4 reads host as the WHATWG URL standard's IPv4 parser (and
// inet_aton) does. isNumber reports whether host ends in a number (its
// last dot-separated part, one trailing empty part aside, is decimal
// digits or 0x and hex digits): such a host is an IPv4 address or
// invalid, never a name. Each of one to four parts is decimal, octal (a
// leading 0) or hex (0x); the last fills the bytes the others leave.
func legacyIPv4(host string) (a netip.Addr, isNumber bool, err error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if !isNumeric(last) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errors.New("more than four parts")
	}
	var v uint64
	for i, part := range parts {
		n, err := ipv4Part(part)
		if err != nil {
			return netip.Addr{}, true, err
		}
		limit := uint64(255)
		if i == len(parts)-1 {
			limit = 1<<(8*(5-len(parts))) - 1
		}
		if n > limit {
			return netip.Addr{}, true, fmt.Errorf("part %q out of range", part)
		}
		if i == len(parts)-1 {
			v |= n
		} else {
			v |= n << (8 * (3 - i))
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// isNumeric reports whether s is a number by the WHATWG rule: decimal
// digits, or 0x (0X) followed by hex digits, possibly none.
func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return strings.Trim(s[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(s, "0123456789") == ""
}

// ipv4Part parses one part of a legacy IPv4 address.
func ipv4Part(s string) (uint64, error) {
	base, digits := 10, s
	switch {
	case s == "":
		return 0, errors.New("empty part")
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, digits = 16, s[2:]
		if digits == "" {
			return 0, nil
		}
	case len(s) > 1 && s[0] == '0':
		base, digits = 8, s[1:]
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, fmt.Errorf("part %q is not a number", s)
	}
	return n, nil
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
