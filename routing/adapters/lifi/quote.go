package lifi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// ExactOutputUnsupported is "": LI.FI quotes exact outputs itself with
// GET /v1/quote/toAmount, which takes toAmount instead of fromAmount and
// answers the same Step with the fromAmount it needs, sized so that its
// toAmountMin meets toAmount.
func (c *Client) ExactOutputUnsupported(*quote.Request) string { return "" }

// LI.FI takes no refund address (its quote has no such parameter, and its
// bridges refund the sender), so the Client does not implement
// quote.RefundToQuoter: a request whose refundTo is not fromAddress leaves
// it out of the race with that reason.
var _ quote.ExactOutputQuoter = (*Client)(nil)

// QuoteLeg asks LI.FI for its best step and maps it to a route. The leg is
// ignored: LI.FI picks the tool. An exact-output request goes to
// /v1/quote/toAmount, and its answer must meet toAmount at its toAmountMin.
func (c *Client) QuoteLeg(ctx context.Context, req *quote.Request, _ string) (*quote.Route, error) {
	if txKind(req.From) == txNone {
		// LI.FI's transaction for such a source has no shape in the
		// contract: not asked, left out with the reason.
		return nil, &quote.NoRoute{Provider: Name, Reason: quote.ReasonTxUnrepresentable,
			Message: "the aggregator's transaction for a " + string(req.From.ChainType) + " source (" + req.From.Name + ") cannot be represented"}
	}
	q, err := c.quoteQuery(req)
	if err != nil {
		return nil, err
	}
	path := "/v1/quote?"
	if req.ExactOutput() {
		path = "/v1/quote/toAmount?"
	}
	r, err := c.hc.Do(ctx, http.MethodGet, c.base+path+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, responseError(r)
	}
	var step wireStep
	if err := json.Unmarshal(r.Body, &step); err != nil {
		return nil, upstream.BadAnswer("decode quote: %w", err)
	}
	route, err := c.mapStep(req, &step)
	if err != nil {
		return nil, err
	}
	if req.ExactOutput() && route.ToAmountMin.Cmp(req.ToAmount) < 0 {
		return nil, &quote.NoRoute{Provider: Name, Tool: step.Tool, Reason: "NO_POSSIBLE_ROUTE",
			Message: "the aggregator's exact-output route guarantees " + route.ToAmountMin.String() + ", less than toAmount " + req.ToAmount.String()}
	}
	if t := disallowedTool(req, &step); t != "" {
		// LI.FI's allow lists restrict one kind of tool at a time, so a
		// route may still use a tool of the other kind that the client did
		// not allow: refuse it here.
		return nil, &quote.NoRoute{Provider: Name, Tool: t, Reason: "NO_POSSIBLE_ROUTE",
			Message: "the aggregator's route uses " + t + ", which the request's tool filters exclude"}
	}
	return route, nil
}

// quoteQuery builds the /v1/quote query string. Slippage and the partner fee
// are fractions; RECOMMENDED is LI.FI's default and is not sent.
func (c *Client) quoteQuery(req *quote.Request) (url.Values, error) {
	q := url.Values{}
	q.Set("fromChain", strconv.FormatUint(req.From.ID, 10))
	q.Set("toChain", strconv.FormatUint(req.To.ID, 10))
	q.Set("fromToken", req.FromToken.Address)
	q.Set("toToken", req.ToToken.Address)
	if req.ExactOutput() {
		q.Set("toAmount", req.ToAmount.String())
	} else {
		q.Set("fromAmount", req.FromAmount.String())
	}
	q.Set("fromAddress", req.FromAddress)
	if req.ToAddress != "" {
		q.Set("toAddress", req.ToAddress)
	}
	if req.Slippage > 0 {
		q.Set("slippage", strconv.FormatFloat(req.Slippage, 'f', -1, 64))
	}
	if req.Order == quote.Fastest || req.Order == quote.Cheapest {
		q.Set("order", string(req.Order))
	}
	if c.cfg.Integrator != "" {
		q.Set("integrator", c.cfg.Integrator)
	}
	if req.FeeBps > 0 {
		q.Set("fee", strconv.FormatFloat(float64(req.FeeBps)/10_000, 'f', -1, 64))
	}
	if req.AllowTools != nil {
		bridges, exchanges := c.splitTools(req.AllowTools)
		if len(bridges) == 0 && len(exchanges) == 0 {
			return nil, &quote.NoRoute{Provider: Name, Reason: "NO_POSSIBLE_ROUTE",
				Message: "none of the allowed tools is an aggregator tool"}
		}
		setList(q, "allowBridges", bridges)
		setList(q, "allowExchanges", exchanges)
	}
	bridges, exchanges := c.splitTools(req.DenyTools)
	setList(q, "denyBridges", bridges)
	setList(q, "denyExchanges", exchanges)
	if req.PreferredTool != "" {
		bridges, exchanges := c.splitTools(map[string]bool{req.PreferredTool: true})
		setList(q, "preferBridges", bridges)
		setList(q, "preferExchanges", exchanges)
	}
	return q, nil
}

