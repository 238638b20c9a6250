package edge

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// QuoteService is the quote engine as the edge sees it.
type QuoteService interface {
	Quote(ctx context.Context, req *quote.Request, p *account.Partner) (*quote.Issued, error)
	Routes(ctx context.Context, req *quote.Request, p *account.Partner) ([]*quote.Route, *quote.Timing, error)
	Deadline() time.Duration
}

// ledgerGrace is how long past the race deadline a quote may take to make
// its partner's ledger row durable.
const ledgerGrace = 5 * time.Second

func (s *Server) quoteRoutes() {
	s.Handle("GET", "/v1/quote", route{bucket: BucketHeavy, name: "quote"}, s.quote)
	s.Handle("GET", "/v1/routes", route{bucket: BucketHeavy, name: "routes"}, s.routesEndpoint)
	if s.deps.QuoteStream != nil {
		s.Handle("GET", "/v1/quote/stream", route{bucket: BucketHeavy, name: routeQuoteStream}, s.quoteStream)
	}
}

// quoteParams reads the quote parameters from the query string. The values
// alias the request's buffers: quote.Parse copies only what it keeps.
func quoteParams(args *fasthttp.Args) quote.Params {
	return quote.Params{
		FromChain: args.Peek("fromChain"), ToChain: args.Peek("toChain"),
		FromToken: args.Peek("fromToken"), ToToken: args.Peek("toToken"),
		FromAmount: args.Peek("fromAmount"), FromAddress: args.Peek("fromAddress"), ToAddress: args.Peek("toAddress"),
		Slippage: args.Peek("slippage"), Tools: args.Peek("tools"), DenyTools: args.Peek("denyTools"),
		PreferredTool: args.Peek("preferredTool"), Order: args.Peek("order"),
		MaxWaitMs: args.Peek("maxWaitMs"), MinWaitMs: args.Peek("minWaitMs"),
		ExpectedResults: args.Peek("expectedResults"), ReduceEveryMs: args.Peek("reduceEveryMs"),
		ToAmount: args.Peek("toAmount"), RefundTo: args.Peek("refundTo"),
		ApprovalAmount: args.Peek("approvalAmount"),
	}
}

// quote answers GET /v1/quote with the best route, in the shape its
// provider and variant call for.
func (s *Server) quote(r *Request) error {
	req, ctx, cancel, err := s.quoteRequest(r)
	if err != nil {
		return err
	}
	defer cancel()
	// The checks are read within the quote's deadline, counted from the
	// start of the race.
	checksBy := time.Now().Add(s.deps.Quotes.Deadline())
	is, err := s.deps.Quotes.Quote(ctx, req, r.Partner)
	if err != nil {
		return err
	}
	is = s.withPreflight(r.Context(), checksBy, req, is)
	beginData(r, statusOK)
	b, err := quote.AppendResponse(r.buf, s.livePrices, req, is)
	if err != nil {
		writeError(r, apierr.From(err))
		return nil
	}
	r.buf = b
	endData(r)
	return nil
}

// livePrices is the refdata price snapshot of a chain in the form quote
// responses read it.
func (s *Server) livePrices(chainID uint64) (map[string]float64, bool) {
	snap, ok := s.deps.RefData.Prices(chainID)
	return snap.ByAddress, ok
}

// quoteRequest parses the quote parameters shared by /v1/quote and
// /v1/routes and gives the engine its context: the race deadline plus the
// time a partner quote may take to make its records durable.
func (s *Server) quoteRequest(r *Request) (*quote.Request, context.Context, context.CancelFunc, error) {
	req, perr := quote.Parse(s.deps.Registry, s.deps.Tools, quoteParams(r.Ctx.QueryArgs()), s.deps.Quotes.Deadline())
	if perr != nil {
		return nil, nil, nil, perr
	}
	if req.Scenario, perr = s.sandboxScenario(r, scenario.Quote); perr != nil {
		return nil, nil, nil, perr
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.deps.Quotes.Deadline()+ledgerGrace)
	return req, ctx, cancel, nil
}
