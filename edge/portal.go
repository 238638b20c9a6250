package edge

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/portal"
)

// The partner portal: a partner's pages in the browser, served at /portal
// in the checkout page's style (server-rendered HTML, its own stylesheet
// and script embedded from portal/, a strict Content-Security-Policy,
// nothing loaded from elsewhere, every action a plain HTML form answered
// 303, so that it works without JavaScript; the script only asks before a
// destructive action and refreshes a delivery log while something is on
// its way).
//
//	GET  /portal                               sign-in (email, then code) or the overview
//	POST /portal/sign-in/code                  mail a one-time code, 303 to the code form
//	POST /portal/sign-in                       check the code, open a session, 303 /portal
//	POST /portal/sign-out                      end this session
//	GET  /portal/transactions[.csv]            the transactions, filtered and paged; CSV
//	GET  /portal/transactions/{id}             one transaction
//	GET  /portal/key, POST /portal/key/rotate  the API key and its rotation
//	POST /portal/key/origins                   the browser origins allowed to send the key
//	GET  /portal/wallets, POST /portal/wallets, POST /portal/wallets/{ecosystem}/delete
//	GET  /portal/webhooks, POST /portal/webhooks, GET /portal/webhooks/{id},
//	POST /portal/webhooks/{id}/{delete|test}, POST …/deliveries/{deliveryId}/resend
//	GET  /portal/assets/{name}                 the stylesheet and the script
//
// Security decisions:
//   - Sign-in is a one-time code mailed to the partner's address (package
//     portal has its rules). The answer to "send me a code" is the same
//     page, at once, whether or not an account uses the address: the
//     lookup, the code's storage and the mail happen after the answer, so
//     not even its timing tells. Every refused code gets the same message.
//   - Code requests are limited per address (3 per 10 minutes) and per
//     client IP (20 per 10 minutes), code checks per client IP (30 per 10
//     minutes), besides the 5 tries of each code (portal_limits.go): counted
//     in the store, so that a cluster's nodes together allow what one does.
//   - A code is stored as its HMAC under the code key (PortalService.CodeKey,
//     derived from secrets.key, the same on every node), so that reading
//     the store does not give a live code away.
//   - A session is a random 256-bit id in the cookie sg_portal: HttpOnly,
//     SameSite=Strict, Path=/portal, Secure whenever the service is reached
//     over TLS (a request over TLS, or an https public URL). The store
//     keeps only its digest. It ends after 12 h idle, on sign-out, when the
//     partner is disabled and when the key is rotated (everywhere; the
//     rotating browser is given a new session).
//   - Every form carries a CSRF token (the session's; before sign-in, the
//     one of the sg_portal_pre cookie, a double submit) compared in
//     constant time, and a POST from another site (Sec-Fetch-Site, else
//     Origin) is refused before anything is read, as on the checkout.
//   - What is logged: sign-ins, sign-outs, rotations and refused sessions
//     with the partner id and request id; never an address, a code, a
//     session id, a token, a key or a webhook secret.
//
//go:embed portal
var portalFiles embed.FS

// PortalPath is where the portal is served.
const PortalPath = "/portal"

// Cookie names: the session, and the CSRF token of the sign-in forms.
const (
	portalCookie    = "sg_portal"
	portalPreCookie = "sg_portal_pre"
)

// Mailer sends the portal's mail: an SMTP relay, or the sandbox mailbox.
type Mailer interface {
	Send(ctx context.Context, to, subject, text string) error
}

// KeyRotator replaces a partner's API key and returns the new one; the old
// one stops working at once. The operator's partner operations satisfy it.
type KeyRotator interface {
	RotateKey(ctx context.Context, partnerID string) (string, error)
}

// OriginSetter replaces a partner's allowedOrigins, already checked with
// account.CheckAllowedOrigins; the operator's partner operations satisfy
// it, so that the edge's cached partner is dropped as after any operator
// change.
type OriginSetter interface {
	SetAllowedOrigins(ctx context.Context, partnerID string, origins []string) error
}

