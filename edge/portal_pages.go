package edge

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/portal"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// overviewDays is how many days the overview's charts cover.
const overviewDays = 30

// maxOverviewScan bounds the activity lines the overview reads to count
// swaps per day (the other figures come from the stats): a partner with
// more lines in 30 days sees the swaps of the newest ones, and the page
// says so.
const maxOverviewScan = 20_000

// overviewPage is the data of the overview.
type overviewPage struct {
	pageBase
	From, To                       string
	Quotes, Swaps, Volume, Fees    string
	QuotesSVG, SwapsSVG            any
	VolumeSVG, FeesSVG             any
	Days                           []overviewDay
	SwapsPartial                   bool
	Pending, Settled               []earningsItem
	Usage                          []usageHour
	UsageSVG                       any
	UsageHeavy, UsageRead, Refused int64
	HeavyLimit, ReadLimit          int
}

type overviewDay struct {
	Day                string
	Quotes, Swaps      int64
	VolumeUSD, FeesUSD string
}

func (s *Server) portalOverview(r *Request, ps *portalSession) error {
	ctx := r.Context()
	pid := ps.partner.ID
	today := r.Now.UTC().Truncate(24 * time.Hour)
	from, to := today.AddDate(0, 0, -(overviewDays-1)), today.AddDate(0, 0, 1)
	st, err := s.deps.Accounts.Stats(ctx, pid, from, to)
	if err != nil {
		return fmt.Errorf("edge: overview stats: %w", err)
	}
	swaps, partial, err := s.swapsPerDay(ctx, pid, from)
	if err != nil {
		return err
	}
	byDay := map[string]account.StatFigures{}
	for _, d := range st.ByDay {
		byDay[d.Day] = d.StatFigures
	}
	p := overviewPage{pageBase: s.base(r, ps, "Overview", "overview"), From: from.Format(time.DateOnly), To: today.Format(time.DateOnly),
		SwapsPartial: partial, HeavyLimit: ps.partner.HeavyPerMin, ReadLimit: ps.partner.ReadPerMin}
	labels := make([]string, overviewDays)
	var q, sw, vol, fee []float64
	var swapsTotal int64
	for i := range overviewDays {
		day := from.AddDate(0, 0, i).Format(time.DateOnly)
		labels[i] = day
		f := byDay[day]
		q, sw = append(q, float64(f.Quotes)), append(sw, float64(swaps[day]))
		vol, fee = append(vol, float64(f.VolumeMicroUSD)/1e6), append(fee, float64(f.FeeMicroUSD)/1e6)
		swapsTotal += swaps[day]
		p.Days = append(p.Days, overviewDay{Day: day, Quotes: f.Quotes, Swaps: swaps[day],
			VolumeUSD: portalUSD(f.VolumeMicroUSD), FeesUSD: portalUSD(f.FeeMicroUSD)})
	}
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	usd := func(v float64) string { return portalUSD(int64(math.Round(v * 1e6))) }
	p.QuotesSVG = barChart("Quotes per day", labels, q, count)
	p.SwapsSVG = barChart("Swaps per day", labels, sw, count)
	p.VolumeSVG = barChart("Volume per day (USD)", labels, vol, usd)
	p.FeesSVG = barChart("Fees earned per day (USD)", labels, fee, usd)
	p.Quotes, p.Swaps = strconv.FormatInt(st.Totals.Quotes, 10), strconv.FormatInt(swapsTotal, 10)
	p.Volume, p.Fees = portalUSD(st.Totals.VolumeMicroUSD), portalUSD(st.Totals.FeeMicroUSD)
	e, err := s.deps.Accounts.Earnings(ctx, pid)
	if err != nil {
		return fmt.Errorf("edge: overview earnings: %w", err)
	}
	p.Pending, p.Settled = portalEarnings(e.Pending), portalEarnings(e.Settled)
	if p.Usage, err = s.last24(ctx, pid, r.Now); err != nil {
		return err
	}
	hours := make([]string, len(p.Usage))
	used := make([]float64, len(p.Usage))
	for i, u := range p.Usage {
		hours[i] = u.Start.Format("Jan 2 15:04")
		used[i] = float64(u.Heavy + u.Read)
		p.UsageHeavy, p.UsageRead, p.Refused = p.UsageHeavy+u.Heavy, p.UsageRead+u.Read, p.Refused+u.Refused
	}
	p.UsageSVG = barChart("Requests per hour, last 24 hours", hours, used, count)
	return s.writePortal(r, statusOK, "overview", p)
}

