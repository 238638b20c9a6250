package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// fakeDesk is an OnrampDesk over real orders, moved with Order.Move as the
// on-ramp actor moves them. With step set, a paid order goes on by itself
// to CRYPTO_SENT and then COMPLETED, one step apart, like the sandbox
// provider's delivery.
type fakeDesk struct {
	cat  *onramp.Catalogue
	step time.Duration

	mu     sync.Mutex
	orders map[string]*onramp.Order
	acts   int
	timers []*time.Timer
}

func newFakeDesk(t *testing.T, reg *registry.Registry, step time.Duration) *fakeDesk {
	d := &fakeDesk{cat: onramp.NewCatalogue(reg), step: step, orders: map[string]*onramp.Order{}}
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, tm := range d.timers {
			tm.Stop()
		}
	})
	return d
}

func (d *fakeDesk) Catalogue() *onramp.Catalogue { return d.cat }

func (d *fakeDesk) Quote(context.Context, *account.Partner, *onramp.Request, time.Time) (*onramp.Quote, error) {
	return nil, errors.New("fake desk: no quotes")
}

func (d *fakeDesk) Checkout(context.Context, *account.Partner, *onramp.CheckoutRequest, time.Time) (*onramp.Order, string, error) {
	return nil, "", errors.New("fake desk: no checkouts")
}

// Order is a copy, as a store's read would be: the page never sees the
// desk's own order change under it.
func (d *fakeDesk) Order(_ context.Context, uid string) (*onramp.Order, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.orders[uid]
	if !ok {
		return nil, account.ErrNotFound
	}
	c := *o
	c.History = append([]onramp.Step(nil), o.History...)
	return &c, nil
}

func (d *fakeDesk) Act(ctx context.Context, uid string, a onramp.Action) (*onramp.Order, error) {
	to, ok := a.Target()
	if !ok {
		return nil, fmt.Errorf("fake desk: action %q", a)
	}
	d.mu.Lock()
	o, found := d.orders[uid]
	if !found {
		d.mu.Unlock()
		return nil, account.ErrNotFound
	}
	d.acts++
	if _, err := o.Move(to, time.Now(), "", a.Reason()); err != nil {
		d.mu.Unlock()
		return nil, err
	}
	if to == onramp.PaymentReceived && d.step > 0 {
		d.timers = append(d.timers, time.AfterFunc(d.step, func() {
			d.move(uid, onramp.CryptoSent, "0x"+strings.Repeat("ab", 32))
			d.mu.Lock()
			defer d.mu.Unlock()
			d.timers = append(d.timers, time.AfterFunc(d.step, func() { d.move(uid, onramp.Completed, "") }))
		}))
	}
	d.mu.Unlock()
	return d.Order(ctx, uid)
}

func (d *fakeDesk) move(uid string, to onramp.State, tx string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _ = d.orders[uid].Move(to, time.Now(), tx, "") // a refund in between leaves it refused
}

func (d *fakeDesk) actCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.acts
}

func (d *fakeDesk) state(uid string) onramp.State {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.orders[uid].State
}

// open adds a CREATED order of 100.00 USD of USDC on Arbitrum, opened at
// created, with the checkout's own fields changed by edit, and moved
// through the states given.
func (d *fakeDesk) open(t *testing.T, created time.Time, edit func(*onramp.CheckoutRequest), moves ...onramp.State) *onramp.Order {
	t.Helper()
	req := &onramp.CheckoutRequest{Request: onramp.Request{Wallet: "0x1111111111111111111111111111111111111111"},
		ExternalID: "partner-order-7"}
	if edit != nil {
		edit(req)
	}
	q := &onramp.Quote{Currency: "USD", Amount: 10_000, Symbol: "USDC", ChainID: 42161,
		Token: "0xaf88d065e77c8cc2239327c5edb3a432268e5831", Decimals: 6, ExchangeRate: "0.9998", CryptoAmount: "100.020004",
		Fees:  onramp.Fees{Network: 3, Processing: 299, Partner: 150, Total: 452},
		Total: 10_452, Method: onramp.CreditCard, PartnerFeeBps: 150, ExpiresAt: created.Add(onramp.QuoteTTL)}
	o := onramp.NewOrder("", "sandbox", req, q, created)
	for _, st := range moves {
		at := time.Now()
		if st == onramp.Expired {
			at = o.ExpiresAt
		}
		if _, err := o.Move(st, at, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.orders[o.UID] = o
	return o
}

// checkoutServer serves an edge with the desk on a loopback port and
// returns its base URL.
func checkoutServer(t *testing.T, desk func(*registry.Registry) *fakeDesk, cfg Config) (string, *fakeDesk) {
	t.Helper()
	reg, cat := testCatalog(t)
	d := desk(reg)
	s, err := New(cfg, Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		Onramp: d, Idempotency: forgetful{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
	})
	return "http://" + ln.Addr().String(), d
}

// client follows no redirect, so that tests see the 303 itself.
var noFollow = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type pageAnswer struct {
	status int
	header http.Header
	body   string
}

func fetch(t *testing.T, method, u string, form url.Values, hdr map[string]string) pageAnswer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return pageAnswer{res.StatusCode, res.Header, string(b)}
}

var wantCheckoutHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
}

