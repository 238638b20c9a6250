package edge

import (
	"strconv"
	"time"
)

// The rate-limit headers follow the IETF HTTPAPI working group's
// "RateLimit header fields for HTTP", draft-ietf-httpapi-ratelimit-headers-11
// (May 2026), whose fields are Structured Fields (RFC 9651) lists of
// quota policies named by a string:
//
//	RateLimit-Policy: "heavy";q=2000;w=60
//	RateLimit: "heavy";r=1999;t=37
//
// RateLimit-Policy gives the policy the request counted against: its name
// (the bucket, "heavy" or "read"), its quota q (requests per window) and
// its window w in seconds. RateLimit gives what is left of it: r the
// requests remaining in the current window and t the seconds until the
// window resets (0 when it resets this second). Both are read from the one
// rate-limit decision of the request (Request.Rate, what Limiter.Allow
// decided), the same one meta.rateLimit shows, so the three never
// disagree. A refused request (429 RATE_LIMIT) also carries Retry-After
// (RFC 9110, section 10.2.3) in seconds: when its window resets, at least 1.
//
// Answers that counted against no bucket (GET /v1/ping without a key, the
// probes, /metrics) carry none of them.
var (
	headerRateLimitPolicy = []byte("RateLimit-Policy")
	headerRateLimit       = []byte("RateLimit")
	headerRetryAfter      = []byte("Retry-After")
)

// setRateHeaders writes the request's rate-limit headers, if it counted
// against a bucket.
func setRateHeaders(r *Request) {
	if r.Rate.Limit <= 0 || r.Rate.Bucket == BucketNone {
		return
	}
	var buf [64]byte
	h := &r.Ctx.Response.Header
	h.SetBytesKV(headerRateLimitPolicy, appendRatePolicy(buf[:0], r.Rate))
	h.SetBytesKV(headerRateLimit, appendRateLimit(buf[:0], r.Rate, r.Now))
	if !r.Rate.Allowed {
		var num [20]byte
		h.SetBytesKV(headerRetryAfter, strconv.AppendInt(num[:0], retryAfter(r.Rate, r.Now), 10))
	}
}

// appendRatePolicy appends the RateLimit-Policy field value of rr.
func appendRatePolicy(b []byte, rr RateResult) []byte {
	b = append(b, '"')
	b = append(b, rr.Bucket.String()...)
	b = append(b, `";q=`...)
	b = strconv.AppendInt(b, int64(rr.Limit), 10)
	b = append(b, ";w="...)
	return strconv.AppendInt(b, int64(Window/time.Second), 10)
}

// appendRateLimit appends the RateLimit field value of rr at now.
func appendRateLimit(b []byte, rr RateResult, now time.Time) []byte {
	b = append(b, '"')
	b = append(b, rr.Bucket.String()...)
	b = append(b, `";r=`...)
	b = strconv.AppendInt(b, int64(max(rr.Remaining, 0)), 10)
	b = append(b, ";t="...)
	return strconv.AppendInt(b, max(rr.Reset-now.Unix(), 0), 10)
}

// retryAfter is the Retry-After of a refused request: the seconds until its
// window resets, at least 1 (0 would invite a retry in the same second,
// which the window still refuses).
func retryAfter(rr RateResult, now time.Time) int64 {
	return max(rr.Reset-now.Unix(), 1)
}
