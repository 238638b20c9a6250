package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/swapgate/swapgate/internal/browsertest"
)

// TestBrowserDocs opens the rendered reference in Chromium as a developer
// would: the page renders the served document (its title and an entry for
// every operation and webhook), loads nothing from elsewhere and breaks
// none of its Content-Security-Policy. A screenshot is saved as an artifact
// for a person to look at.
func TestBrowserDocs(t *testing.T) {
	ts := startServer(t, nil)
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	watch := browserWatchTab(t, b)
	b.Run("open /docs", browserStep, chromedp.Navigate(ts.base+"/docs"), chromedp.WaitVisible(chromedp.CSS(".api-info h1")))
	if title := b.Text(".api-info h1", browserStep); title == "" {
		t.Fatal("the reference shows no title")
	}
	ops := browserEval[int](t, b, "count the operations", `document.querySelectorAll("[data-section-id^='operation/'], [data-section-id^='webhook/']").length`)
	if want := len(c.Operations()) + len(c.Doc().Webhooks); ops < want {
		t.Errorf("the reference shows %d operations and webhooks, the document has %d", ops, want)
	}
	// Redoc builds its search index in a worker after rendering; give it a
	// moment, so that whatever it does is seen.
	time.Sleep(500 * time.Millisecond)
	docsCheckTab(t, watch, ts.base)
	// The top of the page, as a reader first sees it (the whole reference
	// would be a picture tens of thousands of pixels long), and the quote
	// operation with its example answers.
	docsScreenshot(t, b, "docs-desktop")
	quote := `[data-section-id="tag/Quotes/operation/quote"]`
	b.Run("scroll to the quote operation", browserStep, chromedp.ScrollIntoView(chromedp.CSS(quote)))
	docsScreenshot(t, b, "docs-quote")
	if text := b.Text(quote, browserStep); !strings.Contains(text, "Shape C") {
		t.Errorf("the quote operation does not show its Shape C example: %.300s", text)
	}
}

// docsScreenshot saves what the viewport shows as a test artifact.
func docsScreenshot(t *testing.T, b *browsertest.Browser, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, browserStep)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("browser: screenshot: %v", err)
	}
	path, err := browsertest.SaveArtifact(name+".png", png)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// docsRedocLogo is the one thing the vendored Redoc asks for elsewhere: its
// menu footer's logo, an image on Redoc's CDN. The page's
// Content-Security-Policy blocks it (the image then hides itself), and the
// test requires that it stays blocked rather than patching the bundle.
const docsRedocLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg"

// docsCheckTab fails the test for anything the reference's tab did besides
// rendering from this origin: a request anywhere but site (the page's own
// blob: workers and data: images are its own), a console message other
// than the blocking of Redoc's logo, or a dialog.
func docsCheckTab(t *testing.T, w *browserWatch, site string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	logoBlocked := false
	for _, m := range w.console {
		if strings.Contains(m.Text, "Content Security Policy") && strings.Contains(m.Text, docsRedocLogo) {
			logoBlocked = true
			continue
		}
		t.Errorf("console %s at %s: %s", m.Type, m.URL, m.Text)
	}
	for _, ev := range w.requests {
		u := ev.Request.URL
		switch {
		case browserOrigin(u) == site, strings.HasPrefix(u, "blob:"+site+"/"), strings.HasPrefix(u, "data:"):
		case u == docsRedocLogo && logoBlocked:
		default:
			t.Errorf("the reference requested %s (%s), which is not the service (%s)", u, ev.Type, site)
		}
	}
	for _, d := range w.dialogs {
		t.Errorf("the reference opened a dialog: %s", d)
	}
}
