package netresolve

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// dnsServer answers DNS queries over UDP on loopback from a table of
// names (lower case, without the final dot) to addresses: A and AAAA
// records of the asked family, NXDOMAIN for a name it does not hold. It is
// the least of RFC 1035 that Go's resolver reads: one question, answers
// that point back at it.
func dnsServer(t *testing.T, zone map[string][]netip.Addr) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := answer(buf[:n], zone); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// answer is the response to one query, nil for what it cannot read.
func answer(q []byte, zone map[string][]netip.Addr) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	question := q[12 : i+5] // the name, its end and QTYPE, QCLASS
	qtype := binary.BigEndian.Uint16(q[i+1:])
	addrs, known := zone[strings.ToLower(strings.Join(labels, "."))]
	flags := uint16(0x8180) // a response, recursion desired and available
	if !known {
		flags |= 3 // NXDOMAIN
	}
	var records [][]byte
	for _, a := range addrs {
		if (qtype == 1 && a.Is4()) || (qtype == 28 && a.Is6()) {
			rdata := a.AsSlice()
			rr := []byte{0xc0, 12} // the name: a pointer to the question's
			rr = binary.BigEndian.AppendUint16(rr, qtype)
			rr = binary.BigEndian.AppendUint16(rr, 1)  // IN
			rr = binary.BigEndian.AppendUint32(rr, 60) // TTL
			rr = binary.BigEndian.AppendUint16(rr, uint16(len(rdata)))
			records = append(records, append(rr, rdata...))
		}
	}
	out := append([]byte{}, q[0:2]...) // the query's id
	out = binary.BigEndian.AppendUint16(out, flags)
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(records)))
	out = binary.BigEndian.AppendUint16(out, 0)
	out = binary.BigEndian.AppendUint16(out, 0)
	out = append(out, question...)
	for _, r := range records {
		out = append(out, r...)
	}
	return out
}

// The adapter answers what the network's DNS server says, every address of
// both families, and the webhook policy judges those answers: a name a
// server points at a private address is refused, a public one accepted,
// an unknown one unresolvable.
func TestResolverOverLoopbackDNS(t *testing.T) {
	srv := dnsServer(t, map[string][]netip.Addr{
		"hooks.partner.test":    {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("2606:2800:21f:cb07:6820:80da:af6b:8b2c")},
		"rebind.partner.test":   {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
		"metadata.partner.test": {netip.MustParseAddr("169.254.169.254")},
	})
	r := New(&net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", srv)
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	addrs, err := r.LookupNetIP(ctx, "ip", "hooks.partner.test")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) })
	want := []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("2606:2800:21f:cb07:6820:80da:af6b:8b2c")}
	if !slices.Equal(addrs, want) {
		t.Fatalf("addresses %v, want %v", addrs, want)
	}

	policy := webhook.Policy{Resolver: r}
	for _, c := range []struct {
		url  string
		want error
	}{
		{"https://hooks.partner.test/hook", nil},
		{"https://rebind.partner.test/hook", webhook.ErrForbiddenAddress},
		{"https://metadata.partner.test/", webhook.ErrForbiddenAddress},
		{"https://nowhere.partner.test/", webhook.ErrUnresolvable},
	} {
		err := policy.CheckURL(ctx, c.url)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckURL(%q) = %v, want %v", c.url, err, c.want)
		}
	}
}

// The service's resolver is the host's: it reads /etc/hosts (localhost is
// loopback, which the policy refuses unless loopback is allowed).
func TestSystemResolvesLocalhost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := System().LookupNetIP(ctx, "ip", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) == 0 || !addrs[0].Unmap().IsLoopback() {
		t.Fatalf("localhost is %v", addrs)
	}
	if err := (webhook.Policy{Resolver: System()}).CheckURL(ctx, "https://localhost/"); !errors.Is(err, webhook.ErrForbiddenAddress) {
		t.Fatalf("https://localhost/ = %v, want ErrForbiddenAddress", err)
	}
	if err := (webhook.Policy{Resolver: System(), AllowLoopback: true}).CheckURL(ctx, "https://localhost:9443/"); err != nil {
		t.Fatalf("https://localhost:9443/ with loopback allowed = %v", err)
	}
}
