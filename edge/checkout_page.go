package edge

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
)

// The hosted checkout page of the sandbox on-ramp provider: the page a user
// is sent to by POST /v1/onramp/checkout's checkoutUrl, where the buttons
// stand in for a card network. It is the one part of the edge a person's
// browser opens, so it answers in HTML rather than the envelope:
//
//	GET  /checkout/{orderUid}           the order, its fees, status and history
//	GET  /checkout/{orderUid}/state     the status, history and redirect the
//	                                    page's script polls (in the envelope)
//	POST /checkout/{orderUid}/{action}  pay, fail or refund, then 303 to the page
//	GET  /checkout/assets/{name}        the page's stylesheet and script
//
// The page works without JavaScript (plain forms, a 303 back, and a refresh
// while a step is in flight); its script (checkout/checkout.js) submits the
// forms with fetch and polls the state so each step shows as it happens.
//
// Decisions: a malformed or unknown uid is a 404 page; an order whose
// checkout ran out (EXPIRED, or still CREATED past its expiresAt because the
// expiry actor has not moved it yet) is a 410 page, since the checkout is
// gone for good and nothing may be done on it; a refused move is a 409 page.
// The page links its assets and forms relative to its own address, so that
// it also works behind a proxy that serves the service under a path prefix
// (Sandbox.BaseURL may carry one).

//go:embed checkout
var checkoutFiles embed.FS

// checkoutHeaders go on every checkout answer: the page runs only its own
// script and style, loads and sends nothing elsewhere, may not be framed
// (clickjacking of the Pay button), leaks no URL through Referer, and is
// never cached, since it shows an order's live state and its CSRF token.
var checkoutHeaders = [...][2]string{
	{"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "no-referrer"},
	{"Cache-Control", "no-store"},
}

const contentTypeHTML = "text/html; charset=utf-8"

// Polling and redirect timing the page's script keeps, stated here because
// the rate limit must afford them: a page polls every 500 ms only while a
// step is in flight (PAYMENT_RECEIVED, CRYPTO_SENT), every 3 s while the
// order waits for the user, and not at all once it is final, which keeps an
// open page well inside the anonymous read bucket. After COMPLETED it shows
// the completion for 1.5 s, then goes to the redirect URL.
const (
	checkoutPollFast   = 500 * time.Millisecond
	checkoutPollIdle   = 3 * time.Second
	checkoutRedirectIn = 1500 * time.Millisecond
)

// pollInterval is how long the page waits before it asks for the state
// again: 0 once the order is final.
func pollInterval(st onramp.State) time.Duration {
	switch {
	case st == onramp.Created:
		return checkoutPollIdle
	case st.Terminal():
		return 0
	}
	return checkoutPollFast
}

// checkoutPages are the parsed templates and the assets, loaded once when
// the routes are registered.
type checkoutPages struct {
	tmpl   *template.Template
	assets map[string]checkoutAsset
}

type checkoutAsset struct {
	contentType string
	body        []byte
}

func loadCheckoutPages() (*checkoutPages, error) {
	tmpl, err := template.ParseFS(checkoutFiles, "checkout/*.html")
	if err != nil {
		return nil, fmt.Errorf("edge: checkout templates: %w", err)
	}
	p := &checkoutPages{tmpl: tmpl, assets: map[string]checkoutAsset{}}
	for name, ct := range map[string]string{
		"checkout.css": "text/css; charset=utf-8",
		"checkout.js":  "text/javascript; charset=utf-8",
	} {
		b, err := checkoutFiles.ReadFile("checkout/" + name)
		if err != nil {
			return nil, fmt.Errorf("edge: checkout asset: %w", err)
		}
		p.assets[name] = checkoutAsset{contentType: ct, body: b}
	}
	return p, nil
}

func (s *Server) checkoutPageRoutes() {
	pages, err := loadCheckoutPages()
	if err != nil {
		if s.routeErr == nil {
			s.routeErr = err
		}
		return
	}
	s.checkout = pages
	base := onramp.CheckoutPath
	s.Handle("GET", base+"assets/{name}", route{bucket: BucketRead, name: "checkout_asset", html: true}, s.checkoutAsset)
	s.Handle("GET", base+"{orderUid}", route{bucket: BucketRead, name: "checkout_page", html: true}, s.checkoutPage)
	s.Handle("GET", base+"{orderUid}/state", route{bucket: BucketRead, name: "checkout_state"}, s.checkoutState)
	s.Handle("POST", base+"{orderUid}/{action}", route{bucket: BucketHeavy, name: "checkout_action", html: true}, s.checkoutAction)
}

// pagesOr serves paths under /checkout/ with page and every other path with
// api, so that a mistyped checkout link is an HTML page too.
func (s *Server) pagesOr(api, page fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if s.checkout != nil && bytes.HasPrefix(ctx.Path(), []byte(onramp.CheckoutPath)) || s.portal != nil && isPortalPath(ctx.Path()) {
			page(ctx)
			return
		}
		api(ctx)
	}
}

