package webhook

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

// ssrfResolver answers the names of the SSRF tables: names pointing
// (wholly or partly) at internal addresses, and public ones.
var ssrfResolver = tableResolver{
	"public.example":    {netip.MustParseAddr("93.184.215.14")},
	"public6.example":   {netip.MustParseAddr("2606:2800:21f:cb07:6820:80da:af6b:8b2c")},
	"dns64.example":     {netip.MustParseAddr("64:ff9b::5db8:d70e")}, // NAT64 of 93.184.215.14
	"loop.example":      {netip.MustParseAddr("127.0.0.1")},
	"loop6.example":     {netip.MustParseAddr("::1")},
	"mapped.example":    {netip.MustParseAddr("::ffff:127.0.0.1")},
	"mapped10.example":  {netip.MustParseAddr("::ffff:10.0.0.1")},
	"ula.example":       {netip.MustParseAddr("fd00::1")},
	"linklocal.example": {netip.MustParseAddr("fe80::1")},
	"private.example":   {netip.MustParseAddr("192.168.0.10")},
	"cgnat.example":     {netip.MustParseAddr("100.100.100.200")},
	"nat64loop.example": {netip.MustParseAddr("64:ff9b::7f00:1")},
	"mixed.example":     {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("fd12:3456::1")},
	"mixed6.example":    {netip.MustParseAddr("2606:2800:21f:cb07:6820:80da:af6b:8b2c"), netip.MustParseAddr("10.9.8.7")},
	"empty.example":     {},
}

