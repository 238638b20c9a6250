package edge

import (
	"context"
	"encoding/hex"
	"math/big"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/actors/engine"
	"github.com/swapgate/swapgate/persistence"
	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
)

// QuoteService is the quote engine as the edge sees it.
type QuoteService interface {
	Quote(ctx context.Context, req *quote.Request, p *persistence.Partner) (*engine.Issued, error)
	Routes(ctx context.Context, req *quote.Request, p *persistence.Partner) ([]*quote.Route, error)
	Deadline() time.Duration
}

var _ QuoteService = (*engine.Quoter)(nil)

// ledgerGrace is how long past the race deadline a quote may take to make
// its partner's ledger row durable.
const ledgerGrace = 5 * time.Second

func (s *Server) quoteRoutes() {
	s.Handle("GET", "/v1/quote", route{bucket: BucketHeavy, name: "quote"}, s.quote)
	s.Handle("GET", "/v1/routes", route{bucket: BucketHeavy, name: "routes"}, s.routesEndpoint)
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
	}
}

// quote answers GET /v1/quote with the best route, in the shape its
// provider and variant call for.
func (s *Server) quote(r *Request) error {
	req, perr := quote.Parse(s.deps.Registry, s.deps.Tools, quoteParams(r.Ctx.QueryArgs()))
	if perr != nil {
		return perr
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.deps.Quotes.Deadline()+ledgerGrace)
	defer cancel()
	is, err := s.deps.Quotes.Quote(ctx, req, r.Partner)
	if err != nil {
		return err
	}
	switch is.Route.Shape {
	case quote.ShapeDirect, quote.ShapeMultiStep:
		writeJSON(r, statusOK, quoteResponse{Quote: is.Route.Payload, Provider: is.Provider, FeeBps: is.FeeBps,
			IsDryQuote: req.Dry, ExpiresAt: is.ExpiresAt.Unix()})
	default:
		beginData(r, statusOK)
		r.buf = s.appendQuoteResponse(r.buf, req, is.Route, is.Provider, is.FeeBps, is.ExpiresAt.Unix())
		endData(r)
	}
	return nil
}

type quoteResponse struct {
	Quote      any    `json:"quote"`
	Provider   string `json:"provider"`
	FeeBps     int    `json:"feeBps"`
	IsDryQuote bool   `json:"isDryQuote"`
	ExpiresAt  int64  `json:"expiresAt"`
}

type actionToken struct {
	Address  string `json:"address"`
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
	PriceUSD string `json:"priceUSD"`
}

type gasCostJSON struct {
	Type      string `json:"type"`
	Price     string `json:"price,omitempty"`
	Estimate  string `json:"estimate,omitempty"`
	Limit     string `json:"limit,omitempty"`
	Amount    string `json:"amount"`
	AmountUSD string `json:"amountUSD"`
	Token     struct {
		Address  string `json:"address"`
		Symbol   string `json:"symbol"`
		Decimals uint8  `json:"decimals"`
	} `json:"token"`
}

type feeCostJSON struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Amount      string `json:"amount"`
	AmountUSD   string `json:"amountUSD"`
	Percentage  string `json:"percentage"`
	Included    bool   `json:"included"`
	Token       *struct {
		Address  string `json:"address"`
		Symbol   string `json:"symbol"`
		Decimals uint8  `json:"decimals"`
	} `json:"token,omitempty"`
}

type txJSON struct {
	To       string `json:"to"`
	From     string `json:"from,omitempty"`
	Data     string `json:"data"`
	Value    string `json:"value"`
	ChainID  uint64 `json:"chainId"`
	GasLimit string `json:"gasLimit"`
	GasPrice string `json:"gasPrice,omitempty"`
}

// standardQuote is Shape A of the specification.
type standardQuote struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Tool        string `json:"tool"`
	ToolDetails struct {
		Key  string `json:"key"`
		Name string `json:"name"`
	} `json:"toolDetails"`
	Action struct {
		FromChainID uint64      `json:"fromChainId"`
		ToChainID   uint64      `json:"toChainId"`
		FromToken   actionToken `json:"fromToken"`
		ToToken     actionToken `json:"toToken"`
		FromAmount  string      `json:"fromAmount"`
		FromAddress string      `json:"fromAddress"`
		ToAddress   string      `json:"toAddress"`
		Slippage    float64     `json:"slippage"`
	} `json:"action"`
	Estimate struct {
		Tool              string        `json:"tool"`
		FromAmount        string        `json:"fromAmount"`
		FromAmountUSD     string        `json:"fromAmountUSD"`
		ToAmount          string        `json:"toAmount"`
		ToAmountUSD       string        `json:"toAmountUSD"`
		ToAmountMin       string        `json:"toAmountMin"`
		ApprovalAddress   string        `json:"approvalAddress"`
		GasCosts          []gasCostJSON `json:"gasCosts"`
		FeeCosts          []feeCostJSON `json:"feeCosts"`
		ExecutionDuration int           `json:"executionDuration"`
	} `json:"estimate"`
	TransactionRequest *txJSON  `json:"transactionRequest,omitempty"`
	DepositAddress     string   `json:"depositAddress,omitempty"`
	DepositMemo        string   `json:"depositMemo,omitempty"`
	ExpiresAt          int64    `json:"expiresAt"`
	Tags               []string `json:"tags,omitempty"`
}