// pageRefusal is a checkout request refused with a page that says why: a
// handler returns it and wrap writes it (see writeRefusalPage).
type pageRefusal struct {
	status  int
	title   string
	message string
	// back, when set, is the order page to return to.
	back string
}

func (p *pageRefusal) Error() string {
	return strconv.Itoa(p.status) + " " + p.title + ": " + p.message
}

// checkoutBase is the checkout root (/checkout/) relative to the request's
// path: "./" from /checkout/{uid}, "../" from /checkout/{uid}/pay.
func checkoutBase(path []byte) string {
	rest, ok := bytes.CutPrefix(path, []byte(onramp.CheckoutPath))
	if !ok {
		return onramp.CheckoutPath
	}
	n := bytes.Count(rest, []byte("/"))
	if n == 0 {
		return "./"
	}
	return strings.Repeat("../", n)
}

func setCheckoutHeaders(r *Request) {
	for _, h := range checkoutHeaders {
		r.Ctx.Response.Header.Set(h[0], h[1])
	}
	r.Ctx.Response.Header.SetBytesKV(headerRequestID, r.ID[:])
}

// writePage renders a template as the answer. The page is built whole
// before anything is set, so a template failure is answered as an error
// rather than half a page.
func (s *Server) writePage(r *Request, status int, name string, data any) error {
	b := bytes.NewBuffer(r.buf[:0])
	if err := s.checkout.tmpl.ExecuteTemplate(b, name, data); err != nil {
		return fmt.Errorf("edge: checkout template %s: %w", name, err)
	}
	r.buf = b.Bytes()
	r.Ctx.Response.Header.Del(fasthttp.HeaderLocation)
	r.Ctx.SetStatusCode(status)
	r.Ctx.SetContentType(contentTypeHTML)
	setCheckoutHeaders(r)
	r.Ctx.Response.SetBody(r.buf)
	return nil
}

// messagePage is the data of every page that only tells the user something:
// not found, expired, refused, too many requests, failed.
type messagePage struct {
	Base      string
	Status    int
	Title     string
	Message   string
	Back      string
	RequestID string
}

func (s *Server) writeRefusalPage(r *Request, p *pageRefusal) {
	if s.portal != nil && isPortalPath(r.Ctx.Path()) {
		s.writePortalMessage(r, p.status, p.title, p.message, p.back)
		return
	}
	s.writeMessage(r, messagePage{Status: p.status, Title: p.title, Message: p.message, Back: p.back})
}

