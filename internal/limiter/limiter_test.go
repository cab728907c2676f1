// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package limiter

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// t0 is a whole multiple of every window below, so that fixed windows
// start at it.
var t0 = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// step is one request of a table test: sent at t0+at (Done first for the
// in-flight limiter when done is set), and what the limiter must answer.
type step struct {
	at         time.Duration
	items      int
	bytes      int
	done       int    // Done calls before the request
	status     int    // 200, 429 or 503
	retryAfter string // "" when none
	policy     string // RateLimit-Policy, "" when none
	limit      string // RateLimit, "" when none
}

func ok(at time.Duration) step { return step{at: at, status: http.StatusOK} }
func refused(at time.Duration, retryAfter string) step {
	return step{at: at, status: http.StatusTooManyRequests, retryAfter: retryAfter}
}

func TestAdmit(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		spec  Spec
		steps []step
	}{
		{
			name:  "unlimited accepts everything",
			spec:  Spec{Kind: Unlimited, Hint: HintNone},
			steps: []step{ok(0), ok(0), ok(0), ok(ms)},
		},
		{
			// 100 items/s, burst 200: two batches of 100 at once, then one
			// every second; the refusal's Retry-After is the time until 100
			// items are back, rounded up.
			name: "token bucket in items, Retry-After",
			spec: Spec{Kind: TokenItems, Hint: HintRetryAfter, Rate: 100, Burst: 200},
			steps: []step{
				{items: 100, status: 200}, {items: 100, status: 200},
				{at: 100 * ms, items: 100, status: 429, retryAfter: "1"},
				{at: time.Second, items: 100, status: 200},
				{at: time.Second, items: 100, status: 429, retryAfter: "1"},
				{at: 1500 * ms, items: 50, status: 200},
				{at: 1500 * ms, items: 50, status: 429, retryAfter: "1"},
			},
		},
		{
			// A request bigger than the bucket goes through when it is full
			// and leaves it in debt: 3 s of refill before the next 100.
			name: "token bucket in items, a request over the burst, bare",
			spec: Spec{Kind: TokenItems, Hint: HintNone, Rate: 100},
			steps: []step{
				{items: 300, status: 200},
				{at: 2 * time.Second, items: 100, status: 429},
				{at: 3 * time.Second, items: 100, status: 200},
			},
		},
		{
			name: "token bucket in bytes counts bytes, not items",
			spec: Spec{Kind: TokenBytes, Hint: HintRetryAfter, Rate: 1000, Burst: 2000},
			steps: []step{
				{items: 5000, bytes: 1500, status: 200},
				{items: 1, bytes: 600, status: 429, retryAfter: "1"},
				{items: 1, bytes: 500, status: 200},
				{at: 500 * ms, items: 1, bytes: 1000, status: 429, retryAfter: "1"},
				{at: 1500 * ms, items: 1, bytes: 1000, status: 200},
				// 2000 bytes wanted, nothing there: 2 s.
				{at: 1500 * ms, items: 1, bytes: 2500, status: 429, retryAfter: "2"},
			},
		},
		{
			name: "token bucket in items, RateLimit fields on every answer",
			spec: Spec{Kind: TokenItems, Hint: HintRateLimit, Rate: 100, Burst: 200},
			steps: []step{
				{items: 150, status: 200, policy: `"token-items";q=100;w=1`, limit: `"token-items";r=50;t=2`},
				{items: 100, status: 429, policy: `"token-items";q=100;w=1`, limit: `"token-items";r=50;t=2`},
				{at: 250 * ms, items: 75, status: 200, policy: `"token-items";q=100;w=1`, limit: `"token-items";r=0;t=2`},
			},
		},
		{
			name: "token bucket in bytes announces content-bytes",
			spec: Spec{Kind: TokenBytes, Hint: HintRateLimit, Rate: 1000, Burst: 2000},
			steps: []step{
				{bytes: 500, status: 200, policy: `"token-bytes";q=1000;w=1;qu="content-bytes"`, limit: `"token-bytes";r=1500;t=1`},
			},
		},
		{
			// 10 requests/s, burst 3: three at once, then one every 100 ms.
			name: "GCRA, bare 429",
			spec: Spec{Kind: GCRA, Hint: HintNone, Rate: 10, Burst: 3},
			steps: []step{
				ok(0), ok(0), ok(0), refused(0, ""), refused(50*ms, ""),
				ok(100 * ms), refused(150*ms, ""), ok(200 * ms),
				// Idle for a second: the burst is whole again, no more.
				ok(1200 * ms), ok(1200 * ms), ok(1200 * ms), refused(1200*ms, ""),
			},
		},
		{
			// Without a burst: one request per interval, the wait rounded
			// up to a whole second.
			name: "GCRA without a burst, Retry-After",
			spec: Spec{Kind: GCRA, Hint: HintRetryAfter, Rate: 0.5},
			steps: []step{
				ok(0), refused(100*ms, "2"), refused(1100*ms, "1"), ok(2 * time.Second), refused(2*time.Second, "2"),
			},
		},
		{
			name: "GCRA, RateLimit fields",
			spec: Spec{Kind: GCRA, Hint: HintRateLimit, Rate: 10, Burst: 3},
			steps: []step{
				{status: 200, policy: `"gcra";q=10;w=1`, limit: `"gcra";r=2;t=1`},
				{status: 200, policy: `"gcra";q=10;w=1`, limit: `"gcra";r=1;t=1`},
				{status: 200, policy: `"gcra";q=10;w=1`, limit: `"gcra";r=0;t=1`},
				{status: 429, policy: `"gcra";q=10;w=1`, limit: `"gcra";r=0;t=1`},
				{at: 5 * time.Second, status: 200, policy: `"gcra";q=10;w=1`, limit: `"gcra";r=2;t=1`},
			},
		},
		{
			// 2 requests per second, windows on whole seconds: the count
			// starts afresh at each.
			name: "fixed window of 1 s, Retry-After until the window ends",
			spec: Spec{Kind: FixedWindow, Hint: HintRetryAfter, Limit: 2, Window: time.Second},
			steps: []step{
				ok(900 * ms), ok(950 * ms), refused(990*ms, "1"),
				ok(1000 * ms), ok(1001 * ms), refused(1500*ms, "1"), ok(2999 * ms),
			},
		},
		{
			// Its windows start 300 ms past the clock's seconds: the
			// request at 1.0 s is still in the window that began at 0.3 s.
			name: "fixed window of 1 s off the clock's seconds by 300 ms",
			spec: Spec{Kind: FixedWindow, Hint: HintRetryAfter, Limit: 2, Window: time.Second, Offset: 300 * ms},
			steps: []step{
				ok(900 * ms), ok(950 * ms), refused(1000*ms, "1"), refused(1299*ms, "1"),
				ok(1300 * ms), ok(2000 * ms), refused(2299*ms, "1"), ok(2300 * ms),
			},
		},
		{
			// Refuses everything for 2 s of every 6 s, from 1 s past the
			// clock's multiples of 6 s; Retry-After says when it is up.
			name: "flapping, 2 s down of every 6 s, Retry-After",
			spec: Spec{Kind: Flapping, Hint: HintRetryAfter, Window: 6 * time.Second, Down: 2 * time.Second, Offset: time.Second},
			steps: []step{
				ok(0), ok(999 * ms), refused(1000*ms, "2"), refused(2500*ms, "1"),
				ok(3000 * ms), ok(3000 * ms), ok(6999 * ms), refused(7000*ms, "2"), ok(9000 * ms),
			},
		},
		{
			name: "fixed window of 10 s, RateLimit fields",
			spec: Spec{Kind: FixedWindow, Hint: HintRateLimit, Limit: 2, Window: 10 * time.Second},
			steps: []step{
				{at: 2500 * ms, status: 200, policy: `"fixed-window";q=2;w=10`, limit: `"fixed-window";r=1;t=8`},
				{at: 3 * time.Second, status: 200, policy: `"fixed-window";q=2;w=10`, limit: `"fixed-window";r=0;t=7`},
				{at: 4 * time.Second, status: 429, policy: `"fixed-window";q=2;w=10`, limit: `"fixed-window";r=0;t=6`},
				{at: 10 * time.Second, status: 200, policy: `"fixed-window";q=2;w=10`, limit: `"fixed-window";r=1;t=10`},
			},
		},
		{
			// 2 per second in any second: the third waits until the first
			// has left the window.
			name: "sliding window, Retry-After until the oldest leaves",
			spec: Spec{Kind: SlidingWindow, Hint: HintRetryAfter, Limit: 2, Window: time.Second},
			steps: []step{
				ok(900 * ms), ok(950 * ms), refused(1000*ms, "1"), refused(1899*ms, "1"),
				ok(1900 * ms), refused(1920*ms, "1"), ok(1950 * ms),
			},
		},
		{
			name: "sliding window of 10 s, RateLimit fields",
			spec: Spec{Kind: SlidingWindow, Hint: HintRateLimit, Limit: 2, Window: 10 * time.Second},
			steps: []step{
				{status: 200, policy: `"sliding-window";q=2;w=10`, limit: `"sliding-window";r=1;t=10`},
				{at: 4 * time.Second, status: 200, policy: `"sliding-window";q=2;w=10`, limit: `"sliding-window";r=0;t=6`},
				{at: 5 * time.Second, status: 429, policy: `"sliding-window";q=2;w=10`, limit: `"sliding-window";r=0;t=5`},
				{at: 10 * time.Second, status: 200, policy: `"sliding-window";q=2;w=10`, limit: `"sliding-window";r=0;t=4`},
			},
		},
		{
			// Two open at most: a third is refused until one is done.
			name: "in-flight limit, bare 429",
			spec: Spec{Kind: InFlight, Hint: HintNone, Limit: 2},
			steps: []step{
				ok(0), ok(0), refused(0, ""), refused(time.Second, ""),
				{at: time.Second, done: 1, status: 200}, refused(time.Second, ""),
				{at: 2 * time.Second, done: 2, status: 200},
			},
		},
		{
			name:  "in-flight limit, Retry-After 1 where nothing tells",
			spec:  Spec{Kind: InFlight, Hint: HintRetryAfter, Limit: 1},
			steps: []step{ok(0), refused(0, "1")},
		},
		{
			name: "in-flight limit, RateLimit fields in concurrent requests",
			spec: Spec{Kind: InFlight, Hint: HintRateLimit, Limit: 2},
			steps: []step{
				{status: 200, policy: `"in-flight";q=2;qu="concurrent-requests"`, limit: `"in-flight";r=1`},
				{status: 200, policy: `"in-flight";q=2;qu="concurrent-requests"`, limit: `"in-flight";r=0`},
				{status: 429, policy: `"in-flight";q=2;qu="concurrent-requests"`, limit: `"in-flight";r=0`},
				{done: 2, status: 200, policy: `"in-flight";q=2;qu="concurrent-requests"`, limit: `"in-flight";r=1`},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(tc.spec)
			require.NoError(t, err)
			for i, s := range tc.steps {
				for range s.done {
					l.Done()
				}
				a := l.Admit(t0.Add(s.at), Request{Items: s.items, Bytes: s.bytes})
				where := fmt.Sprintf("step %d at %s", i, s.at)
				assert.Equal(t, s.status, a.Status, where)
				assert.Equal(t, s.status == http.StatusOK, a.Accepted(), where)
				assert.Equal(t, s.retryAfter, a.Header.Get("Retry-After"), where+": Retry-After")
				assert.Equal(t, s.policy, a.Header.Get("RateLimit-Policy"), where+": RateLimit-Policy")
				assert.Equal(t, s.limit, a.Header.Get("RateLimit"), where+": RateLimit")
			}
		})
	}
}