// TestPolicySSRFAtRegistration: the registration check refuses every form
// of an internal address, whether written in the URL (IPv6 forms, the
// IPv4-mapped and NAT64 forms, decimal, octal and hex IPv4) or reached
// through a name that resolves to one, even one address among several; it
// accepts public ones. Loopback stays refused in its odd forms even where
// loopback receivers are allowed.
func TestPolicySSRFAtRegistration(t *testing.T) {
	cases := []struct {
		url      string
		loopback bool
		want     error // nil: accepted
	}{
		// IPv6 forms.
		{"https://[::1]/", false, ErrForbiddenAddress},
		{"https://[0:0:0:0:0:0:0:1]/", false, ErrForbiddenAddress},
		{"https://[::ffff:127.0.0.1]/", false, ErrForbiddenAddress},
		{"https://[::ffff:7f00:1]/", false, ErrForbiddenAddress},
		{"https://[::ffff:169.254.169.254]/", true, ErrForbiddenAddress},
		{"https://[::ffff:192.168.1.1]/", false, ErrForbiddenAddress},
		{"https://[::127.0.0.1]/", false, ErrForbiddenAddress}, // IPv4-compatible
		{"https://[::10.0.0.1]/", false, ErrForbiddenAddress},
		{"https://[fd00::1]/", false, ErrForbiddenAddress},
		{"https://[fdff:ffff::1]/", false, ErrForbiddenAddress},
		{"https://[fc00::1]/", false, ErrForbiddenAddress},
		{"https://[fe80::1]/", false, ErrForbiddenAddress},
		{"https://[fe80::1%25eth0]/", false, ErrForbiddenAddress},
		{"https://[febf::1]/", false, ErrForbiddenAddress},
		{"https://[fec0::1]/", false, ErrForbiddenAddress}, // site-local
		{"https://[ff02::1]/", false, ErrForbiddenAddress},
		{"https://[::]/", false, ErrForbiddenAddress},
		{"https://[64:ff9b::7f00:1]/", true, ErrForbiddenAddress}, // NAT64 of 127.0.0.1
		{"https://[64:ff9b::a00:1]/", false, ErrForbiddenAddress}, // NAT64 of 10.0.0.1
		{"https://[64:ff9b:1::a9fe:a9fe]/", false, ErrForbiddenAddress},
		{"https://[2002:7f00:1::1]/", false, ErrForbiddenAddress}, // 6to4 of 127.0.0.1
		{"https://[2002:c0a8:101::1]/", false, ErrForbiddenAddress},
		{"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", false, ErrForbiddenAddress}, // Teredo
		{"https://[2001:db8::1]/", false, ErrForbiddenAddress},
		{"https://[100::1]/", false, ErrForbiddenAddress},
		{"https://[64:ff9b::5db8:d70e]/", false, nil}, // NAT64 of a public address
		{"https://[2002:5db8:d70e::1]/", false, nil},  // 6to4 of a public address
		{"https://[2606:4700:4700::1111]:8443/", false, nil},

		// IPv4 written in other forms than dotted decimal.
		{"https://2130706433/", false, ErrForbiddenAddress},
		{"https://2130706433/", true, ErrForbiddenAddress},
		{"https://0x7f000001/", false, ErrForbiddenAddress},
		{"https://0X7F000001/", false, ErrForbiddenAddress},
		{"https://0x7f.1/", false, ErrForbiddenAddress},
		{"https://0x7f.0.0.1/", false, ErrForbiddenAddress},
		{"https://0177.0.0.1/", false, ErrForbiddenAddress},
		{"https://017700000001/", false, ErrForbiddenAddress},
		{"https://127.1/", true, ErrForbiddenAddress},
		{"https://127.0.1/", false, ErrForbiddenAddress},
		{"https://10.1/", false, ErrForbiddenAddress},
		{"https://0xa9fea9fe/", false, ErrForbiddenAddress}, // 169.254.169.254
		{"https://2852039166/", false, ErrForbiddenAddress},
		{"https://0/", false, ErrForbiddenAddress},
		{"https://0x/", false, ErrForbiddenAddress},
		{"https://127.0.0.1./", false, ErrForbiddenAddress},
		{"https://0x7f.1./", false, ErrForbiddenAddress},
		{"https://1572395790/", false, ErrBadURL}, // 93.184.215.14, but write it plainly
		{"https://0x5d.0xb8.0xd7.0x0e/", false, ErrBadURL},
		{"https://1.2.3.4.5/", false, ErrBadURL},
		{"https://256.0.0.1/", false, ErrBadURL},
		{"https://1.2.65536/", false, ErrBadURL},
		{"https://4294967296/", false, ErrBadURL},
		{"https://099.0.0.1/", false, ErrBadURL}, // 9 is no octal digit
		{"https://host.123/", false, ErrBadURL},
		{"https://1..2/", false, ErrBadURL},
		{"https://93.184.215.14/", false, nil},
		{"https://93.184.215.14./", false, nil},

		// Names.
		{"https://public.example/", false, nil},
		{"https://public6.example/", false, nil},
		{"https://dns64.example/", false, nil},
		{"https://public.example./", false, ErrUnresolvable}, // the table knows no absolute names
		{"https://123.example/", false, ErrUnresolvable},     // a name: it does not end in a number
		{"https://0x7f.example/", false, ErrUnresolvable},
		{"https://loop.example/", false, ErrForbiddenAddress},
		{"https://loop.example/", true, nil},
		{"https://loop6.example/", false, ErrForbiddenAddress},
		{"https://mapped.example/", false, ErrForbiddenAddress},
		{"https://mapped10.example/", true, ErrForbiddenAddress},
		{"https://ula.example/", false, ErrForbiddenAddress},
		{"https://linklocal.example/", false, ErrForbiddenAddress},
		{"https://private.example/", false, ErrForbiddenAddress},
		{"https://cgnat.example/", false, ErrForbiddenAddress},
		{"https://nat64loop.example/", true, ErrForbiddenAddress},
		{"https://mixed.example/", false, ErrForbiddenAddress},
		{"https://mixed6.example/", false, ErrForbiddenAddress},
		{"https://empty.example/", false, ErrUnresolvable},
	}
	for _, c := range cases {
		p := Policy{AllowLoopback: c.loopback, Resolver: ssrfResolver}
		err := p.CheckURL(context.Background(), c.url)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("CheckURL(%q, loopback=%v) = %v, want %v", c.url, c.loopback, err, c.want)
		}
	}
}