// splitTools sorts tool keys into LI.FI bridges and exchanges. Once
// LoadTools has run, keys LI.FI does not know are dropped (LI.FI refuses
// unknown keys); before that, every key goes to both lists.
func (c *Client) splitTools(set map[string]bool) (bridges, exchanges []string) {
	kinds := c.kinds.Load()
	for key, on := range set {
		if !on {
			continue
		}
		if kinds == nil {
			bridges, exchanges = append(bridges, key), append(exchanges, key)
			continue
		}
		switch (*kinds)[key] {
		case TypeBridge:
			bridges = append(bridges, key)
		case TypeDEX:
			exchanges = append(exchanges, key)
		}
	}
	sort.Strings(bridges)
	sort.Strings(exchanges)
	return bridges, exchanges
}

func setList(q url.Values, key string, list []string) {
	if len(list) > 0 {
		q.Set(key, strings.Join(list, ","))
	}
}

// disallowedTool returns the first tool of the step (or of its included
// swap and bridge steps) that the request's filters exclude, "" if none.
func disallowedTool(req *quote.Request, step *wireStep) string {
	if req.AllowTools == nil && len(req.DenyTools) == 0 {
		return ""
	}
	tools := []string{step.Tool}
	for _, s := range step.IncludedSteps {
		if s.Type == "swap" || s.Type == "cross" {
			tools = append(tools, s.Tool)
		}
	}
	for _, t := range tools {
		if t != "" && t != "lifi" && !req.ToolAllowed(t) {
			return t
		}
	}
	return ""
}

// mapStep turns LI.FI's step into a route, once every field the route
// passes on has been checked (httpjson's answer checks): the tool, the
// amounts (decimal, 256 bits, toAmountMin at most toAmount), the approval
// address of a token source, and the transaction a wallet is to sign. A
// step that fails one is refused whole; nothing of it reaches a client.
func (c *Client) mapStep(req *quote.Request, s *wireStep) (*quote.Route, error) {
	est := &s.Estimate
	if err := upstream.Required("tool", s.Tool); err != nil {
		return nil, err
	}
	fromAmount, err := upstream.Decimal("estimate.fromAmount", est.FromAmount)
	if err != nil {
		return nil, err
	}
	toAmount, err := upstream.Decimal("estimate.toAmount", est.ToAmount)
	if err != nil {
		return nil, err
	}
	toAmountMin, err := upstream.Decimal("estimate.toAmountMin", est.ToAmountMin)
	if err != nil {
		return nil, err
	}
	if toAmountMin.Cmp(toAmount) > 0 {
		return nil, upstream.BadAnswer("estimate.toAmountMin: %s is more than toAmount %s", toAmountMin, toAmount)
	}
	route := &quote.Route{
		Provider:          Name,
		Tool:              s.Tool,
		ToolName:          s.ToolDetails.Name,
		StepType:          s.Type,
		FromAmount:        fromAmount,
		ToAmount:          toAmount,
		ToAmountMin:       toAmountMin,
		PartnerFee:        new(big.Int),
		FromAmountUSD:     est.FromAmountUSD.USD(),
		ToAmountUSD:       est.ToAmountUSD.USD(),
		ExecutionDuration: int(math.Round(est.ExecutionDuration)),
		Shape:             quote.ShapeStandard,
	}
	if route.ToolName == "" {
		route.ToolName = s.Tool
	}
	if txKind(req.From) == txEVM && !req.FromToken.IsNative() {
		// A token source is approved to this address before the
		// transaction runs: an allowance to anything else is lost funds.
		if err := upstream.Address("estimate.approvalAddress", req.From.AddressFormat, est.ApprovalAddress); err != nil {
			return nil, err
		}
		route.ApprovalAddress = est.ApprovalAddress
	}
	if route.GasCosts, err = c.gasCosts(req, est.GasCosts); err != nil {
		return nil, err
	}
	if route.FeeCosts, err = c.feeCosts(est.FeeCosts); err != nil {
		return nil, err
	}
	route.PartnerFee = partnerFee(req, est, route)
	route.PreFeeToAmount = new(big.Int).Add(route.ToAmount, route.PartnerFee)
	if !req.Indicative {
		// Every quote but an indicative one hands a wallet LI.FI's
		// transaction: a step without one is not a quote.
		if s.TransactionRequest == nil {
			return nil, upstream.BadAnswer("transactionRequest: missing")
		}
		if txKind(req.From) == txSerialized {
			route.Tx, err = mapSerializedTx(req, s.TransactionRequest)
		} else {
			route.Tx, err = mapTx(req, s.TransactionRequest)
		}
		if err != nil {
			return nil, err
		}
	}
	return route, nil
}

