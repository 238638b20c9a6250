package quote

import (
	"errors"
	"fmt"
	"math"
	"math/big"
)

// Exact-output quotes. A request with toAmount asks for the route that
// delivers at least toAmount, after every fee (tool fees, the partner fee)
// and the slippage, with the input it needs: the answer's
// estimate.toAmountMin is at least toAmount and its fromAmount is what the
// provider sized. Each provider sizes its own input (its legs may need
// different inputs for the same output), and one that cannot size it
// exactly is not raced: its outcome says why (ExactOutputOutcome).

// ExactOutput reports whether the request asks for an exact output.
func (r *Request) ExactOutput() bool { return r.ToAmount != nil }

// RefundAddress is where a refund goes: RefundTo, or FromAddress when the
// request named none.
func (r *Request) RefundAddress() string {
	if r.RefundTo != "" {
		return r.RefundTo
	}
	return r.FromAddress
}

// WithFromAmount is a shallow copy of the request with its input set to
// amount, the form in which a provider prices an exact-output request once
// it sized the input (the copy is a request for a given fromAmount as far
// as pricing goes; ToAmount stays set so that the route knows what it was
// sized for).
func (r *Request) WithFromAmount(amount *big.Int) *Request {
	c := *r
	c.FromAmount = amount
	return &c
}

// ForRoute is the request as a route of it was priced: on an exact-output
// request, a copy whose FromAmount is the input the route needs (each
// route has its own); otherwise the request itself. Builders and whatever
// renders a route's input read it through this.
func (r *Request) ForRoute(rt *Route) *Request {
	if !r.ExactOutput() || rt == nil || rt.FromAmount == nil || r.FromAmount == rt.FromAmount {
		return r
	}
	return r.WithFromAmount(rt.FromAmount)
}

// ExactOutputQuoter is a provider that can quote exact-output requests.
// A provider that does not implement it is never raced on one.
type ExactOutputQuoter interface {
	// ExactOutputUnsupported says why the provider cannot quote req, an
	// exact-output request, "" when it can (its legs then answer routes
	// whose ToAmountMin >= req.ToAmount).
	ExactOutputUnsupported(req *Request) string
}

// RefundToQuoter is a provider that can say whether it honours a
// request's refund address. A provider that does not implement it takes
// none: it is raced only on requests whose refunds go to fromAddress.
type RefundToQuoter interface {
	// RefundToUnsupported says why the provider cannot pay req's refunds
	// to req.RefundTo, "" when it can.
	RefundToUnsupported(req *Request) string
}

// The NoRoute reasons of a provider left out of a race because it cannot
// quote the request as asked.
const (
	ReasonExactOutputUnsupported = "EXACT_OUTPUT_UNSUPPORTED"
	ReasonRefundToUnsupported    = "REFUND_TO_UNSUPPORTED"
)

// ReasonExactOutputShort is the NoRoute reason of an exact-output route
// dropped by CheckExactOutput: its toAmountMin is below toAmount.
const ReasonExactOutputShort = "EXACT_OUTPUT_SHORT"

// CheckExactOutput holds an exact-output answer to its promise,
// estimate.toAmountMin >= toAmount, whatever the provider that sized it
// did: a route of an exact-output request whose ToAmountMin is below
// req.ToAmount (or absent) is a NoRoute with ReasonExactOutputShort, which
// data.timing shows as the leg's dropped outcome with the message, and
// which a race left with nothing else answers as NO_ROUTE_FOUND. Providers
// size their input so that this never fires; it is the last check, run on
// every built route (Complete), so that no provider's slip (a price read
// again after sizing, an upstream that answers less than asked) reaches a
// client. A request for a given input is not judged.
func CheckExactOutput(req *Request, r *Route) error {
	if !req.ExactOutput() || (r.ToAmountMin != nil && r.ToAmountMin.Cmp(req.ToAmount) >= 0) {
		return nil
	}
	min := "nothing"
	if r.ToAmountMin != nil {
		min = r.ToAmountMin.String()
	}
	return &NoRoute{Provider: r.Provider, Tool: r.Tool, Reason: ReasonExactOutputShort,
		Message: fmt.Sprintf("dropped: the route guarantees %s, less than toAmount %s", min, req.ToAmount)}
}

// dropped reports an outcome whose route was dropped: one CheckExactOutput
// dropped, or one whose transaction the contract cannot represent
// (ReasonTxUnrepresentable).
func dropped(err error) bool {
	var nr *NoRoute
	return errors.As(err, &nr) && (nr.Reason == ReasonExactOutputShort || nr.Reason == ReasonTxUnrepresentable)
}

// ReasonTxUnrepresentable is the NoRoute reason of a route whose
// transaction the quote cannot hand a wallet: a source chain whose
// transactions the contract has no shape for (Bitcoin), or an upstream's
// transaction of a shape the source chain's wallets cannot sign (an EVM
// call for a Solana source). Such a route is left out, shown in
// data.timing as dropped with the reason, rather than failing the leg.
const ReasonTxUnrepresentable = "TRANSACTION_UNREPRESENTABLE"

// UnsupportedOutcome is the outcome of a provider left out of a race:
// never sent, answered at once with its reason, shown in data.timing as
// unsupported with the message.
func UnsupportedOutcome(provider, reason, message string) LegOutcome {
	return LegOutcome{Provider: provider, Answered: true, Unsupported: true,
		Err: &NoRoute{Provider: provider, Reason: reason, Message: message}}
}

