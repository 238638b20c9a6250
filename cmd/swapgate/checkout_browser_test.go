package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/browsertest"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// The hosted checkout page as a user sees it, in a real Chromium against the
// real service: what the page shows of the order, that each step of a
// payment appears on it as it happens, where the browser lands afterwards,
// the pages for orders that cannot be paid, and that the page loads nothing
// from elsewhere, breaks none of its own Content-Security-Policy and shows
// the order's data as text. Screenshots on a phone and a desktop viewport
// are saved as artifacts (internal/browsertest) for a person to look at.
//
// A missing Chromium fails these tests (browsertest.New): a browser test
// that skips itself protects nothing.

// browserStep bounds each browser step, so that a hung page fails the test
// in seconds rather than at the package's timeout.
const browserStep = 30 * time.Second

// browserFlowStep is the sandbox on-ramp's step for the tests that watch a
// payment go through. The page polls every 500 ms while a step is in
// flight, so a shorter step may begin and end between two polls: the
// history would list it, but the badge would never show it. A second
// leaves every step on screen for at least one poll and keeps the whole
// payment to about two seconds.
const browserFlowStep = time.Second

// browserWallet is the delivery address of the tests' orders.
const browserWallet = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"

// browserPhone and browserDesktop are the viewports the page is looked at
// in: a current phone in portrait, with mobile emulation (the viewport meta
// applies, touch is on), and a laptop's window.
var (
	browserPhone = chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch,
		chromedp.EmulatePortrait, chromedp.EmulateScale(2))
	browserDesktop = chromedp.EmulateViewport(1280, 900)
)

// browserOrder is what POST /v1/onramp/checkout answered, with the amounts
// as the JSON spells them (the page shows the same decimals).
type browserOrder struct {
	OrderUID              string      `json:"orderUid"`
	CheckoutURL           string      `json:"checkoutUrl"`
	FiatCurrency          string      `json:"fiatCurrency"`
	FiatAmount            json.Number `json:"fiatAmount"`
	CryptoAsset           string      `json:"cryptoAsset"`
	EstimatedCryptoAmount string      `json:"estimatedCryptoAmount"`
	WalletAddress         string      `json:"walletAddress"`
	Quote                 struct {
		Fees struct {
			NetworkFee    json.Number `json:"networkFee"`
			ProcessingFee json.Number `json:"processingFee"`
			PartnerFee    json.Number `json:"partnerFee"`
			TotalFee      json.Number `json:"totalFee"`
		} `json:"fees"`
		TotalFiatAmount json.Number `json:"totalFiatAmount"`
	} `json:"quote"`
}

// browserCheckout opens an order over the API as a partner's backend does
// (anonymously when key is empty) and returns it.
func browserCheckout(t *testing.T, ts *testServer, key, redirectURL, externalID string) browserOrder {
	t.Helper()
	body := map[string]any{"fiatAmount": 100, "fiatCurrency": "USD", "cryptoAsset": "USDC", "chainId": 1,
		"paymentMethod": "credit_card", "walletAddress": browserWallet}
	if redirectURL != "" {
		body["redirectUrl"] = redirectURL
	}
	if externalID != "" {
		body["externalId"] = externalID
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var opts []reqOpt
	if key != "" {
		opts = append(opts, withKey(key))
	}
	var o browserOrder
	ts.do(http.MethodPost, "/v1/onramp/checkout", raw, opts...).decode(t, &o)
	if o.OrderUID == "" || !strings.HasPrefix(o.CheckoutURL, ts.base+"/checkout/") {
		t.Fatalf("checkout: %+v", o)
	}
	return o
}

// browserAPIStatus is GET /v1/onramp/status of the order: its status and
// the states it went through.
func browserAPIStatus(t *testing.T, ts *testServer, uid string) (string, []string) {
	t.Helper()
	var v struct {
		Status  string `json:"status"`
		History []struct {
			Status string `json:"status"`
		} `json:"history"`
	}
	ts.get("/v1/onramp/status?orderUid="+uid).decode(t, &v)
	var history []string
	for _, h := range v.History {
		history = append(history, h.Status)
	}
	return v.Status, history
}

// browserPartnerSite stands in for the partner's site the user returns to
// after paying: it records every request it receives and answers with a
// small page of its own.
type browserPartnerSite struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // request URIs
}

