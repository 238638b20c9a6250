package webhook

import (
	"errors"
	"time"
)

// FailingAfter is how long a webhook's deliveries must all have failed for
// the webhook to be shown as failing.
const FailingAfter = 24 * time.Hour

// Failing reports whether a webhook is failing at now, judged from its
// delivery history (any order): some attempt failed at least FailingAfter
// ago, and no delivery succeeded since the first failure after the last
// success. A webhook with no attempts, or one that delivered within the
// last FailingAfter, is not failing; one whose failures are all younger
// than FailingAfter is not failing yet.
func Failing(recs []*DeliveryRecord, now time.Time) bool {
	var lastOK time.Time
	for _, d := range recs {
		for _, a := range d.Attempts {
			if a.Error == "" && a.At.After(lastOK) {
				lastOK = a.At
			}
		}
	}
	var firstFail time.Time
	for _, d := range recs {
		for _, a := range d.Attempts {
			if a.Error != "" && a.At.After(lastOK) && (firstFail.IsZero() || a.At.Before(firstFail)) {
				firstFail = a.At
			}
		}
	}
	return !firstFail.IsZero() && now.Sub(firstFail) >= FailingAfter
}

// ErrNotResendable is a failed delivery that cannot be resent: recorded
// before payloads were kept with the history, it has nothing to send.
var ErrNotResendable = errors.New("delivery not resendable: its payload was not kept")

// Resendable reports whether a delivery may be resent: it failed (it is
// retrying, or dead after its last attempt). A pending or delivered one may
// not: it is on its way, or arrived.
func Resendable(state string) bool { return state == DeliveryRetrying || state == DeliveryDead }