// swapsPerDay counts the partner's swap lines per UTC day since from,
// reading at most maxOverviewScan lines (partial says it stopped there).
func (s *Server) swapsPerDay(ctx context.Context, partnerID string, from time.Time) (map[string]int64, bool, error) {
	out := map[string]int64{}
	q := account.ActivityQuery{Limit: account.MaxActivityLimit}
	read := 0
	for {
		acts, next, err := s.deps.Accounts.Activities(ctx, partnerID, q)
		if err != nil {
			return nil, false, fmt.Errorf("edge: overview activity: %w", err)
		}
		for _, a := range acts {
			if a.CreatedAt.Before(from) {
				return out, false, nil
			}
			if a.Kind == account.ActivitySwap {
				out[a.CreatedAt.UTC().Format(time.DateOnly)]++
			}
		}
		read += len(acts)
		if next == "" {
			return out, false, nil
		}
		if read >= maxOverviewScan {
			return out, true, nil
		}
		q.Cursor = next
	}
}

// portalQuery reads the transaction filters of the portal's form, with
// the API's rules and messages (GET /v1/partner/transactions): an empty
// field is no filter.
func portalQuery(args *fasthttp.Args, walletFormats []string) (account.ActivityQuery, url.Values, string) {
	var q account.ActivityQuery
	keep := url.Values{}
	get := func(name string) string { return strings.TrimSpace(string(args.Peek(name))) }
	if v := get("status"); v != "" {
		if len(v) > 64 {
			return q, keep, "status must be at most 64 characters"
		}
		q.Status = v
		keep.Set("status", v)
	}
	if v := get("chain"); v != "" {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil || id == 0 {
			return q, keep, "chain must be a chain ID (a positive integer)"
		}
		q.Chain = id
		keep.Set("chain", v)
	}
	if v := get("minFeeUsd"); v != "" {
		d, err := decimal.NewFromString(v)
		if err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(1_000_000_000_000)) {
			return q, keep, "minFeeUsd must be a non-negative decimal number of USD"
		}
		m := d.Mul(microUSD).Ceil().IntPart()
		q.MinFeeMicroUSD = &m
		keep.Set("minFeeUsd", v)
	}
	if v := get("wallet"); v != "" {
		w, err := account.ParseWallet(walletFormats, v)
		if err != nil {
			return q, keep, walletMessage(err)
		}
		q.Wallet = w
		keep.Set("wallet", v)
	}
	if v := get("cursor"); v != "" {
		if len(v) > 256 {
			return q, keep, "cursor is not one this page gave"
		}
		q.Cursor = v
	}
	return q, keep, ""
}

// txRow is one transaction as the portal lists it: the API's view (which
// the CSV export writes as it is) and the same amounts written for people
// (portal_money.go).
type txRow struct {
	transactionView
	FromChainName, ToChainName string
	EarningState, Ecosystem    string
	FromShown, ToShown         string
	VolumeShown, FeeShown      string
}

func (s *Server) txRow(a *account.Activity) txRow {
	row := txRow{transactionView: newTransactionView(a)}
	row.FromChainName, row.ToChainName = s.chainName(a.FromChain), s.chainName(a.ToChain)
	row.FromShown = portalTokenAmount(s.deps.Registry, a.FromChain, a.FromToken, a.FromAmount)
	row.ToShown = portalTokenAmount(s.deps.Registry, a.ToChain, a.ToToken, a.ToAmount)
	row.VolumeShown = portalKnownUSD(a.VolumeMicroUSD, a.VolumeUSDUnknown)
	row.FeeShown = portalKnownUSD(a.FeeMicroUSD, a.FeeUSDUnknown)
	if e := a.Earning; e != nil {
		row.EarningState, row.Ecosystem = e.State, e.Ecosystem
	}
	return row
}

