// Package netresolve is the resolver the webhook URL policy looks host
// names up with (routing/domain/webhook.Resolver): the domain dials
// nothing, so the one lookup it needs, every address of a registered URL's
// host, is this adapter's. It is the host's resolver, net.DefaultResolver
// (Go's own or the C library's, as the net package chooses, reading
// /etc/hosts and /etc/resolv.conf), unless the composition root passes
// another *net.Resolver.
package netresolve

import (
	"context"
	"net"
	"net/netip"

	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// Resolver looks names up through a *net.Resolver. It is a value, safe
// for concurrent use.
type Resolver struct {
	r *net.Resolver
}

var _ webhook.Resolver = Resolver{}

// New resolves through r; nil means net.DefaultResolver.
func New(r *net.Resolver) Resolver {
	if r == nil {
		r = net.DefaultResolver
	}
	return Resolver{r: r}
}

// System is the host's resolver, the service's.
func System() Resolver { return New(nil) }

// LookupNetIP returns every address of host in network ("ip", "ip4" or
// "ip6"), as the webhook policy wants them: all of them, since a
// delivery's dialer may pick any. The net package's error is returned as
// it is: the policy names the host and makes it ErrUnresolvable.
func (r Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	res := r.r
	if res == nil {
		res = net.DefaultResolver
	}
	return res.LookupNetIP(ctx, network, host)
}