func checkHeaders(t *testing.T, what string, a pageAnswer) {
	t.Helper()
	for k, v := range wantCheckoutHeaders {
		if got := a.header.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
}

// checkHTMLPage asserts an answer is a whole HTML page, not JSON nor a
// stack trace, with the security headers.
func checkHTMLPage(t *testing.T, what string, a pageAnswer, status int, mustContain ...string) {
	t.Helper()
	if a.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, a.status, status, a.body)
	}
	if ct := a.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	if !strings.HasPrefix(a.body, "<!doctype html>") || !strings.Contains(a.body, `name="viewport"`) {
		t.Errorf("%s: not a page: %.200s", what, a.body)
	}
	for _, bad := range []string{"goroutine ", "panic", `"error":`, ".go:"} {
		if strings.Contains(a.body, bad) {
			t.Errorf("%s: page shows %q: %s", what, bad, a.body)
		}
	}
	for _, s := range mustContain {
		if !strings.Contains(a.body, s) {
			t.Errorf("%s: page lacks %q", what, s)
		}
	}
	checkHeaders(t, what, a)
}

func withDesk(step time.Duration, t *testing.T) func(*registry.Registry) *fakeDesk {
	return func(reg *registry.Registry) *fakeDesk { return newFakeDesk(t, reg, step) }
}

func TestCheckoutPageShowsTheOrder(t *testing.T) {
	base, desk := checkoutServer(t, withDesk(0, t), DefaultConfig())
	o := desk.open(t, time.Now(), func(r *onramp.CheckoutRequest) { r.RedirectURL = "https://partner.example/done" })
	a := fetch(t, "GET", base+"/checkout/"+o.UID, nil, nil)
	checkHTMLPage(t, "order page", a, 200,
		`id="total" class="big">104.52 USD<`, `id="fiat-amount">100.00 USD<`, `id="fee-network">0.03 USD<`,
		`id="fee-processing">2.99 USD<`, `id="fee-partner">1.50 USD<`, `id="fee-total">4.52 USD<`,
		`100.020004 USDC`, `USDC on Arbitrum`, `(Credit card)`, o.Wallet, `partner-order-7`, `partner.example`,
		`id="status" class="badge">CREATED<`, `<time id="time-left">14:5`,
		`action="./`+o.UID+`/pay"`, `action="./`+o.UID+`/fail"`, `value="`+o.CSRF+`"`,
		`<link rel="stylesheet" href="./assets/checkout.css">`, `<script src="./assets/checkout.js" defer></script>`)
	// Pay and Fail are offered, Refund is not.
	for form, hidden := range map[string]bool{"action-pay": false, "action-fail": false, "action-refund": true} {
		re := regexp.MustCompile(`<form id="` + form + `"[^>]*>`)
		tag := re.FindString(a.body)
		if tag == "" || strings.Contains(tag, " hidden") != hidden {
			t.Errorf("form %s: %q, want hidden=%v", form, tag, hidden)
		}
	}
	// No inline script or style: the CSP would block them.
	if regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]|<script>|<style|\sstyle=|\son[a-z]+=`).MatchString(a.body) {
		t.Errorf("inline script or style in the page:\n%s", a.body)
	}
	if n := strings.Count(a.body, `name="csrf"`); n != 3 {
		t.Errorf("%d csrf fields, want one in each of the 3 forms", n)
	}
}

func TestCheckoutPageEscapesTheOrdersData(t *testing.T) {
	base, desk := checkoutServer(t, withDesk(0, t), DefaultConfig())
	evil := func(r *onramp.CheckoutRequest) {
		r.ExternalID = `"><script>alert(1)</script>`
		r.RedirectURL = `https://partner.example/"><script>alert(2)</script>/UID`
	}
	created := desk.open(t, time.Now(), evil)
	completed := desk.open(t, time.Now(), evil, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
	for _, o := range []*onramp.Order{created, completed} {
		a := fetch(t, "GET", base+"/checkout/"+o.UID, nil, nil)
		checkHTMLPage(t, string(o.State), a, 200, `&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;`)
		if strings.Contains(a.body, "<script>alert") || strings.Contains(a.body, `"><script`) {
			t.Errorf("%s: unescaped order data:\n%s", o.State, a.body)
		}
	}
	a := fetch(t, "GET", base+"/checkout/"+completed.UID, nil, nil)
	if !strings.Contains(a.body, `data-redirect="https://partner.example/&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;/`+completed.UID+`"`) {
		t.Errorf("completed page's redirect attribute:\n%s", a.body)
	}
	if !strings.Contains(a.body, `id="redirect-link" href="https://partner.example/%22%3e%3cscript%3ealert%282%29%3c/script%3e/`+completed.UID+`"`) {
		t.Errorf("completed page's redirect link:\n%s", a.body)
	}
}

