package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// testUpstream is the provider the tests build errors for.
var testUpstream = Upstream{
	Provider:    "aggregator",
	Prefix:      "test",
	Noun:        "the test upstream",
	RateHeaders: []RateHeader{{Header: "Retry-After", Detail: "retryAfter"}},
}

// checkBadAnswer fails unless err is the upstream's invalid-answer error
// naming the field in its message, which clients see, and in its cause.
func checkBadAnswer(t *testing.T, err error, field string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %T %v, want *apierr.Error", err, err)
	}
	if ae.Code != apierr.UpstreamError || ae.Details["provider"] != "aggregator" ||
		!strings.HasPrefix(ae.Message, "the test upstream sent an invalid answer: "+field+": ") {
		t.Errorf("err = %+v", ae)
	}
	if ae.Cause == nil || !strings.HasPrefix(ae.Cause.Error(), "test: "+field+": ") {
		t.Errorf("cause %v does not name %s", ae.Cause, field)
	}
}

func TestFlexStringUnmarshal(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{in: `"123"`, want: "123"},
		{in: `123456789012345678901234567890`, want: "123456789012345678901234567890"},
		{in: `1.5`, want: "1.5"},
		{in: ` "0x1f" `, want: "0x1f"},
		{in: `null`, want: ""},
		{in: `true`, bad: true},
		{in: `{}`, bad: true},
	}
	for _, tc := range cases {
		var f FlexString
		err := json.Unmarshal([]byte(tc.in), &f)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: accepted as %q", tc.in, f)
			}
			continue
		}
		if err != nil || string(f) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.in, f, err, tc.want)
		}
	}
}

func TestFlexStringLenientReaders(t *testing.T) {
	cases := []struct {
		in    FlexString
		float float64
		u64   uint64
	}{
		{in: "42", float: 42, u64: 42},
		{in: "0.99985", float: 0.99985, u64: 0},
		{in: "", float: 0, u64: 0},
		{in: "n/a", float: 0, u64: 0},
		{in: "-3", float: -3, u64: 0},
		{in: "18446744073709551616", float: 18446744073709551616, u64: 0},
	}
	for _, tc := range cases {
		if got := tc.in.Float(); got != tc.float {
			t.Errorf("%q.Float() = %v, want %v", tc.in, got, tc.float)
		}
		if got := tc.in.Uint64(); got != tc.u64 {
			t.Errorf("%q.Uint64() = %v, want %v", tc.in, got, tc.u64)
		}
	}
}

// TestFlexStringUSD: an upstream's USD figure reads as itself, and an
// absent or unreadable one as unknown (NaN), never as zero.
func TestFlexStringUSD(t *testing.T) {
	for _, tc := range []struct {
		in    FlexString
		want  float64
		known bool
	}{
		{in: "99.72", want: 99.72, known: true},
		{in: "0", want: 0, known: true},
		{in: "-1.5", want: -1.5, known: true},
		{in: "", known: false},
		{in: "n/a", known: false},
		{in: "1e400", known: false},
	} {
		got := tc.in.USD()
		if known := !math.IsNaN(got); known != tc.known || (known && got != tc.want) {
			t.Errorf("%q.USD() = %v, want %v (known %v)", tc.in, got, tc.want, tc.known)
		}
	}
}

func TestDecimalAndHex(t *testing.T) {
	type parser func(field string, s FlexString) (*big.Int, error)
	u := testUpstream
	cases := []struct {
		name  string
		parse parser
		in    FlexString
		want  string // "" means a bad answer
	}{
		{"decimal", u.Decimal, "100000000", "100000000"},
		{"decimal beyond 64 bits", u.Decimal, "340282366920938463463374607431768211456", "340282366920938463463374607431768211456"},
		{"decimal empty", u.Decimal, "", ""},
		{"decimal negative", u.Decimal, "-1", ""},
		{"decimal fraction", u.Decimal, "1.5", ""},
		{"decimal exponent", u.Decimal, "1e18", ""},
		{"decimal hex", u.Decimal, "0x10", ""},
		{"decimal 2^256-1", u.Decimal, FlexString(MaxUint256.String()), MaxUint256.String()},
		{"decimal 2^256", u.Decimal, "115792089237316195423570985008687907853269984665640564039457584007913129639936", ""},
		{"decimal 10^80", u.Decimal, FlexString("1" + strings.Repeat("0", 80)), ""},
		{"optional absent", u.OptDecimal, "", "0"},
		{"optional present", u.OptDecimal, "21000", "21000"},
		{"optional bad", u.OptDecimal, "abc", ""},
		{"hex", u.HexBig, "0x1bc16d674ec80000", "2000000000000000000"},
		{"hex upper prefix", u.HexBig, "0X0A", "10"},
		{"hex bare prefix", u.HexBig, "0x", "0"},
		{"hex empty", u.HexBig, "", "0"},
		{"hex as decimal", u.HexBig, "12345", "12345"},
		{"hex bad digits", u.HexBig, "0xzz", ""},
		{"hex bad decimal", u.HexBig, "12a", ""},
		{"hex 2^256-1", u.HexBig, FlexString("0x" + strings.Repeat("f", 64)), MaxUint256.String()},
		{"hex 2^256", u.HexBig, FlexString("0x1" + strings.Repeat("0", 64)), ""},
		{"hex negative", u.HexBig, "0x-1", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.parse("f", tc.in)
			if tc.want == "" {
				checkBadAnswer(t, err, "f")
				return
			}
			if err != nil || v.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", v, err, tc.want)
			}
		})
	}
}

func TestHexUint64(t *testing.T) {
	cases := []struct {
		in   FlexString
		want uint64
		bad  bool
	}{
		{in: "0x5208", want: 21000},
		{in: "21000", want: 21000},
		{in: "", want: 0},
		{in: "0xffffffffffffffff", want: 1<<64 - 1},
		{in: "0x10000000000000000", bad: true},
		{in: "0xg", bad: true},
	}
	for _, tc := range cases {
		v, err := testUpstream.HexUint64("gasLimit", tc.in)
		if tc.bad {
			checkBadAnswer(t, err, "gasLimit")
			continue
		}
		if err != nil || v != tc.want {
			t.Errorf("%q: got %d, %v; want %d", tc.in, v, err, tc.want)
		}
	}
}

func TestHexBytes(t *testing.T) {
	cases := []struct {
		in   string
		want []byte
		bad  bool
	}{
		{in: "0xa9059cbb", want: []byte{0xa9, 0x05, 0x9c, 0xbb}},
		{in: "0XA905", want: []byte{0xa9, 0x05}},
		{in: "0x", want: []byte{}},
		{in: "a905", bad: true},
		{in: "0xabc", bad: true},
		{in: "", bad: true},
		{in: "0xzz", bad: true},
		{in: "0x12 34", bad: true},
		{in: "javascript:alert(1)", bad: true},
	}
	for _, tc := range cases {
		b, err := testUpstream.HexBytes("data", tc.in)
		if tc.bad {
			checkBadAnswer(t, err, "data")
			continue
		}
		if err != nil || !bytes.Equal(b, tc.want) {
			t.Errorf("%q: got %x, %v; want %x", tc.in, b, err, tc.want)
		}
	}
}