func (s *Server) chainName(id uint64) string {
	if ch, ok := s.deps.Registry.Chain(id); ok {
		return ch.Name
	}
	return strconv.FormatUint(id, 10)
}

type transactionsPage struct {
	pageBase
	Rows                                 []txRow
	Status, Chain, MinFee, Wallet, Error string
	Next, CSV                            string
}

// portalTxPageSize is the portal's page of transactions.
const portalTxPageSize = 50

func (s *Server) portalTransactions(r *Request, ps *portalSession) error {
	q, keep, msg := portalQuery(r.Ctx.QueryArgs(), s.walletFormats())
	p := transactionsPage{pageBase: s.base(r, ps, "Transactions", "transactions"), Status: keep.Get("status"),
		Chain: keep.Get("chain"), MinFee: keep.Get("minFeeUsd"), Wallet: keep.Get("wallet"), Error: msg}
	p.CSV, _ = portalTxLinks(keep, "")
	if msg != "" {
		return s.writePortal(r, fasthttp.StatusBadRequest, "transactions", p)
	}
	q.Limit = portalTxPageSize
	acts, next, err := s.deps.Accounts.Activities(r.Context(), ps.partner.ID, q)
	if errors.Is(err, account.ErrBadCursor) {
		p.Error = "cursor is not one this page gave"
		return s.writePortal(r, fasthttp.StatusBadRequest, "transactions", p)
	}
	if err != nil {
		return fmt.Errorf("edge: portal transactions: %w", err)
	}
	for _, a := range acts {
		p.Rows = append(p.Rows, s.txRow(a))
	}
	_, p.Next = portalTxLinks(keep, next)
	return s.writePortal(r, statusOK, "transactions", p)
}

// portalTxLinks are the transactions page's export link and, when there
// is a next page (next, its cursor), its link: both keep the filters
// (keep, portalQuery's), the wallet's included.
func portalTxLinks(keep url.Values, next string) (csv, nextPage string) {
	csv = PortalPath + "/transactions.csv?" + keep.Encode()
	if next == "" {
		return csv, ""
	}
	nv := url.Values{}
	for k, v := range keep {
		nv[k] = v
	}
	nv.Set("cursor", next)
	return csv, PortalPath + "/transactions?" + nv.Encode()
}

// maxCSVRows bounds one export.
const maxCSVRows = 100_000

// portalTransactionsCSV answers the filtered list as CSV, every page of it
// up to maxCSVRows lines, newest first.
func (s *Server) portalTransactionsCSV(r *Request, ps *portalSession) error {
	q, _, msg := portalQuery(r.Ctx.QueryArgs(), s.walletFormats())
	if msg != "" {
		return &pageRefusal{status: fasthttp.StatusBadRequest, title: "Export refused", message: msg, back: PortalPath + "/transactions"}
	}
	q.Limit, q.Cursor = account.MaxActivityLimit, ""
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"id", "createdAt", "kind", "status", "provider", "tool", "fromChain", "toChain", "fromToken", "toToken",
		"fromAmount", "toAmount", "volumeUsd", "feeUsd", "earning", "ecosystem",
		"fromAddress", "toAddress", "sendingTxHash", "receivingTxHash"})
	n := 0
	for n < maxCSVRows {
		acts, next, err := s.deps.Accounts.Activities(r.Context(), ps.partner.ID, q)
		if err != nil {
			return fmt.Errorf("edge: portal export: %w", err)
		}
		for _, a := range acts {
			t := s.txRow(a)
			_ = w.Write([]string{csvSafe(t.ID), t.CreatedAt, csvSafe(t.Kind), csvSafe(t.Status), csvSafe(t.Provider), csvSafe(t.Tool),
				strconv.FormatUint(t.FromChain, 10), strconv.FormatUint(t.ToChain, 10), csvSafe(t.FromToken), csvSafe(t.ToToken),
				csvSafe(t.FromAmount), csvSafe(t.ToAmount), t.VolumeUSD, t.FeeUSD, t.EarningState, t.Ecosystem,
				csvSafe(a.FromAddress), csvSafe(a.ToAddress), csvSafe(a.SendingTxHash), csvSafe(a.ReceivingTxHash)})
			n++
		}
		if next == "" {
			break
		}
		q.Cursor = next
	}
	w.Flush()
	r.Ctx.SetStatusCode(statusOK)
	r.Ctx.SetContentType("text/csv; charset=utf-8")
	setCheckoutHeaders(r)
	r.Ctx.Response.Header.Set("Content-Disposition", `attachment; filename="transactions-`+r.Now.UTC().Format("20060102")+`.csv"`)
	r.Ctx.Response.SetBody(b.Bytes())
	return nil
}