func TestCheckoutPagesForOrdersThatCannotBeShown(t *testing.T) {
	base, desk := checkoutServer(t, withDesk(0, t), DefaultConfig())
	lapsed := desk.open(t, time.Now().Add(-onramp.CheckoutTTL-time.Minute), nil)
	expired := desk.open(t, time.Now().Add(-onramp.CheckoutTTL-time.Minute), nil, onramp.Expired)
	cases := []struct {
		name, path string
		status     int
		says       string
	}{
		{"malformed uid", "/checkout/not-an-order", 404, "Checkout not found"},
		{"malformed uid with markup", "/checkout/%3Cscript%3Ealert(1)%3C%2Fscript%3E", 404, "Checkout not found"},
		{"uid of the right length, bad alphabet", "/checkout/ord_11111111111111111111111111", 404, "Checkout not found"},
		{"unknown uid", "/checkout/" + onramp.NewUID(), 404, "Checkout not found"},
		{"past expiresAt, not yet moved", "/checkout/" + lapsed.UID, 410, "This checkout has expired"},
		{"EXPIRED", "/checkout/" + expired.UID, 410, "This checkout has expired"},
		{"no such page under /checkout", "/checkout/a/b/c", 404, "Checkout not found"},
		{"no such asset", "/checkout/assets/evil.js", 404, "Not found"},
		{"GET on an action", "/checkout/" + lapsed.UID + "/pay", 405, "Not available"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := fetch(t, "GET", base+c.path, nil, nil)
			checkHTMLPage(t, c.name, a, c.status, `<h1 id="title">`+c.says+`</h1>`, `href="`)
			if strings.Contains(a.body, "<script>") {
				t.Errorf("markup from the path in the page: %s", a.body)
			}
		})
	}
	a := fetch(t, "GET", base+"/checkout/"+expired.UID, nil, nil)
	if !strings.Contains(a.body, expired.UID) || !strings.Contains(a.body, "no payment was taken") {
		t.Errorf("expired page does not say which order or that nothing was taken: %s", a.body)
	}
}