// writeErrorPage is the HTML form of an envelope error on the checkout's
// routes. A server-side failure shows the request id, which the logs carry,
// and never its cause.
func (s *Server) writeErrorPage(r *Request, e *apierr.Error) {
	if s.portal != nil && isPortalPath(r.Ctx.Path()) {
		s.portalErrorPage(r, e)
		return
	}
	m := messagePage{Status: e.HTTPStatus()}
	switch {
	case m.Status == fasthttp.StatusNotFound:
		m.Title, m.Message = "Checkout not found", "There is no checkout at this address. Check that the link was copied whole."
	case m.Status == fasthttp.StatusMethodNotAllowed:
		m.Title, m.Message = "Not available", "This address does not take that kind of request. Open the checkout link itself."
	case m.Status == fasthttp.StatusTooManyRequests:
		m.Title, m.Message = "Too many requests", "Too many requests came from your network in the last minute. Wait a moment, then reload this page."
	case m.Status >= 500:
		m.Title, m.Message = "Something went wrong", "The checkout could not be shown because of a problem on our side. Try again in a moment."
		m.RequestID = string(r.ID[:])
	default:
		m.Title, m.Message = "Request refused", e.Message
	}
	s.writeMessage(r, m)
}

func (s *Server) writeMessage(r *Request, m messagePage) {
	m.Base = checkoutBase(r.Ctx.Path())
	if err := s.writePage(r, m.Status, "message", m); err != nil {
		s.log.Error("checkout page failed", "requestId", string(r.ID[:]), "err", err)
		r.Ctx.SetStatusCode(m.Status)
		r.Ctx.SetContentType(contentTypeHTML)
		setCheckoutHeaders(r)
		r.Ctx.Response.SetBodyString("<!doctype html><title>Error</title><p>Something went wrong; try again in a moment.</p>")
	}
}

// checkoutAsset serves the page's stylesheet and script.
func (s *Server) checkoutAsset(r *Request) error {
	name, _ := r.Ctx.UserValue("name").(string)
	a, ok := s.checkout.assets[name]
	if !ok {
		return &pageRefusal{status: fasthttp.StatusNotFound, title: "Not found", message: "There is no such file."}
	}
	r.Ctx.SetStatusCode(statusOK)
	r.Ctx.SetContentType(a.contentType)
	setCheckoutHeaders(r)
	r.Ctx.Response.SetBodyRaw(a.body)
	return nil
}

// errCheckoutNotFound is the answer for a malformed or unknown uid: the
// same page for both, since whether an order exists is no business of
// someone who does not have its link right.
var errCheckoutNotFound = &pageRefusal{status: fasthttp.StatusNotFound, title: "Checkout not found",
	message: "There is no checkout at this address. Check that the link was copied whole; a checkout link is only valid for the order it was made for."}

// checkoutOrder reads the order of the request's path.
func (s *Server) checkoutOrder(r *Request) (*onramp.Order, error) {
	uid, _ := r.Ctx.UserValue("orderUid").(string)
	if !onramp.ValidUID(uid) {
		return nil, errCheckoutNotFound
	}
	o, err := s.deps.Onramp.Order(r.Context(), uid)
	if errors.Is(err, account.ErrNotFound) {
		return nil, errCheckoutNotFound
	}
	return o, err
}

// checkoutExpired reports whether the order's checkout ran out: EXPIRED, or
// CREATED past its expiresAt before the expiry actor moved it. Either way
// the user may no longer pay, and the page says so.
func checkoutExpired(o *onramp.Order, now time.Time) bool {
	return o.State == onramp.Expired || (o.State == onramp.Created && !now.Before(o.ExpiresAt))
}

func expiredRefusal(o *onramp.Order) *pageRefusal {
	return &pageRefusal{status: fasthttp.StatusGone, title: "This checkout has expired",
		message: "Order " + o.UID + " was not paid before " + o.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC") +
			" and no payment was taken. Start a new purchase from where you came from."}
}