// csvSafe keeps a spreadsheet from reading a cell as a formula.
func csvSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

type transactionPage struct {
	pageBase
	Tx         txRow
	Deliveries []txDelivery
	History    []txStep
}

// txStep is one step of a transaction's history as the portal shows it.
type txStep struct{ At, What string }

// txHistory is what is known of a transaction's course: its quote, then
// each event published for it (the first delivery of each event name, to
// whichever webhook), oldest first. The store keeps a swap's current
// status, not its transitions; the events are those transitions as the
// partner was told of them.
func txHistory(a *account.Activity, recs []*webhook.DeliveryRecord) []txStep {
	steps := []txStep{{At: isoTime(a.CreatedAt), What: "quoted"}}
	seen := map[string]bool{}
	slices.SortFunc(recs, func(x, y *webhook.DeliveryRecord) int { return x.CreatedAt.Compare(y.CreatedAt) })
	for _, d := range recs {
		if !seen[d.Event] {
			seen[d.Event] = true
			steps = append(steps, txStep{At: isoTime(d.CreatedAt), What: d.Event + " published"})
		}
	}
	return steps
}

type txDelivery struct {
	WebhookID, ID, Event, State, UpdatedAt string
	Attempts                               int
}

// maxTxScan bounds the lines read to find one transaction by id.
const maxTxScan = 20_000

func (s *Server) portalTransaction(r *Request, ps *portalSession) error {
	id, _ := r.Ctx.UserValue("id").(string)
	notFound := &pageRefusal{status: fasthttp.StatusNotFound, title: "Transaction not found",
		message: "There is no transaction " + id + " in your account.", back: PortalPath + "/transactions"}
	if id == "" || len(id) > 128 {
		return notFound
	}
	ctx := r.Context()
	q := account.ActivityQuery{Limit: account.MaxActivityLimit}
	var found *account.Activity
	for read := 0; found == nil && read < maxTxScan; {
		acts, next, err := s.deps.Accounts.Activities(ctx, ps.partner.ID, q)
		if err != nil {
			return fmt.Errorf("edge: portal transaction: %w", err)
		}
		for _, a := range acts {
			if a.ID == id {
				found = a
				break
			}
		}
		read += len(acts)
		if next == "" {
			break
		}
		q.Cursor = next
	}
	if found == nil {
		return notFound
	}
	p := transactionPage{pageBase: s.base(r, ps, "Transaction "+id, "transactions"), Tx: s.txRow(found)}
	hooks, err := s.deps.Webhooks.Registrations.Webhooks(ctx, ps.partner.ID)
	if err != nil {
		return fmt.Errorf("edge: portal transaction webhooks: %w", err)
	}
	needle := []byte(`"` + id + `"`)
	var matched []*webhook.DeliveryRecord
	for _, w := range hooks {
		recs, err := s.deps.Webhooks.Registrations.Deliveries(ctx, ps.partner.ID, w.ID, maxDeliveriesListed)
		if err != nil {
			return fmt.Errorf("edge: portal transaction deliveries: %w", err)
		}
		for _, d := range recs {
			if bytes.Contains(d.Body, needle) {
				matched = append(matched, d)
				p.Deliveries = append(p.Deliveries, txDelivery{WebhookID: w.ID, ID: d.ID, Event: d.Event, State: d.State,
					UpdatedAt: isoTime(d.UpdatedAt), Attempts: d.Attempt})
			}
		}
	}
	p.History = txHistory(found, matched)
	return s.writePortal(r, statusOK, "transaction", p)
}

