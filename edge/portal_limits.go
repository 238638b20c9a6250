package edge

import (
	"sync"
	"time"
)

// The portal's sign-in limits, per window of portalLimitWindow: codes asked
// for one address, codes asked from one client IP, codes checked from one
// client IP. With the 5 tries of each code, an address can be tried at
// most 15 times in 10 minutes, and guessing a 6-digit code stays hopeless.
const (
	portalLimitWindow  = 10 * time.Minute
	portalCodesPerMail = 3
	portalCodesPerIP   = 20
	portalChecksPerIP  = 30
	// portalLimitKeys bounds the counters kept; past it, expired windows
	// are swept, and if none are, the oldest goes.
	portalLimitKeys = 100_000
)

// portalLimits counts sign-in requests in fixed windows, in memory: a
// restart forgets them, which the codes' own 5 tries make harmless.
type portalLimits struct {
	mu   sync.Mutex
	wins map[string]*portalWindow
}

type portalWindow struct {
	start time.Time
	n     int
}

func newPortalLimits() *portalLimits { return &portalLimits{wins: map[string]*portalWindow{}} }

// take counts one request under each key and reports whether every key is
// within its limit; a refused request counts under none.
func (l *portalLimits) take(now time.Time, keys []string, limits []int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.wins) >= portalLimitKeys {
		l.sweep(now)
	}
	for i, k := range keys {
		if w := l.wins[k]; w != nil && now.Sub(w.start) < portalLimitWindow && w.n >= limits[i] {
			return false
		}
	}
	for _, k := range keys {
		w := l.wins[k]
		if w == nil || now.Sub(w.start) >= portalLimitWindow {
			w = &portalWindow{start: now}
			l.wins[k] = w
		}
		w.n++
	}
	return true
}

func (l *portalLimits) sweep(now time.Time) {
	var oldest string
	var oldestAt time.Time
	for k, w := range l.wins {
		if now.Sub(w.start) >= portalLimitWindow {
			delete(l.wins, k)
		} else if oldest == "" || w.start.Before(oldestAt) {
			oldest, oldestAt = k, w.start
		}
	}
	if len(l.wins) >= portalLimitKeys {
		delete(l.wins, oldest)
	}
}

func (l *portalLimits) allowCode(email, ip string, now time.Time) bool {
	return l.take(now, []string{"mail:" + email, "codeip:" + ip}, []int{portalCodesPerMail, portalCodesPerIP})
}

func (l *portalLimits) allowCheck(ip string, now time.Time) bool {
	return l.take(now, []string{"checkip:" + ip}, []int{portalChecksPerIP})
}
