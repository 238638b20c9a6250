package main

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/browsertest"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// TestBrowserPortalWalletFilter: in a real Chromium, the portal's
// transactions page filters by wallet. Typed in the form (in lower case),
// a wallet keeps the swaps it sent or received, the field keeps what was
// typed, the export link carries the filter, and a swap's detail page
// shows its addresses and transactions; an invalid wallet is refused with
// the API's message, on a phone's width as on a desktop's.
func TestBrowserPortalWalletFilter(t *testing.T) {
	b := browsertest.New(t)
	watch := browserWatchTab(t, b)
	ts := startServer(t, func(c *app.Config) {
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
	})
	_, key := ts.createPartner("Wallets", "--swap-fee-bps", "0")
	const email = "wallets@example.com"

	const second = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	swapOf := func(from, to string) (string, string) {
		t.Helper()
		var q anyQuote
		ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAmount", "200000000", "fromAddress", from, "toAddress", to, "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
		bc := ts.broadcast(t, 42161, from, q.tx(t))
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": bc.TxHash}, withKey(key)).decode(t, new(struct{}))
		return q.Quote.ID, bc.TxHash
	}
	q1, h1 := swapOf(wallet, receiverAddr)
	q2, _ := swapOf(second, receiverAddr)
	waitUntil(t, "both lines are swaps", func() bool {
		var p struct{ Transactions []struct{ Kind string } }
		ts.get("/v1/partner/transactions?wallet="+receiverAddr, withKey(key)).decode(t, &p)
		return len(p.Transactions) == 2
	})

	b.Run("phone viewport", browserStep, browserPhone)
	browserOpen(t, b, ts.base+"/portal")
	b.Run("ask for a code", browserStep, chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.Click(chromedp.CSS("#email-form button")), chromedp.WaitVisible(chromedp.CSS("#code")))
	var codes []string
	waitUntil(t, "the code is in the sandbox mailbox", func() bool { codes = mailboxCodes(t, ts, email); return len(codes) == 1 })
	b.Run("sign in", browserStep, chromedp.SendKeys(chromedp.CSS("#code"), codes[0]),
		chromedp.Click(chromedp.CSS("#code-form button")), chromedp.WaitVisible(chromedp.CSS("#total-quotes")))

	listed := func() []string {
		return browserEval[[]string](t, b, "read the list", `Array.from(document.querySelectorAll("#transactions tbody a")).map((a) => a.textContent.trim())`)
	}
	browserOpen(t, b, ts.base+"/portal/transactions")
	if got := strings.Join(listed(), " "); got != q2+" "+q1 {
		t.Fatalf("unfiltered %q, want %s %s", got, q2, q1)
	}
	b.Run("filter by the first wallet", browserStep, chromedp.SendKeys(chromedp.CSS(`#filters input[name="wallet"]`), strings.ToLower(wallet)),
		chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)))
	// The unfiltered page has the same export link: wait for the filtered
	// page itself, or the list read may still be the one before the submit.
	waitUntil(t, "the filtered page is loaded", func() bool {
		ok, err := browsertest.Eval[bool](b, `location.search.includes("wallet=") && document.readyState === "complete" && document.getElementById("csv") !== null`, browserStep)
		return err == nil && ok
	})
	if got := strings.Join(listed(), " "); got != q1 {
		t.Fatalf("the wallet's transactions %q, want %s", got, q1)
	}
	form := browserEval[struct {
		Value string `json:"value"`
		CSV   string `json:"csv"`
	}](t, b, "read the form", `({value: document.querySelector('#filters input[name="wallet"]').value, csv: document.getElementById("csv").getAttribute("href")})`)
	if form.Value != strings.ToLower(wallet) || !strings.Contains(form.CSV, "wallet="+url.QueryEscape(strings.ToLower(wallet))) {
		t.Fatalf("after filtering: %+v", form)
	}
	browserLook(t, b, "portal-transactions-wallet-phone", 390)
	// The export the link names, fetched as the signed-in tab would.
	exp := browserEval[string](t, b, "fetch the export", `(() => { const x = new XMLHttpRequest(); x.open("GET", document.getElementById("csv").href, false); x.send(); return x.status + "\n" + x.responseText; })()`)
	if rows := strings.Split(strings.TrimSpace(exp), "\n"); len(rows) != 3 || rows[0] != "200" ||
		!strings.HasSuffix(strings.TrimSpace(rows[1]), "fromAddress,toAddress,sendingTxHash,receivingTxHash") || !strings.Contains(rows[2], wallet+","+receiverAddr+","+h1) {
		t.Fatalf("the export: %s", exp)
	}

	b.Run("open the swap", browserStep, chromedp.Click(chromedp.CSS("#transactions tbody a")), chromedp.WaitVisible(chromedp.CSS("#tx-from")))
	detail := browserEval[[]string](t, b, "read the detail", `["tx-from", "tx-to", "tx-sending", "tx-receiving"].map((id) => document.getElementById(id).textContent.trim())`)
	if detail[0] != wallet || detail[1] != receiverAddr || detail[2] != h1 || detail[3] == "" {
		t.Fatalf("the swap's detail %q", detail)
	}

	b.Run("desktop viewport", browserStep, browserDesktop)
	browserOpen(t, b, ts.base+"/portal/transactions?wallet=no-wallet!")
	if msg := b.Text(".error", browserStep); !strings.Contains(msg, "wallet must be an account address") {
		t.Fatalf("an invalid wallet: %q", msg)
	}
	browserLook(t, b, "portal-transactions-wallet-refused-desktop", 1280)

	time.Sleep(100 * time.Millisecond) // the last console messages arrive
	if n := watch.cspViolations(); n != 0 {
		t.Errorf("%d Content-Security-Policy violations", n)
	}
	watch.check(t, ts.base, nil, 400) // the refused filter's page
}