// TestRandomShare: sporadic refusals and shedding refuse about their share,
// with the status and header their hint says, the same requests for the
// same seed and other requests for another.
func TestRandomShare(t *testing.T) {
	for _, tc := range []struct {
		spec       Spec
		status     int
		retryAfter string
	}{
		{Spec{Kind: Sporadic, Hint: HintNone, Share: 0.05}, http.StatusTooManyRequests, ""},
		{Spec{Kind: Sporadic, Hint: HintRetryAfter, Share: 0.02}, http.StatusTooManyRequests, "1"},
		{Spec{Kind: Shed, Hint: HintNone, Share: 0.5}, http.StatusServiceUnavailable, ""},
		{Spec{Kind: Shed, Hint: HintRetryAfter, Share: 0.3}, http.StatusServiceUnavailable, "1"},
	} {
		t.Run(tc.spec.String(), func(t *testing.T) {
			const n = 20000
			run := func(seed uint64) []bool {
				s := tc.spec
				s.Seed = seed
				l, err := New(s)
				require.NoError(t, err)
				out := make([]bool, n)
				for i := range out {
					a := l.Admit(t0.Add(time.Duration(i)*time.Millisecond), Request{Items: 1})
					out[i] = a.Accepted()
					if !a.Accepted() {
						assert.Equal(t, tc.status, a.Status)
						assert.Equal(t, tc.retryAfter, a.Header.Get("Retry-After"))
					} else {
						assert.Nil(t, a.Header)
					}
				}
				return out
			}
			a, b, c := run(1), run(1), run(2)
			assert.Equal(t, a, b, "the same seed refuses the same requests")
			assert.NotEqual(t, a, c, "another seed refuses others")

			// Requests named by an ID are refused alike in any order.
			s := tc.spec
			s.Seed = 7
			forward, err := New(s)
			require.NoError(t, err)
			backward, err := New(s)
			require.NoError(t, err)
			fw, bw := make([]int, 200), make([]int, 200)
			for i := range 200 {
				fw[i] = forward.Admit(t0, Request{ID: uint64(i + 1)}).Status
				bw[199-i] = backward.Admit(t0, Request{ID: uint64(200 - i)}).Status
			}
			assert.Equal(t, fw, bw)
			assert.Contains(t, fw, tc.status)
			refusedN := 0
			for _, x := range a {
				if !x {
					refusedN++
				}
			}
			// Binomial: 4 standard deviations either way.
			share := float64(refusedN) / n
			sd := 4 * sqrt(tc.spec.Share*(1-tc.spec.Share)/n)
			assert.InDelta(t, tc.spec.Share, share, sd, "share refused")
		})
	}
}

