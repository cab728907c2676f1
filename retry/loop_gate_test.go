// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// request is one request the fake destination received.
type request struct {
	payload int
	at      time.Time // fake time when it was sent
	status  int       // what it was answered
}

// destination is a fake collector shared by every payload. It answers with
// answers in order (then 200 forever); when hold is set, the answer to the
// request after the scripted ones waits until the test closes hold.
type destination struct {
	clock   *retrytest.Clock
	answers []retry.Response
	hold    chan struct{}
	held    chan int // receives the payload whose request is held

	mu       sync.Mutex
	requests []request
	finished []int // request indexes, in the order their answers returned
}

func (d *destination) sender(payload int) func(context.Context, int) retry.Response {
	return func(context.Context, int) retry.Response {
		d.mu.Lock()
		i := len(d.requests)
		answer := resp(200)
		if i < len(d.answers) {
			answer = d.answers[i]
		}
		d.requests = append(d.requests, request{payload: payload, at: d.clock.Now(), status: answer.Status})
		d.mu.Unlock()

		if i == len(d.answers) && d.hold != nil {
			d.held <- payload
			<-d.hold
		}

		d.mu.Lock()
		d.finished = append(d.finished, i)
		d.mu.Unlock()
		return answer
	}
}

func (d *destination) snapshot() (requests []request, finished []int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]request(nil), d.requests...), append([]int(nil), d.finished...)
}

// TestLoopGateConcurrentPayloads: five payloads share a destination that
// answers its first request with a 429, a 401 or a 503. Nobody sends inside
// the hold; at its end exactly one request (the probe) goes out, and the
// others only after it succeeded. Nobody is dropped.
func TestLoopGateConcurrentPayloads(t *testing.T) {
	tests := []struct {
		name    string
		answers []retry.Response // before the probe that succeeds
		hold    retry.HoldReason // what the gate holds for
		windows []time.Duration  // the holds the payloads sit through
	}{
		{name: "throttle: probe succeeds", answers: []retry.Response{withRetryAfter(429, "20")}, hold: retry.HoldThrottle, windows: []time.Duration{20 * time.Second}},
		{name: "throttle: probe throttled again", answers: times(2, withRetryAfter(429, "20")), hold: retry.HoldThrottle, windows: repeatDur(2, 20*time.Second)},
		{name: "unauthorized: probe accepted", answers: []retry.Response{resp(401)}, hold: retry.HoldUnauthorized, windows: []time.Duration{20 * time.Second}},
		{name: "unauthorized: probes refused twice", answers: times(3, resp(401)), hold: retry.HoldUnauthorized, windows: repeatDur(3, 20*time.Second)},
		{name: "outage: probe succeeds", answers: []retry.Response{resp(503)}, hold: retry.HoldOutage, windows: []time.Duration{time.Second}},
		{name: "outage: probes fail, the interval grows", answers: times(4, resp(503)), hold: retry.HoldOutage, windows: []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 5
				policy := defaultPolicy()
				policy.Unauthorized.ProbeInterval = 20 * time.Second
				h := newHarness(retrytest.NewClock(t0), policy, 0)
				dest := &destination{clock: h.clock, answers: tt.answers, hold: make(chan struct{}), held: make(chan int, 1)}
				var once sync.Once
				letProbeFinish := func() { once.Do(func() { close(dest.hold) }) }
				defer letProbeFinish() // let every goroutine end even if the test fails

				outs := make(chan retry.Outcome, n)
				run := func(payload int) { outs <- h.loop.Run(context.Background(), dest.sender(payload)) }

				// Payload 0 meets the 429 and waits at the gate.
				go run(0)
				require.True(t, h.clock.WaitForTimers(1, time.Minute))
				reason, remaining := h.gate.State()
				assert.Equal(t, tt.hold, reason)
				assert.Equal(t, tt.windows[0], remaining)

				// The others find the gate holding and wait too, unsent.
				for p := 1; p < n; p++ {
					go run(p)
				}
				require.True(t, h.clock.WaitForTimers(n, time.Minute))
				synctest.Wait()
				reqs, _ := dest.snapshot()
				assert.Len(t, reqs, 1, "nobody else sends once the window is open")
				assert.EqualValues(t, n, h.loop.Waiting())

				// Each throttled probe keeps everybody out for another window.
				end := t0
				ends := map[time.Time]bool{t0: true}
				for w, window := range tt.windows {
					end = end.Add(window)
					ends[end] = true
					h.clock.Advance(window - time.Millisecond)
					synctest.Wait()
					reqs, _ = dest.snapshot()
					assert.Len(t, reqs, 1+w, "no request inside window %d", w+1)

					h.clock.Advance(time.Millisecond)
					synctest.Wait()
					reqs, _ = dest.snapshot()
					require.Len(t, reqs, 2+w, "exactly one request at the end of window %d", w+1)
					assert.Equal(t, end, reqs[1+w].at)
				}

				// The last probe is in flight: everybody else stays out.
				probe := <-dest.held
				synctest.Wait()
				reqs, _ = dest.snapshot()
				assert.Len(t, reqs, 1+len(tt.windows), "no other request while the probe is in flight")
				assert.EqualValues(t, n-1, h.loop.Waiting(), "the others still wait at the gate")
				wantTimers := 0 // they wait for the probe's outcome, not for a time
				if tt.hold == retry.HoldThrottle {
					wantTimers = n - 1 // or at most until their throttle budget ends
				}
				assert.Equal(t, wantTimers, h.clock.Pending())

				letProbeFinish()
				synctest.Wait()
				require.Len(t, outs, n, "every payload finished")
				for range n {
					out := <-outs
					assert.Equal(t, retry.Delivered, out.Kind, "%v", out.Err)
				}

				reqs, finished := dest.snapshot()
				require.Len(t, reqs, len(tt.answers)+n, "one successful request per payload")
				probeIdx := len(tt.answers)
				assert.Equal(t, probe, reqs[probeIdx].payload)
				assert.Equal(t, probeIdx, finished[probeIdx], "the probe's answer came back before any later request")
				for i, r := range reqs {
					assert.True(t, ends[r.at], "request %d sent inside a window, at %s", i, r.at.Sub(t0))
					if i > probeIdx {
						assert.Equal(t, end, r.at)
						assert.Equal(t, 200, r.status)
					}
				}
				for i := probeIdx + 1; i < len(reqs); i++ {
					assert.NotEqual(t, probe, reqs[i].payload, "the probe sent once after the window")
				}
				starts, endEvents := h.events.of(retry.EventHoldStart), h.events.of(retry.EventHoldEnd)
				require.Len(t, starts, 1, "one hold, renewed by each failed probe")
				assert.Equal(t, tt.hold, starts[0].Held)
				require.Len(t, endEvents, 1)
				assert.Equal(t, tt.hold, endEvents[0].Held)
				assert.Zero(t, h.loop.Waiting())
				reason, _ = h.gate.State()
				assert.Equal(t, retry.HoldNone, reason)
			})
		})
	}
}
