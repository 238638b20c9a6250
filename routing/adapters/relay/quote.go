package relay

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The NoRoute reasons of a Relay quote the service leaves out.
const (
	// ReasonUnsupportedRoute: Relay does not serve a chain of the request,
	// or its quote needs what a quote of the service cannot express (a
	// signature step, more than one transaction after the approval).
	ReasonUnsupportedRoute = "UNSUPPORTED_ROUTE"
	// ReasonFeeUnsupported: the request carries a partner fee and no fee
	// recipient is configured to collect it as Relay's app fee.
	ReasonFeeUnsupported = "FEE_UNSUPPORTED"
)

// ExactOutputUnsupported is "": Relay sizes the input of an exact output
// itself (tradeType EXACT_OUTPUT, amount the output), and delivers exactly
// that amount or refunds.
func (c *Client) ExactOutputUnsupported(*quote.Request) string { return "" }

// RefundToUnsupported is "": Relay takes the refund address as refundTo.
func (c *Client) RefundToUnsupported(*quote.Request) string { return "" }

// QuoteLeg asks Relay for a quote (POST /quote/v2) and maps it to a route
// whose tool is Tool.
//
// The request: user is fromAddress and recipient toAddress; a chain's
// native coin is the zero address; an exact output is tradeType
// EXACT_OUTPUT with amount the toAmount, any other request EXACT_INPUT with
// amount the fromAmount; refundTo is sent when the request names one;
// slippageTolerance is the slippage in basis points. The partner fee is
// one app fee of the request's basis points to Config.FeeRecipient: Relay
// takes it from the input and pays it to that address, from which the
// ledger's earnings are settled as LI.FI's integrator fees are. Without a
// FeeRecipient a fee-bearing request is not sent at all (a no-route,
// ReasonFeeUnsupported): quoting it without the fee would hand the user a
// route whose partner fee nobody collects, while the ledger records it as
// earned.
//
// The answer, checked in every field passed on: the steps hold at most an
// approve transaction (ERC-20 approve of the source token, whose spender
// becomes the route's approval address) and exactly one other transaction,
// the route's transaction request; a signature step, or more
// transactions, is a no-route (ReasonUnsupportedRoute) with the reason,
// since a quote of the service carries one transaction and an approval.
// The amounts are details.currencyIn and currencyOut, which must be the
// requested tokens; the route's minimum is currencyOut.minimumAmount. The
// request id the steps share becomes the route's UpstreamRef, which
// SwapStatus asks about later. An exact-output answer whose minimum falls
// short of toAmount is a no-route, never a quote that under-delivers.
func (c *Client) QuoteLeg(ctx context.Context, req *quote.Request, _ string) (*quote.Route, error) {
	if why := c.unserved(req); why != "" {
		return nil, noRoute(ReasonUnsupportedRoute, why)
	}
	if req.FeeBps > 0 && c.cfg.FeeRecipient == "" {
		return nil, noRoute(ReasonFeeUnsupported, fmt.Sprintf(
			"Relay has no fee recipient configured to collect the request's %d bps fee", req.FeeBps))
	}
	body, err := json.Marshal(c.quoteBody(req))
	if err != nil {
		return nil, fmt.Errorf("relay: encode quote request: %w", err)
	}
	r, err := c.hc.Do(ctx, http.MethodPost, c.base+"/quote/v2", body)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, responseError(r)
	}
	var q wireQuote
	if err := json.Unmarshal(r.Body, &q); err != nil {
		return nil, upstream.BadAnswer("decode quote: %w", err)
	}
	route, err := c.mapQuote(req, &q)
	if err != nil {
		return nil, err
	}
	if req.ExactOutput() && route.ToAmountMin.Cmp(req.ToAmount) < 0 {
		return nil, noRoute("NO_POSSIBLE_ROUTE", "Relay's exact-output route guarantees "+route.ToAmountMin.String()+
			", less than toAmount "+req.ToAmount.String())
	}
	return route, nil
}

