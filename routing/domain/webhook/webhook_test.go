package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSignKnownAnswer checks Sign against RFC 4231 test case 2 (key "Jefe").
func TestSignKnownAnswer(t *testing.T) {
	got := Sign([]byte("Jefe"), []byte("what do ya want for nothing?"))
	want := "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if !Verify([]byte("Jefe"), []byte("what do ya want for nothing?"), want) {
		t.Fatal("Verify rejects the known answer")
	}
	for _, bad := range []string{"", "zz", want[:62] + "44", want + "00"} {
		if Verify([]byte("Jefe"), []byte("what do ya want for nothing?"), bad) {
			t.Errorf("Verify accepts %q", bad)
		}
	}
}

type tableResolver map[string][]netip.Addr

func (r tableResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestPolicyCheckURL(t *testing.T) {
	res := tableResolver{
		"example.com":      {netip.MustParseAddr("93.184.215.14")},
		"rebind.test":      {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
		"localhost":        {netip.MustParseAddr("127.0.0.1")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
	}
	cases := []struct {
		url      string
		loopback bool
		want     error
	}{
		{"https://example.com/hook", false, nil},
		{"https://example.com:8443/hook?x=1", false, nil},
		{"http://example.com/hook", false, ErrNotHTTPS},
		{"ftp://example.com/hook", false, ErrNotHTTPS},
		{"example.com/hook", false, ErrNotHTTPS},
		{"https://user:pw@example.com/", false, ErrBadURL},
		{"https:///nohost", false, ErrBadURL},
		{"https://%zz", false, ErrBadURL},
		{"https://nowhere.invalid/", false, ErrUnresolvable},
		{"https://10.0.0.1/", false, ErrForbiddenAddress},
		{"https://172.16.5.4/", false, ErrForbiddenAddress},
		{"https://192.168.1.1/", false, ErrForbiddenAddress},
		{"https://127.0.0.1/", false, ErrForbiddenAddress},
		{"https://127.0.0.1:9443/", true, nil},
		{"https://[::1]/", false, ErrForbiddenAddress},
		{"https://[::1]:9443/", true, nil},
		{"https://localhost/", false, ErrForbiddenAddress},
		{"https://localhost/", true, nil},
		{"https://169.254.169.254/latest/meta-data", false, ErrForbiddenAddress},
		{"https://169.254.169.254/latest/meta-data", true, ErrForbiddenAddress},
		{"https://metadata.example/", true, ErrForbiddenAddress},
		{"https://[fd00:ec2::254]/", true, ErrForbiddenAddress},
		{"https://[fe80::1]/", false, ErrForbiddenAddress},
		{"https://169.254.1.1/", true, ErrForbiddenAddress},
		{"https://224.0.0.1/", false, ErrForbiddenAddress},
		{"https://[ff02::1]/", false, ErrForbiddenAddress},
		{"https://0.0.0.0/", true, ErrForbiddenAddress},
		{"https://[::]/", false, ErrForbiddenAddress},
		{"https://100.100.100.200/", false, ErrForbiddenAddress},
		{"https://[::ffff:10.0.0.1]/", false, ErrForbiddenAddress},
		{"https://[fc00::1]/", false, ErrForbiddenAddress},
		{"https://10.0.0.1/", true, ErrForbiddenAddress},
		{"https://rebind.test/", false, ErrForbiddenAddress},
		{"https://8.8.8.8/", false, nil},
		{"https://[2606:4700:4700::1111]/", false, nil},
		{"https://example.com/" + strings.Repeat("a", MaxURLLen-len("https://example.com/")), false, nil},
		{"https://example.com/" + strings.Repeat("a", MaxURLLen), false, ErrBadURL},
		{"https://example.com/\x00", false, ErrBadURL},
		{"https://example.com:65535/", false, nil},
		{"https://example.com:00443/", false, nil},
		{"https://example.com:65536/", false, ErrBadURL},
		{"https://example.com:99999999999999999999/", false, ErrBadURL},
	}
	for _, c := range cases {
		p := Policy{AllowLoopback: c.loopback, Resolver: res}
		err := p.CheckURL(context.Background(), c.url)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("CheckURL(%q, loopback=%v) = %v, want %v", c.url, c.loopback, err, c.want)
		}
	}
}

// A policy without a resolver judges literals and refuses every name,
// rather than resolving it some other way: the domain dials nothing.
func TestPolicyWithoutResolverRefusesNames(t *testing.T) {
	for _, c := range []struct {
		url  string
		want error
	}{
		{"https://example.com/hook", ErrUnresolvable},
		{"https://localhost/", ErrUnresolvable},
		{"https://8.8.8.8/", nil},
		{"https://10.0.0.1/", ErrForbiddenAddress},
	} {
		if err := (Policy{}).CheckURL(context.Background(), c.url); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckURL(%q) without a resolver = %v, want %v", c.url, err, c.want)
		}
	}
}

func TestPolicyControl(t *testing.T) {
	p := Policy{}
	if err := p.Control("tcp", "93.184.215.14:443", nil); err != nil {
		t.Errorf("public address refused: %v", err)
	}
	for _, a := range []string{"127.0.0.1:443", "[::1]:443", "10.0.0.1:443", "169.254.169.254:80", "bogus"} {
		if err := p.Control("tcp", a, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("Control(%s) = %v, want ErrForbiddenAddress", a, err)
		}
	}
	if err := (Policy{AllowLoopback: true}).Control("tcp", "127.0.0.1:443", nil); err != nil {
		t.Errorf("loopback refused with AllowLoopback: %v", err)
	}
}

func TestEvents(t *testing.T) {
	if len(Events()) != 11 {
		t.Fatalf("want the 11 events of the specification, got %d", len(Events()))
	}
	for _, e := range Events() {
		if !ValidEvent(e) {
			t.Errorf("%s not valid", e)
		}
	}
	for _, e := range []string{"", "swap", "swap.done", "SWAP.COMPLETED", "onramp.expired"} {
		if ValidEvent(e) {
			t.Errorf("%q accepted", e)
		}
	}
}

func TestEventBody(t *testing.T) {
	at := time.Unix(1767225600, 0)
	ev := Event{Name: SwapCompleted, Time: at, Data: SwapData{TransactionID: "tx1", FromChain: 1, ToChain: 369, Status: "DONE", ExecutionDuration: 42}}
	b, err := ev.Body()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["event"] != SwapCompleted || got["timestamp"] != float64(1767225600) {
		t.Fatalf("envelope fields: %s", b)
	}
	data := got["data"].(map[string]any)
	for _, f := range []string{"transactionId", "fromChain", "toChain", "fromToken", "toToken", "fromAmount", "toAmount",
		"fromAddress", "toAddress", "sourceTxHash", "destinationTxHash", "status", "tool", "executionDuration"} {
		if _, ok := data[f]; !ok {
			t.Errorf("data lacks %s: %s", f, b)
		}
	}
	if _, ok := data["test"]; ok {
		t.Errorf("a real event carries test: %s", b)
	}
	if _, err := (Event{Name: "swap.done", Time: at}).Body(); err == nil {
		t.Error("unknown event encoded")
	}
	if _, err := (Event{Name: SwapFailed}).Body(); err == nil {
		t.Error("event without time encoded")
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: 30 * time.Second, MaxAttempts: 8}
	var total time.Duration
	for n := 1; n < 8; n++ {
		d, ok := b.Next(n)
		if !ok || d != 30*time.Second<<(n-1) {
			t.Fatalf("Next(%d) = %v, %v", n, d, ok)
		}
		total += d
	}
	if total != 3810*time.Second {
		t.Fatalf("schedule totals %v, want 63.5m", total)
	}
	if _, ok := b.Next(8); ok {
		t.Fatal("attempt 8 of 8 should dead-letter")
	}
	for _, r := range []float64{0, 0.5, 0.999} {
		j := Backoff{Base: time.Second, MaxAttempts: 3, Jitter: 0.2, Rand: func() float64 { return r }}
		d, _ := j.Next(2)
		if d < 1600*time.Millisecond || d > 2400*time.Millisecond {
			t.Errorf("jittered wait %v outside 2s ± 20%%", d)
		}
	}
}

func TestIDs(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		gen    func() (string, error)
	}{{"wh_", NewID}, {"dlv_", NewDeliveryID}} {
		a, err := tc.gen()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := tc.gen()
		if len(a) != len(tc.prefix)+24 || a[:len(tc.prefix)] != tc.prefix || a == b {
			t.Errorf("ids %q, %q: want %s and 24 hex digits, distinct", a, b, tc.prefix)
		}
	}
}

