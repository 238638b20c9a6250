package quote

import (
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