// unserved says why Relay cannot be asked for req ("" when it can): the
// adapter speaks Relay's EVM side only, on the chains Relay serves.
func (c *Client) unserved(req *quote.Request) string {
	for _, ch := range []*registry.Chain{req.From, req.To} {
		if ch.ChainType != registry.EVM || !c.servesChain(ch.ID) {
			return "Relay does not serve chain " + strconv.FormatUint(ch.ID, 10)
		}
	}
	return ""
}

func noRoute(reason, message string) *quote.NoRoute {
	return &quote.NoRoute{Provider: Name, Tool: Tool, Reason: reason, Message: message}
}

// currency is a token as Relay names it: a chain's native coin is the zero
// address on EVM.
func currency(t *registry.Token) string {
	if t.IsNative() {
		return registry.NativeAddressEVM
	}
	return t.Address
}

func (c *Client) quoteBody(req *quote.Request) *quoteBody {
	b := &quoteBody{
		User: req.FromAddress, Recipient: req.ToAddress,
		OriginChainID: req.From.ID, DestinationChainID: req.To.ID,
		OriginCurrency: currency(req.FromToken), DestinationCurrency: currency(req.ToToken),
		TradeType: tradeExactInput,
	}
	if b.Recipient == "" {
		b.Recipient = req.FromAddress
	}
	if req.ExactOutput() {
		b.TradeType, b.Amount = tradeExactOutput, req.ToAmount.String()
	} else {
		b.Amount = req.FromAmount.String()
	}
	b.RefundTo = req.RefundTo
	if req.Slippage > 0 {
		b.SlippageTolerance = strconv.FormatInt(int64(math.Round(req.Slippage*10_000)), 10)
	}
	if req.FeeBps > 0 {
		b.AppFees = []appFee{{Recipient: c.cfg.FeeRecipient, Fee: strconv.Itoa(req.FeeBps)}}
	}
	return b
}

// mapQuote turns Relay's answer into a route once every field the route
// passes on has been checked.
func (c *Client) mapQuote(req *quote.Request, q *wireQuote) (*quote.Route, error) {
	d := &q.Details
	if err := sameToken("details.currencyIn.currency", &d.CurrencyIn.Currency, req.From.ID, req.FromToken); err != nil {
		return nil, err
	}
	if err := sameToken("details.currencyOut.currency", &d.CurrencyOut.Currency, req.To.ID, req.ToToken); err != nil {
		return nil, err
	}
	fromAmount, err := upstream.Decimal("details.currencyIn.amount", d.CurrencyIn.Amount)
	if err != nil {
		return nil, err
	}
	if !req.ExactOutput() && fromAmount.Cmp(req.FromAmount) > 0 {
		return nil, upstream.BadAnswer("details.currencyIn.amount: %s is more than the %s asked", fromAmount, req.FromAmount)
	}
	toAmount, err := upstream.Decimal("details.currencyOut.amount", d.CurrencyOut.Amount)
	if err != nil {
		return nil, err
	}
	var toAmountMin *big.Int
	switch {
	case d.CurrencyOut.MinimumAmount != "":
		if toAmountMin, err = upstream.Decimal("details.currencyOut.minimumAmount", d.CurrencyOut.MinimumAmount); err != nil {
			return nil, err
		}
	case req.ExactOutput():
		// Relay fills an exact output exactly or refunds.
		toAmountMin = new(big.Int).Set(toAmount)
	default:
		toAmountMin = quote.MinOut(toAmount, req.Slippage)
	}
	if toAmountMin.Cmp(toAmount) > 0 {
		return nil, upstream.BadAnswer("details.currencyOut.minimumAmount: %s is more than amount %s", toAmountMin, toAmount)
	}
	stepType := "cross"
	if req.From.ID == req.To.ID {
		stepType = "swap"
	}
	route := &quote.Route{
		Provider: Name, Tool: Tool, ToolName: ToolName, StepType: stepType,
		FromAmount: fromAmount, ToAmount: toAmount, ToAmountMin: toAmountMin,
		FromAmountUSD: d.CurrencyIn.AmountUSD.USD(), ToAmountUSD: d.CurrencyOut.AmountUSD.USD(),
		ExecutionDuration: duration(q),
		Shape:             quote.ShapeStandard,
	}
	if err := c.mapFees(req, q, route); err != nil {
		return nil, err
	}
	steps, err := mapSteps(req, q.Steps, fromAmount)
	if err != nil {
		return nil, err
	}
	route.ApprovalAddress, route.UpstreamRef = steps.spender, steps.requestID
	if !req.Indicative {
		if steps.requestID == "" {
			return nil, upstream.BadAnswer("requestId: missing from the steps")
		}
		route.Tx = steps.tx
	}
	return route, nil
}

