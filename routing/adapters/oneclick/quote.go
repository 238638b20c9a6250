package oneclick

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"time"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Tool identity of intents routes.
const (
	Tool     = "near-intents"
	ToolName = "NEAR Intents"
	StepType = "intents"
)

const (
	// depositWindow is how long a deposit address stays valid after a quote.
	depositWindow = 10 * time.Minute
	// maxQuoteWait bounds how long 1Click may wait for solvers' quotes, and
	// waitMargin is the part of the budget kept for the exchange itself.
	maxQuoteWait = 3 * time.Second
	waitMargin   = 500 * time.Millisecond
	stellarCode  = "stellar"
)

// ExactOutputUnsupported is "": 1Click quotes exact outputs itself
// (swapType EXACT_OUTPUT: amount is the output wanted, and the answer's
// amountIn the deposit it needs, slippage applied to the input side; any
// excess deposit goes back to refundTo).
func (c *Client) ExactOutputUnsupported(*quote.Request) string { return "" }

// RefundToUnsupported is "": the quote's refund address is 1Click's
// refundTo, where a deposit that cannot be swapped (and an exact-output
// deposit's excess) is returned.
func (c *Client) RefundToUnsupported(*quote.Request) string { return "" }

var (
	_ quote.ExactOutputQuoter = (*Client)(nil)
	_ quote.RefundToQuoter    = (*Client)(nil)
)

// QuoteLeg asks 1Click for a quote and maps it to a route. The leg is
// ignored: solvers compete upstream.
func (c *Client) QuoteLeg(ctx context.Context, req *quote.Request, _ string) (*quote.Route, error) {
	body, err := c.quoteBody(ctx, req)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, apierr.New(apierr.Internal, "encode intents quote request").Wrap(err)
	}
	r, err := c.hc.Do(ctx, http.MethodPost, c.base+"/v0/quote", raw)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		return nil, responseError(r)
	}
	var resp wireQuoteResponse
	if err := json.Unmarshal(r.Body, &resp); err != nil {
		return nil, upstream.BadAnswer("decode quote: %w", err)
	}
	return c.mapQuote(req, body, &resp.Quote)
}

// quoteBody builds the /v0/quote request. A request without a recipient
// (dry) or whose recipient cannot receive (indicative) asks for a dry quote,
// which reserves no deposit address.
func (c *Client) quoteBody(ctx context.Context, req *quote.Request) (*wireQuoteRequest, error) {
	origin, err := c.assetID(req.From, req.FromToken)
	if err != nil {
		return nil, noAsset(err)
	}
	dest, err := c.assetID(req.To, req.ToToken)
	if err != nil {
		return nil, noAsset(err)
	}
	now := req.Now
	if now.IsZero() {
		now = c.now()
	}
	// An exact-output request sends the output wanted as the amount. A
	// refund (of a deposit that cannot be swapped, or of an exact-output
	// deposit's excess) goes to the request's refundTo, fromAddress when
	// it named none.
	swapType, amount := swapExactInput, req.FromAmount
	if req.ExactOutput() {
		swapType, amount = swapExactOutput, req.ToAmount
	}
	body := &wireQuoteRequest{
		Dry:                req.Dry || req.Indicative,
		SwapType:           swapType,
		SlippageTolerance:  int(math.Round(req.Slippage * 10_000)),
		OriginAsset:        origin,
		DepositType:        depositOriginChain,
		DestinationAsset:   dest,
		Amount:             amount.String(),
		RefundTo:           req.RefundAddress(),
		RefundType:         refundOriginChain,
		Recipient:          req.ToAddress,
		RecipientType:      recipientDestination,
		Deadline:           now.Add(depositWindow).UTC().Format("2006-01-02T15:04:05.000Z"),
		QuoteWaitingTimeMs: int(quoteWait(ctx, c.hc.Timeout()) / time.Millisecond),
		Referral:           c.cfg.Integrator,
	}
	if req.From.IntentsBlockchain == stellarCode {
		// Stellar deposits are told apart by memo only.
		body.DepositMode = depositModeMemo
	}
	if chargesAppFee(req) {
		body.AppFees = []wireAppFee{{Recipient: req.FeeRecipient, Fee: req.FeeBps}}
	}
	return body, nil
}

// chargesAppFee reports whether 1Click is asked to collect the partner fee:
// it needs a recipient, so the anonymous tier (no fee wallet) sends none.
func chargesAppFee(req *quote.Request) bool { return req.FeeBps > 0 && req.FeeRecipient != "" }

// quoteWait is how long 1Click may spend gathering solver quotes: what is
// left of the call's budget (the earlier of ctx's deadline and the timeout)
// after a margin for the exchange, at most maxQuoteWait.
func quoteWait(ctx context.Context, timeout time.Duration) time.Duration {
	w := time.Until(httpjson.Deadline(ctx, timeout)) - waitMargin
	return max(0, min(w, maxQuoteWait))
}

