package onramp

import (
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// Activity is the line an order leaves in its partner's history (kind
// onramp), as it stands now: the purchase's volume from the start, and the
// partner fee with its pending earning only once the order is COMPLETED
// (an order that never completes earned nothing). It is nil for an
// anonymous order. From is the fiat side (currency and amount), to the
// asset delivered (token address and base units).
func (o *Order) Activity() *account.Activity {
	if o.PartnerID == "" {
		return nil
	}
	q := &o.Quote
	a := &account.Activity{
		PartnerID: o.PartnerID, ID: o.UID, Kind: account.ActivityOnramp, Status: string(o.State), Provider: o.Provider,
		ToChain: q.ChainID, FromToken: q.Currency, ToToken: q.Token, FromAmount: q.Amount.String(),
		ToAmount: q.BaseUnits().String(), VolumeMicroUSD: q.microUSD(q.Amount), CreatedAt: o.CreatedAt,
	}
	if o.State == Completed && q.Fees.Partner > 0 {
		a.FeeMicroUSD = q.microUSD(q.Fees.Partner)
		a.Earning = &account.Earning{Ecosystem: q.Ecosystem, FeeToken: q.Token, FeeAmount: q.PartnerFeeBaseUnits().String(),
			State: account.EarningPending}
	}
	return a
}

// Due is when the order must next change by itself: its expiry while it
// waits for payment; the zero time otherwise.
func (o *Order) Due() time.Time {
	if o.State == Created {
		return o.ExpiresAt
	}
	return time.Time{}
}