// pageActions are the buttons the page offers in a state: pay or have the
// payment fail while the order waits for it, ask for a refund once it is
// paid. The desk's state machine has the last word on each (Act); the page
// offers no failure after payment, which is the card network's to report,
// not the user's to press.
func pageActions(st onramp.State) []onramp.Action {
	switch st {
	case onramp.Created:
		return []onramp.Action{onramp.Pay, onramp.Fail}
	case onramp.PaymentReceived:
		return []onramp.Action{onramp.Refund}
	}
	return nil
}

// statusLabels say each state in words next to its name.
var statusLabels = map[onramp.State]string{
	onramp.Created:         "Waiting for your payment",
	onramp.PaymentReceived: "Payment received; sending your crypto",
	onramp.CryptoSent:      "Crypto sent; waiting for confirmation",
	onramp.Completed:       "Completed: the crypto is in your wallet",
	onramp.Failed:          "The payment failed",
	onramp.Refunded:        "The payment was refunded",
	onramp.Expired:         "Expired before payment",
}

func statusLabel(st onramp.State) string {
	if l, ok := statusLabels[st]; ok {
		return l
	}
	return string(st)
}

// stepView is one entry of the history as the page shows it.
type stepView struct {
	Status onramp.State `json:"status"`
	Label  string       `json:"label"`
	At     int64        `json:"at"` // Unix milliseconds
	Time   string       `json:"-"`
	ISO    string       `json:"-"`
	TxHash string       `json:"txHash,omitempty"`
	Reason string       `json:"reason,omitempty"`
}

func historyView(o *onramp.Order) []stepView {
	out := make([]stepView, len(o.History))
	for i, st := range o.History {
		at := st.At.UTC()
		out[i] = stepView{Status: st.State, Label: statusLabel(st.State), At: at.UnixMilli(),
			Time: at.Format("2006-01-02 15:04:05 UTC"), ISO: at.Format(time.RFC3339Nano), TxHash: st.TxHash, Reason: st.Reason}
	}
	return out
}

// orderPage is the data of the order page.
type orderPage struct {
	Base, UID, StateURL, CSRF                                                string
	Status                                                                   onramp.State
	StatusLabel                                                              string
	Currency, Amount, NetworkFee, ProcessingFee, PartnerFee, TotalFee, Total string
	MethodName                                                               string
	Asset, ChainName                                                         string
	ChainID                                                                  uint64
	CryptoAmount, ExchangeRate, Wallet, ExternalID, TxHash                   string
	// Waiting is CREATED: the countdown shows. Moving is a step in flight:
	// the page refreshes itself where JavaScript is off.
	Waiting, Moving, Completed bool
	RemainingMs                int64
	// PollMs and RedirectMs are the script's timing (see checkoutPollFast).
	PollMs, RedirectMs         int64
	TimeLeft                   string
	CanPay, CanFail, CanRefund bool
	HasActions                 bool
	// RedirectHost is where the user returns after paying; Redirect the
	// address itself, set once the order is COMPLETED.
	RedirectHost, Redirect string
	History                []stepView
}