type keyPage struct {
	pageBase
	RotatedAt string
	NewKey    string
	// CanSetOrigins shows the browser origins' form; Origins is its text,
	// one origin a line, and OriginsError a refusal of what was sent.
	CanSetOrigins bool
	Origins       string
	OriginsError  string
}

// keyPageOf is the key page of a signed-in partner.
func (s *Server) keyPageOf(r *Request, ps *portalSession) (keyPage, error) {
	at, err := s.deps.Portal.Store.KeyRotatedAt(r.Context(), ps.partner.ID)
	if err != nil {
		return keyPage{}, fmt.Errorf("edge: key rotation date: %w", err)
	}
	return s.keyPageAt(r, ps, at), nil
}

// keyPageAt is the key page of a partner whose key was last rotated at
// (zero: never).
func (s *Server) keyPageAt(r *Request, ps *portalSession, at time.Time) keyPage {
	p := keyPage{pageBase: s.base(r, ps, "API key", "key"), CanSetOrigins: s.deps.Portal.Origins != nil,
		Origins: strings.Join(ps.partner.AllowedOrigins, "\n")}
	if !at.IsZero() {
		p.RotatedAt = at.UTC().Format("2006-01-02 15:04 UTC")
	}
	return p
}

// portalSetOrigins replaces the partner's allowedOrigins with the form's,
// one a line (or separated by commas or spaces), checked as the operator's
// are; a refusal shows the form again with the message, naming
// allowedOrigins, and what was typed.
func (s *Server) portalSetOrigins(r *Request, ps *portalSession) error {
	text := string(r.Ctx.PostArgs().Peek("origins"))
	list, err := account.CheckAllowedOrigins(strings.FieldsFunc(text, func(c rune) bool {
		return c == '\n' || c == '\r' || c == ',' || c == ' ' || c == '\t'
	}))
	if err != nil {
		p, perr := s.keyPageOf(r, ps)
		if perr != nil {
			return perr
		}
		p.Origins, p.OriginsError = text, "allowedOrigins: "+err.Error()
		return s.writePortal(r, fasthttp.StatusBadRequest, "key", p)
	}
	if err := s.deps.Portal.Origins.SetAllowedOrigins(r.Context(), ps.partner.ID, list); err != nil {
		return fmt.Errorf("edge: portal set origins: %w", err)
	}
	s.InvalidatePartner(ps.partner.ID)
	s.log.Info("portal origins set", slog.String("requestId", string(r.ID[:])), slog.String("partner", ps.partner.ID),
		slog.Int("origins", len(list)))
	s.redirect(r, PortalPath+"/key?done=origins-set#origins")
	return nil
}

func (s *Server) portalKey(r *Request, ps *portalSession) error {
	p, err := s.keyPageOf(r, ps)
	if err != nil {
		return err
	}
	return s.writePortal(r, statusOK, "key", p)
}

// portalRotateKey rotates the key and shows the new one, once, in the
// answer to the form (never in a URL). The rotation ends every session of
// the partner; this browser gets a new one.
func (s *Server) portalRotateKey(r *Request, ps *portalSession) error {
	key, err := s.deps.Portal.Keys.RotateKey(r.Context(), ps.partner.ID)
	if err != nil {
		return fmt.Errorf("edge: rotate key: %w", err)
	}
	s.InvalidatePartner(ps.partner.ID)
	s.log.Info("portal key rotated", slog.String("requestId", string(r.ID[:])), slog.String("partner", ps.partner.ID))
	st := s.deps.Portal.Store
	if _, err := st.EndPartnerSessions(r.Context(), ps.partner.ID, ""); err != nil {
		return fmt.Errorf("edge: end sessions after rotation: %w", err)
	}
	p, err := st.Partner(r.Context(), ps.partner.ID)
	if err != nil {
		return fmt.Errorf("edge: read rotated partner: %w", err)
	}
	if err := s.openSession(r, p); err != nil {
		return err
	}
	se, err := st.Session(r.Context(), portalSessionDigestFromCookie(r))
	if err != nil {
		return fmt.Errorf("edge: read new session: %w", err)
	}
	// The key is rotated: a failed read of the date must not hide it.
	at, _ := st.KeyRotatedAt(r.Context(), p.ID)
	page := s.keyPageAt(r, &portalSession{s: se, partner: p}, at)
	page.NewKey = key
	return s.writePortal(r, statusOK, "key", page)
}