// noAsset turns a missing asset id into a reasoned refusal: the intents
// provider cannot carry that token.
func noAsset(err error) error {
	return &quote.NoRoute{Provider: Name, Tool: Tool, Reason: "NO_POSSIBLE_ROUTE", Message: err.Error()}
}

// mapQuote turns 1Click's quote into a route, and on a firm quote builds the
// deposit transaction for EVM sources. Every field the route passes on is
// checked first (httpjson's answer checks): the amounts as 256-bit
// decimals, minAmountOut at most amountOut, and the deposit address, which
// a firm quote must carry, with the source chain's codec, since the client
// pays into it on that chain. A quote that fails one is refused whole.
func (c *Client) mapQuote(req *quote.Request, sent *wireQuoteRequest, q *wireQuote) (*quote.Route, error) {
	amountIn, err := upstream.Decimal("quote.amountIn", q.AmountIn)
	if err != nil {
		return nil, err
	}
	amountOut, err := upstream.Decimal("quote.amountOut", q.AmountOut)
	if err != nil {
		return nil, err
	}
	minOut, err := upstream.Decimal("quote.minAmountOut", q.MinAmountOut)
	if err != nil {
		return nil, err
	}
	if minOut.Cmp(amountOut) > 0 {
		return nil, upstream.BadAnswer("quote.minAmountOut: %s is more than amountOut %s", minOut, amountOut)
	}
	if !sent.Dry || q.DepositAddress != "" {
		if err := upstream.Address("quote.depositAddress", req.From.AddressFormat, q.DepositAddress); err != nil {
			return nil, err
		}
	}
	if req.ExactOutput() && minOut.Cmp(req.ToAmount) < 0 {
		return nil, &quote.NoRoute{Provider: Name, Tool: Tool, Reason: "NO_POSSIBLE_ROUTE",
			Message: "the intents exact-output quote guarantees " + minOut.String() + ", less than toAmount " + req.ToAmount.String()}
	}
	route := &quote.Route{
		Provider:          Name,
		Tool:              Tool,
		ToolName:          ToolName,
		StepType:          StepType,
		FromAmount:        amountIn,
		ToAmount:          amountOut,
		ToAmountMin:       minOut,
		PartnerFee:        new(big.Int),
		FromAmountUSD:     q.AmountInUSD.USD(),
		ToAmountUSD:       q.AmountOutUSD.USD(),
		ExecutionDuration: int(math.Round(q.TimeEstimate)),
		DepositAddress:    q.DepositAddress,
		DepositMemo:       q.DepositMemo,
		Shape:             quote.ShapeStandard,
	}
	if len(sent.AppFees) > 0 {
		route.PartnerFee = partnerFee(amountOut, req.FeeBps)
		route.FeeCosts = []quote.FeeCost{{
			Name:        "Partner Fee",
			Description: "Partner fee collected by NEAR Intents as an app fee (estimated in the destination token)",
			Amount:      route.PartnerFee,
			AmountUSD:   usdShare(route.PartnerFee, amountOut, route.ToAmountUSD),
			Percentage:  float64(req.FeeBps) / 10_000,
			Token:       req.ToToken,
			Included:    true,
		}}
	}
	route.PreFeeToAmount = new(big.Int).Add(route.ToAmount, route.PartnerFee)
	if !sent.Dry {
		if route.Tx, err = depositTx(req, q.DepositAddress, amountIn); err != nil {
			return nil, err
		}
	}
	return route, nil
}

// partnerFee estimates the app fee in destination units. 1Click takes the
// fee from the input before the swap, so amountOut is what the remaining
// (10000−bps)/10000 of the input bought; at the same rate the fee would have
// bought amountOut×bps/(10000−bps). This ignores price impact on so small a
// slice, which is well within a quote's precision.
func partnerFee(amountOut *big.Int, bps int) *big.Int {
	if bps <= 0 || bps >= 10_000 {
		return new(big.Int)
	}
	fee := new(big.Int).Mul(amountOut, big.NewInt(int64(bps)))
	return fee.Quo(fee, big.NewInt(int64(10_000-bps)))
}

// usdShare prices part of an amount at the whole amount's USD value.
func usdShare(part, whole *big.Int, wholeUSD float64) float64 {
	if whole.Sign() == 0 {
		return 0
	}
	r, _ := new(big.Rat).SetFrac(part, whole).Float64()
	return r * wholeUSD
}

// isEVM reports whether wallets on the chain sign EVM transactions.
func isEVM(ch *registry.Chain) bool { return ch.ChainType == registry.EVM }
