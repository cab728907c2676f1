// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demobackend

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// TestLimiterModeAnswersAsTheLimiter: a GCRA of 1 request/s with a burst of
// 2 and a bare 429 in front of the backend: two accepted, the third
// refused without any header, a second later one more accepted; the
// refusal is marked Limited and the accepted ones count as Served.
func TestLimiterModeAnswersAsTheLimiter(t *testing.T) {
	clock := quotaClock()
	b := New(Config{Mode: ModeLimiter, Limiter: limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintNone, Rate: 1, Burst: 2}, Now: clock.Now})
	h := b.Handler()
	for i, want := range []int{200, 200, 429} {
		got := ask(t, h, 10, byte(i))
		assert.Equal(t, answer{status: want}, got, "request %d", i)
	}
	clock.Advance(time.Second)
	assert.Equal(t, answer{status: 200}, ask(t, h, 10, 3))

	recs := b.Records()
	require.Len(t, recs, 4)
	assert.Equal(t, []bool{false, false, true, false}, []bool{recs[0].Limited, recs[1].Limited, recs[2].Limited, recs[3].Limited})
	assert.False(t, recs[3].InRefusedWindow, "a bare 429 opens no refused window")
	served := Served(recs)
	require.Len(t, served, 4)
	assert.Equal(t, 10, served[0].Items)
	assert.Equal(t, recs[0].BodyBytes, served[0].Bytes)
	assert.False(t, served[2].Accepted)
	s := b.Summary()
	assert.Equal(t, 1, s.Refused)
	assert.Equal(t, 3, s.Accepted)
}

// TestLimiterModeSendsTheHintsHeaders: Retry-After on a refusal of a
// bytes bucket, RateLimit fields on every answer of a window, 503 and no
// header from load shedding.
func TestLimiterModeSendsTheHintsHeaders(t *testing.T) {
	clock := quotaClock()
	body := traces(t, 10, 1)
	b := New(Config{Mode: ModeLimiter, Limiter: limiter.Spec{Kind: limiter.TokenBytes, Hint: limiter.HintRetryAfter, Rate: float64(len(body))}, Now: clock.Now})
	h := b.Handler()
	assert.Equal(t, answer{status: 200}, ask(t, h, 10, 1))
	assert.Equal(t, answer{status: 429, retryAfter: "1"}, ask(t, h, 10, 1))
	clock.Advance(500 * time.Millisecond)
	assert.True(t, b.Records()[1].Limited)
	// Sent within the first refusal's Retry-After.
	ask(t, h, 10, 1)
	assert.True(t, b.Records()[2].InRefusedWindow)

	b = New(Config{Mode: ModeLimiter, Limiter: limiter.Spec{Kind: limiter.FixedWindow, Hint: limiter.HintRateLimit, Limit: 1, Window: time.Hour}, Now: clock.Now})
	h = b.Handler()
	first := ask(t, h, 10, 1)
	assert.Equal(t, 200, first.status)
	assert.Equal(t, `"fixed-window";q=1;w=3600`, first.policy)
	assert.Contains(t, first.rateLimit, `"fixed-window";r=0;t=`)
	second := ask(t, h, 10, 1)
	assert.Equal(t, 429, second.status)
	assert.Empty(t, second.retryAfter, "the RateLimit hint sends no Retry-After")
	assert.Equal(t, `"fixed-window";q=1;w=3600`, second.policy)

	b = New(Config{Mode: ModeLimiter, Limiter: limiter.Spec{Kind: limiter.Shed, Hint: limiter.HintNone, Share: 0.5, Seed: 1}, Now: clock.Now})
	h = b.Handler()
	statuses := map[int]int{}
	for i := range 40 {
		a := ask(t, h, 1, byte(i))
		statuses[a.status]++
		assert.Equal(t, answer{status: a.status}, a, "no header")
	}
	assert.Equal(t, 40, statuses[200]+statuses[503], "200s and 503s only: %v", statuses)
	assert.Positive(t, statuses[503])
	assert.Equal(t, statuses[503], b.Summary().Unavailable)
}

// TestLimiterModeHoldsAcceptedRequestsOpen: an in-flight limit of 2 with a
// latency: two requests held open at once, a third refused meanwhile, and
// after both answered one more accepted; Answered is the end of each one's
// time open.
func TestLimiterModeHoldsAcceptedRequestsOpen(t *testing.T) {
	const latency = time.Second
	b := New(Config{Mode: ModeLimiter, Limiter: limiter.Spec{Kind: limiter.InFlight, Hint: limiter.HintNone, Limit: 2}, Latency: latency})
	h := b.Handler()
	codes := make([]int, 2)
	// The bodies are built here: traces may call t.Fatal, which must not
	// run on another goroutine.
	bodies := [][]byte{traces(t, 1, 1), traces(t, 1, 2)}
	var held sync.WaitGroup
	for i, body := range bodies {
		held.Go(func() { codes[i] = post(t, h, reqOpts{key: "k"}, body).StatusCode })
	}
	for {
		changed := b.Changed()
		if len(b.Records()) == 2 {
			break
		}
		<-changed
	}
	assert.Equal(t, 429, ask(t, h, 1, 9).status, "a third while two are open")
	held.Wait()
	assert.Equal(t, []int{200, 200}, codes)
	assert.Equal(t, 200, ask(t, h, 1, 10).status, "once they are answered")
	recs := b.Records()
	for _, r := range recs {
		if r.Status == http.StatusOK {
			assert.GreaterOrEqual(t, r.Answered.Sub(r.Arrival), latency)
		} else {
			assert.True(t, r.Answered.IsZero())
		}
	}
	used, ok := limiter.Spec{Kind: limiter.InFlight, Limit: 2}.Used(Served(recs), recs[0].Arrival, recs[3].Answered)
	assert.True(t, ok)
	assert.Greater(t, used, 0.5, "three requests open for a second each, two at a time")
}

// TestLimiterModeWindowThenLimiter: closed for ThrottleFor from the first
// request (bare 429s the limiter does not see), then the limiter decides.
func TestLimiterModeWindowThenLimiter(t *testing.T) {
	clock := quotaClock()
	b := New(Config{Mode: ModeLimiter, ThrottleFor: 5 * time.Second, Limiter: limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintNone, Rate: 1}, Now: clock.Now})
	h := b.Handler()
	assert.Equal(t, answer{status: 429}, ask(t, h, 1, 1))
	clock.Advance(4 * time.Second)
	assert.Equal(t, answer{status: 429}, ask(t, h, 1, 1))
	clock.Advance(time.Second)
	assert.Equal(t, answer{status: 200}, ask(t, h, 1, 1))
	assert.Equal(t, answer{status: 429}, ask(t, h, 1, 1))
	recs := b.Records()
	assert.Equal(t, []bool{false, false, false, true}, []bool{recs[0].Limited, recs[1].Limited, recs[2].Limited, recs[3].Limited})
	assert.Len(t, Served(recs), 2, "the window's refusals are not the limiter's")
}

// TestLimiterModeRefusesABadSpecLoudly: a spec the limiter cannot follow
// is answered 500 with the reason, not accepted silently.
func TestLimiterModeRefusesABadSpecLoudly(t *testing.T) {
	b := New(Config{Mode: ModeLimiter, Limiter: limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintNone}})
	resp := post(t, b.Handler(), reqOpts{}, traces(t, 1, 1))
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Contains(t, b.Records()[0].Err, "gcra rate 0 must be a positive number")
}
