package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// FeeWalletFinder finds a partner's fee wallet in one ecosystem.
type FeeWalletFinder interface {
	FeeWallet(ctx context.Context, partnerID, ecosystem string) (addr string, ok bool, err error)
}

// LedgerRecorder makes a partner quote's record durable.
type LedgerRecorder interface {
	Record(ctx context.Context, a *account.Activity) error
}

// TicketKeeper keeps the compact record of every issued quote for its
// lifetime (see package tickets).
type TicketKeeper interface {
	Keep(ctx context.Context, is *quote.Issued) error
	Ticket(ctx context.Context, id string) (*quote.Ticket, error)
	QuoteByDeposit(ctx context.Context, address, memo string) (string, error)
}

// Quoter is the quote service: it applies the fee policy, races the
// eligible providers, ranks what came back, records partner earnings
// durably, and keeps a ticket of every issued quote.
type Quoter struct {
	engine  *Engine
	ledger  LedgerRecorder
	wallets FeeWalletFinder
	tickets TicketKeeper
	now     func() time.Time
}

// FeeExempter is what a provider implements when some of its routes carry
// no fee by product decision (pulseroute's direct outbound USDCh → USDC
// bridge): such a request is quoted without a fee and needs no fee wallet.
// The quoter asks every provider the engine races that implements it.
type FeeExempter interface {
	FeeExempt(req *quote.Request) bool
}

// NewQuoter builds the service.
func NewQuoter(e *Engine, ledger LedgerRecorder, wallets FeeWalletFinder, tickets TicketKeeper, now func() time.Time) *Quoter {
	if now == nil {
		now = time.Now
	}
	return &Quoter{engine: e, ledger: ledger, wallets: wallets, tickets: tickets, now: now}
}

// Ticket returns the ticket of an issued quote whether or not it expired
// (tickets are kept a while past expiry), for flows that follow a quote
// after its deadline, such as a deposit that arrived late and is refunded.
func (q *Quoter) Ticket(ctx context.Context, id string) (*quote.Ticket, error) {
	t, err := q.tickets.Ticket(ctx, id)
	if errors.Is(err, account.ErrNotFound) {
		return nil, quote.ErrUnknown
	}
	return t, err
}

// QuoteByDeposit returns the id of the intents quote whose deposit target
// is address (and memo).
func (q *Quoter) QuoteByDeposit(ctx context.Context, address, memo string) (string, error) {
	return q.tickets.QuoteByDeposit(ctx, address, memo)
}