func sqrt(x float64) float64 {
	z := x
	for range 50 {
		z = (z + x/z) / 2
	}
	return z
}

// TestLongRunRate: offered twice its limit for a minute, every rate
// limiter accepts its limit (give or take its burst or one window), and an
// in-flight limit never has more than its limit open.
func TestLongRunRate(t *testing.T) {
	const span = time.Minute
	for _, tc := range []struct {
		spec     Spec
		every    time.Duration // a request of 10 items, 100 bytes
		wantReqs float64       // accepted requests over the minute
	}{
		{Spec{Kind: TokenItems, Hint: HintNone, Rate: 100, Burst: 100}, 50 * time.Millisecond, 600 + 10},
		{Spec{Kind: TokenBytes, Hint: HintNone, Rate: 1000, Burst: 2000}, 50 * time.Millisecond, 600 + 20},
		{Spec{Kind: GCRA, Hint: HintNone, Rate: 10, Burst: 5}, 50 * time.Millisecond, 600 + 5},
		{Spec{Kind: FixedWindow, Hint: HintNone, Limit: 10, Window: time.Second}, 50 * time.Millisecond, 600},
		{Spec{Kind: FixedWindow, Hint: HintNone, Limit: 100, Window: 10 * time.Second}, 50 * time.Millisecond, 600},
		{Spec{Kind: SlidingWindow, Hint: HintNone, Limit: 10, Window: time.Second}, 50 * time.Millisecond, 600},
	} {
		t.Run(tc.spec.String(), func(t *testing.T) {
			l, err := New(tc.spec)
			require.NoError(t, err)
			accepted := 0
			for at := time.Duration(0); at < span; at += tc.every {
				if l.Admit(t0.Add(at), Request{Items: 10, Bytes: 100}).Accepted() {
					accepted++
				}
			}
			assert.InDelta(t, tc.wantReqs, float64(accepted), 1)
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string // a part of the error, "" for none
	}{
		{Spec{Kind: GCRA, Hint: HintNone, Rate: 10, Burst: 2}, ""},
		{Spec{Kind: Shed, Hint: HintNone, Share: 0.5}, ""},
		{Spec{Kind: "leaky", Hint: HintNone}, `kind "leaky": use one of unlimited, token-items`},
		{Spec{Kind: GCRA, Hint: "retry", Rate: 1}, `hint "retry": use none, retry-after or ratelimit`},
		{Spec{Kind: Sporadic, Hint: HintRateLimit, Share: 0.05}, "no quota to announce"},
		{Spec{Kind: Unlimited, Hint: HintRateLimit}, "no quota to announce"},
		{Spec{Kind: GCRA, Hint: HintNone}, "gcra rate 0 must be a positive number"},
		{Spec{Kind: TokenItems, Hint: HintNone, Rate: nan()}, "rate NaN"},
		{Spec{Kind: TokenBytes, Hint: HintNone, Rate: 1, Burst: -1}, "burst -1 must be 0"},
		{Spec{Kind: FixedWindow, Hint: HintNone, Limit: 5}, "window 0s must be positive"},
		{Spec{Kind: SlidingWindow, Hint: HintNone, Window: time.Second}, "limit 0 must be at least 1"},
		{Spec{Kind: InFlight, Hint: HintNone, Limit: 2, Rate: 3}, "in-flight limiter has no rate"},
		{Spec{Kind: Shed, Hint: HintNone, Share: 0.6}, "shed share 0.6 must be above 0 and at most 0.5"},
		{Spec{Kind: Sporadic, Hint: HintNone, Share: 1}, "sporadic share 1 must be above 0 and below 1"},
		{Spec{Kind: GCRA, Hint: HintNone, Rate: 1, Share: 0.1}, "refuses no random share"},
		{Spec{Kind: FixedWindow, Hint: HintNone, Limit: 5, Window: time.Second, Offset: 999 * time.Millisecond}, ""},
		{Spec{Kind: FixedWindow, Hint: HintNone, Limit: 5, Window: time.Second, Offset: time.Second}, "offset 1s must be at least 0 and below its window 1s"},
		{Spec{Kind: FixedWindow, Hint: HintNone, Limit: 5, Window: time.Second, Offset: -time.Millisecond}, "offset -1ms must be at least 0"},
		{Spec{Kind: SlidingWindow, Hint: HintNone, Limit: 5, Window: time.Second, Offset: time.Millisecond}, "sliding-window limiter has no window offset"},
		{Spec{Kind: Flapping, Hint: HintNone, Window: 6 * time.Second, Down: 2 * time.Second, Offset: time.Second}, ""},
		{Spec{Kind: Flapping, Hint: HintNone, Window: 6 * time.Second}, "flapping down 0s must be above 0 and below its window 6s"},
		{Spec{Kind: Flapping, Hint: HintNone, Window: 6 * time.Second, Down: 6 * time.Second}, "flapping down 6s must be above 0"},
		{Spec{Kind: Flapping, Hint: HintNone, Down: time.Second}, "flapping window 0s must be positive"},
		{Spec{Kind: Flapping, Hint: HintNone, Window: 6 * time.Second, Down: time.Second, Offset: 6 * time.Second}, "flapping offset 6s must be at least 0 and below its window 6s"},
		{Spec{Kind: Flapping, Hint: HintRateLimit, Window: 6 * time.Second, Down: time.Second}, "no quota to announce"},
		{Spec{Kind: Flapping, Hint: HintNone, Window: 6 * time.Second, Down: time.Second, Limit: 3}, "flapping limiter has no limit"},
		{Spec{Kind: GCRA, Hint: HintNone, Rate: 1, Down: time.Second}, "never down on a schedule"},
	} {
		err := tc.spec.Validate()
		_, newErr := New(tc.spec)
		if tc.want == "" {
			assert.NoError(t, err, "%+v", tc.spec)
			assert.NoError(t, newErr)
			continue
		}
		if assert.Error(t, err, "%+v", tc.spec) {
			assert.Contains(t, err.Error(), tc.want)
		}
		assert.Error(t, newErr)
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: GCRA, Hint: HintNone, Rate: 10, Burst: 2}, "GCRA of 10 requests/s (burst 2), bare 429"},
		{Spec{Kind: TokenBytes, Hint: HintRateLimit, Rate: 15e6, Burst: 30e6}, "token bucket of 15000000 bytes/s (burst 30000000), RateLimit fields"},
		{Spec{Kind: FixedWindow, Hint: HintRetryAfter, Limit: 50, Window: 10 * time.Second}, "fixed window of 50 requests per 10s, Retry-After"},
		{Spec{Kind: FixedWindow, Hint: HintNone, Limit: 20, Window: time.Second, Offset: 300 * time.Millisecond}, "fixed window of 20 requests per 1s (starting 300ms past the clock's multiples), bare 429"},
		{Spec{Kind: Shed, Hint: HintNone, Share: 0.5}, "load shedding: 50% of requests answered 503, no Retry-After"},
		{Spec{Kind: Sporadic, Hint: HintNone, Share: 0.05}, "no limit, 5% of requests refused at random, bare 429"},
		{Spec{Kind: Unlimited, Hint: HintNone}, "no limit"},
		{Spec{Kind: Flapping, Hint: HintNone, Window: 6 * time.Second, Down: 2 * time.Second}, "no limit, every request refused for 2s of every 6s, bare 429"},
	} {
		assert.Equal(t, tc.want, tc.spec.String())
	}
}