// PortalService is what the portal is given. The pages also use the
// account store (Deps.Accounts) and the webhook service (Deps.Webhooks),
// both required with it.
type PortalService struct {
	Store  PortalStore
	Mailer Mailer
	Keys   KeyRotator
	// Origins lets the partner edit its allowedOrigins on the key page;
	// nil leaves that form out.
	Origins OriginSetter
	// CodeKey keys the login codes' stored digests (portal.CodeDigest):
	// portal.CodeKeyLen bytes or more, the same on every node sharing the
	// store. Without it there is no portal.
	CodeKey []byte
	// Rand is the source of codes, session ids and tokens; nil means
	// crypto/rand.
	Rand io.Reader
}

// portalPages are the parsed templates and assets.
type portalPages struct {
	tmpl   *template.Template
	assets map[string]checkoutAsset
}

var portalFuncs = template.FuncMap{
	"add": func(a, b int) int { return a + b },
}

func loadPortalPages() (*portalPages, error) {
	tmpl, err := template.New("portal").Funcs(portalFuncs).ParseFS(portalFiles, "portal/*.html")
	if err != nil {
		return nil, fmt.Errorf("edge: portal templates: %w", err)
	}
	p := &portalPages{tmpl: tmpl, assets: map[string]checkoutAsset{}}
	for name, ct := range map[string]string{"portal.css": "text/css; charset=utf-8", "portal.js": "text/javascript; charset=utf-8"} {
		b, err := portalFiles.ReadFile("portal/" + name)
		if err != nil {
			return nil, fmt.Errorf("edge: portal asset: %w", err)
		}
		p.assets[name] = checkoutAsset{contentType: ct, body: b}
	}
	return p, nil
}

// portalState is the portal's part of the server: pages, usage.
type portalState struct {
	pages *portalPages
	rand  io.Reader
	// issuing counts the codes being issued after their answer, which
	// Shutdown waits for, so that none touches a closed store.
	issuing sync.WaitGroup
}

func (s *Server) portalRoutes() {
	svc := s.deps.Portal
	if s.deps.Accounts == nil || s.deps.Webhooks == nil || svc.Store == nil || svc.Mailer == nil || svc.Keys == nil ||
		len(svc.CodeKey) < portal.CodeKeyLen {
		if s.routeErr == nil {
			s.routeErr = errors.New("edge: the portal needs its store, a mailer, a key rotator, a code key, the account store and the webhook service")
		}
		return
	}
	pages, err := loadPortalPages()
	if err != nil {
		if s.routeErr == nil {
			s.routeErr = err
		}
		return
	}
	s.portal = &portalState{pages: pages, rand: svc.Rand}
	if s.portal.rand == nil {
		s.portal.rand = rand.Reader
	}
	// The paths are written out (PortalPath is /portal) so that every
	// registration reads as the route it is.
	page := func(name string) route { return route{bucket: BucketRead, name: name, html: true} }
	form := func(name string) route { return route{bucket: BucketHeavy, name: name, html: true} }
	s.Handle("GET", "/portal/assets/{name}", page("portal_asset"), s.portalAsset)
	s.Handle("GET", "/portal", page("portal_home"), s.portalHome)
	s.Handle("POST", "/portal/sign-in/code", form("portal_sign_in_code"), s.portalRequestCode)
	s.Handle("POST", "/portal/sign-in", form("portal_sign_in"), s.portalSignIn)
	s.Handle("POST", "/portal/sign-out", form("portal_sign_out"), s.signedIn(s.portalSignOut))
	s.Handle("GET", "/portal/transactions", page("portal_transactions"), s.signedIn(s.portalTransactions))
	s.Handle("GET", "/portal/transactions.csv", page("portal_transactions_csv"), s.signedIn(s.portalTransactionsCSV))
	s.Handle("GET", "/portal/transactions/{id}", page("portal_transaction"), s.signedIn(s.portalTransaction))
	s.Handle("GET", "/portal/key", page("portal_key"), s.signedIn(s.portalKey))
	s.Handle("POST", "/portal/key/rotate", form("portal_key_rotate"), s.signedIn(s.portalRotateKey))
	if s.deps.Portal.Origins != nil {
		s.Handle("POST", "/portal/key/origins", form("portal_key_origins"), s.signedIn(s.portalSetOrigins))
	}
	s.Handle("GET", "/portal/wallets", page("portal_wallets"), s.signedIn(s.portalWallets))
	s.Handle("POST", "/portal/wallets", form("portal_wallet_put"), s.signedIn(s.portalPutWallet))
	s.Handle("POST", "/portal/wallets/{ecosystem}/delete", form("portal_wallet_delete"), s.signedIn(s.portalDeleteWallet))
	s.Handle("GET", "/portal/webhooks", page("portal_webhooks"), s.signedIn(s.portalWebhooks))
	s.Handle("POST", "/portal/webhooks", form("portal_webhook_create"), s.signedIn(s.portalCreateWebhook))
	s.Handle("GET", "/portal/webhooks/{id}", page("portal_webhook"), s.signedIn(s.portalWebhook))
	s.Handle("POST", "/portal/webhooks/{id}/delete", form("portal_webhook_delete"), s.signedIn(s.portalDeleteWebhook))
	s.Handle("POST", "/portal/webhooks/{id}/test", form("portal_webhook_test"), s.signedIn(s.portalTestWebhook))
	s.Handle("POST", "/portal/webhooks/{id}/deliveries/{deliveryId}/resend", form("portal_webhook_resend"), s.signedIn(s.portalResend))
}