// shapeA renders a route in Shape A.
func (s *Server) shapeA(req *quote.Request, rt *quote.Route, expiresAt int64) *standardQuote {
	q := &standardQuote{ID: req.ID, Type: rt.StepType, Tool: rt.Tool, ExpiresAt: expiresAt,
		DepositAddress: rt.DepositAddress, DepositMemo: rt.DepositMemo}
	q.ToolDetails.Key, q.ToolDetails.Name = rt.Tool, rt.ToolName
	a := &q.Action
	a.FromChainID, a.ToChainID = req.From.ID, req.To.ID
	a.FromToken = s.actionToken(req.FromToken)
	a.ToToken = s.actionToken(req.ToToken)
	a.FromAmount, a.FromAddress, a.ToAddress, a.Slippage = req.FromAmount.String(), req.FromAddress, req.ToAddress, req.Slippage
	e := &q.Estimate
	e.Tool = rt.Tool
	e.FromAmount, e.ToAmount, e.ToAmountMin = decStr(rt.FromAmount), decStr(rt.ToAmount), decStr(rt.ToAmountMin)
	e.FromAmountUSD, e.ToAmountUSD = usd(rt.FromAmountUSD), usd(rt.ToAmountUSD)
	e.ApprovalAddress = rt.ApprovalAddress
	e.ExecutionDuration = rt.ExecutionDuration
	e.GasCosts = make([]gasCostJSON, 0, len(rt.GasCosts))
	for _, g := range rt.GasCosts {
		gj := gasCostJSON{Type: g.Type, Price: decStr(g.Price), Amount: decStr(g.Amount), AmountUSD: usd(g.AmountUSD)}
		if g.Estimate > 0 {
			gj.Estimate = strconv.FormatUint(g.Estimate, 10)
		}
		if g.Limit > 0 {
			gj.Limit = strconv.FormatUint(g.Limit, 10)
		}
		if g.Token != nil {
			gj.Token.Address, gj.Token.Symbol, gj.Token.Decimals = g.Token.Address, g.Token.Symbol, g.Token.Decimals
		}
		e.GasCosts = append(e.GasCosts, gj)
	}
	e.FeeCosts = make([]feeCostJSON, 0, len(rt.FeeCosts))
	for _, f := range rt.FeeCosts {
		fj := feeCostJSON{Name: f.Name, Description: f.Description, Amount: decStr(f.Amount), AmountUSD: usd(f.AmountUSD),
			Percentage: strconv.FormatFloat(f.Percentage, 'f', -1, 64), Included: f.Included}
		if f.Token != nil {
			fj.Token = &struct {
				Address  string `json:"address"`
				Symbol   string `json:"symbol"`
				Decimals uint8  `json:"decimals"`
			}{f.Token.Address, f.Token.Symbol, f.Token.Decimals}
		}
		e.FeeCosts = append(e.FeeCosts, fj)
	}
	if tx := rt.Tx; tx != nil {
		q.TransactionRequest = &txJSON{To: tx.To, From: tx.From, Data: "0x" + hex.EncodeToString(tx.Data),
			Value: hexBig(tx.Value), ChainID: tx.ChainID, GasLimit: "0x" + strconv.FormatUint(tx.GasLimit, 16)}
		if tx.GasPrice != nil {
			q.TransactionRequest.GasPrice = hexBig(tx.GasPrice)
		}
	}
	return q
}

func (s *Server) actionToken(t *registry.Token) actionToken {
	at := actionToken{Address: t.Address, Symbol: t.Symbol, Decimals: t.Decimals, PriceUSD: t.PriceUSD}
	if snap, ok := s.deps.RefData.Prices(t.ChainID); ok {
		if p, ok := snap.ByAddress[lowerASCII(t.Address)]; ok {
			at.PriceUSD = formatUSD(p)
		}
	}
	return at
}

func decStr(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}

func hexBig(v *big.Int) string {
	if v == nil || v.Sign() == 0 {
		return "0x0"
	}
	return "0x" + v.Text(16)
}

// usd renders a USD figure: two decimals from a dollar up, six below.
func usd(v float64) string {
	if v >= 1 || v <= -1 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}