func browserStartPartnerSite(t *testing.T) *browserPartnerSite {
	t.Helper()
	s := &browserPartnerSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.URL.RequestURI())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Back at the partner</title><h1 id="partner">Thanks for your purchase</h1>`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *browserPartnerSite) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// browserWatch records what a tab does that the user does not see but a
// test must: its console (Chromium reports each Content-Security-Policy
// violation there, and every uncaught exception), every request it sends,
// and every JavaScript dialog, which it dismisses at once so that an
// alert cannot hang the test. It runs from its start until the test ends.
type browserWatch struct {
	mu       sync.Mutex
	console  []chromedp.ConsoleMessage
	requests []*network.EventRequestWillBeSent
	dialogs  []string
}

func browserWatchTab(t *testing.T, b *browsertest.Browser) *browserWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(b.Ctx)
	w := &browserWatch{}
	// Subscribing happens here, before anything is loaded; the loops may
	// start later without losing an event.
	console := chromedp.Console(ctx)
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	var wg sync.WaitGroup
	wg.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			w.mu.Lock()
			w.console = append(w.console, m)
			w.mu.Unlock()
		}
	})
	wg.Go(func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			w.mu.Lock()
			w.requests = append(w.requests, &ev)
			w.mu.Unlock()
		}
	})
	wg.Go(func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			w.mu.Lock()
			w.dialogs = append(w.dialogs, string(ev.Type)+": "+ev.Message)
			w.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	// Registered after browsertest.New's cleanup, so it runs first, while
	// the browser is still up.
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return w
}

// browserLoadFailure is how Chromium logs a response with an error status;
// the pages for unknown and expired orders are such responses on purpose.
var browserLoadFailure = regexp.MustCompile(`^Failed to load resource: the server responded with a status of (\d{3})`)

// check fails the test for anything the tab did wrong so far: a console
// message (a CSP violation, an exception, a script's error) other than an
// expected error status of a page, a dialog, or a request to an origin the
// page has no business with. site is the service's origin, from which
// every resource must come; leaveTo are the origins the tab may navigate
// to (the partner's redirect).
func (w *browserWatch) check(t *testing.T, site string, leaveTo []string, expectStatus ...int) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	pages := map[string]bool{}
	for _, ev := range w.requests {
		if ev.Type == network.ResourceTypeDocument {
			pages[ev.Request.URL] = true
		}
	}
	for _, m := range w.console {
		if slices.Contains(leaveTo, browserOrigin(m.URL)) {
			continue
		}
		// Only a page itself may answer with an expected error status; a
		// stylesheet or a script that does is broken.
		if sub := browserLoadFailure.FindStringSubmatch(m.Text); sub != nil && pages[m.URL] {
			if status, _ := strconv.Atoi(sub[1]); slices.Contains(expectStatus, status) {
				continue
			}
		}
		t.Errorf("console %s at %s: %s", m.Type, m.URL, m.Text)
	}
	for _, d := range w.dialogs {
		t.Errorf("the page opened a dialog: %s", d)
	}
	if len(w.requests) == 0 {
		t.Errorf("no request was recorded: the network watch saw nothing")
	}
	for _, ev := range w.requests {
		origin := browserOrigin(ev.Request.URL)
		if origin == site || (ev.Type == network.ResourceTypeDocument && slices.Contains(leaveTo, origin)) ||
			slices.Contains(leaveTo, browserOrigin(ev.DocumentURL)) {
			continue // what the partner's own page loads is the partner's business
		}
		t.Errorf("the tab requested %s (%s) from %s, which is not the service (%s)", ev.Request.URL, ev.Type, ev.DocumentURL, site)
	}
}

// cspViolations counts the console's reports of a Content-Security-Policy
// violation so far.
func (w *browserWatch) cspViolations() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.console {
		if strings.Contains(m.Text, "Content Security Policy") {
			n++
		}
	}
	return n
}

func browserOrigin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

// browserEval evaluates a JavaScript expression in the page, failing the
// test on an error.
func browserEval[T any](t *testing.T, b *browsertest.Browser, what, expr string) T {
	t.Helper()
	v, err := browsertest.Eval[T](b, expr, browserStep)
	if err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
	return v
}

// browserView is what the order page shows of where the order stands, as
// read from the page itself.
type browserView struct {
	Href string `json:"href"`
	// Badge is the status badge's text; Status the page's data-status,
	// which the stylesheet colours it by.
	Badge  string `json:"badge"`
	Status string `json:"status"`
	Label  string `json:"label"`
	// Actions are the buttons on screen (pay, fail, refund).
	Actions []string `json:"actions"`
	// Done is the completion note being on screen.
	Done bool `json:"done"`
	// Notice is the text of the page's alert, when shown.
	Notice string `json:"notice"`
	// History is the data-status of each entry of the history list.
	History []string `json:"history"`
	// Same is the marker browserPress sets still being there: the page was
	// not reloaded since.
	Same bool `json:"same"`
}

const browserViewJS = `(() => {
  const $ = (id) => document.getElementById(id);
  const shown = (el) => !!el && el.getClientRects().length > 0;
  const root = $("checkout");
  return {
    href: location.href,
    badge: $("status") ? $("status").textContent.trim() : "",
    status: root ? root.getAttribute("data-status") : "",
    label: $("status-label") ? $("status-label").textContent.trim() : "",
    actions: Array.from(document.querySelectorAll("form.action")).filter(shown).map((f) => f.id.replace("action-", "")),
    done: shown($("done")),
    notice: shown($("notice")) ? $("notice").textContent.trim() : "",
    history: Array.from(document.querySelectorAll("#history li")).map((li) => li.getAttribute("data-status")),
    same: window.browserTestMark === true,
  };
})()`

func browserRead(t *testing.T, b *browsertest.Browser) browserView {
	t.Helper()
	return browserEval[browserView](t, b, "read the order page", browserViewJS)
}

// browserPress presses one of the page's action buttons and reads the page
// every 20 ms until until says so. It returns each status the page showed,
// in order, from the one before the press. It fails the test when the
// badge and the page disagree, when the page was reloaded or left (a
// marker set in its window before the press is gone: the steps must
// appear in place), or when until is not met within browserStep.
func browserPress(t *testing.T, b *browsertest.Browser, action string, until func(browserView) bool) ([]string, browserView) {
	t.Helper()
	browserEval[chromedp.Void](t, b, "mark the page", `window.browserTestMark = true`)
	before := browserRead(t, b)
	b.Run("press "+action, browserStep, chromedp.Click(chromedp.CSS("#action-"+action+" button"), chromedp.NodeVisible))
	shown := []string{before.Status}
	deadline := time.Now().Add(browserStep)
	for {
		v := browserRead(t, b)
		if v.Badge != v.Status {
			t.Fatalf("the badge says %s while the page is %s", v.Badge, v.Status)
		}
		if !v.Same {
			t.Fatalf("the page was reloaded or left while showing the steps (at %s, status %s)", v.Href, v.Status)
		}
		if shown[len(shown)-1] != v.Status {
			shown = append(shown, v.Status)
		}
		if until(v) {
			return shown, v
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the page did not get there within %s; it showed %v, last %+v", action, browserStep, shown, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// browserOpen navigates the tab and waits for the page's heading.
func browserOpen(t *testing.T, b *browsertest.Browser, u string) {
	t.Helper()
	b.Run("open "+u, browserStep, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("h1")))
}

// browserLook checks that the page fits the viewport's width (nothing
// sticks out to the right, so nobody has to scroll sideways on a phone)
// and saves a screenshot for a person to look at. scrollWidth within
// innerWidth alone is not enough on a phone: there a page wider than the
// screen widens the layout viewport, and innerWidth with it, so innerWidth
// must also still be the phone's width.
func browserLook(t *testing.T, b *browsertest.Browser, name string, width int) {
	t.Helper()
	fit := browserEval[struct {
		Inner  int      `json:"inner"`
		Scroll int      `json:"scroll"`
		Wide   []string `json:"wide"`
	}](t, b, "measure the page", `(() => {
  const wide = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > innerWidth + 0.5) {
      wide.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + String(el.className).replace(/ +/g, ".") : "") + " to " + Math.round(r.right));
    }
  }
  return {inner: innerWidth, scroll: document.documentElement.scrollWidth, wide: wide.slice(0, 8)};
})()`)
	if fit.Inner != width || fit.Scroll > fit.Inner || len(fit.Wide) > 0 {
		t.Errorf("%s: the page does not fit a %d px viewport: innerWidth %d, scrollWidth %d, wider elements %v",
			name, width, fit.Inner, fit.Scroll, fit.Wide)
	}
	b.Screenshot(name)
}

// TestBrowserCheckoutPayment is the payment a user makes: the order page
// shows what they pay and get, Pay shows each step as it happens without a
// reload, and the browser then lands on the partner's redirect URL with the
// order's uid, which the API reports COMPLETED.
func TestBrowserCheckoutPayment(t *testing.T) {
	partner := browserStartPartnerSite(t)
	ts := startServer(t, func(c *app.Config) { c.SandboxOnrampStep = browserFlowStep })
	_, key := ts.createPartner("Shop", "--onramp-fee-bps", "120")
	o := browserCheckout(t, ts, key, partner.URL+"/return/UID?from=checkout", "cart-42")
	b := browsertest.New(t)
	watch := browserWatchTab(t, b)

	b.Run("phone viewport", browserStep, browserPhone)
	browserOpen(t, b, o.CheckoutURL)
	cur := o.FiatCurrency
	want := map[string]string{
		"#total":          o.Quote.TotalFiatAmount.String() + " " + cur,
		"#fiat-amount":    o.FiatAmount.String() + " " + cur,
		"#fee-network":    o.Quote.Fees.NetworkFee.String() + " " + cur,
		"#fee-processing": o.Quote.Fees.ProcessingFee.String() + " " + cur,
		"#fee-partner":    o.Quote.Fees.PartnerFee.String() + " " + cur,
		"#fee-total":      o.Quote.Fees.TotalFee.String() + " " + cur,
		"#total-line":     o.Quote.TotalFiatAmount.String() + " " + cur,
		"#crypto-amount":  o.EstimatedCryptoAmount + " " + o.CryptoAsset,
		"#wallet":         o.WalletAddress,
		"#uid":            o.OrderUID,
		"#external-id":    "cart-42",
		"#redirect-host":  strings.TrimPrefix(partner.URL, "http://"),
		"#status":         "CREATED",
	}
	for sel, text := range want {
		if got := b.Text(sel, browserStep); got != text {
			t.Errorf("%s shows %q, want %q", sel, got, text)
		}
	}
	if got := b.Text("#asset", browserStep); !strings.HasPrefix(got, "USDC on ") || !strings.Contains(got, "chain 1") {
		t.Errorf("#asset shows %q", got)
	}
	for _, fee := range []json.Number{o.Quote.Fees.NetworkFee, o.Quote.Fees.ProcessingFee, o.Quote.Fees.PartnerFee} {
		if fee == "0.00" {
			t.Errorf("a fee of zero tests nothing of how fees show: %+v", o.Quote.Fees)
		}
	}
	// The countdown runs in the page: 15 minutes at the start, ticking.
	left := b.Text("#time-left", browserStep)
	if m := regexp.MustCompile(`^1[45]:[0-5]\d$`).FindString(left); m == "" {
		t.Errorf("time left %q, want about 15:00", left)
	}
	v := browserRead(t, b)
	if !slices.Equal(v.Actions, []string{"pay", "fail"}) || v.Done || v.Notice != "" {
		t.Errorf("a new order offers %v (done %v, notice %q), want pay and fail", v.Actions, v.Done, v.Notice)
	}
	browserLook(t, b, "checkout-phone-created", 390)
	b.Run("desktop viewport", browserStep, browserDesktop)
	browserLook(t, b, "checkout-desktop-created", 1280)
	b.Run("phone viewport", browserStep, browserPhone)
	if later := b.Text("#time-left", browserStep); later == left {
		time.Sleep(1100 * time.Millisecond)
		if later = b.Text("#time-left", browserStep); later == left {
			t.Errorf("the countdown stands still at %s", left)
		}
	}

	// The page leaves for the partner's site 1.5 s after it shows the
	// completion. The browser holds that navigation until the completed
	// page is measured and photographed, so that on a slow machine the
	// screenshot cannot catch the partner's page instead.
	holdCtx, stopHolding := context.WithTimeout(b.Ctx, 2*browserStep)
	defer stopHolding()
	held := chromedp.Events(holdCtx, fetch.RequestPaused)
	if _, err := chromedp.Call(holdCtx, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: partner.URL + "/*"}}}); err != nil {
		t.Fatalf("browser: hold requests to the partner's site: %v", err)
	}
	shown, last := browserPress(t, b, "pay", func(v browserView) bool { return v.Status == "COMPLETED" && v.Done })
	if want := []string{"CREATED", "PAYMENT_RECEIVED", "CRYPTO_SENT", "COMPLETED"}; !slices.Equal(shown, want) {
		t.Errorf("the page showed %v, want %v", shown, want)
	}
	if want := []string{"CREATED", "PAYMENT_RECEIVED", "CRYPTO_SENT", "COMPLETED"}; !slices.Equal(last.History, want) || len(last.Actions) != 0 {
		t.Errorf("completed page: history %v, actions %v", last.History, last.Actions)
	}
	browserLook(t, b, "checkout-phone-completed", 390)

	// The page leaves for the partner's site by itself, with the order's
	// uid in place of the placeholder.
	landing := partner.URL + "/return/" + o.OrderUID + "?from=checkout"
	for ev, err := range held {
		if err != nil {
			t.Fatalf("the page did not leave for the partner's site: %v", err)
		}
		if ev.Request.URL != landing || ev.ResourceType != network.ResourceTypeDocument {
			t.Errorf("the page went to %s (%s), want %s", ev.Request.URL, ev.ResourceType, landing)
		}
		if _, err := chromedp.Call(holdCtx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID}); err != nil {
			t.Fatalf("browser: let the navigation go: %v", err)
		}
		break
	}
	if _, err := chromedp.Call(holdCtx, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatalf("browser: stop holding requests: %v", err)
	}
	deadline := time.Now().Add(browserStep)
	for {
		href, err := browsertest.Eval[string](b, "location.href", 5*time.Second)
		if err == nil && href == landing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser is at %q (%v), want %s", href, err, landing)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := b.Text("#partner", browserStep); got != "Thanks for your purchase" {
		t.Errorf("the partner's page shows %q", got)
	}
	if seen := partner.requests(); !slices.Contains(seen, "/return/"+o.OrderUID+"?from=checkout") {
		t.Errorf("the partner's site saw %v", seen)
	}
	if status, history := browserAPIStatus(t, ts, o.OrderUID); status != "COMPLETED" || len(history) != 4 {
		t.Errorf("GET /v1/onramp/status: %s %v", status, history)
	}
	watch.check(t, ts.base, []string{partner.URL})
}

// TestBrowserCheckoutFailAndRefund is the two other ends a user can bring
// about: Fail on a new order shows FAILED, and Refund on a paid one shows
// REFUNDED. The on-ramp's step is long, so that the paid order waits for
// the user's refund instead of going on to deliver.
func TestBrowserCheckoutFailAndRefund(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.SandboxOnrampStep = 10 * time.Minute })
	failing := browserCheckout(t, ts, "", "", "")
	refunding := browserCheckout(t, ts, "", "", "")
	b := browsertest.New(t)
	watch := browserWatchTab(t, b)

	b.Run("desktop viewport", browserStep, browserDesktop)
	browserOpen(t, b, failing.CheckoutURL)
	shown, last := browserPress(t, b, "fail", func(v browserView) bool { return v.Status == "FAILED" })
	if !slices.Equal(shown, []string{"CREATED", "FAILED"}) || len(last.Actions) != 0 || last.Done ||
		!strings.Contains(last.Label, "failed") || !slices.Equal(last.History, []string{"CREATED", "FAILED"}) {
		t.Errorf("after Fail the page showed %v, last %+v", shown, last)
	}
	if t.Failed() {
		return
	}
	browserLook(t, b, "checkout-desktop-failed", 1280)
	if status, _ := browserAPIStatus(t, ts, failing.OrderUID); status != "FAILED" {
		t.Errorf("GET /v1/onramp/status after Fail: %s", status)
	}

	b.Run("phone viewport", browserStep, browserPhone)
	browserOpen(t, b, refunding.CheckoutURL)
	shown, last = browserPress(t, b, "pay", func(v browserView) bool {
		return v.Status == "PAYMENT_RECEIVED" && slices.Equal(v.Actions, []string{"refund"})
	})
	if !slices.Equal(shown, []string{"CREATED", "PAYMENT_RECEIVED"}) {
		t.Errorf("after Pay the page showed %v, last %+v", shown, last)
	}
	browserLook(t, b, "checkout-phone-paid", 390)
	shown, last = browserPress(t, b, "refund", func(v browserView) bool { return v.Status == "REFUNDED" })
	if !slices.Equal(shown, []string{"PAYMENT_RECEIVED", "REFUNDED"}) || len(last.Actions) != 0 || last.Done ||
		!slices.Equal(last.History, []string{"CREATED", "PAYMENT_RECEIVED", "REFUNDED"}) {
		t.Errorf("after Refund the page showed %v, last %+v", shown, last)
	}
	browserLook(t, b, "checkout-phone-refunded", 390)
	if status, history := browserAPIStatus(t, ts, refunding.OrderUID); status != "REFUNDED" || len(history) != 3 {
		t.Errorf("GET /v1/onramp/status after Refund: %s %v", status, history)
	}
	watch.check(t, ts.base, nil)
}

// TestBrowserCheckoutUnknownAndExpiredOrders opens a checkout link that
// names no order and one whose order ran out: each is a page that says so
// in words, with the right heading and status, and nothing of the
// service's insides.
func TestBrowserCheckoutUnknownAndExpiredOrders(t *testing.T) {
	ts := startServer(t, nil)
	o := browserCheckout(t, ts, "", "", "")
	// An order expires 15 minutes after its checkout and the service takes
	// no clock, so the test ages it the way downtime would: with the
	// service stopped, it moves the order's times 16 minutes back in the
	// store, and the service, started again on the same data, finds the
	// expiry already due.
	dir := ts.dir
	ts.stop()
	browserAge(t, dir, o.OrderUID, 16*time.Minute)
	ts = startServer(t, func(c *app.Config) { c.DataDir = dir })

	b := browsertest.New(t)
	watch := browserWatchTab(t, b)
	b.Run("phone viewport", browserStep, browserPhone)
	pages := []struct {
		name, path string
		status     int
		title      string
		says       []string
	}{
		{"checkout-phone-not-found", "/checkout/ord_aaaaaaaaaaaaaaaaaaaaaaaaaa", 404, "Checkout not found", []string{"no checkout at this address"}},
		{"", "/checkout/not-an-order", 404, "Checkout not found", []string{"no checkout at this address"}},
		{"checkout-phone-expired", "/checkout/" + o.OrderUID, 410, "This checkout has expired", []string{o.OrderUID, "no payment was taken"}},
	}
	for _, p := range pages {
		resp, err := func() (*network.Response, error) {
			ctx, cancel := context.WithTimeout(b.Ctx, browserStep)
			defer cancel()
			return chromedp.Run(ctx, chromedp.NavigateResponse(ts.base+p.path))
		}()
		if err != nil {
			t.Fatalf("open %s: %v", p.path, err)
		}
		if resp.Status != int64(p.status) {
			t.Errorf("%s: HTTP %d, want %d", p.path, resp.Status, p.status)
		}
		if got := b.Text("h1#title", browserStep); got != p.title {
			t.Errorf("%s: heading %q, want %q", p.path, got, p.title)
		}
		text := b.Text("body", browserStep)
		for _, s := range p.says {
			if !strings.Contains(text, s) {
				t.Errorf("%s: the page does not say %q: %s", p.path, s, text)
			}
		}
		for _, leak := range []string{"goroutine", "panic", ".go:", "runtime error", "stack", "{\"data\"", "\"error\""} {
			if strings.Contains(text, leak) {
				t.Errorf("%s: the page shows %q: %s", p.path, leak, text)
			}
		}
		if n := browserEval[int](t, b, "count forms", `document.querySelectorAll("form, #checkout").length`); n != 0 {
			t.Errorf("%s: the page offers %d forms or an order", p.path, n)
		}
		if p.name != "" {
			browserLook(t, b, p.name, 390)
		}
	}
	// The service expires the order as it starts (its desk applies the
	// expiries that fell while it was down, on a timer of its own).
	for deadline := time.Now().Add(browserStep); ; time.Sleep(50 * time.Millisecond) {
		status, history := browserAPIStatus(t, ts, o.OrderUID)
		if status == "EXPIRED" && slices.Equal(history, []string{"CREATED", "EXPIRED"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/onramp/status of the aged order: %s %v", status, history)
		}
	}
	watch.check(t, ts.base, nil, 404, 410)
}

// browserAge moves an order's creation, history and expiry back by d in
// the store of a stopped service.
func browserAge(t *testing.T, dir, uid string, d time.Duration) {
	t.Helper()
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), browserStep)
	defer cancel()
	o, err := st.OnrampOrder(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	o.CreatedAt, o.ExpiresAt = o.CreatedAt.Add(-d), o.ExpiresAt.Add(-d)
	for i := range o.History {
		o.History[i].At = o.History[i].At.Add(-d)
	}
	if err := st.SaveOnrampOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserCheckoutShowsOrderDataAsText gives an order an externalId that
// is markup with a script in it: the page shows it as text, makes no
// element of it and opens no dialog. It then checks the test's own
// watch: an image from elsewhere, put into the page, must be blocked by
// the page's policy and reported, or the other tests' "no violation"
// would prove nothing.
func TestBrowserCheckoutShowsOrderDataAsText(t *testing.T) {
	const evil = `<img src=x onerror=alert(1)><script>alert(2)</script>`
	ts := startServer(t, nil)
	o := browserCheckout(t, ts, "", "https://partner.example/done?o=UID&x=\"><b>", evil)
	b := browsertest.New(t)
	watch := browserWatchTab(t, b)

	b.Run("phone viewport", browserStep, browserPhone)
	browserOpen(t, b, o.CheckoutURL)
	if got := b.Text("#external-id", browserStep); got != evil {
		t.Errorf("externalId shows as %q, want the text %q", got, evil)
	}
	made := browserEval[struct {
		Children int `json:"children"`
		Images   int `json:"images"`
		Scripts  int `json:"scripts"`
		Bold     int `json:"bold"`
	}](t, b, "count elements", `({
  children: document.getElementById("external-id").children.length,
  images: document.images.length,
  scripts: document.scripts.length,
  bold: document.querySelectorAll("b").length,
})`)
	if made.Children != 0 || made.Images != 0 || made.Scripts != 1 || made.Bold != 0 {
		t.Errorf("the order's data became markup: %+v", made)
	}
	if got := b.Text("#redirect-host", browserStep); got != "partner.example" {
		t.Errorf("the redirect's host shows as %q", got)
	}
	browserLook(t, b, "checkout-phone-markup-as-text", 390)
	// A second, so that a dialog from a late handler would have opened.
	time.Sleep(time.Second)
	watch.check(t, ts.base, nil)

	browserEval[chromedp.Void](t, b, "put a foreign image into the page",
		`document.body.appendChild(Object.assign(document.createElement("img"), {src: "http://192.0.2.1/pixel.png"}))`)
	deadline := time.Now().Add(10 * time.Second)
	for watch.cspViolations() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("an image from elsewhere raised no reported CSP violation: the watch cannot see violations")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