func TestCheckoutActions(t *testing.T) {
	base, desk := checkoutServer(t, withDesk(0, t), DefaultConfig())
	recent := time.Now()
	lapsed := recent.Add(-onramp.CheckoutTTL - time.Minute)
	cases := []struct {
		name    string
		created time.Time
		moves   []onramp.State
		action  string
		status  int
		after   onramp.State
		acted   bool
	}{
		{"pay a waiting order", recent, nil, "pay", 303, onramp.PaymentReceived, true},
		{"fail a waiting order", recent, nil, "fail", 303, onramp.Failed, true},
		{"refund a paid order", recent, []onramp.State{onramp.PaymentReceived}, "refund", 303, onramp.Refunded, true},
		{"refund before paying", recent, nil, "refund", 409, onramp.Created, true},
		{"pay twice", recent, []onramp.State{onramp.PaymentReceived}, "pay", 409, onramp.PaymentReceived, true},
		{"pay a completed order", recent, []onramp.State{onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed}, "pay", 409, onramp.Completed, true},
		{"refund once the crypto left", recent, []onramp.State{onramp.PaymentReceived, onramp.CryptoSent}, "refund", 409, onramp.CryptoSent, true},
		{"fail a refunded order", recent, []onramp.State{onramp.PaymentReceived, onramp.Refunded}, "fail", 409, onramp.Refunded, true},
		{"pay past expiresAt", lapsed, nil, "pay", 410, onramp.Created, false},
		{"pay an EXPIRED order", lapsed, []onramp.State{onramp.Expired}, "pay", 410, onramp.Expired, false},
		{"an action that is none", recent, nil, "approve", 404, onramp.Created, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := desk.open(t, c.created, nil, c.moves...)
			before := desk.actCount()
			a := fetch(t, "POST", base+"/checkout/"+o.UID+"/"+c.action, url.Values{"csrf": {o.CSRF}},
				map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"})
			if got := desk.state(o.UID); got != c.after {
				t.Errorf("order is %s, want %s", got, c.after)
			}
			if acted := desk.actCount() > before; acted != c.acted {
				t.Errorf("desk called: %v, want %v", acted, c.acted)
			}
			if c.status != 303 {
				checkHTMLPage(t, c.name, a, c.status, `<p id="message">`)
				if c.status == 409 && !strings.Contains(a.body, string(c.after)) {
					t.Errorf("refusal does not say the order's state %s: %s", c.after, a.body)
				}
				return
			}
			checkHeaders(t, c.name, a)
			if a.status != 303 || a.header.Get("Location") != "../"+o.UID {
				t.Fatalf("status %d, Location %q: %s", a.status, a.header.Get("Location"), a.body)
			}
			// The browser follows the relative Location back to the page,
			// which shows the new state.
			next, err := url.Parse(base + "/checkout/" + o.UID + "/" + c.action)
			if err != nil {
				t.Fatal(err)
			}
			page := fetch(t, "GET", next.ResolveReference(&url.URL{Path: a.header.Get("Location")}).String(), nil, nil)
			checkHTMLPage(t, c.name+", page after", page, 200, `id="status" class="badge">`+string(c.after)+`<`)
		})
	}
}

func TestCheckoutActionRefusesForgedRequests(t *testing.T) {
	base, desk := checkoutServer(t, withDesk(0, t), DefaultConfig())
	other := desk.open(t, time.Now(), nil)
	host := strings.TrimPrefix(base, "http://")
	cases := []struct {
		name   string
		form   url.Values
		hdr    map[string]string
		status int
	}{
		{"no token", url.Values{}, nil, 403},
		{"empty token", url.Values{"csrf": {""}}, nil, 403},
		{"wrong token", url.Values{"csrf": {strings.Repeat("a", 26)}}, nil, 403},
		{"another order's token", url.Values{"csrf": {other.CSRF}}, nil, 403},
		{"foreign Origin", nil, map[string]string{"Origin": "https://evil.example"}, 403},
		{"Origin of another port", nil, map[string]string{"Origin": "http://127.0.0.1:1"}, 403},
		{"null Origin", nil, map[string]string{"Origin": "null"}, 403},
		{"cross-site fetch", nil, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": base}, 403},
		{"same-site fetch", nil, map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"same origin", nil, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": base}, 303},
		{"own Origin, older browser", nil, map[string]string{"Origin": "http://" + host}, 303},
		{"not a browser", nil, nil, 303},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := desk.open(t, time.Now(), nil)
			form := c.form
			if form == nil {
				form = url.Values{"csrf": {o.CSRF}}
			}
			before := desk.actCount()
			a := fetch(t, "POST", base+"/checkout/"+o.UID+"/pay", form, c.hdr)
			if a.status != c.status {
				t.Fatalf("status %d, want %d: %s", a.status, c.status, a.body)
			}
			if c.status == 303 {
				return
			}
			checkHTMLPage(t, c.name, a, 403, `<h1 id="title">Request refused</h1>`)
			if desk.actCount() != before || desk.state(o.UID) != onramp.Created {
				t.Errorf("a refused request reached the desk: order %s", desk.state(o.UID))
			}
		})
	}
}