// portalSessionDigestFromCookie is the digest of the session cookie this
// answer sets.
func portalSessionDigestFromCookie(r *Request) string {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(portalCookie)
	if r.Ctx.Response.Header.Cookie(c) {
		return portal.SessionDigest(string(c.Value()))
	}
	return ""
}

type walletsPage struct {
	pageBase
	Wallets    []feeWalletView
	Ecosystems []string
	Missing    []string
	Error      string
	Ecosystem  string
	Address    string
}

func (s *Server) walletsPage(r *Request, ps *portalSession) (walletsPage, error) {
	ws, err := s.deps.Accounts.FeeWallets(r.Context(), ps.partner.ID)
	if err != nil {
		return walletsPage{}, fmt.Errorf("edge: portal wallets: %w", err)
	}
	p := walletsPage{pageBase: s.base(r, ps, "Fee wallets", "wallets"), Ecosystems: account.Ecosystems()}
	have := map[string]bool{}
	for _, w := range ws {
		have[w.Ecosystem] = true
		p.Wallets = append(p.Wallets, feeWalletView{Ecosystem: w.Ecosystem, Address: w.Address, CreatedAt: isoTime(w.CreatedAt), UpdatedAt: isoTime(w.UpdatedAt)})
	}
	for _, e := range ps.partner.EnabledEcosystems {
		if !have[e] {
			p.Missing = append(p.Missing, e)
		}
	}
	return p, nil
}

func (s *Server) portalWallets(r *Request, ps *portalSession) error {
	p, err := s.walletsPage(r, ps)
	if err != nil {
		return err
	}
	return s.writePortal(r, statusOK, "wallets", p)
}

// portalPutWallet adds or replaces a wallet with the API's validation and
// messages (PUT /v1/partner/me/fee-wallets); a refusal shows the form again
// with the message and what was typed.
func (s *Server) portalPutWallet(r *Request, ps *portalSession) error {
	eco := strings.TrimSpace(string(r.Ctx.PostArgs().Peek("ecosystem")))
	addr := strings.TrimSpace(string(r.Ctx.PostArgs().Peek("address")))
	msg := ""
	if e := ecosystemParam("ecosystem", eco); e != nil {
		msg = e.Message
	} else if addr == "" {
		msg = "address is required"
	} else if err := account.ValidateFeeWallet(eco, addr); err != nil {
		msg = "address is not a valid " + eco + " fee wallet: " + err.Error()
	}
	if msg != "" {
		p, err := s.walletsPage(r, ps)
		if err != nil {
			return err
		}
		p.Error, p.Ecosystem, p.Address = msg, eco, addr
		return s.writePortal(r, fasthttp.StatusBadRequest, "wallets", p)
	}
	if err := s.deps.Accounts.PutFeeWallet(r.Context(), ps.partner.ID, eco, addr); err != nil {
		return fmt.Errorf("edge: portal put wallet: %w", err)
	}
	s.redirect(r, PortalPath+"/wallets?done=wallet-saved")
	return nil
}

func (s *Server) portalDeleteWallet(r *Request, ps *portalSession) error {
	eco, _ := r.Ctx.UserValue("ecosystem").(string)
	if e := ecosystemParam("ecosystem", eco); e != nil {
		return &pageRefusal{status: fasthttp.StatusBadRequest, title: "Not removed", message: e.Message, back: PortalPath + "/wallets"}
	}
	err := s.deps.Accounts.DeleteFeeWallet(r.Context(), ps.partner.ID, eco)
	if errors.Is(err, account.ErrNotFound) {
		return &pageRefusal{status: fasthttp.StatusNotFound, title: "Not removed",
			message: "no fee wallet is registered for " + eco, back: PortalPath + "/wallets"}
	}
	if err != nil {
		return fmt.Errorf("edge: portal delete wallet: %w", err)
	}
	s.redirect(r, PortalPath+"/wallets?done=wallet-gone")
	return nil
}

