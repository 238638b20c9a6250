package quote

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// Firm prices at execute: POST /v1/execute prices an issued quote's route
// again (same provider and tool, same amounts and parties) before it
// answers, and refuses with PRICE_CHANGED when the output fell by more than
// the request's maxPriceDriftBps.
const (
	// DefaultMaxPriceDriftBps is the drift an execute tolerates when its
	// body names none: 0.5%, the default slippage, so that a price the
	// quote's own minimum would still have accepted passes.
	DefaultMaxPriceDriftBps = 50
	// MaxPriceDriftBps is the largest maxPriceDriftBps: 100%.
	MaxPriceDriftBps = 10_000
)

// ParseMaxPriceDrift reads execute's maxPriceDriftBps from its raw JSON
// value: absent (nil) is the default; anything but a JSON integer from 0 to
// MaxPriceDriftBps is INVALID_PARAMS naming it.
func ParseMaxPriceDrift(raw []byte) (int, *apierr.Error) {
	if raw == nil || string(raw) == "null" {
		return DefaultMaxPriceDriftBps, nil
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || v < 0 || v > MaxPriceDriftBps {
		return 0, apierr.Param("maxPriceDriftBps", "maxPriceDriftBps must be an integer from 0 to 10000 (basis points)").
			With("value", string(raw))
	}
	return int(v), nil
}

// Drift is how far current falls below quoted, in basis points of quoted:
// positive when the price moved against the user, negative when it
// improved. A fall is rounded up and a rise toward zero, so that a drift
// reported as at most the maximum never exceeds it.
func Drift(quoted, current *big.Int) int64 {
	if quoted.Sign() <= 0 {
		return 0
	}
	num := new(big.Int).Sub(quoted, current)
	num.Mul(num, big.NewInt(10_000))
	q, r := new(big.Int).QuoRem(num, quoted, new(big.Int))
	if num.Sign() > 0 && r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		if q.Sign() > 0 {
			return MaxPriceDriftBps
		}
		return -MaxPriceDriftBps
	}
	return q.Int64()
}

// PriceChanged is the PRICE_CHANGED refusal of an execute whose route now
// delivers current instead of quoted, beyond the allowed drift; newQuoteID
// is the quote issued at the current price, which the client executes
// instead.
func PriceChanged(quoted, current *big.Int, drift int64, maxBps int, newQuoteID string) *apierr.Error {
	return apierr.New(apierr.PriceChanged, "the price moved "+strconv.FormatInt(drift, 10)+" bps against the quote, more than maxPriceDriftBps "+
		strconv.Itoa(maxBps)+"; execute the new quote "+newQuoteID+" or quote again").
		With("quotedToAmount", quoted.String()).With("currentToAmount", current.String()).
		With("driftBps", drift).With("newQuoteId", newQuoteID)
}

// RepriceParams are the parameters that quote a ticket's route again: the
// same chains, tokens, amount (the sized input of an exact-output quote,
// which is what its signed transaction sends), parties, refund address and
// slippage. The caller parses them
// as any quote's, restricts the race to the ticket's provider and tool, and
// marks the request Repricing.
func (t *Ticket) RepriceParams() Params {
	p := Params{
		FromChain: strconv.AppendUint(nil, t.FromChain, 10), ToChain: strconv.AppendUint(nil, t.ToChain, 10),
		FromToken: []byte(t.FromToken), ToToken: []byte(t.ToToken), FromAmount: []byte(t.FromAmount),
		FromAddress: []byte(t.FromAddress),
	}
	if !t.Dry {
		p.ToAddress = []byte(t.ToAddress)
	}
	if t.Slippage > 0 {
		p.Slippage = strconv.AppendFloat(nil, t.Slippage, 'g', -1, 64)
	}
	if t.RefundTo != "" {
		p.RefundTo = []byte(t.RefundTo)
	}
	return p
}

// Verdict is what execute's price check decides (see CheckPrice).
type Verdict int

// The verdicts, in the order they are decided: a price below the quote's
// minimum is refused whatever the allowed drift, since the transaction
// that carries that minimum could not succeed.
const (
	// PriceHolds: the route still delivers at least the quote's
	// toAmountMin, and its output fell at most maxPriceDriftBps.
	PriceHolds Verdict = iota
	// BelowMinimum: the route now delivers less than the quote's
	// toAmountMin, the least its signed transaction accepts: that
	// transaction would revert on slippage. SLIPPAGE_ERROR.
	BelowMinimum
	// PriceMoved: the output fell past maxPriceDriftBps but still reaches
	// toAmountMin, so the slippage would cover it: PRICE_CHANGED.
	PriceMoved
)

