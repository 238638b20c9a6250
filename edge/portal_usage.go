package edge

import (
	"sync"
	"sync/atomic"
	"time"
)

// usageHours is how far back the portal shows a partner's rate-limit use.
const usageHours = 24

// usageRecorder counts each partner's keyed requests per hour and bucket,
// and the refused ones, for the portal's last-24-hours view. It is in
// memory (a restart starts it again) and costs a map read and two atomic
// adds per request: the hour slots are a ring reused as hours pass.
type usageRecorder struct {
	partners sync.Map // partner id -> *partnerUsage
}

type partnerUsage struct {
	slots [usageHours]usageSlot
}

type usageSlot struct {
	hour                 atomic.Int64 // Unix hour the counts are of
	heavy, read, refused atomic.Int64
}

// note counts one request of a partner.
func (u *usageRecorder) note(partnerID string, b Bucket, allowed bool, now time.Time) {
	v, ok := u.partners.Load(partnerID)
	if !ok {
		v, _ = u.partners.LoadOrStore(partnerID, &partnerUsage{})
	}
	pu := v.(*partnerUsage)
	h := now.Unix() / 3600
	sl := &pu.slots[h%usageHours]
	if old := sl.hour.Load(); old != h && sl.hour.CompareAndSwap(old, h) {
		sl.heavy.Store(0)
		sl.read.Store(0)
		sl.refused.Store(0)
	}
	switch {
	case !allowed:
		sl.refused.Add(1)
	case b == BucketHeavy:
		sl.heavy.Add(1)
	default:
		sl.read.Add(1)
	}
}

// usageHour is one hour of a partner's use.
type usageHour struct {
	Start                time.Time
	Heavy, Read, Refused int64
}

// last24 returns the partner's use of the last 24 hours, oldest first,
// the current hour last.
func (u *usageRecorder) last24(partnerID string, now time.Time) []usageHour {
	out := make([]usageHour, usageHours)
	cur := now.Unix() / 3600
	v, ok := u.partners.Load(partnerID)
	for i := range out {
		h := cur - int64(usageHours-1-i)
		out[i].Start = time.Unix(h*3600, 0).UTC()
		if !ok {
			continue
		}
		sl := &v.(*partnerUsage).slots[h%usageHours]
		if sl.hour.Load() == h {
			out[i].Heavy, out[i].Read, out[i].Refused = sl.heavy.Load(), sl.read.Load(), sl.refused.Load()
		}
	}
	return out
}