// isPortalPath reports whether a path is the portal's.
func isPortalPath(path []byte) bool {
	return bytes.Equal(path, []byte(PortalPath)) || bytes.HasPrefix(path, []byte(PortalPath+"/"))
}

// portalSession is the signed-in partner of a request.
type portalSession struct {
	s       *portal.Session
	partner *account.Partner
}

type portalHandler func(r *Request, ps *portalSession) error

// secureCookies reports whether the cookies get Secure: the request came
// over TLS, or the service's public address is https (TLS ended at a
// proxy in front).
func (s *Server) secureCookies(r *Request) bool {
	if r.Ctx.IsTLS() {
		return true
	}
	return s.deps.PublicURL != nil && strings.HasPrefix(s.deps.PublicURL(), "https://")
}

func (s *Server) setCookie(r *Request, name, value string, maxAge time.Duration) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(name)
	c.SetValue(value)
	c.SetPath(PortalPath)
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetSecure(s.secureCookies(r))
	if maxAge < 0 {
		c.SetMaxAge(-1)
		c.SetExpire(fasthttp.CookieExpireDelete)
	} else if maxAge > 0 {
		c.SetMaxAge(int(maxAge / time.Second))
	}
	r.Ctx.Response.Header.SetCookie(c)
}

// session reads the request's session: nil, nil when there is none or it
// ended (an ended one is removed, and its cookie cleared).
func (s *Server) session(r *Request) (*portalSession, error) {
	id := string(r.Ctx.Request.Header.Cookie(portalCookie))
	if id == "" {
		return nil, nil
	}
	if !portal.WellFormedSessionID(id) {
		s.setCookie(r, portalCookie, "", -1)
		return nil, nil
	}
	st := s.deps.Portal.Store
	digest := portal.SessionDigest(id)
	se, err := st.Session(r.Context(), digest)
	if errors.Is(err, account.ErrNotFound) {
		s.setCookie(r, portalCookie, "", -1)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("edge: portal session: %w", err)
	}
	p, err := st.Partner(r.Context(), se.PartnerID)
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		return nil, fmt.Errorf("edge: portal session partner: %w", err)
	}
	var ended error
	if p == nil {
		ended = portal.ErrSessionEnded
	} else {
		ended = se.Check(portal.PartnerState{KeyDigest: p.KeyDigest, Disabled: p.Disabled}, r.Now)
	}
	if ended != nil {
		s.log.Info("portal session ended", slog.String("requestId", string(r.ID[:])), slog.String("partner", se.PartnerID),
			slog.String("why", ended.Error()))
		if err := st.DeleteSession(r.Context(), digest); err != nil {
			return nil, fmt.Errorf("edge: end portal session: %w", err)
		}
		s.setCookie(r, portalCookie, "", -1)
		return nil, nil
	}
	if se.NeedsTouch(r.Now) {
		if err := st.UpdateSession(r.Context(), digest, func(x *portal.Session) { x.LastSeen = r.Now.UTC() }); err != nil &&
			!errors.Is(err, account.ErrNotFound) {
			return nil, fmt.Errorf("edge: touch portal session: %w", err)
		}
	}
	return &portalSession{s: se, partner: p}, nil
}

