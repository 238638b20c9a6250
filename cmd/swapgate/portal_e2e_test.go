package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// portalClient is a browser as far as the portal can tell: a cookie jar,
// no redirect followed (each 303 is checked), and the page it last read,
// whose CSRF token its next form carries.
type portalClient struct {
	t    *testing.T
	ts   *testServer
	c    *http.Client
	csrf string
}

func newPortalClient(t *testing.T, ts *testServer) *portalClient {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &portalClient{t: t, ts: ts, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// page is one portal answer.
type portalPage struct {
	status int
	header http.Header
	body   string
}

func (pc *portalClient) send(req *http.Request) portalPage {
	pc.t.Helper()
	resp, err := pc.c.Do(req)
	if err != nil {
		pc.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p := portalPage{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if m := csrfField.FindStringSubmatch(p.body); m != nil {
		pc.csrf = m[1]
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "form-action 'self'") ||
			resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			pc.t.Errorf("%s %s: headers %v", req.Method, req.URL.Path, resp.Header)
		}
	}
	return p
}

func (pc *portalClient) get(path string) portalPage {
	pc.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, pc.ts.base+path, nil)
	return pc.send(req)
}

// post sends a form with the current page's token (unless the form sets
// its own csrf).
func (pc *portalClient) post(path string, form url.Values, hdr ...string) portalPage {
	pc.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", pc.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, pc.ts.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return pc.send(req)
}

func (p portalPage) want(t *testing.T, status int, contains ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d: %s", p.status, status, truncate([]byte(p.body), 3000))
	}
	for _, c := range contains {
		if !strings.Contains(p.body, c) {
			t.Fatalf("page lacks %q: %s", c, truncate([]byte(p.body), 3000))
		}
	}
}

func (p portalPage) wantRedirect(t *testing.T, to string) {
	t.Helper()
	if p.status != http.StatusSeeOther || p.header.Get("Location") != to {
		t.Fatalf("answer %d to %q, want 303 to %q: %s", p.status, p.header.Get("Location"), to, truncate([]byte(p.body), 2000))
	}
}

var mailedCode = regexp.MustCompile(`code is (\d{6})\.`)

// mailboxCodes reads the sandbox mailbox of an address, newest first.
func mailboxCodes(t *testing.T, ts *testServer, email string) []string {
	t.Helper()
	var box struct {
		Messages []struct {
			To, Subject, Text, SentAt string
		} `json:"messages"`
	}
	ts.get("/v1/sandbox/mailbox?email="+url.QueryEscape(email)).decode(t, &box)
	var out []string
	for _, m := range box.Messages {
		if m.To != email || m.SentAt == "" || !strings.Contains(m.Subject, "sign-in code") {
			t.Fatalf("message %+v", m)
		}
		if c := mailedCode.FindStringSubmatch(m.Text); c != nil {
			out = append(out, c[1])
		}
	}
	return out
}

// signIn asks for a code for email and signs in with it.
func (pc *portalClient) signIn(email string) {
	pc.t.Helper()
	before := len(mailboxCodes(pc.t, pc.ts, email))
	pc.get("/portal").want(pc.t, 200, `id="email-form"`)
	pc.post("/portal/sign-in/code", url.Values{"email": {email}}).wantRedirect(pc.t, "/portal?email="+url.QueryEscape(email))
	var codes []string
	waitUntil(pc.t, "the code is mailed", func() bool { codes = mailboxCodes(pc.t, pc.ts, email); return len(codes) > before })
	pc.get("/portal?email="+url.QueryEscape(email)).want(pc.t, 200, `id="code-form"`)
	pc.post("/portal/sign-in", url.Values{"email": {email}, "code": {codes[0]}}).wantRedirect(pc.t, "/portal")
}

// hookReceiver is a partner's HTTPS endpoint that answers 500 while fail
// is set, recording each attempt's delivery id and signature.
type hookReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	fail bool
	sigs map[string][]string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{sigs: map[string][]string{}}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		id := r.Header.Get(webhook.HeaderDelivery)
		h.sigs[id] = append(h.sigs[id], r.Header.Get(webhook.HeaderSignature))
		if h.fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) setFail(v bool) { h.mu.Lock(); h.fail = v; h.mu.Unlock() }