// sameToken refuses an answer about another token than the one asked.
func sameToken(field string, got *wireCurrency, chain uint64, want *registry.Token) error {
	if got.ChainID.Uint64() != chain || !strings.EqualFold(got.Address, currency(want)) {
		return upstream.BadAnswer("%s: %s on chain %s is not the requested %s on chain %d",
			field, shown(got.Address), shown(string(got.ChainID)), currency(want), chain)
	}
	return nil
}

// duration is the answer's time estimate in whole seconds.
func duration(q *wireQuote) int {
	v := q.Details.TimeEstimate.Float()
	if v <= 0 && len(q.Breakdown) > 0 {
		v = q.Breakdown[0].TimeEstimate.Float()
	}
	if v <= 0 || v > math.MaxInt32 {
		return 0
	}
	return int(math.Round(v))
}

// mapFees reads the gas cost, the relayer's fee and the app fee, and the
// partner fee in the destination token: Relay takes the app fee from the
// input, so it is converted at the route's own rate (the output toAmount
// was bought with fromAmount − fee, so the fee would have bought
// toAmount × fee ∕ (fromAmount − fee)) unless it is already in the
// destination token. A fee-bearing request whose answer took no app fee is
// refused: the partner's fee would not be collected.
func (c *Client) mapFees(req *quote.Request, q *wireQuote, route *quote.Route) error {
	route.PartnerFee = new(big.Int)
	if g := q.Fees.Gas; g != nil {
		amount, err := upstream.OptDecimal("fees.gas.amount", g.Amount)
		if err != nil {
			return err
		}
		route.GasCosts = []quote.GasCost{{Type: "SEND", Amount: amount, Price: new(big.Int),
			AmountUSD: g.AmountUSD.USD(), Token: c.gasToken(req)}}
	}
	if f := q.Fees.Relayer; f != nil {
		amount, err := upstream.OptDecimal("fees.relayer.amount", f.Amount)
		if err != nil {
			return err
		}
		route.FeeCosts = append(route.FeeCosts, quote.FeeCost{Name: "Relayer fee", Description: "Relay's fee for filling the order",
			Amount: amount, AmountUSD: f.AmountUSD.USD(), Token: c.token(&f.Currency), Included: true})
	}
	var app *big.Int
	if f := q.Fees.App; f != nil {
		var err error
		if app, err = upstream.OptDecimal("fees.app.amount", f.Amount); err != nil {
			return err
		}
		if app.Sign() > 0 {
			route.FeeCosts = append(route.FeeCosts, quote.FeeCost{Name: "Integrator fee", Description: "The integrator's fee",
				Amount: app, AmountUSD: f.AmountUSD.USD(), Percentage: float64(req.FeeBps) / 10_000,
				Token: c.token(&f.Currency), Included: true})
		}
	}
	if req.FeeBps > 0 {
		if app == nil || app.Sign() == 0 {
			return upstream.BadAnswer("fees.app: no app fee taken for the request's %d bps", req.FeeBps)
		}
		f := q.Fees.App
		switch {
		case f.Currency.ChainID.Uint64() == req.To.ID && strings.EqualFold(f.Currency.Address, currency(req.ToToken)):
			route.PartnerFee.Set(app)
		default:
			if rest := new(big.Int).Sub(route.FromAmount, app); rest.Sign() > 0 {
				route.PartnerFee.Mul(route.ToAmount, app)
				route.PartnerFee.Quo(route.PartnerFee, rest)
			}
		}
	}
	route.PreFeeToAmount = new(big.Int).Add(route.ToAmount, route.PartnerFee)
	return nil
}