// signedIn wraps a page that needs a session: without one, a GET goes to
// the sign-in page and a POST is refused. A POST must come from this site
// and carry the session's CSRF token.
func (s *Server) signedIn(h portalHandler) handlerFunc {
	return func(r *Request) error {
		post := r.Ctx.IsPost()
		if post && crossSite(r.Ctx) {
			return errPortalCrossSite
		}
		ps, err := s.session(r)
		if err != nil {
			return err
		}
		if ps == nil {
			if post {
				return &pageRefusal{status: fasthttp.StatusForbidden, title: "Signed out",
					message: "Your session has ended, so this was not carried out. Sign in again.", back: PortalPath}
			}
			s.redirect(r, PortalPath)
			return nil
		}
		if post && !formTokenMatches(r.Ctx, ps.s.CSRF) {
			return errPortalToken
		}
		r.Partner = ps.partner
		return h(r, ps)
	}
}

var (
	errPortalCrossSite = &pageRefusal{status: fasthttp.StatusForbidden, title: "Request refused",
		message: "This request came from another site, so it was not carried out. Use the portal's own pages.", back: PortalPath}
	errPortalToken = &pageRefusal{status: fasthttp.StatusForbidden, title: "Request refused",
		message: "The form was not sent from one of your portal pages, so it was not carried out. Go back, reload the page and try again.",
		back:    PortalPath}
)

// formTokenMatches compares the form's csrf field with want in constant
// time; an empty want accepts nothing.
func formTokenMatches(ctx *fasthttp.RequestCtx, want string) bool {
	return want != "" && subtle.ConstantTimeCompare(ctx.PostArgs().Peek("csrf"), []byte(want)) == 1
}

// redirect answers 303 to a path of the portal.
func (s *Server) redirect(r *Request, to string) {
	r.Ctx.Response.Header.Set(fasthttp.HeaderLocation, to)
	r.Ctx.SetStatusCode(fasthttp.StatusSeeOther)
	setCheckoutHeaders(r)
}

// flash is a one-line notice carried to the page a form redirects to, in
// its query (?done=…): a fixed word, never free text from the request.
var flashes = map[string]string{
	"wallet-saved": "The fee wallet was saved.",
	"origins-set":  "The browser origins were saved: they apply to the next call.",
	"wallet-gone":  "The fee wallet was removed. Settlements in that ecosystem are paused until a wallet is registered again.",
	"hook-deleted": "The webhook was deleted.",
	"test-sent":    "A test event was sent; its attempt shows below in a moment.",
	"resent":       "The delivery was sent again; its attempt shows below in a moment.",
	"not-resent":   "That delivery was not sent again: it is not failed, or its next attempt is imminent.",
	"signed-out":   "You are signed out.",
}

func flashOf(r *Request) string { return flashes[string(r.Ctx.QueryArgs().Peek("done"))] }

// pageBase is what every portal page shows: the partner, the nav, the
// token its forms carry.
type pageBase struct {
	Title, Nav, CSRF, Flash string
	Partner                 *account.Partner
	RequestID               string
}

