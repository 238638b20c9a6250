package edge

import (
	"context"
	"time"
)

// usageHours is how far back the portal shows a partner's rate-limit use.
const usageHours = 24

// usageHour is one hour of a partner's use: admitted heavy and read
// requests, and the refused ones of both buckets.
type usageHour struct {
	Start                time.Time
	Heavy, Read, Refused int64
}

// last24 is the partner's use of the last 24 hours, oldest first, the
// current hour last: the hourly counts GET /v1/partner/usage reports (the
// store's rows, which every node's flushes add to, and this node's counts
// not stored yet). Without a usage store every hour is empty.
func (s *Server) last24(ctx context.Context, partnerID string, now time.Time) ([]usageHour, error) {
	out := make([]usageHour, usageHours)
	cur := now.Unix() / 3600
	first := cur - usageHours + 1
	var hist map[int64]*hourTally
	if s.usage != nil {
		var err error
		if hist, err = s.usage.history(ctx, partnerID, time.Unix(first*3600, 0)); err != nil {
			return nil, err
		}
	}
	for i := range out {
		h := first + int64(i)
		out[i].Start = time.Unix(h*3600, 0).UTC()
		if t := hist[h*3600]; t != nil {
			out[i].Heavy, out[i].Read = int64(t[BucketHeavy].admitted), int64(t[BucketRead].admitted)
			out[i].Refused = int64(t[BucketHeavy].refused + t[BucketRead].refused)
		}
	}
	return out, nil
}
