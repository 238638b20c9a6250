package portal

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// The sign-in limits, per window of LimitWindow: codes asked for one
// address, codes asked from one client IP, codes checked from one client
// IP. With the CodeMaxTries of each code, an address can be tried at most
// 15 times in 10 minutes, and guessing a 6-digit code stays hopeless.
//
// The counts are the store's, not a node's: in a cluster every node counts
// in the one shared store, so that N nodes allow what one node does, not N
// times as much.
const (
	LimitWindow    = 10 * time.Minute
	CodesPerMail   = 3
	CodesPerIP     = 20
	ChecksPerIP    = 30
	LimitRetention = time.Hour // a counter whose window started longer ago is swept
)

// Counter is one limit key's count in its window: the window starts at
// the key's first request and lasts LimitWindow. The zero Counter is a key
// never counted.
type Counter struct {
	Start time.Time
	N     int
}

// Limit is one key to count a request under, with its limit.
type Limit struct {
	Key string
	Max int
}

// The limits of a code request (per address and per client IP) and of a
// code check (per client IP). A key is a digest, so that the store keeps
// no address or IP of whoever asked.
func CodeRequestLimits(email, ip string) []Limit {
	return []Limit{{limitKey("mail", NormalizeEmail(email)), CodesPerMail}, {limitKey("codeip", ip), CodesPerIP}}
}

// CodeCheckLimits are the limits of one code check.
func CodeCheckLimits(ip string) []Limit { return []Limit{{limitKey("checkip", ip), ChecksPerIP}} }

func limitKey(kind, v string) string {
	d := sha256.Sum256([]byte("portal-limit\x00" + kind + "\x00" + v))
	return hex.EncodeToString(d[:])
}

// Take counts one request at now under every counter (cs[i] for
// limits[i]), changing cs, and reports whether each was within its limit;
// a refused request counts under none and leaves cs as they were.
func Take(cs []Counter, limits []Limit, now time.Time) bool {
	for i, c := range cs {
		if c.live(now) && c.N >= limits[i].Max {
			return false
		}
	}
	for i := range cs {
		if !cs[i].live(now) {
			cs[i] = Counter{Start: now.UTC()}
		}
		cs[i].N++
	}
	return true
}

// live reports whether the counter's window is still open at now.
func (c Counter) live(now time.Time) bool { return c.N > 0 && now.Sub(c.Start) < LimitWindow }