func (s *Server) base(r *Request, ps *portalSession, title, nav string) pageBase {
	b := pageBase{Title: title, Nav: nav, Flash: flashOf(r), RequestID: string(r.ID[:])}
	if ps != nil {
		b.CSRF, b.Partner = ps.s.CSRF, ps.partner
	}
	return b
}

// writePortal renders a portal template as the answer.
func (s *Server) writePortal(r *Request, status int, name string, data any) error {
	var b bytes.Buffer
	if err := s.portal.pages.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return fmt.Errorf("edge: portal template %s: %w", name, err)
	}
	r.Ctx.Response.Header.Del(fasthttp.HeaderLocation)
	r.Ctx.SetStatusCode(status)
	r.Ctx.SetContentType(contentTypeHTML)
	setCheckoutHeaders(r)
	r.Ctx.Response.SetBody(b.Bytes())
	return nil
}

// portalMessage is a page that only says something.
type portalMessage struct {
	pageBase
	Status  int
	Message string
	Back    string
}

// writePortalMessage is the portal's form of a refusal page.
func (s *Server) writePortalMessage(r *Request, status int, title, message, back string) {
	m := portalMessage{pageBase: pageBase{Title: title, RequestID: string(r.ID[:])}, Status: status, Message: message, Back: back}
	if err := s.writePortal(r, status, "message", m); err != nil {
		s.log.Error("portal page failed", "requestId", string(r.ID[:]), "err", err)
		r.Ctx.SetStatusCode(status)
		r.Ctx.SetContentType(contentTypeHTML)
		setCheckoutHeaders(r)
		r.Ctx.Response.SetBodyString("<!doctype html><title>Error</title><p>Something went wrong; try again in a moment.</p>")
	}
}

// portalErrorPage is the portal's form of an envelope error.
func (s *Server) portalErrorPage(r *Request, e *apierr.Error) {
	st := e.HTTPStatus()
	switch {
	case st == fasthttp.StatusNotFound:
		s.writePortalMessage(r, st, "Not found", "There is no such page in the portal.", PortalPath)
	case st == fasthttp.StatusMethodNotAllowed:
		s.writePortalMessage(r, st, "Not available", "This address does not take that kind of request.", PortalPath)
	case st == fasthttp.StatusTooManyRequests:
		s.writePortalMessage(r, st, "Too many requests", "Too many requests came from your network or account in the last minute. Wait a moment, then try again.", "")
	case st >= 500:
		s.writePortalMessage(r, st, "Something went wrong", "The page could not be shown because of a problem on our side. Try again in a moment; if it persists, quote request "+string(r.ID[:])+".", "")
	default:
		s.writePortalMessage(r, st, "Request refused", e.Message, "")
	}
}

func (s *Server) portalAsset(r *Request) error {
	name, _ := r.Ctx.UserValue("name").(string)
	a, ok := s.portal.pages.assets[name]
	if !ok {
		return &pageRefusal{status: fasthttp.StatusNotFound, title: "Not found", message: "There is no such file."}
	}
	r.Ctx.SetStatusCode(statusOK)
	r.Ctx.SetContentType(a.contentType)
	setCheckoutHeaders(r)
	r.Ctx.Response.SetBodyRaw(a.body)
	return nil
}

