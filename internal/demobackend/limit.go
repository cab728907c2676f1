// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demobackend

import (
	"net/http"
	"strconv"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// limiterLocked answers rec in ModeLimiter; b.mu is held and b.first is
// set. For ThrottleFor after the first request every request is refused
// with 429 (Retry-After RetryAfter, or none), as in ModeThrottle, and the
// limiter is not asked; after that Config.Limiter decides (see
// limiter.Limiter.Admit): the answer's status, and its Retry-After and
// RateLimit fields as the limiter's hint says. A 429 or 503 with a
// Retry-After opens a refused window until it has passed. It returns the
// headers to send. A spec that fails limiter.Spec.Validate is answered
// 500 with the reason.
func (b *Backend) limiterLocked(now time.Time, rec *Record) http.Header {
	if b.limit == nil && b.limitErr == nil {
		b.limit, b.limitErr = limiter.New(b.cfg.Limiter)
	}
	if b.limitErr != nil {
		rec.Status, rec.Err = http.StatusInternalServerError, "demo backend: "+b.limitErr.Error()
		return nil
	}
	var h http.Header
	if end := b.first.Add(b.cfg.ThrottleFor); now.Before(end) {
		rec.Status = http.StatusTooManyRequests
		if b.cfg.RetryAfter > 0 {
			rec.RetryAfter = strconv.Itoa(b.cfg.RetryAfter)
		}
	} else {
		a := b.limit.Admit(now, limiter.Request{Items: rec.Items, Bytes: rec.BodyBytes})
		rec.Status, rec.RetryAfter, h = a.Status, a.Header.Get("Retry-After"), a.Header
		rec.Limited = !a.Accepted()
		rec.open = a.Accepted()
	}
	if n, err := strconv.Atoi(rec.RetryAfter); err == nil && rec.Status != http.StatusOK {
		b.windows = append(b.windows, window{start: now, end: now.Add(time.Duration(n) * time.Second)})
	}
	return h
}

// closeLocked ends an accepted request at an in-flight limiter, once its
// answer is going out; b.mu is held.
func (b *Backend) closeLocked(seq int, now time.Time) {
	b.limit.Done()
	b.records[seq].Answered = now
}

// Served returns the requests the limiter of ModeLimiter decided (not
// those of the ThrottleFor window, nor malformed ones), as
// limiter.Spec.Used counts them. An accepted request's Done is when its
// answer went out (after Config.Latency), its arrival's while it is open.
func Served(records []Record) []limiter.Served {
	var out []limiter.Served
	for _, r := range records {
		if r.Status != http.StatusOK && !r.Limited {
			continue
		}
		done := r.Answered
		if done.IsZero() {
			done = r.Arrival
		}
		out = append(out, limiter.Served{Request: limiter.Request{Items: r.Items, Bytes: r.BodyBytes}, Arrival: r.Arrival, Done: done, Accepted: r.Status == http.StatusOK})
	}
	return out
}