func (c *Client) gasCosts(req *quote.Request, in []wireGasCost) ([]quote.GasCost, error) {
	out := make([]quote.GasCost, 0, len(in))
	for i, g := range in {
		price, err := upstream.OptDecimal("gasCosts.price", g.Price)
		if err != nil {
			return nil, err
		}
		amount, err := upstream.OptDecimal("gasCosts.amount", g.Amount)
		if err != nil {
			return nil, err
		}
		estimate, err := upstream.OptDecimal("gasCosts.estimate", g.Estimate)
		if err != nil {
			return nil, err
		}
		limit, err := upstream.OptDecimal("gasCosts.limit", g.Limit)
		if err != nil {
			return nil, err
		}
		if !estimate.IsUint64() || !limit.IsUint64() {
			return nil, upstream.BadAnswer("gasCosts[%d]: gas units overflow 64 bits", i)
		}
		out = append(out, quote.GasCost{
			Type:      g.Type,
			Price:     price,
			Estimate:  estimate.Uint64(),
			Limit:     limit.Uint64(),
			Amount:    amount,
			AmountUSD: g.AmountUSD.USD(),
			Token:     c.gasToken(req, &g.Token),
		})
	}
	return out, nil
}

// gasToken finds the registry's token for a gas cost; gas is paid in a
// chain's native coin, so an address the registry does not know falls back
// to that chain's native token (the source chain's when the chain is
// unknown too).
func (c *Client) gasToken(req *quote.Request, t *wireToken) *registry.Token {
	id := t.ChainID.Uint64()
	if tok, ok := c.reg.Token(id, t.Address); ok {
		return tok
	}
	if tok, ok := c.reg.Token(id, "native"); ok {
		return tok
	}
	tok, _ := c.reg.Token(req.From.ID, "native")
	return tok
}

func (c *Client) feeCosts(in []wireFeeCost) ([]quote.FeeCost, error) {
	out := make([]quote.FeeCost, 0, len(in))
	for _, f := range in {
		amount, err := upstream.OptDecimal("feeCosts.amount", f.Amount)
		if err != nil {
			return nil, err
		}
		out = append(out, quote.FeeCost{
			Name:        f.Name,
			Description: f.Description,
			Amount:      amount,
			AmountUSD:   f.AmountUSD.USD(),
			Percentage:  f.Percentage.Float(),
			Token:       c.token(&f.Token),
			Included:    f.Included,
		})
	}
	return out, nil
}

// token returns the registry's token, or one built from LI.FI's description
// when the registry does not list it.
func (c *Client) token(t *wireToken) *registry.Token {
	id := t.ChainID.Uint64()
	if tok, ok := c.reg.Token(id, t.Address); ok {
		return tok
	}
	return &registry.Token{ChainID: id, Address: t.Address, Symbol: t.Symbol, Name: t.Name,
		Decimals: t.Decimals, LogoURI: t.LogoURI, CoinKey: t.CoinKey, PriceUSD: string(t.PriceUSD)}
}