func (s *Server) orderPage(o *onramp.Order, base string, now time.Time) orderPage {
	q := &o.Quote
	p := orderPage{
		Base: base, UID: o.UID, StateURL: base + o.UID + "/state", CSRF: o.CSRF,
		Status: o.State, StatusLabel: statusLabel(o.State),
		Currency: q.Currency, Amount: q.Amount.String(), NetworkFee: q.Fees.Network.String(),
		ProcessingFee: q.Fees.Processing.String(), PartnerFee: q.Fees.Partner.String(), TotalFee: q.Fees.Total.String(),
		Total: q.Total.String(), MethodName: q.Method, Asset: q.Symbol, ChainName: "chain " + strconv.FormatUint(q.ChainID, 10),
		ChainID: q.ChainID, CryptoAmount: q.CryptoAmount, ExchangeRate: q.ExchangeRate, Wallet: o.Wallet,
		ExternalID: o.ExternalID, TxHash: o.TxHash,
		Waiting: o.State == onramp.Created, Moving: o.State == onramp.PaymentReceived || o.State == onramp.CryptoSent,
		Completed: o.State == onramp.Completed, History: historyView(o),
	}
	p.PollMs, p.RedirectMs = pollInterval(o.State).Milliseconds(), checkoutRedirectIn.Milliseconds()
	if c := s.deps.Onramp.Catalogue(); c != nil {
		if m, ok := c.Method(q.Method); ok {
			p.MethodName = m.Name
		}
	}
	if ch, ok := s.deps.Registry.Chain(q.ChainID); ok {
		p.ChainName = ch.Name
	}
	left := max(o.ExpiresAt.Sub(now), 0)
	p.RemainingMs, p.TimeLeft = left.Milliseconds(), formatLeft(left)
	for _, a := range pageActions(o.State) {
		p.HasActions = true
		switch a {
		case onramp.Pay:
			p.CanPay = true
		case onramp.Fail:
			p.CanFail = true
		case onramp.Refund:
			p.CanRefund = true
		}
	}
	if u, err := url.Parse(o.RedirectURL); err == nil && o.RedirectURL != "" {
		p.RedirectHost = u.Host
	}
	if p.Completed {
		p.Redirect = onramp.Redirect(o.RedirectURL, o.UID)
	}
	return p
}

// formatLeft writes a duration as the countdown shows it: m:ss.
func formatLeft(d time.Duration) string {
	secs := int64(d / time.Second)
	return strconv.FormatInt(secs/60, 10) + ":" + fmt.Sprintf("%02d", secs%60)
}

// checkoutPage answers GET /checkout/{orderUid}.
func (s *Server) checkoutPage(r *Request) error {
	o, err := s.checkoutOrder(r)
	if err != nil {
		return err
	}
	if checkoutExpired(o, r.Now) {
		return expiredRefusal(o)
	}
	return s.writePage(r, statusOK, "order", s.orderPage(o, checkoutBase(r.Ctx.Path()), r.Now))
}

// checkoutStateView is what the page's script polls: where the order
// stands, what the user may do, and where to go once it completed.
type checkoutStateView struct {
	OrderUID    string          `json:"orderUid"`
	Status      onramp.State    `json:"status"`
	StatusLabel string          `json:"statusLabel"`
	Expired     bool            `json:"expired"`
	ExpiresInMs int64           `json:"expiresInMs"`
	Actions     []onramp.Action `json:"actions"`
	History     []stepView      `json:"history"`
	TxHash      string          `json:"txHash,omitempty"`
	// Redirect is set once the order is COMPLETED and its checkout gave a
	// redirect URL.
	Redirect string `json:"redirect,omitempty"`
	// PollMs is how long the page waits before asking again; 0 once the
	// order is final.
	PollMs int64 `json:"pollMs"`
}

// checkoutState answers GET /checkout/{orderUid}/state in the envelope: it
// is read by the page's script, not by a person.
func (s *Server) checkoutState(r *Request) error {
	setCheckoutHeaders(r)
	uid, _ := r.Ctx.UserValue("orderUid").(string)
	if !onramp.ValidUID(uid) {
		return apierr.New(apierr.NotFound, "no order "+uid).With("param", "orderUid")
	}
	o, err := s.deps.Onramp.Order(r.Context(), uid)
	if errors.Is(err, account.ErrNotFound) {
		return apierr.New(apierr.NotFound, "no order "+uid).With("param", "orderUid")
	} else if err != nil {
		return apierr.From(err)
	}
	v := checkoutStateView{OrderUID: o.UID, Status: o.State, History: historyView(o), TxHash: o.TxHash,
		Actions: pageActions(o.State)}
	// Only an order waiting for its payment can run out: once paid, its
	// expiresAt no longer matters.
	if o.State == onramp.Created {
		v.ExpiresInMs = max(o.ExpiresAt.Sub(r.Now), 0).Milliseconds()
	}
	if checkoutExpired(o, r.Now) {
		v.Status, v.Expired, v.Actions = onramp.Expired, true, nil
	}
	v.StatusLabel = statusLabel(v.Status)
	if v.Actions == nil {
		v.Actions = []onramp.Action{}
	}
	if v.Status == onramp.Completed {
		v.Redirect = onramp.Redirect(o.RedirectURL, o.UID)
	}
	v.PollMs = pollInterval(v.Status).Milliseconds()
	writeJSON(r, statusOK, v)
	return nil
}