// gasToken is the source chain's native coin, in which gas is paid.
func (c *Client) gasToken(req *quote.Request) *registry.Token {
	tok, _ := c.reg.Token(req.From.ID, registry.NativeAddressEVM)
	return tok
}

// token returns the registry's token, or one built from Relay's
// description when the registry does not list it.
func (c *Client) token(t *wireCurrency) *registry.Token {
	id := t.ChainID.Uint64()
	if tok, ok := c.reg.Token(id, t.Address); ok {
		return tok
	}
	return &registry.Token{ChainID: id, Address: t.Address, Symbol: t.Symbol, Name: t.Name, Decimals: t.Decimals}
}

// mappedSteps is what a quote's steps give the route.
type mappedSteps struct {
	spender   string
	tx        *quote.TxRequest
	requestID string
}

// mapSteps reads the steps: a signature step anywhere leaves the quote
// out; an approve step is checked as the ERC-20 approval of the source
// token for at least the input; the other transaction steps must hold
// exactly one transaction between them. The request id is the one every
// step (and every item's status check) names.
func mapSteps(req *quote.Request, steps []wireStep, fromAmount *big.Int) (*mappedSteps, error) {
	for i, s := range steps {
		switch s.Kind {
		case kindTransaction:
		case kindSignature:
			return nil, noRoute(ReasonUnsupportedRoute, fmt.Sprintf(
				"Relay's quote needs a signature step (%s), which a quote of the service cannot carry", shown(s.ID)))
		default:
			return nil, upstream.BadAnswer("steps[%d].kind: %s is not a step kind", i, shown(s.Kind))
		}
	}
	out := &mappedSteps{}
	var ids []string
	var txs []*quote.TxRequest
	for i, s := range steps {
		if s.RequestID != "" {
			ids = append(ids, s.RequestID)
		}
		if len(s.Items) == 0 {
			return nil, upstream.BadAnswer("steps[%d].items: empty", i)
		}
		for j, it := range s.Items {
			field := fmt.Sprintf("steps[%d].items[%d].data", i, j)
			if it.Data == nil {
				return nil, upstream.BadAnswer("%s: missing", field)
			}
			if it.Check != nil {
				if id := checkRequestID(it.Check.Endpoint); id != "" {
					ids = append(ids, id)
				}
			}
			tx, err := mapTx(req, field, it.Data)
			if err != nil {
				return nil, err
			}
			if s.ID != stepApprove {
				txs = append(txs, tx)
				continue
			}
			if len(s.Items) != 1 || out.spender != "" {
				return nil, upstream.BadAnswer("approve step: more than one approval")
			}
			if out.spender, err = approval(req, tx, fromAmount); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case len(txs) == 0:
		return nil, upstream.BadAnswer("steps: no transaction to sign")
	case len(txs) > 1:
		return nil, noRoute(ReasonUnsupportedRoute, fmt.Sprintf(
			"Relay's quote needs %d transactions after the approval, and a quote of the service carries one", len(txs)))
	}
	out.tx = txs[0]
	for _, id := range ids {
		if out.requestID == "" {
			out.requestID = id
		} else if !strings.EqualFold(id, out.requestID) {
			return nil, upstream.BadAnswer("requestId: the steps name %s and %s", shown(out.requestID), shown(id))
		}
	}
	if out.requestID != "" && !isRequestID(out.requestID) {
		return nil, upstream.BadAnswer("requestId: %s is not 0x-prefixed hex", shown(out.requestID))
	}
	return out, nil
}

// checkRequestID reads the requestId of a status check's endpoint, "" when
// it names none.
func checkRequestID(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return u.Query().Get("requestId")
}

// isRequestID reports whether id is 0x and at most 128 hex digits, the form
// of Relay's request ids (32 bytes).
func isRequestID(id string) bool {
	h, ok := strings.CutPrefix(id, "0x")
	if !ok || h == "" || len(h) > 128 {
		return false
	}
	_, err := hex.DecodeString(h + strings.Repeat("0", len(h)%2))
	return err == nil
}

// approveSelector is the selector of ERC-20 approve(address,uint256).
var approveSelector = []byte{0x09, 0x5e, 0xa7, 0xb3}

// approval checks an approve step's transaction as the ERC-20 approval of
// the source token: sent to the token, its calldata approve(spender,
// amount) with a spender that is an address (not the zero address) and an
// amount of at least the input. It returns the spender.
func approval(req *quote.Request, tx *quote.TxRequest, fromAmount *big.Int) (string, error) {
	if req.FromToken.IsNative() {
		return "", upstream.BadAnswer("approve step: a native input needs no approval")
	}
	if !strings.EqualFold(tx.To, req.FromToken.Address) {
		return "", upstream.BadAnswer("approve step: to %s is not the source token %s", shown(tx.To), req.FromToken.Address)
	}
	d := tx.Data
	if len(d) != 4+32+32 || !bytes.Equal(d[:4], approveSelector) {
		return "", upstream.BadAnswer("approve step: data is not ERC-20 approve(address,uint256) calldata")
	}
	if !bytes.Equal(d[4:16], make([]byte, 12)) {
		return "", upstream.BadAnswer("approve step: the spender word is not an address")
	}
	spender := "0x" + hex.EncodeToString(d[16:36])
	if err := upstream.Address("approve step: spender", req.From.AddressFormat, spender); err != nil {
		return "", err
	}
	if amount := new(big.Int).SetBytes(d[36:68]); amount.Cmp(fromAmount) < 0 {
		return "", upstream.BadAnswer("approve step: approves %s, less than the input %s", amount, fromAmount)
	}
	return spender, nil
}

// mapTx converts one of Relay's transactions, checked as one a wallet will
// be asked to sign: to an address of the source chain (never the zero
// address), from one when Relay names a sender, on the source chain when
// it names one, with 0x-hex calldata, a 256-bit value and a 64-bit gas
// limit. Relay's numbers are decimal strings, which HexBig reads too. The
// fee caps (maxFeePerGas, maxPriorityFeePerGas) are not passed on: a
// wallet prices an EIP-1559 transaction itself, and the service's
// transaction request has only a legacy gas price.
func mapTx(req *quote.Request, field string, t *wireTx) (*quote.TxRequest, error) {
	format := req.From.AddressFormat
	if err := upstream.Address(field+".to", format, t.To); err != nil {
		return nil, err
	}
	if t.From != "" {
		if err := upstream.Address(field+".from", format, t.From); err != nil {
			return nil, err
		}
	}
	data, err := upstream.HexBytes(field+".data", t.Data)
	if err != nil {
		return nil, err
	}
	value, err := upstream.HexBig(field+".value", t.Value)
	if err != nil {
		return nil, err
	}
	gas, err := upstream.HexUint64(field+".gas", t.Gas)
	if err != nil {
		return nil, err
	}
	if t.ChainID != "" && t.ChainID.Uint64() != req.From.ID {
		return nil, upstream.BadAnswer("%s.chainId: %s is not the source chain %d", field, shown(string(t.ChainID)), req.From.ID)
	}
	return &quote.TxRequest{To: t.To, From: t.From, Data: data, Value: value, ChainID: req.From.ID, GasLimit: gas}, nil
}