type hookRow struct {
	webhookView
	Failing  bool
	LastSeen string
}

type webhooksPage struct {
	pageBase
	Hooks              []hookRow
	Events             []string
	Error, URL, Secret string
	Created            *webhookView
	CanAdd             bool
}

func (s *Server) webhooksPage(r *Request, ps *portalSession) (webhooksPage, error) {
	ctx := r.Context()
	hooks, err := s.deps.Webhooks.Registrations.Webhooks(ctx, ps.partner.ID)
	if err != nil {
		return webhooksPage{}, fmt.Errorf("edge: portal webhooks: %w", err)
	}
	p := webhooksPage{pageBase: s.base(r, ps, "Webhooks", "webhooks"), Events: webhook.Events(), CanAdd: len(hooks) < webhook.MaxPerPartner}
	for _, w := range hooks {
		recs, err := s.deps.Webhooks.Registrations.Deliveries(ctx, ps.partner.ID, w.ID, maxDeliveriesListed)
		if err != nil {
			return webhooksPage{}, fmt.Errorf("edge: portal webhook deliveries: %w", err)
		}
		row := hookRow{webhookView: viewWebhook(w, true), Failing: webhook.Failing(recs, r.Now)}
		if len(recs) > 0 {
			row.LastSeen = recs[0].State + " " + isoTime(recs[0].UpdatedAt)
		}
		p.Hooks = append(p.Hooks, row)
	}
	return p, nil
}

func (s *Server) portalWebhooks(r *Request, ps *portalSession) error {
	p, err := s.webhooksPage(r, ps)
	if err != nil {
		return err
	}
	return s.writePortal(r, statusOK, "webhooks", p)
}

// portalCreateWebhook registers a webhook with the API's checks and
// messages (POST /v1/partner/webhooks); the portal draws its signing
// secret and shows it once, in the answer to the form.
func (s *Server) portalCreateWebhook(r *Request, ps *portalSession) error {
	args := r.Ctx.PostArgs()
	rawURL := strings.TrimSpace(string(args.Peek("url")))
	seen := map[string]bool{}
	var events []string
	for _, v := range args.PeekMulti("events") {
		e := string(v)
		if !webhook.ValidEvent(e) {
			events = nil
			seen["!"] = true
			break
		}
		if !seen[e] {
			seen[e] = true
			events = append(events, e)
		}
	}
	msg := ""
	switch {
	case rawURL == "":
		msg = "url is required"
	case seen["!"]:
		msg = "unknown event; choose among the listed ones"
	case len(events) == 0:
		msg = "events must name at least one event"
	default:
		ctx, cancel := context.WithTimeout(r.Context(), urlCheckTimeout)
		err := s.deps.Webhooks.Delivery.CheckURL(ctx, rawURL)
		cancel()
		if err != nil {
			msg = "url refused: " + err.Error()
		}
	}
	var w *webhook.Registration
	if msg == "" {
		secret, err := s.randomToken()
		if err != nil {
			return err
		}
		w = &webhook.Registration{PartnerID: ps.partner.ID, URL: rawURL, Events: events, Secret: "whsec_" + secret, Active: true}
		err = s.deps.Webhooks.Registrations.CreateWebhook(r.Context(), w)
		switch {
		case errors.Is(err, webhook.ErrLimit):
			msg = fmt.Sprintf("at most %d webhooks per partner; delete one first", webhook.MaxPerPartner)
		case err != nil:
			return fmt.Errorf("edge: portal create webhook: %w", err)
		}
	}
	p, err := s.webhooksPage(r, ps)
	if err != nil {
		return err
	}
	if msg != "" {
		p.Error, p.URL = msg, rawURL
		return s.writePortal(r, fasthttp.StatusBadRequest, "webhooks", p)
	}
	v := viewWebhook(w, false)
	p.Created, p.Secret = &v, w.Secret
	return s.writePortal(r, fasthttp.StatusCreated, "webhooks", p)
}