// crossSite reports whether a POST comes from another site's page, the way
// net/http's CrossOriginProtection decides: Sec-Fetch-Site, which every
// current browser sends, must say same-origin (or none: the user's own
// navigation); without it, an Origin header must name this host. A request
// with neither is not from a browser that could be tricked into sending it.
func crossSite(ctx *fasthttp.RequestCtx) bool {
	switch site := string(ctx.Request.Header.Peek("Sec-Fetch-Site")); site {
	case "same-origin", "none":
		return false
	case "":
	default:
		return true
	}
	origin := ctx.Request.Header.Peek("Origin")
	if len(origin) == 0 {
		return false
	}
	u, err := url.Parse(string(origin))
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, string(ctx.Host()))
}

// csrfMatches compares the form's token with the order's in constant time.
// An order without a token accepts none.
func csrfMatches(ctx *fasthttp.RequestCtx, want string) bool {
	got := ctx.PostArgs().Peek("csrf")
	return want != "" && subtle.ConstantTimeCompare(got, []byte(want)) == 1
}

var actionNames = map[onramp.Action]string{onramp.Pay: "Paying", onramp.Fail: "Failing the payment", onramp.Refund: "A refund"}

// checkoutAction answers POST /checkout/{orderUid}/{pay|fail|refund}: a
// cross-site request or a form without the order's token is refused before
// the order is touched; an allowed move is answered 303 back to the page.
func (s *Server) checkoutAction(r *Request) error {
	name, _ := r.Ctx.UserValue("action").(string)
	action := onramp.Action(name)
	if _, ok := action.Target(); !ok {
		return &pageRefusal{status: fasthttp.StatusNotFound, title: "Not available", message: "There is no such action on a checkout."}
	}
	if crossSite(r.Ctx) {
		return &pageRefusal{status: fasthttp.StatusForbidden, title: "Request refused",
			message: "This request came from another site, so it was not carried out. Use the buttons on the checkout page itself."}
	}
	o, err := s.checkoutOrder(r)
	if err != nil {
		return err
	}
	base := checkoutBase(r.Ctx.Path())
	back := base + o.UID
	if !csrfMatches(r.Ctx, o.CSRF) {
		return &pageRefusal{status: fasthttp.StatusForbidden, title: "Request refused", back: back,
			message: "The form was not sent from this order's checkout page, so it was not carried out. Go back to the checkout and use its buttons."}
	}
	if checkoutExpired(o, r.Now) {
		return expiredRefusal(o)
	}
	_, err = s.deps.Onramp.Act(r.Context(), o.UID, action)
	switch {
	case errors.Is(err, onramp.ErrTransition):
		if cur, err := s.deps.Onramp.Order(r.Context(), o.UID); err == nil {
			o = cur
		}
		return &pageRefusal{status: fasthttp.StatusConflict, title: "Not possible now", back: back,
			message: actionNames[action] + " is not possible now: the order is " + string(o.State) + " (" + statusLabel(o.State) + ")."}
	case errors.Is(err, account.ErrNotFound):
		return errCheckoutNotFound
	case err != nil:
		return err
	}
	// A relative reference, so that the page is found again behind a
	// prefix-stripping proxy too.
	r.Ctx.Response.Header.Set(fasthttp.HeaderLocation, back)
	r.Ctx.SetStatusCode(fasthttp.StatusSeeOther)
	setCheckoutHeaders(r)
	return nil
}