func TestSubscribes(t *testing.T) {
	r := &Registration{Events: []string{SwapCompleted, DepositFailed}, Active: true}
	if !r.Subscribes(SwapCompleted) || !r.Subscribes(DepositFailed) || r.Subscribes(SwapFailed) {
		t.Fatalf("active registration %v", r.Events)
	}
	r.Active = false
	if r.Subscribes(SwapCompleted) {
		t.Fatal("an inactive registration subscribes")
	}
}

func TestAppendAttempt(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	log := func(from, to int) []Attempt {
		var out []Attempt
		for n := from; n <= to; n++ {
			out = append(out, Attempt{Attempt: n, StatusCode: 500, At: at.Add(time.Duration(n) * time.Second)})
		}
		return out
	}
	numbers := func(l []Attempt) []int {
		var out []int
		for _, a := range l {
			out = append(out, a.Attempt)
		}
		return out
	}
	tests := []struct {
		name      string
		log       []Attempt
		next      int
		wantFirst int
		wantLen   int
	}{
		{"first attempt", nil, 1, 1, 1},
		{"third attempt", log(1, 2), 3, 1, 3},
		{"the last one kept whole", log(1, MaxAttemptsKept-1), MaxAttemptsKept, 1, MaxAttemptsKept},
		{"one more drops the oldest", log(1, MaxAttemptsKept), MaxAttemptsKept + 1, 2, MaxAttemptsKept},
		{"a long schedule keeps the newest", log(5, MaxAttemptsKept+4), MaxAttemptsKept + 5, 6, MaxAttemptsKept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Spare capacity: an append in place would show in the original.
			in := append(make([]Attempt, 0, len(tt.log)+4), tt.log...)
			before := numbers(in)
			got := AppendAttempt(in, Attempt{Attempt: tt.next, StatusCode: 200})
			if len(got) != tt.wantLen || got[0].Attempt != tt.wantFirst || got[len(got)-1].Attempt != tt.next {
				t.Fatalf("AppendAttempt gave attempts %v", numbers(got))
			}
			for i := 1; i < len(got); i++ {
				if got[i].Attempt != got[i-1].Attempt+1 {
					t.Fatalf("attempts out of order: %v", numbers(got))
				}
			}
			got[0].Attempt = -1
			if after := numbers(in); !slices.Equal(before, after) {
				t.Fatalf("the input log changed: %v, was %v", after, before)
			}
			if cap(in) > len(in) && in[:len(in)+1][len(in)].Attempt != 0 {
				t.Fatal("AppendAttempt wrote into the input's spare capacity")
			}
		})
	}
}

func TestLatestAttempt(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := DeliveryRecord{Attempt: 3, StatusCode: 503, LatencyMs: 12, Error: "receiver answered HTTP 503", State: DeliveryRetrying}
	want := Attempt{Attempt: 3, StatusCode: 503, LatencyMs: 12, Error: "receiver answered HTTP 503", At: at}
	if got := d.LatestAttempt(at); got != want {
		t.Fatalf("LatestAttempt = %+v, want %+v", got, want)
	}
}

func TestCheckSecret(t *testing.T) {
	for secret, ok := range map[string]bool{
		"whsec_local_0123456789":            true,
		strings.Repeat("s", MinSecretLen):   true,
		strings.Repeat("s", MaxSecretLen):   true,
		"spaces are fine, ünïcode too":      true,
		strings.Repeat("s", MinSecretLen-1): false,
		strings.Repeat("s", MaxSecretLen+1): false,
		"whsec_local_01234\x00":             false,
		"whsec_local_01234\n":               false,
		"whsec_local_01234\xff":             false,
	} {
		if err := CheckSecret(secret); (err == nil) != ok {
			t.Errorf("CheckSecret(%q) = %v, want ok %v", secret, err, ok)
		}
	}
}