func TestRequestRate(t *testing.T) {
	assert.InDelta(t, 4, Spec{Kind: TokenItems, Rate: 2000}.RequestRate(500, 3000, 0), 1e-9)
	assert.InDelta(t, 10, Spec{Kind: TokenBytes, Rate: 30000}.RequestRate(500, 3000, 0), 1e-9)
	assert.InDelta(t, 7, Spec{Kind: GCRA, Rate: 7}.RequestRate(500, 3000, 0), 1e-9)
	assert.InDelta(t, 5, Spec{Kind: FixedWindow, Limit: 50, Window: 10 * time.Second}.RequestRate(1, 1, 0), 1e-9)
	assert.InDelta(t, 20, Spec{Kind: InFlight, Limit: 2}.RequestRate(1, 1, 100*time.Millisecond), 1e-9)
	assert.Zero(t, Spec{Kind: InFlight, Limit: 2}.RequestRate(1, 1, 0))
	assert.Zero(t, Spec{Kind: Sporadic, Share: 0.05}.RequestRate(1, 1, 0))
}

func TestUsed(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	served := []Served{
		{Request: Request{Items: 100, Bytes: 1000}, Arrival: sec(0), Done: sec(0.5), Accepted: true},
		{Request: Request{Items: 100, Bytes: 1000}, Arrival: sec(1), Done: sec(1.1), Accepted: false},
		{Request: Request{Items: 300, Bytes: 500}, Arrival: sec(2), Done: sec(4), Accepted: true},
		{Request: Request{Items: 50, Bytes: 100}, Arrival: sec(11), Done: sec(12), Accepted: true}, // after to
	}
	from, to := sec(0), sec(10)
	for _, tc := range []struct {
		spec Spec
		want float64
	}{
		// 400 items of burst 100 + 10 × 100.
		{Spec{Kind: TokenItems, Rate: 100}, 400.0 / 1100},
		// 1500 bytes of 2000 + 10 × 1000.
		{Spec{Kind: TokenBytes, Rate: 1000, Burst: 2000}, 1500.0 / 12000},
		// 2 requests of 1 + 10 × 0.5.
		{Spec{Kind: GCRA, Rate: 0.5}, 2.0 / 6},
		// 2 requests of 2 × (1 + 10/5).
		{Spec{Kind: FixedWindow, Limit: 2, Window: 5 * time.Second}, 2.0 / 6},
		{Spec{Kind: SlidingWindow, Limit: 1, Window: time.Second}, 2.0 / 11},
		// 0.5 + 2 request-seconds open of 2 × 10.
		{Spec{Kind: InFlight, Limit: 2}, 2.5 / 20},
	} {
		got, ok := tc.spec.Used(served, from, to)
		assert.True(t, ok, tc.spec.String())
		assert.InDelta(t, tc.want, got, 1e-9, tc.spec.String())
	}
	// A request open across to counts up to to only.
	got, _ := Spec{Kind: InFlight, Limit: 1}.Used(served, sec(3), sec(4.5))
	assert.InDelta(t, 1.0/1.5, got, 1e-9)
	for _, s := range []Spec{{Kind: Unlimited}, {Kind: Sporadic, Share: 0.1}, {Kind: Shed, Share: 0.5}} {
		_, ok := s.Used(served, from, to)
		assert.False(t, ok, s.String())
	}
	_, ok := Spec{Kind: InFlight, Limit: 2}.Used(served, from, from)
	assert.False(t, ok, "an empty span allows nothing")
}