func (s *Server) portalDeleteWebhook(r *Request, ps *portalSession) error {
	id, _ := r.Ctx.UserValue("id").(string)
	err := s.deps.Webhooks.Registrations.DeleteWebhook(r.Context(), ps.partner.ID, id)
	if errors.Is(err, account.ErrNotFound) {
		return portalHookNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("edge: portal delete webhook: %w", err)
	}
	s.redirect(r, PortalPath+"/webhooks?done=hook-deleted")
	return nil
}

func portalHookNotFound(id string) *pageRefusal {
	return &pageRefusal{status: fasthttp.StatusNotFound, title: "Webhook not found",
		message: "There is no webhook " + id + " in your account.", back: PortalPath + "/webhooks"}
}

func (s *Server) portalTestWebhook(r *Request, ps *portalSession) error {
	id, _ := r.Ctx.UserValue("id").(string)
	_, err := s.deps.Webhooks.Delivery.SendTest(r.Context(), ps.partner.ID, id)
	if errors.Is(err, account.ErrNotFound) {
		return portalHookNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("edge: portal test webhook: %w", err)
	}
	s.redirect(r, PortalPath+"/webhooks/"+url.PathEscape(id)+"?done=test-sent")
	return nil
}

type webhookPage struct {
	pageBase
	Hook       webhookView
	Failing    bool
	Deliveries []portalDelivery
	Pending    bool
}

type portalDelivery struct {
	deliveryView
	Resendable bool
}

func (s *Server) portalWebhook(r *Request, ps *portalSession) error {
	id, _ := r.Ctx.UserValue("id").(string)
	ctx := r.Context()
	w, err := s.findHook(ctx, ps.partner.ID, id)
	if err != nil {
		return err
	}
	recs, err := s.deps.Webhooks.Registrations.Deliveries(ctx, ps.partner.ID, id, maxDeliveriesListed)
	if err != nil {
		return fmt.Errorf("edge: portal deliveries: %w", err)
	}
	p := webhookPage{pageBase: s.base(r, ps, "Webhook "+id, "webhooks"), Hook: viewWebhook(w, true), Failing: webhook.Failing(recs, r.Now)}
	for _, d := range recs {
		p.Deliveries = append(p.Deliveries, portalDelivery{deliveryView: viewDelivery(d), Resendable: webhook.Resendable(d.State)})
		if d.State == webhook.DeliveryPending || d.State == webhook.DeliveryRetrying {
			p.Pending = true
		}
	}
	return s.writePortal(r, statusOK, "webhook", p)
}

func (s *Server) findHook(ctx context.Context, partnerID, id string) (*webhook.Registration, error) {
	hooks, err := s.deps.Webhooks.Registrations.Webhooks(ctx, partnerID)
	if err != nil {
		return nil, fmt.Errorf("edge: portal webhooks: %w", err)
	}
	for _, w := range hooks {
		if w.ID == id {
			return w, nil
		}
	}
	return nil, portalHookNotFound(id)
}

func (s *Server) portalResend(r *Request, ps *portalSession) error {
	id, _ := r.Ctx.UserValue("id").(string)
	did, _ := r.Ctx.UserValue("deliveryId").(string)
	_, resent, err := s.deps.Webhooks.Delivery.Resend(r.Context(), ps.partner.ID, id, did)
	switch {
	case errors.Is(err, account.ErrNotFound):
		return &pageRefusal{status: fasthttp.StatusNotFound, title: "Delivery not found",
			message: "There is no delivery " + did + " of webhook " + id + " in your account.", back: PortalPath + "/webhooks"}
	case errors.Is(err, webhook.ErrNotResendable):
		return &pageRefusal{status: fasthttp.StatusConflict, title: "Not resent",
			message: "This delivery was recorded before payloads were kept, so it cannot be sent again.", back: PortalPath + "/webhooks/" + id}
	case err != nil:
		return fmt.Errorf("edge: portal resend: %w", err)
	}
	done := "resent"
	if !resent {
		done = "not-resent"
	}
	s.redirect(r, PortalPath+"/webhooks/"+url.PathEscape(id)+"?done="+done)
	return nil
}