// partnerFee finds the integrator's fee among the fee costs and expresses
// it in the destination token.
//
// The fee cost is the one named as the integrator's ("Integrator Fee"); when
// no name says so, the one whose percentage is exactly the requested fee
// fraction. LI.FI takes it from the input, in the source token, before the
// swap; so unless it is already denominated in the destination token it is
// converted at the route's own rate: the output toAmount was bought with
// fromAmount−fee, so the fee would have bought toAmount×fee/(fromAmount−fee).
func partnerFee(req *quote.Request, est *wireEstimate, route *quote.Route) *big.Int {
	if req.FeeBps <= 0 {
		return new(big.Int)
	}
	want := float64(req.FeeBps) / 10_000
	idx := -1
	for i, f := range est.FeeCosts {
		if strings.Contains(strings.ToLower(f.Name), "integrator") {
			idx = i
			break
		}
	}
	if idx < 0 {
		for i, f := range est.FeeCosts {
			if math.Abs(f.Percentage.Float()-want) < 1e-9 {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		return new(big.Int)
	}
	fc := route.FeeCosts[idx]
	if fc.Token != nil && fc.Token.ChainID == req.ToToken.ChainID && strings.EqualFold(fc.Token.Address, req.ToToken.Address) {
		return new(big.Int).Set(fc.Amount)
	}
	rest := new(big.Int).Sub(route.FromAmount, fc.Amount)
	if rest.Sign() <= 0 {
		return new(big.Int)
	}
	fee := new(big.Int).Mul(route.ToAmount, fc.Amount)
	return fee.Quo(fee, rest)
}

// The kinds of transaction LI.FI hands a wallet, by source chain.
const (
	// txNone: a source whose transactions the contract has no shape for.
	txNone = iota
	// txEVM: an EVM call {to, data, value, gas}.
	txEVM
	// txSerialized: Solana's and Sui's, a whole serialized transaction
	// in base64 ({data} alone), which the wallet signs as it is.
	txSerialized
)

// txKind says which transaction LI.FI answers for a source chain.
func txKind(c *registry.Chain) int {
	switch {
	case c.ChainType == registry.EVM:
		return txEVM
	case c.AddressFormat == "solana" || c.AddressFormat == "sui":
		return txSerialized
	}
	return txNone
}

// mapSerializedTx converts LI.FI's transaction request for a Solana or Sui
// source: {data} alone, the serialized transaction in standard base64. The
// data must decode (strictly, padded: the quote shows it re-encoded, so it
// must be the upstream's very string) to a non-empty transaction; an
// answer that is an EVM call instead (a to) is not a transaction such a
// wallet can sign, and the route is left out with that reason.
func mapSerializedTx(req *quote.Request, t *wireTx) (*quote.TxRequest, error) {
	if t.To != "" {
		return nil, &quote.NoRoute{Provider: Name, Reason: quote.ReasonTxUnrepresentable,
			Message: "the aggregator's transaction for a " + req.From.Name + " source is an EVM call (to " +
				httpjson.Shown(t.To) + "), which a " + req.From.Name + " wallet cannot sign"}
	}
	if t.Data == "" {
		return nil, upstream.BadAnswer("transactionRequest.data: missing")
	}
	data, err := base64.StdEncoding.Strict().DecodeString(t.Data)
	if err != nil || len(data) == 0 {
		return nil, upstream.BadAnswer("transactionRequest.data: %s is not a base64 serialized transaction", httpjson.Shown(t.Data))
	}
	return &quote.TxRequest{ChainID: req.From.ID, Encoding: quote.EncodingBase64, Data: data}, nil
}

// mapTx converts LI.FI's transaction request; numbers are hex. It is
// checked as the transaction a wallet will be asked to sign: to an address
// of the source chain (never the zero address), from one when LI.FI names a
// sender (the wallet signs from its own account whatever it says), on the
// source chain when it names one, with 0x-hex calldata and 256-bit value
// and gas price.
func mapTx(req *quote.Request, t *wireTx) (*quote.TxRequest, error) {
	format := req.From.AddressFormat
	if err := upstream.Address("transactionRequest.to", format, t.To); err != nil {
		return nil, err
	}
	if t.From != "" {
		if err := upstream.Address("transactionRequest.from", format, t.From); err != nil {
			return nil, err
		}
	}
	data, err := upstream.HexBytes("transactionRequest.data", t.Data)
	if err != nil {
		return nil, err
	}
	value, err := upstream.HexBig("transactionRequest.value", t.Value)
	if err != nil {
		return nil, err
	}
	gasLimit, err := upstream.HexUint64("transactionRequest.gasLimit", t.GasLimit)
	if err != nil {
		return nil, err
	}
	var gasPrice *big.Int
	if t.GasPrice != "" {
		if gasPrice, err = upstream.HexBig("transactionRequest.gasPrice", t.GasPrice); err != nil {
			return nil, err
		}
	}
	id := req.From.ID
	if t.ChainID != "" {
		if got := t.ChainID.Uint64(); got != id {
			return nil, upstream.BadAnswer("transactionRequest.chainId: %s is not the source chain %d", httpjson.Shown(string(t.ChainID)), id)
		}
	}
	return &quote.TxRequest{To: t.To, From: t.From, Data: data, Value: value,
		ChainID: id, GasLimit: gasLimit, GasPrice: gasPrice}, nil
}