func (h *hookReceiver) signatures(id string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.sigs[id]...)
}

// portalServer is a sandbox server whose webhooks reach a local receiver
// and give up after one attempt, so that a failed delivery is dead at once.
func portalServer(t *testing.T, rc *hookReceiver) *testServer {
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	return startServer(t, func(c *app.Config) {
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookMaxAttempts = 1
	})
}

var deliveryIDs = regexp.MustCompile(`data-delivery="(dlv_[0-9a-f]+)" data-state="([a-z]+)"`)

// TestPortalSignIn: the code is mailed to the sandbox mailbox, works once,
// and refuses every bad try with one message; an unknown address is
// answered exactly as a known one; forms without the token or from
// another site are refused; code requests are limited per address.
func TestPortalSignIn(t *testing.T) {
	ts := startServer(t, nil)
	ts.createPartner("Portal")
	const email = "portal@example.com"
	pc := newPortalClient(t, ts)

	home := pc.get("/portal")
	home.want(t, 200, `id="email-form"`, `<link rel="stylesheet" href="/portal/assets/portal.css">`)
	for _, c := range home.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "sg_portal_pre=") && (!strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") || !strings.Contains(strings.ToLower(c), "path=/portal")) {
			t.Fatalf("pre-session cookie %q", c)
		}
	}
	pc.post("/portal/sign-in/code", url.Values{"email": {email}, "csrf": {"forged"}}).want(t, 403, "not sent from one of your portal pages")
	pc.post("/portal/sign-in/code", url.Values{"email": {email}}, "Sec-Fetch-Site", "cross-site").want(t, 403, "came from another site")
	pc.post("/portal/sign-in/code", url.Values{"email": {"nope"}}).want(t, 400, "Enter the email address")

	// Known and unknown addresses get the same answer.
	unknown := pc.post("/portal/sign-in/code", url.Values{"email": {"nobody@example.com"}})
	unknown.wantRedirect(t, "/portal?email=nobody%40example.com")
	pc.get("/portal?email=nobody%40example.com").want(t, 200, "If a partner account uses <strong>nobody@example.com</strong>")
	pc.post("/portal/sign-in/code", url.Values{"email": {email}}).wantRedirect(t, "/portal?email=portal%40example.com")
	var codes []string
	waitUntil(t, "the code is mailed", func() bool { codes = mailboxCodes(t, ts, email); return len(codes) == 1 })
	if got := mailboxCodes(t, ts, "nobody@example.com"); len(got) != 0 {
		t.Fatalf("mail to an unknown address: %v", got)
	}
	code := codes[0]
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	pc.get("/portal?email="+url.QueryEscape(email)).want(t, 200, `id="code-form"`)
	bad := pc.post("/portal/sign-in", url.Values{"email": {email}, "code": {wrong}})
	bad.want(t, 401, "That code is not valid")
	pc.post("/portal/sign-in", url.Values{"email": {"nobody@example.com"}, "code": {code}}).want(t, 401, "That code is not valid")
	pc.post("/portal/sign-in", url.Values{"email": {email}, "code": {"12ab"}}).want(t, 400, "6-digit code")

	ok := pc.post("/portal/sign-in", url.Values{"email": {email}, "code": {code}})
	ok.wantRedirect(t, "/portal")
	var session string
	for _, c := range ok.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "sg_portal=") {
			session = c
		}
	}
	if session == "" || !strings.Contains(session, "HttpOnly") || !strings.Contains(session, "SameSite=Strict") || strings.Contains(session, "Secure") {
		t.Fatalf("session cookie %q (no Secure over plain HTTP)", session)
	}
	pc.get("/portal").want(t, 200, "<h1>Overview</h1>")

	// The code is single use.
	other := newPortalClient(t, ts)
	other.get("/portal")
	other.post("/portal/sign-in", url.Values{"email": {email}, "code": {code}}).want(t, 401, "That code is not valid")

	// Five wrong tries end a code.
	pc2 := newPortalClient(t, ts)
	pc2.get("/portal")
	pc2.post("/portal/sign-in/code", url.Values{"email": {email}}).wantRedirect(t, "/portal?email=portal%40example.com")
	waitUntil(t, "the second code is mailed", func() bool { codes = mailboxCodes(t, ts, email); return len(codes) == 2 })
	fresh := codes[0]
	for range 5 {
		w := "999999"
		if fresh == w {
			w = "999998"
		}
		pc2.post("/portal/sign-in", url.Values{"email": {email}, "code": {w}}).want(t, 401)
	}
	pc2.post("/portal/sign-in", url.Values{"email": {email}, "code": {fresh}}).want(t, 401, "That code is not valid")

	// A third code is allowed, the fourth within ten minutes is not.
	pc2.post("/portal/sign-in/code", url.Values{"email": {email}}).wantRedirect(t, "/portal?email=portal%40example.com")
	pc2.post("/portal/sign-in/code", url.Values{"email": {email}}).want(t, 429, "Too many sign-in codes")

	// Signed-in pages need a session; sign-out ends it.
	anon := newPortalClient(t, ts)
	anon.get("/portal/key").wantRedirect(t, "/portal")
	anon.post("/portal/key/rotate", nil).want(t, 403, "Your session has ended")
	pc.get("/portal/key")
	pc.post("/portal/sign-out", nil).wantRedirect(t, "/portal?done=signed-out")
	pc.get("/portal/key").wantRedirect(t, "/portal")

	// The mailbox endpoint's own refusals; it does not exist in live mode.
	ts.get("/v1/sandbox/mailbox").wantError(t, 400, "INVALID_PARAMS", "email")
	ts.get("/v1/sandbox/mailbox?email=a%20b").wantError(t, 400, "INVALID_PARAMS", "email")
	live := startServer(t, liveWithAggregator(t))
	live.get("/v1/sandbox/mailbox?email=a%40b.co").wantError(t, 404, "NOT_FOUND", "")
	live.get("/portal").wantError(t, 404, "NOT_FOUND", "")
}

