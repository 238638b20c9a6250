package onramp

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// Reporter is a provider whose orders move on its own reports rather than
// on the service's timers: a live provider. It sends signed webhooks as a
// transaction progresses, and answers where a transaction stands when
// asked, which covers a webhook that never arrived.
type Reporter interface {
	Provider
	// Webhook verifies a webhook's signature (the raw value of the
	// provider's signature header) over its raw body at now and reads the
	// order update it carries. A signature that does not verify, or is
	// stale, is ErrBadSignature and nothing else is read; an authentic
	// webhook that reports nothing about an order (another kind of event)
	// is a nil Update.
	Webhook(signature string, body []byte, now time.Time) (*Update, error)
	// Lookup asks the provider where the order's transaction stands: nil
	// when the provider has none for it yet.
	Lookup(ctx context.Context, o *Order) (*Update, error)
}

// ErrBadSignature is a provider webhook whose signature does not verify:
// it is refused and changes nothing.
var ErrBadSignature = errors.New("onramp: the webhook's signature does not verify")

// ErrMalformedWebhook is an authentic provider webhook whose body cannot
// be read: refused, like a bad signature, and changing nothing.
var ErrMalformedWebhook = errors.New("onramp: the webhook's body cannot be read")

// path is the order of the states a paid order goes through.
var path = []State{Created, PaymentReceived, CryptoSent, Completed}

func rank(s State) int {
	for i, p := range path {
		if p == s {
			return i
		}
	}
	return -1
}

// Follow brings the order to the state a provider reported, at the given
// time, and returns the events the moves publish, in order. A provider may
// skip states the service has not heard of (a webhook missed, a lookup that
// found the transaction already completed): the order then goes through
// each state in between, so that its history and the partner's events stay
// whole, the CRYPTO_SENT step carrying the update's transaction hash. A
// report the order already reflects, or is past (a replayed webhook, an
// update older than the last), changes nothing and publishes nothing; so
// a report the state machine cannot follow (a failure reported once the
// crypto was sent), which is ErrTransition and leaves the order as it was.
func (o *Order) Follow(u *Update, at time.Time) (events []webhook.Event, err error) {
	if o.State.Terminal() || u.State == Created || u.State == o.State {
		return nil, nil
	}
	before := *o
	before.History = append([]Step(nil), o.History...)
	undo := func() { *o = before }
	if u.State == Failed || u.State == Refunded {
		ev, err := o.Move(u.State, at, "", u.Reason)
		if err != nil {
			return nil, err
		}
		return []webhook.Event{*ev}, nil
	}
	from, to := rank(o.State), rank(u.State)
	if to < 0 {
		return nil, fmt.Errorf("%w: %s is not a state a provider reports", ErrTransition, u.State)
	}
	if to <= from {
		return nil, nil
	}
	for _, s := range path[from+1 : to+1] {
		hash := ""
		if s == CryptoSent {
			hash = u.TxHash
		}
		ev, err := o.Move(s, at, hash, "")
		if err != nil {
			undo()
			return nil, err
		}
		events = append(events, *ev)
	}
	return events, nil
}

// Figures are a provider's price of a purchase as it quoted it, exact:
// the fiat amount converted, the crypto it buys in whole units, the price
// of one whole unit, and the fees on top.
type Figures struct {
	Amount     Cents
	Crypto     *big.Rat
	Price      *big.Rat
	Network    Cents
	Processing Cents
	Partner    Cents
}

// Quoted is a provider's figures as the service's quote, with the rounding
// of the package's rules: the rate to 8 significant digits, the crypto
// truncated to the asset's display places, the total the amount plus the
// fees. USDRate is the catalogue's rate of the currency, which converts the
// order's figures to the dollars of a partner's stats.
func Quoted(r *Request, f Figures, partnerFeeBps int, now time.Time, ttl time.Duration) *Quote {
	a := r.Asset
	fees := Fees{Network: f.Network, Processing: f.Processing, Partner: f.Partner}
	fees.Total = fees.Network + fees.Processing + fees.Partner
	return &Quote{
		Currency: r.Currency.Code, Amount: f.Amount, Symbol: a.Symbol, ChainID: a.ChainID,
		Token: a.Token.Address, Decimals: a.Decimals, Ecosystem: a.Ecosystem, USDRate: r.Currency.PerUSD.RatString(),
		ExchangeRate: decimalString(significant(f.Price, 8), 40), CryptoAmount: decimalString(truncate(f.Crypto, a.Places()), a.Places()),
		Fees: fees, Total: f.Amount + fees.Total, Method: r.Method.ID, PartnerFeeBps: partnerFeeBps,
		ExpiresAt: now.Add(ttl).Truncate(time.Second),
	}
}

// RoundCents is a non-negative exact amount of whole currency units
// rounded half up to the cent, the rounding of an amount a provider states
// with more places than cents.
func RoundCents(r *big.Rat) Cents { return roundHalfUp(r) }
