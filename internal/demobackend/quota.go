// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demobackend

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Quota is the token bucket of ModeQuota: it holds at most Burst items
// (spans, data points or log records) and refills at Rate items per second.
// A request whose items fit is accepted and takes them out of the bucket;
// one whose items do not fit is refused with 429 and a Retry-After of the
// seconds until they would fit, rounded up.
type Quota struct {
	// Rate is the refill rate in items per second; it must be positive.
	Rate float64
	// Burst is the bucket's size in items; 0 or less means Rate (one
	// second's worth). A request with more items than Burst is accepted
	// only when the bucket is full, and leaves it in debt (below zero) by
	// the difference, so that the rate holds over time.
	Burst float64
	// Headers makes the backend send the IETF draft's RateLimit-Policy
	// ("default";q=<Rate>;w=1) and RateLimit ("default";r=<items left>;
	// t=<seconds until the bucket is full>) on every answer.
	Headers bool
}

// Validate reports a quota the bucket cannot follow.
func (q Quota) Validate() error {
	if !(q.Rate > 0) || math.IsInf(q.Rate, 0) {
		return fmt.Errorf("demo backend: quota rate %v must be a positive number of items per second", q.Rate)
	}
	if math.IsNaN(q.Burst) || math.IsInf(q.Burst, 0) {
		return fmt.Errorf("demo backend: quota burst %v must be a number of items (0 means the rate)", q.Burst)
	}
	return nil
}

func (q Quota) burst() float64 {
	if q.Burst <= 0 {
		return q.Rate
	}
	return q.Burst
}

// bucket is ModeQuota's state. Its zero value is a full bucket that starts
// refilling at its first use.
type bucket struct {
	started bool
	tokens  float64
	last    time.Time
}

// refill brings the bucket to now.
func (k *bucket) refill(q Quota, now time.Time) {
	if !k.started {
		k.started, k.tokens, k.last = true, q.burst(), now
		return
	}
	if d := now.Sub(k.last); d > 0 {
		k.tokens = min(q.burst(), k.tokens+q.Rate*d.Seconds())
		k.last = now
	}
}

// take decides a request of items at now. It returns whether the request is
// accepted and, when not, the seconds until its items fit (at least 1).
func (k *bucket) take(q Quota, now time.Time, items int) (bool, int) {
	k.refill(q, now)
	need := min(float64(items), q.burst())
	if k.tokens >= need {
		k.tokens -= float64(items)
		return true, 0
	}
	return false, max(1, ceilSeconds((need-k.tokens)/q.Rate))
}

// header is the RateLimit-Policy and RateLimit pair after a decision.
// untilOpen, when positive, is the seconds until a closed window ends:
// nothing is left until then.
func (k *bucket) header(q Quota, untilOpen int) http.Header {
	left := max(0, int64(math.Floor(k.tokens)))
	reset := ceilSeconds((q.burst() - k.tokens) / q.Rate)
	if untilOpen > 0 {
		left, reset = 0, max(reset, untilOpen)
	}
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=`+strconv.FormatInt(int64(math.Round(q.Rate)), 10)+";w=1")
	h.Set("RateLimit", `"default";r=`+strconv.FormatInt(left, 10)+";t="+strconv.Itoa(reset))
	return h
}

// ceilSeconds rounds seconds up to a whole number, forgiving the float
// error of a value that is whole already.
func ceilSeconds(s float64) int {
	if s <= 0 {
		return 0
	}
	return int(math.Ceil(s - 1e-9))
}

// quotaLocked answers rec in ModeQuota; b.mu is held and b.first is set.
// For ThrottleFor after the first request the bucket is closed: every
// request is refused with Retry-After RetryAfter, as in ModeThrottle (the
// bucket keeps refilling meanwhile). After that the bucket decides. A 429
// opens a refused window until its Retry-After has passed. It returns the
// RateLimit headers to send, if Quota.Headers asks for them. A quota that
// fails Validate accepts everything.
func (b *Backend) quotaLocked(now time.Time, rec *Record) http.Header {
	q := b.cfg.Quota
	if q.Validate() != nil {
		rec.Status = http.StatusOK
		return nil
	}
	b.bucket.refill(q, now)
	untilOpen := 0
	if end := b.first.Add(b.cfg.ThrottleFor); now.Before(end) {
		untilOpen = max(1, ceilSeconds(end.Sub(now).Seconds()))
		rec.Status = http.StatusTooManyRequests
		if b.cfg.RetryAfter > 0 {
			rec.RetryAfter = strconv.Itoa(b.cfg.RetryAfter)
		}
	} else if ok, wait := b.bucket.take(q, now, rec.Items); ok {
		rec.Status = http.StatusOK
	} else {
		rec.Status, rec.RetryAfter = http.StatusTooManyRequests, strconv.Itoa(wait)
	}
	if rec.Status == http.StatusTooManyRequests {
		end := now
		if n, err := strconv.Atoi(rec.RetryAfter); err == nil {
			end = now.Add(time.Duration(n) * time.Second)
		}
		b.windows = append(b.windows, window{start: now, end: end})
	}
	if !q.Headers {
		return nil
	}
	return b.bucket.header(q, untilOpen)
}

// failFirstLocked answers rec in ModeFailFirst; b.mu is held. The first
// request carrying a batch is answered 503 (no Retry-After), the next one
// 200. A batch is known by its first span ID, so that a client that
// encodes the batch again for its retry (other bytes, no key) is still
// recognised; metrics and logs, which carry no item IDs, are known by
// their body's hash.
func (b *Backend) failFirstLocked(rec *Record) {
	id := rec.BodyHash
	if len(rec.ItemIDs) > 0 {
		id = rec.ItemIDs[0]
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if b.seen[id] {
		rec.Status = http.StatusOK
		return
	}
	b.seen[id] = true
	rec.Status = http.StatusServiceUnavailable
}

// setHeaders copies h onto the answer's headers.
func setHeaders(w http.ResponseWriter, h http.Header) {
	for k, v := range h {
		w.Header()[k] = v
	}
}