// TestPortalPages: every page and form of a signed-in partner, through
// the real server: overview, transactions with filters, detail and CSV,
// fee wallets, webhooks with a test event, a dead delivery resent (from
// the portal and the API), and the key rotated, which signs out every
// other session and the old key; partner disable ends the rest.
func TestPortalPages(t *testing.T) {
	rc := newHookReceiver(t)
	ts := portalServer(t, rc)
	pid, key := ts.createPartner("Pages")
	const email = "pages@example.com"
	pc := newPortalClient(t, ts)
	pc.signIn(email)
	second := newPortalClient(t, ts)
	second.signIn(email)

	// Fee wallets: the API's validation and messages.
	pc.get("/portal/wallets").want(t, 200, "No fee wallet yet", "removing a wallet pauses settlements")
	pc.post("/portal/wallets", url.Values{"ecosystem": {"evm"}, "address": {"0x123"}}).want(t, 400, "address is not a valid evm fee wallet")
	pc.post("/portal/wallets", url.Values{"ecosystem": {"dogecoin"}, "address": {"x"}}).want(t, 400, "unsupported ecosystem dogecoin")
	pc.post("/portal/wallets", url.Values{"ecosystem": {"evm"}, "address": {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}}).
		wantRedirect(t, "/portal/wallets?done=wallet-saved")
	pc.get("/portal/wallets?done=wallet-saved").want(t, 200, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "The fee wallet was saved.")
	pc.post("/portal/wallets/sui/delete", nil).want(t, 404, "no fee wallet is registered for sui")

	// Some activity to show: a fee-bearing quote.
	var q struct {
		Quote struct{ ID string } `json:"quote"`
	}
	e := ts.get(arbToBase(), withKey(key))
	if e.Status != 200 {
		t.Fatalf("quote: %s", e.Raw)
	}
	e.decode(t, &q)

	ov := pc.get("/portal")
	ov.want(t, 200, `data-chart="Quotes per day"`, `data-chart="Swaps per day"`, `data-chart="Volume per day (USD)"`,
		`data-chart="Fees earned per day (USD)"`, `data-chart="Requests per hour, last 24 hours"`, `<span class="figure" id="total-quotes">1</span>`,
		"<td>evm</td><td>pending</td>")
	if strings.Count(ov.body, `<rect class="bar"`) != 4*30+24 {
		t.Fatalf("%d bars", strings.Count(ov.body, `<rect class="bar"`))
	}

	// Transactions: list, filters with the API's messages, detail, CSV.
	pc.get("/portal/transactions").want(t, 200, q.Quote.ID)
	pc.get("/portal/transactions?chain=abc").want(t, 400, "chain must be a chain ID")
	pc.get("/portal/transactions?minFeeUsd=-1").want(t, 400, "minFeeUsd must be a non-negative decimal")
	pc.get("/portal/transactions?chain=1").want(t, 200, "No transactions match.")
	pc.get("/portal/transactions?chain=8453&status=QUOTED&minFeeUsd=0").want(t, 200, q.Quote.ID)
	pc.get("/portal/transactions/"+q.Quote.ID).want(t, 200, "Transaction <code>"+q.Quote.ID, "Arbitrum", "pending in evm", `id="tx-history"`, "quoted</li><li>now <strong>QUOTED</strong>")
	pc.get("/portal/transactions/qt_nope").want(t, 404, "There is no transaction qt_nope")
	exp := pc.get("/portal/transactions.csv?chain=42161")
	if exp.status != 200 || !strings.HasPrefix(exp.header.Get("Content-Type"), "text/csv") || !strings.Contains(exp.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export %d %v", exp.status, exp.header)
	}
	rows, err := csv.NewReader(strings.NewReader(exp.body)).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][0] != "id" || rows[1][0] != q.Quote.ID || rows[1][14] != "pending" {
		t.Fatalf("csv %v %v", rows, err)
	}

	// Webhooks: created with its secret shown once, a test event and its
	// attempt, a dead delivery resent with its original signature.
	pc.get("/portal/webhooks").want(t, 200, `id="webhook-form"`)
	pc.post("/portal/webhooks", url.Values{"url": {"http://example.com/hook"}, "events": {"swap.completed"}}).want(t, 400, "url refused")
	pc.post("/portal/webhooks", url.Values{"url": {rc.srv.URL + "/hook"}, "events": {"swap.nope"}}).want(t, 400, "unknown event")
	created := pc.post("/portal/webhooks", url.Values{"url": {rc.srv.URL + "/hook"}, "events": {"swap.completed", "swap.failed"}})
	created.want(t, 201, `id="new-secret"`, "whsec_")
	hookID := regexp.MustCompile(`Webhook (wh_[0-9a-f]+) created`).FindStringSubmatch(created.body)[1]
	pc.get("/portal/webhooks").want(t, 200, hookID, `<span class="badge">ok</span>`)
	if strings.Contains(pc.get("/portal/webhooks").body, "whsec_") {
		t.Fatal("the secret is shown again")
	}

	rc.setFail(true)
	pc.get("/portal/webhooks/" + hookID)
	pc.post("/portal/webhooks/"+hookID+"/test", nil).wantRedirect(t, "/portal/webhooks/"+hookID+"?done=test-sent")
	var dead string
	waitUntil(t, "the test delivery is dead", func() bool {
		m := deliveryIDs.FindStringSubmatch(pc.get("/portal/webhooks/" + hookID).body)
		if m != nil && m[2] == webhook.DeliveryDead {
			dead = m[1]
		}
		return dead != ""
	})
	detail := pc.get("/portal/webhooks/" + hookID)
	detail.want(t, 200, "receiver answered HTTP 500", `<td class="num">500</td>`, "/deliveries/"+dead+"/resend")
	rc.setFail(false)
	pc.post("/portal/webhooks/"+hookID+"/deliveries/"+dead+"/resend", nil).wantRedirect(t, "/portal/webhooks/"+hookID+"?done=resent")
	waitUntil(t, "the resent delivery is delivered", func() bool {
		m := deliveryIDs.FindStringSubmatch(pc.get("/portal/webhooks/" + hookID).body)
		return m != nil && m[1] == dead && m[2] == webhook.DeliveryDelivered
	})
	if sigs := rc.signatures(dead); len(sigs) != 2 || sigs[0] != sigs[1] || sigs[0] == "" {
		t.Fatalf("signatures of the delivery and its resend: %v", sigs)
	}
	pc.get("/portal/webhooks/"+hookID).want(t, 200, `<td class="num">200</td>`)
	// Resending a delivered delivery sends nothing, from the portal and the API.
	pc.post("/portal/webhooks/"+hookID+"/deliveries/"+dead+"/resend", nil).wantRedirect(t, "/portal/webhooks/"+hookID+"?done=not-resent")
	var res struct {
		DeliveryID string `json:"deliveryId"`
		State      string `json:"state"`
		Resent     bool   `json:"resent"`
	}
	api := ts.do(http.MethodPost, "/v1/partner/webhooks/"+hookID+"/deliveries/"+dead+"/resend", nil, withKey(key))
	if api.Status != http.StatusAccepted {
		t.Fatalf("resend: %s", api.Raw)
	}
	api.decode(t, &res)
	if res.DeliveryID != dead || res.State != webhook.DeliveryDelivered || res.Resent {
		t.Fatalf("resend of a delivered delivery: %+v", res)
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(rc.signatures(dead)); n != 2 {
		t.Fatalf("%d attempts after resending a delivered delivery", n)
	}
	pc.post("/portal/webhooks/"+hookID+"/deliveries/dlv_000000000000000000000000/resend", nil).want(t, 404, "There is no delivery")
	pc.post("/portal/webhooks/wh_nope/test", nil).want(t, 404, "There is no webhook wh_nope")
	pc.get("/portal/transactions/"+q.Quote.ID).want(t, 200, "None among your webhooks")

	// The API key: rotated, the new key shown once, the old one refused,
	// every other session signed out, this one kept.
	pc.get("/portal/key").want(t, 200, "Never rotated")
	rot := pc.post("/portal/key/rotate", nil)
	rot.want(t, 200, `id="new-key"`, "Last rotated")
	newKey := regexp.MustCompile(`<code id="new-key" class="secret">([^<]+)</code>`).FindStringSubmatch(rot.body)[1]
	ts.get("/v1/partner/me", withKey(key)).wantError(t, 401, "UNAUTHORIZED", "")
	if e := ts.get("/v1/partner/me", withKey(newKey)); e.Status != 200 {
		t.Fatalf("the new key: %s", e.Raw)
	}
	second.get("/portal/key").wantRedirect(t, "/portal")
	pc.get("/portal/key").want(t, 200, "Last rotated")
	if strings.Contains(pc.get("/portal/key").body, newKey) {
		t.Fatal("the key is shown again")
	}

	// Deleting a webhook and a wallet.
	pc.get("/portal/webhooks/" + hookID)
	pc.post("/portal/webhooks/"+hookID+"/delete", nil).wantRedirect(t, "/portal/webhooks?done=hook-deleted")
	pc.get("/portal/wallets")
	pc.post("/portal/wallets/evm/delete", nil).wantRedirect(t, "/portal/wallets?done=wallet-gone")
	pc.get("/portal/wallets?done=wallet-gone").want(t, 200, "Settlements in that ecosystem are paused")

	// A forged or cross-site form is refused even with a session.
	pc.post("/portal/key/rotate", url.Values{"csrf": {"forged"}}).want(t, 403, "not sent from one of your portal pages")
	pc.post("/portal/key/rotate", nil, "Origin", "https://evil.example").want(t, 403, "came from another site")

	// The operator disables the partner: the session ends.
	cli(t, nil, "partner", "disable", "--data", ts.dir, "--id", pid)
	pc.get("/portal/key").wantRedirect(t, "/portal")
}

// TestPortalCookiesSecureBehindTLS: with an https public address (TLS
// ended at a proxy in front), the portal's cookies are Secure.
func TestPortalCookiesSecureBehindTLS(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.PublicURL = "https://portal.example" })
	home := newPortalClient(t, ts).get("/portal")
	home.want(t, 200, `id="email-form"`)
	var pre string
	for _, c := range home.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "sg_portal_pre=") {
			pre = c
		}
	}
	if !strings.Contains(pre, "secure") && !strings.Contains(pre, "Secure") {
		t.Fatalf("cookie %q is not Secure", pre)
	}
}
