// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demobackend

import (
	"net/http"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

type answer struct {
	status                int
	retryAfter, rateLimit string
	policy                string
}

func ask(t *testing.T, h http.Handler, spans int, seed byte) answer {
	t.Helper()
	resp := post(t, h, reqOpts{key: "k"}, traces(t, spans, seed))
	return answer{resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit"), resp.Header.Get("RateLimit-Policy")}
}

func quotaClock() *retrytest.Clock {
	return retrytest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

func TestQuotaAcceptsTheBurstThenRefusesUntilThereIsRoom(t *testing.T) {
	clock := quotaClock()
	b := New(Config{Mode: ModeQuota, Quota: Quota{Rate: 100, Burst: 100}, Now: clock.Now})
	h := b.Handler()

	// A full bucket of 100 takes 60 then 40.
	for i, n := range []int{60, 40} {
		if got := ask(t, h, n, byte(i)); got.status != http.StatusOK || got.retryAfter != "" {
			t.Fatalf("request %d of %d spans on a full bucket: %+v, want 200 without Retry-After", i, n, got)
		}
	}
	// Empty: 30 spans need 0.3 s at 100/s, rounded up to 1.
	if got := ask(t, h, 30, 3); got.status != http.StatusTooManyRequests || got.retryAfter != "1" {
		t.Fatalf("30 spans on an empty bucket: %+v, want 429 Retry-After 1", got)
	}
	// 250 ms later 25 are there, still short of 30: Retry-After stays 1.
	clock.Advance(250 * time.Millisecond)
	if got := ask(t, h, 30, 3); got.status != http.StatusTooManyRequests || got.retryAfter != "1" {
		t.Fatalf("30 spans with 25 in the bucket: %+v, want 429 Retry-After 1", got)
	}
	// 50 ms more: 30 are there.
	clock.Advance(50 * time.Millisecond)
	if got := ask(t, h, 30, 3); got.status != http.StatusOK {
		t.Fatalf("30 spans with 30 in the bucket: %+v, want 200", got)
	}

	s := b.Summary()
	if s.Requests != 5 || s.Accepted != 3 || s.Refused != 2 || s.ItemsAccepted != 130 {
		t.Fatalf("summary %+v: want 5 requests, 3 accepted, 2 refused, 130 items", s)
	}
	// The second 429 came 250 ms into the first one's Retry-After: 1.
	recs := b.Records()
	if recs[2].InRefusedWindow || !recs[3].InRefusedWindow || !recs[4].InRefusedWindow {
		t.Errorf("in-window flags %v %v %v, want false true true", recs[2].InRefusedWindow, recs[3].InRefusedWindow, recs[4].InRefusedWindow)
	}
}

func TestQuotaRetryAfterIsTheWaitRoundedUp(t *testing.T) {
	clock := quotaClock()
	b := New(Config{Mode: ModeQuota, Quota: Quota{Rate: 10, Burst: 100}, Now: clock.Now})
	h := b.Handler()
	if got := ask(t, h, 100, 1); got.status != http.StatusOK {
		t.Fatalf("100 spans on a full bucket of 100: %+v", got)
	}
	// 45 spans at 10/s: 4.5 s, rounded up to 5.
	if got := ask(t, h, 45, 2); got.status != http.StatusTooManyRequests || got.retryAfter != "5" {
		t.Fatalf("45 spans on an empty bucket at 10/s: %+v, want 429 Retry-After 5", got)
	}
	// Exactly 4 s short: 4, not 5.
	if got := ask(t, h, 40, 3); got.status != http.StatusTooManyRequests || got.retryAfter != "4" {
		t.Fatalf("40 spans on an empty bucket at 10/s: %+v, want 429 Retry-After 4", got)
	}
	// The bucket never holds more than its burst.
	clock.Advance(time.Hour)
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		if got := ask(t, h, 60, 4); got.status != want {
			t.Fatalf("request %d of 60 spans an hour later: %+v, want %d", i, got, want)
		}
	}
}

func TestQuotaRequestLargerThanTheBurstWaitsForAFullBucketAndLeavesDebt(t *testing.T) {
	clock := quotaClock()
	b := New(Config{Mode: ModeQuota, Quota: Quota{Rate: 10, Burst: 20}, Now: clock.Now})
	h := b.Handler()
	if got := ask(t, h, 10, 1); got.status != http.StatusOK {
		t.Fatalf("10 of 20: %+v", got)
	}
	// 50 spans never fit in 20; they need a full bucket: 10 more, 1 s.
	if got := ask(t, h, 50, 2); got.status != http.StatusTooManyRequests || got.retryAfter != "1" {
		t.Fatalf("50 spans, bucket 10 of 20: %+v, want 429 Retry-After 1", got)
	}
	clock.Advance(time.Second)
	if got := ask(t, h, 50, 2); got.status != http.StatusOK {
		t.Fatalf("50 spans on a full bucket of 20: %+v, want 200", got)
	}
	// Now 30 in debt: 1 span needs 31 tokens, 3.1 s.
	if got := ask(t, h, 1, 3); got.status != http.StatusTooManyRequests || got.retryAfter != "4" {
		t.Fatalf("1 span with the bucket 30 in debt at 10/s: %+v, want 429 Retry-After 4", got)
	}
}

func TestQuotaRateLimitHeadersOnEveryAnswer(t *testing.T) {
	clock := quotaClock()
	b := New(Config{Mode: ModeQuota, Quota: Quota{Rate: 100, Burst: 200, Headers: true}, Now: clock.Now})
	h := b.Handler()
	const policy = `"default";q=100;w=1`
	steps := []struct {
		advance time.Duration
		spans   int
		want    answer
	}{
		// 200 - 150 = 50 left; 150 to refill at 100/s = 1.5 s → 2.
		{0, 150, answer{http.StatusOK, "", `"default";r=50;t=2`, policy}},
		// 60 do not fit in 50: refused, nothing taken.
		{0, 60, answer{http.StatusTooManyRequests, "1", `"default";r=50;t=2`, policy}},
		// 0.5 s later: 100 there, 60 taken, 40 left, 160 to refill → 2 s.
		{500 * time.Millisecond, 60, answer{http.StatusOK, "", `"default";r=40;t=2`, policy}},
		// 2 s later: full.
		{2 * time.Second, 0, answer{http.StatusOK, "", `"default";r=200;t=0`, policy}},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if got := ask(t, h, s.spans, byte(i)); got != s.want {
			t.Errorf("step %d (%d spans): got %+v, want %+v", i, s.spans, got, s.want)
		}
	}
}

func TestQuotaNoRateLimitHeadersUnlessAsked(t *testing.T) {
	b := New(Config{Mode: ModeQuota, Quota: Quota{Rate: 100}})
	h := b.Handler()
	for i, n := range []int{100, 1} {
		got := ask(t, h, n, byte(i))
		if got.rateLimit != "" || got.policy != "" {
			t.Fatalf("request %d: RateLimit headers %+v without Quota.Headers", i, got)
		}
	}
}

func TestQuotaClosedWindowThenBucket(t *testing.T) {
	clock := quotaClock()
	b := New(Config{Mode: ModeQuota, ThrottleFor: 10 * time.Second, RetryAfter: 3, Quota: Quota{Rate: 100, Headers: true}, Now: clock.Now})
	h := b.Handler()
	// Closed for 10 s from the first request, whatever the bucket holds.
	if got := ask(t, h, 1, 1); got.status != http.StatusTooManyRequests || got.retryAfter != "3" || got.rateLimit != `"default";r=0;t=10` {
		t.Fatalf("first request: %+v, want 429 Retry-After 3, r=0 t=10", got)
	}
	clock.Advance(9500 * time.Millisecond)
	if got := ask(t, h, 1, 1); got.status != http.StatusTooManyRequests || got.rateLimit != `"default";r=0;t=1` {
		t.Fatalf("t=9.5s: %+v, want 429, r=0 t=1", got)
	}
	// Open: the bucket is full (100).
	clock.Advance(500 * time.Millisecond)
	if got := ask(t, h, 100, 2); got.status != http.StatusOK {
		t.Fatalf("t=10s, 100 spans: %+v, want 200", got)
	}
	if got := ask(t, h, 1, 3); got.status != http.StatusTooManyRequests || got.retryAfter != "1" {
		t.Fatalf("t=10s, bucket empty: %+v, want 429 Retry-After 1", got)
	}
}

func TestQuotaValidate(t *testing.T) {
	for _, q := range []Quota{{}, {Rate: -1}, {Rate: 10, Burst: nan()}} {
		if q.Validate() == nil {
			t.Errorf("%+v: no error", q)
		}
	}
	if err := (Quota{Rate: 10}).Validate(); err != nil {
		t.Errorf("rate 10: %v", err)
	}
}

func nan() float64 { var z float64; return z / z }

func TestFailFirstRefusesEachBatchOnce(t *testing.T) {
	b := New(Config{Mode: ModeFailFirst})
	h := b.Handler()
	// Batch 1, sent twice as different bytes (no key, gzip vs plain): the
	// second is its retry.
	if got := post(t, h, reqOpts{}, traces(t, 3, 1)); got.StatusCode != http.StatusServiceUnavailable || got.Header.Get("Retry-After") != "" {
		t.Fatalf("batch 1 first: %d Retry-After %q, want 503 without", got.StatusCode, got.Header.Get("Retry-After"))
	}
	if got := post(t, h, reqOpts{encoding: "gzip"}, gz(t, traces(t, 3, 1))); got.StatusCode != http.StatusOK {
		t.Fatalf("batch 1 retry: %d, want 200", got.StatusCode)
	}
	if got := post(t, h, reqOpts{}, traces(t, 3, 2)); got.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("batch 2 first: %d, want 503", got.StatusCode)
	}
	if s := b.Summary(); s.Unavailable != 2 || s.Accepted != 1 || s.DistinctItemsAccepted != 3 {
		t.Fatalf("summary %+v", s)
	}
}