// TestPolicySSRFAtDial: the delivery client's dialer check (Control, run
// by net.Dialer on every address it is about to connect to, after name
// resolution) refuses the same addresses in every form the dialer can be
// handed, whatever a name resolved to by then.
func TestPolicySSRFAtDial(t *testing.T) {
	cases := []struct {
		addr     string
		loopback bool
		ok       bool
	}{
		{"127.0.0.1:443", false, false},
		{"127.0.0.2:443", false, false},
		{"127.0.0.1:443", true, true},
		{"[::1]:443", false, false},
		{"[::1]:443", true, true},
		{"[::ffff:127.0.0.1]:443", false, false},
		{"[::ffff:10.0.0.1]:443", true, false},
		{"[::127.0.0.1]:443", false, false},
		{"[fd00::1]:443", false, false},
		{"[fd00:ec2::254]:80", true, false},
		{"[fc00::1]:443", false, false},
		{"[fe80::1]:443", false, false},
		{"[fe80::1%eth0]:443", false, false},
		{"[fec0::1]:443", false, false},
		{"[ff02::1]:443", false, false},
		{"[::]:443", false, false},
		{"[64:ff9b::7f00:1]:443", true, false},
		{"[64:ff9b::a9fe:a9fe]:80", false, false},
		{"[2002:a00:1::1]:443", false, false},
		{"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:443", false, false},
		{"0.0.0.0:443", false, false},
		{"10.0.0.1:443", false, false},
		{"172.31.255.255:443", false, false},
		{"192.168.1.1:443", false, false},
		{"169.254.169.254:80", true, false},
		{"100.100.100.200:80", false, false},
		{"224.0.0.1:443", false, false},
		{"255.255.255.255:443", false, false},
		{"localhost:443", true, false}, // a name never reaches Control; refuse it if it does
		{"2130706433:443", true, false},
		{"bogus", false, false},
		{"93.184.215.14:443", false, true},
		{"[2606:4700:4700::1111]:443", false, true},
		{"[64:ff9b::5db8:d70e]:443", false, true},
		{"[::ffff:93.184.215.14]:443", false, true},
	}
	for _, c := range cases {
		err := Policy{AllowLoopback: c.loopback}.Control("tcp", c.addr, nil)
		if c.ok && err != nil || !c.ok && !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("Control(%s, loopback=%v) = %v, want ok=%v", c.addr, c.loopback, err, c.ok)
		}
	}
}

func TestLegacyIPv4(t *testing.T) {
	cases := []struct {
		host     string
		isNumber bool
		want     string // "" with isNumber: invalid
	}{
		{"2130706433", true, "127.0.0.1"},
		{"0x7f.1", true, "127.0.0.1"},
		{"0177.0.0.01", true, "127.0.0.1"},
		{"127.1", true, "127.0.0.1"},
		{"127.0.1", true, "127.0.0.1"},
		{"192.168.257", true, "192.168.1.1"},
		{"0x", true, "0.0.0.0"},
		{"1.2.3.4.", true, "1.2.3.4"},
		{"08", true, ""},
		{"1.2.3.256", true, ""},
		{"a.1", true, ""},
		{"example.com", false, ""},
		{"1.example", false, ""},
		{"0x7g", false, ""},
	}
	for _, c := range cases {
		a, isNumber, err := legacyIPv4(c.host)
		if isNumber != c.isNumber {
			t.Errorf("legacyIPv4(%q): isNumber %v", c.host, isNumber)
			continue
		}
		switch {
		case !isNumber:
		case c.want == "" && err == nil:
			t.Errorf("legacyIPv4(%q) = %s, want an error", c.host, a)
		case c.want != "" && (err != nil || a.String() != c.want):
			t.Errorf("legacyIPv4(%q) = %s, %v; want %s", c.host, a, err, c.want)
		}
	}
}
