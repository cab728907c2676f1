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
// answers its first request with 429 Retry-After 20. Nobody sends inside the
// window; at its end exactly one request (the probe) goes out, and the
// others only after it succeeded.
func TestLoopGateConcurrentPayloads(t *testing.T) {
	tests := []struct {
		name    string
		answers []retry.Response // before the probe that succeeds
		windows int              // 20s windows the payloads sit through
	}{
		{name: "probe succeeds", answers: []retry.Response{withRetryAfter(429, "20")}, windows: 1},
		{name: "probe throttled again", answers: []retry.Response{withRetryAfter(429, "20"), withRetryAfter(429, "20")}, windows: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 5
				window := 20 * time.Second
				h := newHarness(retrytest.NewClock(t0), defaultPolicy(), 0)
				dest := &destination{clock: h.clock, answers: tt.answers, hold: make(chan struct{}), held: make(chan int, 1)}
				var once sync.Once
				letProbeFinish := func() { once.Do(func() { close(dest.hold) }) }
				defer letProbeFinish() // let every goroutine end even if the test fails

				outs := make(chan retry.Outcome, n)
				run := func(payload int) { outs <- h.loop.Run(context.Background(), dest.sender(payload)) }

				// Payload 0 meets the 429 and waits at the gate.
				go run(0)
				require.True(t, h.clock.WaitForTimers(1, time.Minute))
				closed, remaining := h.gate.State()
				assert.True(t, closed)
				assert.Equal(t, window, remaining)

				// The others find the gate closed and wait too, unsent.
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
				for w := range tt.windows {
					end = end.Add(window)
					h.clock.Advance(window - time.Second)
					synctest.Wait()
					reqs, _ = dest.snapshot()
					assert.Len(t, reqs, 1+w, "no request inside window %d", w+1)

					h.clock.Advance(time.Second)
					synctest.Wait()
					reqs, _ = dest.snapshot()
					require.Len(t, reqs, 2+w, "exactly one request at the end of window %d", w+1)
					assert.Equal(t, end, reqs[1+w].at)
					if w+1 < tt.windows {
						assert.Equal(t, n, h.clock.Pending(), "the throttled probe closed the gate again")
					}
				}

				// The last probe is in flight: everybody else stays out.
				probe := <-dest.held
				synctest.Wait()
				reqs, _ = dest.snapshot()
				assert.Len(t, reqs, 1+tt.windows, "no other request while the probe is in flight")
				assert.EqualValues(t, n-1, h.loop.Waiting(), "the others still wait at the gate")
				assert.Equal(t, n-1, h.clock.Pending(), "they wait for the probe, or at most until their throttle budget ends")

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
					assert.Zero(t, r.at.Sub(t0)%window, "request %d sent inside a window, at %s", i, r.at.Sub(t0))
					if i > probeIdx {
						assert.Equal(t, end, r.at)
						assert.Equal(t, 200, r.status)
					}
				}
				for i := probeIdx + 1; i < len(reqs); i++ {
					assert.NotEqual(t, probe, reqs[i].payload, "the probe sent once after the window")
				}
				assert.Len(t, h.events.of(retry.EventWindowStart), 1, "one window, extended by the throttled probes")
				assert.Len(t, h.events.of(retry.EventWindowEnd), 1)
				assert.Zero(t, h.loop.Waiting())
				closed, _ = h.gate.State()
				assert.False(t, closed)
			})
		})
	}
}