func TestCheckoutState(t *testing.T) {
	base, desk := checkoutServer(t, withDesk(0, t), DefaultConfig())
	redirect := func(r *onramp.CheckoutRequest) { r.RedirectURL = "https://partner.example/done?ref=7" }
	waiting := desk.open(t, time.Now(), redirect)
	paid := desk.open(t, time.Now(), redirect, onramp.PaymentReceived)
	completed := desk.open(t, time.Now(), redirect, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
	lapsed := desk.open(t, time.Now().Add(-onramp.CheckoutTTL-time.Second), redirect)
	type state struct {
		Status      string   `json:"status"`
		StatusLabel string   `json:"statusLabel"`
		Expired     bool     `json:"expired"`
		ExpiresInMs int64    `json:"expiresInMs"`
		Actions     []string `json:"actions"`
		History     []struct {
			Status string `json:"status"`
			At     int64  `json:"at"`
		} `json:"history"`
		Redirect string `json:"redirect"`
		PollMs   int64  `json:"pollMs"`
	}
	cases := []struct {
		o        *onramp.Order
		status   string
		actions  string
		history  int
		redirect bool
		poll     int64
	}{
		{waiting, "CREATED", "pay,fail", 1, false, 3000},
		{paid, "PAYMENT_RECEIVED", "refund", 2, false, 500},
		{completed, "COMPLETED", "", 4, true, 0},
		{lapsed, "EXPIRED", "", 1, false, 0},
	}
	for _, c := range cases {
		a := fetch(t, "GET", base+"/checkout/"+c.o.UID+"/state", nil, nil)
		checkHeaders(t, c.status, a)
		var env struct {
			Data  state
			Error any
		}
		if err := json.Unmarshal([]byte(a.body), &env); err != nil || a.status != 200 {
			t.Fatalf("%s: %d %v: %s", c.status, a.status, err, a.body)
		}
		s := env.Data
		if s.Status != c.status || strings.Join(s.Actions, ",") != c.actions || len(s.History) != c.history ||
			(s.Redirect != "") != c.redirect || s.PollMs != c.poll || s.StatusLabel == "" {
			t.Errorf("%s: %+v", c.status, s)
		}
		if c.redirect && s.Redirect != "https://partner.example/done?orderUid="+c.o.UID+"&ref=7" {
			t.Errorf("redirect %q", s.Redirect)
		}
		if (c.o == waiting) != (s.ExpiresInMs > 14*60*1000) || (c.o == lapsed) != s.Expired {
			t.Errorf("%s: expiresInMs %d, expired %v", c.status, s.ExpiresInMs, s.Expired)
		}
	}
	for _, uid := range []string{onramp.NewUID(), "nonsense"} {
		a := fetch(t, "GET", base+"/checkout/"+uid+"/state", nil, nil)
		if a.status != 404 || !strings.Contains(a.body, `"code":"NOT_FOUND"`) || !strings.Contains(a.body, `"param":"orderUid"`) {
			t.Errorf("state of %s: %d %s", uid, a.status, a.body)
		}
	}
}

func TestCheckoutAssets(t *testing.T) {
	base, _ := checkoutServer(t, withDesk(0, t), DefaultConfig())
	for name, ct := range map[string]string{"checkout.css": "text/css; charset=utf-8", "checkout.js": "text/javascript; charset=utf-8"} {
		a := fetch(t, "GET", base+"/checkout/assets/"+name, nil, nil)
		if a.status != 200 || a.header.Get("Content-Type") != ct || len(a.body) < 1000 {
			t.Errorf("%s: %d %q %d bytes", name, a.status, a.header.Get("Content-Type"), len(a.body))
		}
		checkHeaders(t, name, a)
	}
}

// Refusals the handler chain makes before a checkout handler runs (the rate
// limit) or after it failed (a panic) are pages too on these routes.
func TestCheckoutRefusalsOfTheChainArePages(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AnonReadPerMin = 2
	base, desk := checkoutServer(t, withDesk(0, t), cfg)
	o := desk.open(t, time.Now(), nil)
	var a pageAnswer
	for range 3 {
		a = fetch(t, "GET", base+"/checkout/"+o.UID, nil, nil)
	}
	checkHTMLPage(t, "rate limited", a, 429, "Too many requests")

	s := newTestServer(t, DefaultConfig(), io.Discard)
	s.checkout, _ = loadCheckoutPages()
	s.Handle("GET", "/checkout/boom", route{name: "boom", html: true}, func(*Request) error { panic("kaboom") })
	ctx := serve(s, "GET", "/checkout/boom", "127.0.0.1:5000", nil)
	body := string(ctx.Response.Body())
	if ctx.Response.StatusCode() != 500 || !strings.HasPrefix(body, "<!doctype html>") || strings.Contains(body, "kaboom") ||
		!strings.Contains(body, string(ctx.Response.Header.Peek("X-Request-Id"))) {
		t.Fatalf("panic page: %d %s", ctx.Response.StatusCode(), body)
	}
}
