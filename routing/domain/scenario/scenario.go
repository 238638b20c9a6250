// Package scenario is the vocabulary of scripted sandbox outcomes: the
// values of the X-Sandbox-Scenario request header, where each applies, and
// the rules that say what each one changes. It is plain Go; the sandbox
// simulator (routing/sim/...) and the actors that drive sandbox outcomes
// play them, and the edge only reads the header.
//
// A scenario is chosen on the request that creates something: a quote
// (GET /v1/quote, /v1/routes) or an on-ramp order (POST
// /v1/onramp/checkout). It is kept in that thing's stored record (the
// quote's ticket, then the tracked swap or intents deposit; the on-ramp
// order), never in memory, so that every later call, on this node or on
// another one sharing the store, plays the same outcome. Every webhook of
// the outcome fires as it would for the real one.
//
// Sandbox mode only: in live mode the header is refused, since nothing
// could honour it.
package scenario

import (
	"errors"
	"slices"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// Header is the request header that names a scenario.
const Header = "X-Sandbox-Scenario"

// Name is a scenario; "" is none (the sandbox's ordinary behaviour).
type Name string

// Scenarios of quotes and what follows from them (execute, status,
// tracking, webhooks).
const (
	// Refund: the bridge fails after the bridge time and the input is
	// refunded on the source chain (DONE / REFUNDED); on an intents
	// deposit, the deposit is refunded (REFUNDED).
	Refund Name = "refund"
	// Partial: half of the input is filled (half the quoted output
	// delivered), the rest refunded on the source chain (DONE / PARTIAL).
	Partial Name = "partial"
	// Slow: the bridge takes SlowFactor times its quoted time.
	Slow Name = "slow"
	// Stuck: the bridge never delivers; tracking gives up at its horizon
	// (PENDING / UNKNOWN_ERROR, see routing/domain/swap).
	Stuck Name = "stuck"
	// SourceRevert: the quote's transaction reverts on the source chain
	// (its minimum output is set above what the router delivers), so the
	// swap is FAILED / SLIPPAGE_EXCEEDED.
	SourceRevert Name = "source-revert"
	// NoRoute: every leg answers without a route: 404 NO_ROUTE_FOUND.
	NoRoute Name = "no-route"
	// UpstreamError: every leg's upstream fails: 502 UPSTREAM_ERROR.
	UpstreamError Name = "upstream-error"
	// UpstreamRateLimited: every leg's upstream answers 429: 502
	// UPSTREAM_ERROR with upstreamStatus 429 in each reason.
	UpstreamRateLimited Name = "upstream-rate-limited"
	// PriceDrift: at execute the price has moved DriftBps against the
	// quote, past the default slippage (below the quote's toAmountMin):
	// 400 SLIPPAGE_ERROR; a quote with a wider slippage sees it only
	// past the default maximum drift: 409 PRICE_CHANGED.
	PriceDrift Name = "price-drift"
	// IncompleteDeposit: an intents deposit is seen short of the quoted
	// amount (INCOMPLETE_DEPOSIT), and refunded after the bridge time.
	IncompleteDeposit Name = "incomplete-deposit"
)

// Scenarios of on-ramp orders: each moves the order by itself, a step
// (the sandbox's on-ramp step delay) after the checkout, without the buyer.
const (
	// PaymentFailed: the payment is declined (FAILED, onramp.failed).
	PaymentFailed Name = "payment-failed"
	// Refunded: the payment is received, then refunded (PAYMENT_RECEIVED,
	// then REFUNDED: onramp.payment_received, onramp.refunded).
	Refunded Name = "refunded"
	// Expired: the checkout expires unpaid a step after it opened
	// (EXPIRED, no event, as for any expiry).
	Expired Name = "expired"
)

// SlowFactor is how much longer than quoted a slow bridge takes.
const SlowFactor = 10

// DriftBps is how far the price-drift scenario moves the price against the
// quote at execute: twice the default slippage and the default maximum
// drift (both 50 bps), so that an execute of a quote at the default
// slippage answers SLIPPAGE_ERROR (its transaction would revert), one of a
// quote with a wider slippage (slippage=0.03) PRICE_CHANGED, and that one,
// allowing 100 bps or more of drift, passes.
const DriftBps = 100

// Kind is what a scenario is chosen on.
type Kind int

// Kinds.
const (
	// Quote is a swap quote and everything that follows from it,
	// intents deposits included.
	Quote Kind = iota
	// Onramp is an on-ramp order.
	Onramp
)

var (
	quoteScenarios = []Name{Refund, Partial, Slow, Stuck, SourceRevert, NoRoute, UpstreamError,
		UpstreamRateLimited, PriceDrift, IncompleteDeposit}
	onrampScenarios = []Name{PaymentFailed, Refunded, Expired}
)

// Allowed lists the scenarios of a kind, in the order the documentation
// lists them.
func Allowed(k Kind) []Name {
	if k == Onramp {
		return slices.Clone(onrampScenarios)
	}
	return slices.Clone(quoteScenarios)
}

// Parse reads the header's value for a request of kind k: "" (no header)
// is no scenario; a value that is not one of the kind's scenarios is
// INVALID_PARAMS naming the header and listing the allowed values. In live
// mode (sandbox false) any value is refused, naming the header.
func Parse(k Kind, value string, sandbox bool) (Name, *apierr.Error) {
	if value == "" {
		return "", nil
	}
	if !sandbox {
		return "", apierr.Param(Header, Header+" is a sandbox-mode header; this server runs in live mode").With("value", value)
	}
	allowed := Allowed(k)
	if !slices.Contains(allowed, Name(value)) {
		list := make([]string, len(allowed))
		for i, n := range allowed {
			list[i] = string(n)
		}
		return "", apierr.Param(Header, Header+" must be one of: "+strings.Join(list, ", ")).
			With("value", value).With("allowed", list)
	}
	return Name(value), nil
}

// FailsQuote reports the scenarios that make a quote fail: every leg the
// sandbox races answers as the scenario says.
func (n Name) FailsQuote() bool {
	return n == NoRoute || n == UpstreamError || n == UpstreamRateLimited
}

// PriceMoveBps is how far the scenario moves the price against the quote
// when the route is priced: DriftBps for price-drift at execute, nothing
// otherwise (the quote itself is priced as usual).
func (n Name) PriceMoveBps(atExecute bool) int {
	if n == PriceDrift && atExecute {
		return DriftBps
	}
	return 0
}

// AfterReprice is the scenario of the new quote an execute issues when the
// price moved: price-drift has played (the new quote is at the moved price
// and executes), any other scenario still applies to the new quote.
func (n Name) AfterReprice() Name {
	if n == PriceDrift {
		return ""
	}
	return n
}

// IntentsOnly and AggregatorOnly say which sandbox provider a scenario
// acts on: an incomplete deposit exists only for intents deposits, and a
// source revert or a partial fill only for the aggregator's router
// transactions. The other provider's legs answer without a route, saying
// so, so that the quote is one the scenario can play on.
func (n Name) IntentsOnly() bool { return n == IncompleteDeposit }

// AggregatorOnly: see IntentsOnly.
func (n Name) AggregatorOnly() bool { return n == SourceRevert || n == Partial }

// CrossChainOnly reports the scenarios of a bridge: a swap within one chain
// is done when its transaction is mined, so nothing can be slow, stuck,
// refunded or partly filled after it.
func (n Name) CrossChainOnly() bool {
	return n == Refund || n == Partial || n == Slow || n == Stuck || n == IncompleteDeposit
}

// ErrScripted marks a failure a scenario scripted: it says nothing of the
// provider, so that no circuit breaker counts it.
var ErrScripted = errors.New("scripted by a sandbox scenario")
