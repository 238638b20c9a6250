package account

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// MaxAllowedOrigins bounds a partner's allowedOrigins: a handful of sites
// (production, staging, a local development port) is what a partner
// needs, and the edge compares every browser call's Origin with each.
const MaxAllowedOrigins = 20

// maxOriginLen bounds one origin: a scheme, a host name of at most 253
// bytes and a port.
const maxOriginLen = 300

// CheckAllowedOrigins validates a partner's allowedOrigins and returns them
// normalized as browsers send the Origin header (scheme and host in lower
// case, the scheme's default port dropped), without duplicates, in the
// given order. Each is an exact origin, scheme://host[:port] with scheme
// http or https: no path (not even "/"), query, fragment or user info, and
// no wildcard, since a partner's key is trusted in exactly the pages it
// names and a pattern would trust pages nobody reviewed. An empty list is
// valid: a partner listing no origin has its key refused in every browser
// (see the edge's CORS rules).
func CheckAllowedOrigins(in []string) ([]string, error) {
	if len(in) > MaxAllowedOrigins {
		return nil, fmt.Errorf("at most %d origins, got %d", MaxAllowedOrigins, len(in))
	}
	out := make([]string, 0, len(in))
	for _, s := range in {
		o, err := NormalizeOrigin(s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// NormalizeOrigin checks one origin (see CheckAllowedOrigins) and returns
// it as a browser's Origin header writes it.
func NormalizeOrigin(s string) (string, error) {
	raw := strings.TrimSpace(s)
	switch {
	case raw == "":
		return "", fmt.Errorf("an origin is empty")
	case len(raw) > maxOriginLen:
		return "", fmt.Errorf("origin %.40q… is longer than %d bytes", raw, maxOriginLen)
	case strings.Contains(raw, "*"):
		return "", fmt.Errorf("origin %q has a wildcard: list each origin exactly", raw)
	case strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return "", fmt.Errorf("origin %q contains spaces or control characters", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("origin %q is not a URL: want scheme://host[:port]", raw)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("origin %q: want an http or https scheme://host[:port]", raw)
	case u.Opaque != "" || u.Host == "":
		return "", fmt.Errorf("origin %q has no host: want scheme://host[:port]", raw)
	case u.User != nil:
		return "", fmt.Errorf("origin %q has user info: want scheme://host[:port]", raw)
	case u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return "", fmt.Errorf("origin %q has a path, query or fragment: an origin is scheme://host[:port] only", raw)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", fmt.Errorf("origin %q has no host: want scheme://host[:port]", raw)
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			// Browsers send an internationalized name in its ASCII form.
			return "", fmt.Errorf("origin %q has a non-ASCII host: give its punycode (xn--) form, as browsers send it", raw)
		}
	}
	if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("origin %q has an empty port", raw)
	}
	if port != "" {
		// url.Parse leaves only digits in a port.
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("origin %q has port %s outside 1 to 65535", raw, port)
		}
		if (scheme == "https" && n == 443) || (scheme == "http" && n == 80) {
			port = ""
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, nil
	}
	return scheme + "://" + host, nil
}
