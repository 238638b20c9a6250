package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/swapgate/swapgate/internal/browsertest"
)

// TestBrowserPortalWalk is a partner's walk through the portal in a real
// Chromium against the real service, on a phone's 390 px viewport: sign in
// with the code from the sandbox mailbox, read the overview's charts,
// rotate the key (the old key then gets 401 on the API), add a webhook,
// send a test event and see its failed attempt, resend it and see it
// delivered. Throughout, the tab requests nothing from another origin,
// breaks none of the Content-Security-Policy and opens no dialog it was
// not meant to (the script's confirmations are answered yes, as a person
// would); each page fits the phone's width, and screenshots on the phone
// and on a desktop are saved as artifacts (internal/browsertest), as the
// checkout's are.
func TestBrowserPortalWalk(t *testing.T) {
	b := browsertest.New(t)
	watch := browserWatchTab(t, b)
	rc := newHookReceiver(t)
	ts := portalServer(t, rc)
	_, key := ts.createPartner("Walk")
	const email = "walk@example.com"

	// A day's business to show: a fee wallet and a fee-bearing quote.
	ts.putWallet(key, "evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
	var q struct {
		Quote struct{ ID string } `json:"quote"`
	}
	ts.get(arbToBase(), withKey(key)).decode(t, &q)

	b.Run("phone viewport", browserStep, browserPhone)
	browserOpen(t, b, ts.base+"/portal")
	browserLook(t, b, "portal-sign-in-phone", 390)
	b.Run("ask for a code", browserStep, chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.Click(chromedp.CSS("#email-form button")), chromedp.WaitVisible(chromedp.CSS("#code")))
	var codes []string
	waitUntil(t, "the code is in the sandbox mailbox", func() bool { codes = mailboxCodes(t, ts, email); return len(codes) == 1 })
	b.Run("sign in", browserStep, chromedp.SendKeys(chromedp.CSS("#code"), codes[0]),
		chromedp.Click(chromedp.CSS("#code-form button")), chromedp.WaitVisible(chromedp.CSS("#total-quotes")))

	// The overview's charts: the figures beside them and the bars agree.
	charts := browserEval[struct {
		Names  []string `json:"names"`
		Today  []string `json:"today"`
		Quotes string   `json:"quotes"`
	}](t, b, "read the charts", `(() => {
  const svgs = Array.from(document.querySelectorAll("svg.chart"));
  return {
    names: svgs.map((s) => s.getAttribute("data-chart")),
    today: svgs.slice(0, 4).map((s) => { const bars = s.querySelectorAll("rect.bar"); return bars[bars.length - 1].getAttribute("data-value"); }),
    quotes: document.getElementById("total-quotes").textContent.trim(),
  };
})()`)
	if fmt.Sprint(charts.Names) != "[Quotes per day Swaps per day Volume per day (USD) Fees earned per day (USD) Requests per hour, last 24 hours]" ||
		charts.Quotes != "1" || charts.Today[0] != "1" || charts.Today[1] != "0" || !strings.HasPrefix(charts.Today[3], "$") || charts.Today[3] == "$0.00" {
		t.Fatalf("charts %+v", charts)
	}
	browserLook(t, b, "portal-overview-phone", 390)

	// The key: rotated, the new key shown, the old one refused.
	browserOpen(t, b, ts.base+"/portal/key")
	browserEval[chromedp.Void](t, b, "answer the confirmation yes", `window.confirm = () => true`)
	b.Run("rotate the key", browserStep, chromedp.Click(chromedp.CSS("#rotate-form button")), chromedp.WaitVisible(chromedp.CSS("#new-key")))
	newKey := b.Text("#new-key", browserStep)
	ts.get("/v1/partner/me", withKey(key)).wantError(t, 401, "UNAUTHORIZED", "")
	if e := ts.get("/v1/partner/me", withKey(newKey)); e.Status != http.StatusOK {
		t.Fatalf("the new key %q: %s", newKey, e.Raw)
	}
	browserLook(t, b, "portal-key-phone", 390)

	// A webhook, a test event that fails, and its resend delivered.
	rc.setFail(true)
	browserOpen(t, b, ts.base+"/portal/webhooks")
	b.Run("add a webhook", browserStep, chromedp.SendKeys(chromedp.CSS("#url"), rc.srv.URL+"/hook"),
		chromedp.Click(chromedp.CSS("#webhook-form button")), chromedp.WaitVisible(chromedp.CSS("#new-secret")))
	b.Run("open the webhook", browserStep, chromedp.Click(chromedp.CSS("#webhooks tbody a")), chromedp.WaitVisible(chromedp.CSS("#test-form")))
	b.Run("send a test event", browserStep, chromedp.Click(chromedp.CSS("#test-form button")),
		chromedp.WaitVisible(chromedp.CSS(`article.delivery[data-state="dead"]`)))
	attempt := b.Text(`article.delivery[data-state="dead"] table.attempts tbody tr`, browserStep)
	if !strings.Contains(attempt, "500") || !strings.Contains(attempt, "receiver answered HTTP 500") {
		t.Fatalf("the attempt shows %q", attempt)
	}
	browserLook(t, b, "portal-webhook-failed-phone", 390)
	rc.setFail(false)
	b.Run("resend", browserStep, chromedp.Click(chromedp.CSS(`article.delivery[data-state="dead"] form.resend button`)),
		chromedp.WaitVisible(chromedp.CSS(`article.delivery[data-state="delivered"]`)))
	rows := browserEval[[]string](t, b, "read the attempts", `Array.from(document.querySelectorAll('article.delivery[data-state="delivered"] table.attempts tbody tr')).map((r) => r.textContent.replace(/\s+/g, " ").trim())`)
	if len(rows) != 2 || !strings.Contains(rows[0], "500") || !strings.Contains(rows[1], "200") {
		t.Fatalf("attempts after the resend: %q", rows)
	}
	browserLook(t, b, "portal-webhook-phone", 390)

	// The same pages on a desktop, for a person to look at.
	b.Run("desktop viewport", browserStep, browserDesktop)
	browserOpen(t, b, ts.base+"/portal")
	browserLook(t, b, "portal-overview-desktop", 1280)
	browserOpen(t, b, ts.base+"/portal/transactions")
	if got := b.Text("#transactions tbody a", browserStep); got != q.Quote.ID {
		t.Fatalf("the transactions list %q, want %s", got, q.Quote.ID)
	}
	browserLook(t, b, "portal-transactions-desktop", 1280)

	time.Sleep(100 * time.Millisecond) // the last console messages arrive
	if n := watch.cspViolations(); n != 0 {
		t.Errorf("%d Content-Security-Policy violations", n)
	}
	watch.check(t, ts.base, nil)
}