// Lookup returns the ticket of an issued quote that has not expired: a
// quote id never issued is quote.ErrUnknown, one past its expiresAt (its
// ticket kept a while after, or already swept) quote.ErrExpired.
func (q *Quoter) Lookup(ctx context.Context, id string) (*quote.Ticket, error) {
	t, err := q.tickets.Ticket(ctx, id)
	if errors.Is(err, account.ErrNotFound) {
		if at, ok := quote.IssuedAt(id); ok && q.now().After(at.Add(quote.TTL)) {
			return nil, quote.ErrExpired
		}
		return nil, quote.ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	if q.now().After(t.ExpiresAt) {
		return nil, quote.ErrExpired
	}
	return t, nil
}

// feeFree reports a request that a provider declares fee-exempt (see
// FeeExempter).
func (q *Quoter) feeFree(req *quote.Request) bool {
	if q.engine == nil {
		return false
	}
	for _, x := range q.engine.exempters {
		if x.FeeExempt(req) {
			return true
		}
	}
	return false
}

// applyFees sets the request's fee under the account fee policy and, for
// a fee-bearing partner quote, its fee wallet.
func (q *Quoter) applyFees(ctx context.Context, req *quote.Request, p *account.Partner) *apierr.Error {
	if p != nil {
		req.PartnerID = p.ID
	}
	eco := req.From.FeeEcosystem
	bps, needsWallet, ferr := account.SwapFee(p, eco, q.feeFree(req))
	if ferr != nil {
		if ferr.Code == apierr.EcosystemNotConfigured {
			ferr = ferr.With("fromChain", req.From.ID)
		}
		return ferr
	}
	req.FeeBps = bps
	if !needsWallet {
		return nil
	}
	addr, ok, err := q.wallets.FeeWallet(ctx, p.ID, eco)
	if err != nil {
		return apierr.New(apierr.ServiceUnavailable, "fee wallet lookup failed").Wrap(err)
	}
	if !ok {
		return account.WalletNotRegistered(eco)
	}
	req.FeeRecipient = addr
	return nil
}

// Quote answers GET /v1/quote: the best route under the request's order.
// It is Stream without a callback.
func (q *Quoter) Quote(ctx context.Context, req *quote.Request, p *account.Partner) (*quote.Issued, error) {
	return q.Stream(ctx, req, p, nil)
}

// Stream races like Quote and calls onRoute, on the calling goroutine, once per
// candidate route as its leg answers, already built (quote.Complete'd) — the same
// *quote.Route that /v1/routes would list; a route whose build fails is not passed.
// It returns the chosen quote exactly as Quote does (recorded in the ledger, ticket kept).
//
// With a nil onRoute, only the best-ranked route is built (and the next
// ones, should its build fail), as priced routes are meant to be.
func (q *Quoter) Stream(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
	var onLeg func(*quote.LegOutcome)
	if onRoute != nil {
		onLeg = func(o *quote.LegOutcome) {
			if o.Route == nil || o.Err != nil {
				return
			}
			if err := quote.Complete(ctx, req, o.Route); err != nil {
				// As completeBest would: the leg failed.
				o.Route, o.Err = nil, err
				return
			}
			onRoute(o.Route)
		}
	}
	routes, outcomes, end, err := q.race(ctx, req, p, onLeg)
	if err != nil {
		return nil, err
	}
	// A race ended by its caller's context (a streamed quote whose client
	// went away cancels it) issues nothing: no quote, no record, no ticket
	// for an answer nobody reads.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	best, err := q.completeBest(ctx, req, routes, outcomes)
	if err != nil {
		return nil, err
	}
	is := &quote.Issued{ID: req.ID, Request: req, Route: best, Provider: best.Provider, FeeBps: req.FeeBps,
		ExpiresAt: req.Now.Add(quote.TTL), Timing: quote.NewTiming(outcomes, end, best)}
	if err := q.Issue(ctx, is, p); err != nil {
		return nil, err
	}
	return is, nil
}

// Issue hands out a quote: every partner quote is on disk before it is
// answered (its activity, for stats and transactions, and, with a fee, its
// earnings row), and its ticket is kept, which is what execute and status
// find it by; a quote whose ticket could not be kept is not handed out.
func (q *Quoter) Issue(ctx context.Context, is *quote.Issued, p *account.Partner) error {
	if p != nil {
		if err := q.ledger.Record(ctx, activity(is.Request, is.Route)); err != nil {
			return apierr.New(apierr.ServiceUnavailable, "could not record the quote; retry").Wrap(err)
		}
	}
	if err := q.tickets.Keep(ctx, is); err != nil {
		return apierr.New(apierr.ServiceUnavailable, "could not keep the quote; retry").Wrap(err)
	}
	q.engine.Won(is.Route.Provider, is.Route.Tool)
	return nil
}

// Reprice prices an issued quote's route again, for an execute's price
// check: req is the quote's request parsed again (see
// quote.Ticket.RepriceParams), raced on the quote's provider alone, and the
// route of the quote's tool is built. The answer is a quote under a new id,
// not yet issued: the caller issues it (Issue) only if the client is to
// execute it instead. A provider or tool that no longer quotes the route
// is the race's failure, as for any quote.
func (q *Quoter) Reprice(ctx context.Context, req *quote.Request, p *account.Partner, provider, tool string) (*quote.Issued, error) {
	req.Repricing = true
	req.AllowTools, req.DenyTools, req.PreferredTool = map[string]bool{tool: true}, nil, tool
	routes, outcomes, end, err := q.raceOn(ctx, req, p, []string{provider}, nil)
	if err != nil {
		return nil, err
	}
	same := routes[:0]
	for _, r := range routes {
		if r.Tool == tool {
			same = append(same, r)
		}
	}
	if len(same) == 0 {
		// The provider answered, but not on the quote's tool: that route
		// is gone, whatever the provider's other tools offer.
		return nil, apierr.New(apierr.NoRouteFound, provider+" no longer quotes this route on "+tool).
			With("provider", provider).With("tool", tool)
	}
	best, err := q.completeBest(ctx, req, same, outcomes)
	if err != nil {
		return nil, err
	}
	return &quote.Issued{ID: req.ID, Request: req, Route: best, Provider: best.Provider, FeeBps: req.FeeBps,
		ExpiresAt: req.Now.Add(quote.TTL), Timing: quote.NewTiming(outcomes, end, best)}, nil
}

// Routes answers GET /v1/routes: every route that came back in time,
// ranked, and the race they came from (the first-ranked route's leg is the
// one its timing calls won). Routes are comparisons; no earnings are
// recorded for them.
func (q *Quoter) Routes(ctx context.Context, req *quote.Request, p *account.Partner) ([]*quote.Route, *quote.Timing, error) {
	routes, outcomes, end, err := q.race(ctx, req, p, nil)
	if err != nil {
		return nil, nil, err
	}
	built := routes[:0]
	failed := false
	for _, r := range routes {
		if err := quote.Complete(ctx, req, r); err != nil {
			failBuild(outcomes, r, err)
			failed = true
			continue
		}
		built = append(built, r)
	}
	if len(built) == 0 {
		return nil, nil, quote.Failure(req, outcomes)
	}
	if failed {
		quote.Rank(built, req.Order, req.PreferredTool)
	}
	return built, quote.NewTiming(outcomes, end, built[0]), nil
}

// completeBest builds the best-ranked route. A route whose build fails
// counts as that leg's error, as if the leg had failed, and the ranking
// of the others is redone without it.
func (q *Quoter) completeBest(ctx context.Context, req *quote.Request, routes []*quote.Route, outcomes []quote.LegOutcome) (*quote.Route, error) {
	for len(routes) > 0 {
		best := routes[0]
		err := quote.Complete(ctx, req, best)
		if err == nil {
			return best, nil
		}
		failBuild(outcomes, best, err)
		routes = routes[1:]
		quote.Rank(routes, req.Order, req.PreferredTool)
	}
	return nil, quote.Failure(req, outcomes)
}

// failBuild turns the outcome that produced r into a failure with err.
func failBuild(outcomes []quote.LegOutcome, r *quote.Route, err error) {
	for i := range outcomes {
		if outcomes[i].Route == r {
			outcomes[i].Route, outcomes[i].Err = nil, err
			return
		}
	}
}

func (q *Quoter) race(ctx context.Context, req *quote.Request, p *account.Partner, onLeg func(*quote.LegOutcome)) ([]*quote.Route, []quote.LegOutcome, quote.RaceEnd, error) {
	return q.raceOn(ctx, req, p, nil, onLeg)
}

// raceOn races the request's eligible providers, or only those of only
// that are eligible when only is given.
func (q *Quoter) raceOn(ctx context.Context, req *quote.Request, p *account.Partner, only []string, onLeg func(*quote.LegOutcome)) ([]*quote.Route, []quote.LegOutcome, quote.RaceEnd, error) {
	req.Now = q.now()
	req.ID = quote.NewID(req.Now)
	if err := q.applyFees(ctx, req, p); err != nil {
		return nil, nil, quote.RaceEnd{}, err
	}
	eligible := q.engine.eligible(req)
	if only != nil {
		eligible = slices.DeleteFunc(eligible, func(name string) bool { return !slices.Contains(only, name) })
	}
	outcomes, end := q.engine.Race(ctx, req, eligible, onLeg)
	routes := make([]*quote.Route, 0, len(outcomes))
	for _, o := range outcomes {
		if o.Route != nil && o.Err == nil {
			routes = append(routes, o.Route)
		}
	}
	if len(routes) == 0 {
		// An eligible provider the service does not run (live mode
		// without its upstream) was not raced; the failure says so.
		for _, name := range eligible {
			if !q.engine.Runs(name) {
				outcomes = append(outcomes, quote.NotConfigured(name))
			}
		}
		return nil, nil, end, quote.Failure(req, outcomes)
	}
	quote.Rank(routes, req.Order, req.PreferredTool)
	return routes, outcomes, end, nil
}

// activity is the partner's record of a quote, for stats and transactions,
// and, when the quote carried a partner fee, for earnings: the fee's share
// of the output, valued at the output's USD value, and the output token's
// USD price that valuation amounts to. A figure the route could not value
// (its price absent or too old) is recorded as unknown, never as a guess.
func activity(req *quote.Request, r *quote.Route) *account.Activity {
	a := &account.Activity{
		PartnerID: req.PartnerID, ID: req.ID, Kind: account.ActivityQuote, Status: account.ActivityQuoted,
		Provider: r.Provider, Tool: r.Tool, FromChain: req.From.ID, ToChain: req.To.ID,
		FromToken: req.FromToken.Address, ToToken: req.ToToken.Address,
		FromAmount: r.FromAmount.String(), ToAmount: r.ToAmount.String(), CreatedAt: req.Now,
	}
	if quote.KnownUSD(r.FromAmountUSD) {
		a.VolumeMicroUSD = account.MicroUSD(r.FromAmountUSD)
	} else {
		a.VolumeUSDUnknown = true
	}
	if r.PartnerFee == nil || r.PartnerFee.Sign() <= 0 {
		return a
	}
	a.Earning = &account.Earning{Ecosystem: req.From.FeeEcosystem, FeeToken: req.ToToken.Address,
		FeeAmount: r.PartnerFee.String(), State: account.EarningPending}
	if !quote.KnownUSD(r.ToAmountUSD) {
		a.FeeUSDUnknown = true
		return a
	}
	a.FeeMicroUSD = account.FeeMicroUSD(r.PartnerFee, r.ToAmount, r.ToAmountUSD)
	a.Earning.PriceUSD = account.UnitPriceUSD(r.ToAmount, req.ToToken.Decimals, r.ToAmountUSD)
	return a
}

// Deadline is the race deadline of the engine behind the quoter.
func (q *Quoter) Deadline() time.Duration { return q.engine.Deadline() }
