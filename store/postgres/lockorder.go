package postgres

import (
	"cmp"
	"slices"

	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// Row locks on outbox entries are taken in one order by every transaction
// that waits for them (FinishAttempts, releaseLeases): by delivery ID,
// then due time. Two transactions taking an overlapping set of locks in
// different orders can each hold what the other waits for, and the server
// then aborts one of them as a deadlock (a batch of delivery outcomes
// refused, its entries delivered again once their leases lapse). Claims
// never wait (SKIP LOCKED), so they need no order.

// outcomeOrder returns the indexes of outs in lock order.
func outcomeOrder(outs []webhook.AttemptOutcome) []int {
	order := make([]int, len(outs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := outs[a].Entry, outs[b].Entry
		return cmp.Or(cmp.Compare(ea.DeliveryID, eb.DeliveryID), ea.Due.Compare(eb.Due))
	})
	return order
}
