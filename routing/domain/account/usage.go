package account

import (
	"fmt"
	"time"
)

// Usage buckets: the rate-limit classes a partner's requests count
// against, as GET /v1/partner/usage and the store name them.
const (
	UsageHeavy = "heavy"
	UsageRead  = "read"
)

// UsageHour is the length of one usage row: requests are counted by the
// UTC hour they came in.
const UsageHour = time.Hour

// UsageHistory is how far back GET /v1/partner/usage shows a partner's
// hours: the last 24, the current one included.
const UsageHistory = 24

// UsageCount is what one partner's requests of one bucket did in one hour:
// how many were admitted and how many refused by the rate limit. The store
// keeps one row per (partner, bucket, hour) and only ever adds counts to
// it, so that nodes sharing a store, and a node flushing twice, sum.
type UsageCount struct {
	PartnerID string
	Bucket    string
	// Hour is the start of the hour, UTC, a whole hour.
	Hour     time.Time
	Admitted uint64
	Refused  uint64
}

// UsageHourOf is the start of the hour t falls in.
func UsageHourOf(t time.Time) time.Time { return t.UTC().Truncate(UsageHour) }

// Check refuses a count the store must not keep: an unknown bucket, no
// partner, an hour that is not whole, or nothing counted.
func (c UsageCount) Check() error {
	switch {
	case c.PartnerID == "":
		return fmt.Errorf("account: usage count without a partner")
	case c.Bucket != UsageHeavy && c.Bucket != UsageRead:
		return fmt.Errorf("account: usage bucket %q is neither %s nor %s", c.Bucket, UsageHeavy, UsageRead)
	case !c.Hour.Equal(UsageHourOf(c.Hour)):
		return fmt.Errorf("account: usage hour %s is not the start of an hour", c.Hour)
	}
	return nil
}