// ExactOutputOutcome is UnsupportedOutcome for an exact output the
// provider cannot size.
func ExactOutputOutcome(provider, message string) LegOutcome {
	return UnsupportedOutcome(provider, ReasonExactOutputUnsupported, message)
}

// Unsupported says why provider p cannot quote req as asked, as a NoRoute
// reason and its message ("" when it can): an exact output it cannot size
// (a provider that does not implement ExactOutputQuoter sizes none), or a
// refund address other than fromAddress it cannot pay refunds to (one
// that does not implement RefundToQuoter honours none).
func Unsupported(p Provider, req *Request) (reason, message string) {
	if req.ExactOutput() {
		x, ok := p.(ExactOutputQuoter)
		if !ok {
			return ReasonExactOutputUnsupported, "the " + p.Name() + " provider does not quote exact output"
		}
		if why := x.ExactOutputUnsupported(req); why != "" {
			return ReasonExactOutputUnsupported, why
		}
	}
	if req.RefundTo != "" && req.RefundTo != req.FromAddress {
		x, ok := p.(RefundToQuoter)
		if !ok {
			return ReasonRefundToUnsupported, "the " + p.Name() + " provider takes no refund address: its refunds go to fromAddress"
		}
		if why := x.RefundToUnsupported(req); why != "" {
			return ReasonRefundToUnsupported, why
		}
	}
	return "", ""
}

// ErrOutputUnreachable is why SizeInput found no input: even the largest
// input it may try delivers less than the target.
var ErrOutputUnreachable = errors.New("no input delivers the requested output")

// maxSizeSteps bounds SizeInput's calls of forward: doubling from 1 to
// 2^256 and halving back take 2×256, and every exact search takes fewer.
const maxSizeSteps = 520

// SizeInput finds the least input whose output reaches target, for an
// output that does not decrease as the input grows: forward prices an input
// and says whether its output (the route's ToAmountMin) is at least target;
// ok false with a nil error means it is not (an input too small to quote
// counts as falling short), and an error ends the search. guess, when
// positive, is where the search starts (a good one, from prices, saves most
// of the steps). The input returned is one forward accepted, so the output
// it delivers is verified, not estimated; ErrOutputUnreachable when no
// input up to 2^256-1 reaches the target.
func SizeInput(target, guess *big.Int, forward func(in *big.Int) (ok bool, err error)) (*big.Int, error) {
	if target == nil || target.Sign() <= 0 {
		return nil, errors.New("quote: size input: the target must be positive")
	}
	steps := 0
	try := func(in *big.Int) (bool, error) {
		steps++
		if steps > maxSizeSteps {
			return false, errors.New("quote: size input: the output does not grow with the input")
		}
		return forward(in)
	}
	hi := big.NewInt(1)
	if guess != nil && guess.Sign() > 0 {
		hi.Set(guess)
		if hi.Cmp(maxUint256) > 0 {
			hi.Set(maxUint256)
		}
	}
	// lo falls short (0 always does: nothing delivers nothing of a
	// positive target), hi reaches the target once found.
	lo := new(big.Int)
	for {
		ok, err := try(hi)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		if hi.Cmp(maxUint256) == 0 {
			return nil, ErrOutputUnreachable
		}
		lo.Set(hi)
		hi.Lsh(hi, 1)
		if hi.Cmp(maxUint256) > 0 {
			hi.Set(maxUint256)
		}
	}
	if lo.Sign() == 0 && hi.Cmp(big.NewInt(1)) > 0 {
		// The guess reached the target: walk down until an input falls
		// short, so that the bisection below starts from a bracket.
		for {
			half := new(big.Int).Rsh(hi, 1)
			if half.Sign() == 0 {
				break
			}
			ok, err := try(half)
			if err != nil {
				return nil, err
			}
			if !ok {
				lo.Set(half)
				break
			}
			hi = half
		}
	}
	one := big.NewInt(1)
	for new(big.Int).Sub(hi, lo).Cmp(one) > 0 {
		mid := new(big.Int).Add(lo, hi)
		mid.Rsh(mid, 1)
		ok, err := try(mid)
		if err != nil {
			return nil, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// GrossForMin is the least output from which MinOut(output, slippage)
// keeps at least min: MinOut keeps ⌊output×keep/10⁹⌋ with keep the
// fraction 1−slippage in parts per billion, which reaches min exactly when
// output×keep ≥ min×10⁹, that is from ⌈min×10⁹/keep⌉ on. slippage must be
// below 1 (the parser bounds it at 0.5).
func GrossForMin(min *big.Int, slippage float64) *big.Int {
	keep := big.NewInt(int64(math.Round((1 - slippage) * 1e9)))
	a := new(big.Int).Mul(min, big.NewInt(1e9))
	a.Add(a, keep)
	a.Sub(a, big.NewInt(1))
	return a.Quo(a, keep)
}

// GrossForNet is the least amount from which SplitFee(amount, bps) leaves
// at least net: SplitFee's net is amount − ⌊amount×bps/10000⌋ =
// ⌈amount×(10000−bps)/10000⌉, which reaches net exactly when
// amount×(10000−bps) > (net−1)×10000, that is from
// ⌊(net−1)×10000/(10000−bps)⌋ + 1 on. bps must be below 10000.
func GrossForNet(net *big.Int, bps int) *big.Int {
	if bps <= 0 {
		return new(big.Int).Set(net)
	}
	a := new(big.Int).Sub(net, big.NewInt(1))
	a.Mul(a, tenThousand)
	a.Quo(a, big.NewInt(int64(10_000-bps)))
	return a.Add(a, big.NewInt(1))
}