// TestRateLimitFieldsParse: what HintRateLimit sends is what the exporter
// reads (retry.ParseRateLimit): the draft's structured fields, the quota,
// the window, the unit, what is left and the reset.
func TestRateLimitFieldsParse(t *testing.T) {
	for _, tc := range []struct {
		spec   Spec
		quota  int64
		window time.Duration
		unit   string
		left   int64
		reset  time.Duration // -1: none sent
	}{
		{Spec{Kind: TokenItems, Hint: HintRateLimit, Rate: 100}, 100, time.Second, "requests", 90, time.Second},
		{Spec{Kind: TokenBytes, Hint: HintRateLimit, Rate: 1000, Burst: 2000}, 1000, time.Second, "content-bytes", 1900, time.Second},
		{Spec{Kind: GCRA, Hint: HintRateLimit, Rate: 10, Burst: 4}, 10, time.Second, "requests", 3, time.Second},
		{Spec{Kind: FixedWindow, Hint: HintRateLimit, Limit: 3, Window: 10 * time.Second}, 3, 10 * time.Second, "requests", 2, 10 * time.Second},
		{Spec{Kind: SlidingWindow, Hint: HintRateLimit, Limit: 3, Window: time.Second}, 3, time.Second, "requests", 2, time.Second},
		{Spec{Kind: InFlight, Hint: HintRateLimit, Limit: 3}, 3, 0, "concurrent-requests", 2, -1},
	} {
		t.Run(string(tc.spec.Kind), func(t *testing.T) {
			l, err := New(tc.spec)
			require.NoError(t, err)
			rl := retry.ParseRateLimit(l.Admit(t0, Request{Items: 10, Bytes: 100}).Header, t0)
			require.True(t, rl.Present)
			assert.Empty(t, rl.Rejected)
			require.Len(t, rl.Policies, 1)
			p := rl.Policies[0]
			assert.Equal(t, string(tc.spec.Kind), p.Name)
			assert.True(t, p.HasQuota)
			assert.Equal(t, tc.quota, p.Quota)
			assert.Equal(t, tc.window, p.Window)
			assert.Equal(t, tc.unit, p.QuotaUnit)
			assert.True(t, p.HasRemaining)
			assert.Equal(t, tc.left, p.Remaining)
			assert.Equal(t, tc.reset >= 0, p.HasReset)
			if tc.reset >= 0 {
				assert.Equal(t, tc.reset, p.Reset)
			}
		})
	}
}