// randomToken is 32 random bytes, base64url.
func (s *Server) randomToken() (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(s.portal.rand, b[:]); err != nil {
		return "", fmt.Errorf("edge: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// signInPage is the data of the sign-in page: the address form, or the
// code form once a code was asked for.
type signInPage struct {
	pageBase
	Email    string
	CodeStep bool
	Error    string
}

// preToken is the sign-in forms' CSRF token: the sg_portal_pre cookie's,
// set when there is none.
func (s *Server) preToken(r *Request) (string, error) {
	if t := string(r.Ctx.Request.Header.Cookie(portalPreCookie)); len(t) == 43 {
		return t, nil
	}
	t, err := s.randomToken()
	if err != nil {
		return "", err
	}
	s.setCookie(r, portalPreCookie, t, 0)
	return t, nil
}

// portalHome answers GET /portal: the overview when signed in, else the
// sign-in page (?email= shows the code form).
func (s *Server) portalHome(r *Request) error {
	ps, err := s.session(r)
	if err != nil {
		return err
	}
	if ps != nil {
		r.Partner = ps.partner
		return s.portalOverview(r, ps)
	}
	return s.writeSignIn(r, statusOK, string(r.Ctx.QueryArgs().Peek("email")), "")
}

func (s *Server) writeSignIn(r *Request, status int, email, msg string) error {
	tok, err := s.preToken(r)
	if err != nil {
		return err
	}
	p := signInPage{pageBase: s.base(r, nil, "Sign in", ""), Error: msg}
	p.CSRF = tok
	if e := strings.TrimSpace(email); e != "" && len(e) <= 254 {
		p.Email, p.CodeStep = e, true
	}
	return s.writePortal(r, status, "signin", p)
}

// signInForm checks a sign-in form's origin and token.
func (s *Server) signInForm(r *Request) error {
	if crossSite(r.Ctx) {
		return errPortalCrossSite
	}
	if !formTokenMatches(r.Ctx, string(r.Ctx.Request.Header.Cookie(portalPreCookie))) {
		return errPortalToken
	}
	return nil
}

// codeTTLWords is portal.CodeTTL as the mail says it.
const codeTTLWords = "10 minutes"

// portalRequestCode answers POST /portal/sign-in/code: within the limits,
// it answers at once with the code form, the same for any address, and
// issues the code after the answer (issueCode).
func (s *Server) portalRequestCode(r *Request) error {
	if err := s.signInForm(r); err != nil {
		return err
	}
	email := portal.NormalizeEmail(string(r.Ctx.PostArgs().Peek("email")))
	if email == "" || len(email) > 254 || strings.Count(email, "@") != 1 || strings.ContainsAny(email, " \t\r\n<>\"") {
		return s.writeSignIn(r, fasthttp.StatusBadRequest, "", "Enter the email address of your partner account.")
	}
	ip := s.clientIP(r.Ctx).String()
	ok, err := s.takeSignIn(r, portal.CodeRequestLimits(email, ip))
	if err != nil {
		return err
	}
	if !ok {
		return &pageRefusal{status: fasthttp.StatusTooManyRequests, title: "Too many codes asked for",
			message: "Too many sign-in codes were asked for this address or from your network. Wait ten minutes, then ask again.", back: PortalPath}
	}
	reqID := r.ID // r goes back to its pool when the handler returns
	s.portal.issuing.Add(1)
	go func() {
		defer s.portal.issuing.Done()
		s.issueCode(email, reqID)
	}()
	s.redirect(r, PortalPath+"?email="+url.QueryEscape(email))
	return nil
}

// issueCodeTimeout bounds the work done for one code request after its
// answer.
const issueCodeTimeout = 30 * time.Second

// issueCode finds the enabled partner at email and, when there is one,
// stores a new code for it and mails the code.
func (s *Server) issueCode(email string, reqID [36]byte) {
	ctx, cancel := context.WithTimeout(context.Background(), issueCodeTimeout)
	defer cancel()
	st := s.deps.Portal.Store
	log := s.log.With(slog.String("requestId", string(reqID[:])))
	p, err := st.PartnerByEmail(ctx, email)
	switch {
	case errors.Is(err, account.ErrNotFound):
		log.Info("portal code asked for an address of no account")
		return
	case err != nil:
		log.Error("portal code: find partner", slog.Any("err", err))
		return
	case p.Disabled:
		log.Info("portal code asked for a disabled partner", slog.String("partner", p.ID))
		return
	}
	code, c, err := portal.NewCode(s.portal.rand, s.deps.Portal.CodeKey, email, p.ID, s.now())
	if err != nil {
		log.Error("portal code: draw", slog.Any("err", err))
		return
	}
	if err := st.PutLoginCode(ctx, c); err != nil {
		log.Error("portal code: store", slog.Any("err", err))
		return
	}
	text := "Your Swapgate partner portal sign-in code is " + code + ".\n\n" +
		"It is valid for " + codeTTLWords + " and for one sign-in. If you did not ask for it, ignore this message: nobody can sign in without it.\n"
	if err := s.deps.Portal.Mailer.Send(ctx, email, "Your Swapgate sign-in code: "+code, text); err != nil {
		log.Error("portal code: send mail", slog.String("partner", p.ID), slog.Any("err", err))
		return
	}
	log.Info("portal code sent", slog.String("partner", p.ID))
}

// errBadCode is every refused code's message: it says neither whether an
// account uses the address nor why this code was refused.
const errBadCode = "That code is not valid. A code works once, for 10 minutes, and stops working after 5 wrong tries: check it, or ask for a new one."

// portalSignIn answers POST /portal/sign-in: a good code opens a session.
func (s *Server) portalSignIn(r *Request) error {
	if err := s.signInForm(r); err != nil {
		return err
	}
	args := r.Ctx.PostArgs()
	email := portal.NormalizeEmail(string(args.Peek("email")))
	code := strings.TrimSpace(string(args.Peek("code")))
	ok, err := s.takeSignIn(r, portal.CodeCheckLimits(s.clientIP(r.Ctx).String()))
	if err != nil {
		return err
	}
	if !ok {
		return &pageRefusal{status: fasthttp.StatusTooManyRequests, title: "Too many tries",
			message: "Too many codes were tried from your network. Wait ten minutes, then try again.", back: PortalPath}
	}
	if email == "" || !portal.WellFormedCode(code) {
		return s.writeSignIn(r, fasthttp.StatusBadRequest, email, "Enter the 6-digit code from the email.")
	}
	st := s.deps.Portal.Store
	var partnerID string
	err = st.UpdateLoginCode(r.Context(), email, func(c *portal.LoginCode) error {
		partnerID = c.PartnerID
		return c.Check(s.deps.Portal.CodeKey, code, r.Now)
	})
	switch {
	case errors.Is(err, account.ErrNotFound), errors.Is(err, portal.ErrWrongCode), errors.Is(err, portal.ErrCodeExpired),
		errors.Is(err, portal.ErrCodeUsed), errors.Is(err, portal.ErrTooManyTries):
		return s.writeSignIn(r, fasthttp.StatusUnauthorized, email, errBadCode)
	case err != nil:
		return err
	}
	p, err := st.Partner(r.Context(), partnerID)
	if errors.Is(err, account.ErrNotFound) || err == nil && p.Disabled {
		return s.writeSignIn(r, fasthttp.StatusUnauthorized, email, errBadCode)
	} else if err != nil {
		return err
	}
	if err := s.openSession(r, p); err != nil {
		return err
	}
	s.log.Info("portal sign-in", slog.String("requestId", string(r.ID[:])), slog.String("partner", p.ID))
	s.setCookie(r, portalPreCookie, "", -1)
	s.redirect(r, PortalPath)
	return nil
}

// openSession stores a new session of p and sets its cookie.
func (s *Server) openSession(r *Request, p *account.Partner) error {
	id, se, err := portal.NewSession(s.portal.rand, p.ID, p.KeyDigest, r.Now)
	if err != nil {
		return err
	}
	if err := s.deps.Portal.Store.CreateSession(r.Context(), se); err != nil {
		return fmt.Errorf("edge: open portal session: %w", err)
	}
	// A session cookie (no Max-Age): the store's idle expiry ends it.
	s.setCookie(r, portalCookie, id, 0)
	return nil
}

func (s *Server) portalSignOut(r *Request, ps *portalSession) error {
	if err := s.deps.Portal.Store.DeleteSession(r.Context(), ps.s.IDDigest); err != nil {
		return fmt.Errorf("edge: sign out: %w", err)
	}
	s.log.Info("portal sign-out", slog.String("requestId", string(r.ID[:])), slog.String("partner", ps.partner.ID))
	s.setCookie(r, portalCookie, "", -1)
	s.redirect(r, PortalPath+"?done=signed-out")
	return nil
}