// PriceCheck is what execute's price check found for one ticket.
type PriceCheck struct {
	Verdict Verdict
	// Quoted is the quote's toAmount, Min its toAmountMin (nil when the
	// ticket does not know it), Current what the route delivers now.
	Quoted, Min, Current *big.Int
	// DriftBps is Drift(Quoted, Current); MaxDriftBps the allowed drift.
	DriftBps    int64
	MaxDriftBps int
}

// CheckPrice judges a ticket's route priced again to deliver current,
// under an allowed drift of maxDrift basis points. The slippage comes
// first: below the ticket's toAmountMin the quote's transaction would
// revert on chain, so no maxPriceDriftBps (10000 included) lets it pass;
// past maxDrift but at or above toAmountMin it is PriceMoved.
//
// An exact-output quote is judged the same way. Its transaction spends
// the input the provider sized (the ticket's fromAmount, which the route
// is priced again with) and demands its toAmountMin, which is at least
// the toAmount asked for: there is no input ceiling that could give, only
// that minimum, so "below toAmountMin" is the output of that fixed input
// falling under it. The input a moved price needs shows in the new quote
// the caller issues (an exact-output one, sized again).
//
// A ticket whose toAmountMin is empty (none was known) is judged on the
// drift alone; amounts that are not decimal numbers are an error.
func (t *Ticket) CheckPrice(current *big.Int, maxDrift int) (PriceCheck, error) {
	quoted, ok := new(big.Int).SetString(t.ToAmount, 10)
	if !ok {
		return PriceCheck{}, fmt.Errorf("quote: ticket %s: toAmount %q is not a number", t.ID, t.ToAmount)
	}
	c := PriceCheck{Quoted: quoted, Current: current, DriftBps: Drift(quoted, current), MaxDriftBps: maxDrift}
	if t.ToAmountMin != "" {
		if c.Min, ok = new(big.Int).SetString(t.ToAmountMin, 10); !ok {
			return PriceCheck{}, fmt.Errorf("quote: ticket %s: toAmountMin %q is not a number", t.ID, t.ToAmountMin)
		}
	}
	switch {
	case c.Min != nil && current.Cmp(c.Min) < 0:
		c.Verdict = BelowMinimum
	case c.DriftBps > int64(maxDrift):
		c.Verdict = PriceMoved
	}
	return c, nil
}

// Refusal is the contract's answer to a check that did not hold, naming
// newQuoteID, the quote issued at the current price; nil when the price
// holds.
func (c PriceCheck) Refusal(newQuoteID string) *apierr.Error {
	switch c.Verdict {
	case BelowMinimum:
		return SlippageRefusal(c.Min, c.Current, newQuoteID)
	case PriceMoved:
		return PriceChanged(c.Quoted, c.Current, c.DriftBps, c.MaxDriftBps, newQuoteID)
	}
	return nil
}

// SlippageRefusal is the SLIPPAGE_ERROR refusal of an execute whose route
// now delivers current, less than the quote's toAmountMin min: signed, its
// transaction would revert on slippage. newQuoteID is the quote issued at
// the current price, which the client executes instead.
func SlippageRefusal(min, current *big.Int, newQuoteID string) *apierr.Error {
	return apierr.New(apierr.SlippageError, "the price moved beyond the quote's slippage: the route now delivers "+current.String()+
		", below its toAmountMin "+min.String()+", so its transaction would revert; execute the new quote "+newQuoteID+" or quote again").
		With("toAmountMin", min.String()).With("currentToAmount", current.String()).With("newQuoteId", newQuoteID)
}

// RequoteExactParams are the parameters of the new quote an exact-output
// ticket is replaced with when its price check fails: RepriceParams, but
// asking for the ticket's toAmount again rather than spending its sized
// input, so that the new quote still delivers what the client asked for
// and its input is sized at the current price. ok is false for a ticket
// that is not exact-output.
func (t *Ticket) RequoteExactParams() (p Params, ok bool) {
	if t.ExactToAmount == "" {
		return Params{}, false
	}
	p = t.RepriceParams()
	p.FromAmount, p.ToAmount = nil, []byte(t.ExactToAmount)
	return p, true
}
