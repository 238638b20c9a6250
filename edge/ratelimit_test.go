package edge

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLimiterExactUnderConcurrency(t *testing.T) {
	const limit, workers, perWorker = 1000, 64, 50
	l := NewLimiter()
	now := time.Unix(1_700_000_000, 0)
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				if l.Allow(RateKey{Bucket: BucketHeavy, Partner: "partner"}, limit, now).Allowed {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Fatalf("allowed %d of %d requests with limit %d", got, workers*perWorker, limit)
	}
}

func TestLimiterWindow(t *testing.T) {
	l := NewLimiter()
	t0 := time.Unix(1_700_000_000, 0)
	steps := []struct {
		at        time.Duration
		allowed   bool
		remaining int
		reset     int64
	}{
		{0, true, 2, t0.Unix() + 60},
		{10 * time.Second, true, 1, t0.Unix() + 60},
		{20 * time.Second, true, 0, t0.Unix() + 60},
		{59 * time.Second, false, 0, t0.Unix() + 60},
		{60 * time.Second, true, 2, t0.Unix() + 120},
	}
	for i, s := range steps {
		got := l.Allow(RateKey{Partner: "k"}, 3, t0.Add(s.at))
		if got.Allowed != s.allowed || got.Remaining != s.remaining || got.Reset != s.reset || got.Limit != 3 {
			t.Fatalf("step %d: got %+v, want allowed=%v remaining=%d reset=%d", i, got, s.allowed, s.remaining, s.reset)
		}
	}
	if other := l.Allow(RateKey{Partner: "other"}, 3, t0); !other.Allowed || other.Remaining != 2 {
		t.Fatalf("keys must not share windows: %+v", other)
	}
}

func TestLimiterSweepsExpiredWindows(t *testing.T) {
	l := NewLimiter()
	t0 := time.Unix(1_700_000_000, 0)
	for i := 0; i < 5000; i++ {
		l.Allow(RateKey{Partner: "old-" + strconv.Itoa(i)}, 10, t0)
	}
	later := t0.Add(2 * Window)
	for i := 0; i < 1000; i++ {
		l.Allow(RateKey{Partner: "new-" + strconv.Itoa(i)}, 1<<30, later)
	}
	left := 0
	for i := range l.shards {
		for k := range l.shards[i].windows {
			if strings.HasPrefix(k.Partner, "old-") {
				left++
			}
		}
	}
	if left != 0 {
		t.Fatalf("%d expired windows were not swept", left)
	}
}
