package edge

import (
	"bytes"
	"net"
	"net/netip"

	"github.com/valyala/fasthttp"
)

var headerXFF = []byte("X-Forwarded-For")

// clientIP is the address anonymous traffic is limited by: the TCP peer,
// unless the peer is a configured trusted proxy, in which case the right-most
// X-Forwarded-For entry that is not itself a trusted proxy. Trusting the
// header from anyone would let a client pick its own bucket.
func (s *Server) clientIP(ctx *fasthttp.RequestCtx) netip.Addr {
	peer := peerAddr(ctx)
	if !s.trusted(peer) {
		return peer
	}
	xff := ctx.Request.Header.PeekBytes(headerXFF)
	for len(xff) > 0 {
		i := bytes.LastIndexByte(xff, ',')
		part := bytes.TrimSpace(xff[i+1:])
		xff = xff[:max(i, 0)]
		a, err := netip.ParseAddr(string(part))
		if err != nil {
			break
		}
		a = a.Unmap()
		if !s.trusted(a) {
			return a
		}
		if i < 0 {
			break
		}
	}
	return peer
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	if ta, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		if a, ok := netip.AddrFromSlice(ta.IP); ok {
			return a.Unmap()
		}
	}
	return netip.IPv4Unspecified()
}
