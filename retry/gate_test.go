// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// The concurrent gate tests run in a synctest bubble only so that
// synctest.Wait can tell when every sender has settled (passed, or parked at
// the gate); the time the gate sees is the manual fake clock's.

type acquired struct {
	probe bool
	err   error
	pass  retry.Pass
}

// throttle holds g for throttling until until, as a 429 to a sender that
// passed an open gate would; it reports whether a hold began.
func throttle(g *retry.Gate, until time.Time) bool {
	return g.Hold(retry.HoldThrottle, until).Began == retry.HoldThrottle
}

// held reports whether g holds, and for how much longer.
func held(g *retry.Gate) (bool, time.Duration) {
	reason, remaining := g.State()
	return reason != retry.HoldNone, remaining
}

// until is a fixed deadline for Acquire (none when zero).
func until(deadline time.Time) func(retry.HoldReason, time.Time) time.Time {
	return func(retry.HoldReason, time.Time) time.Time { return deadline }
}

// senders starts n goroutines that each Acquire once and report the result
// on the returned channel; blocked counts their onBlock calls.
func senders(ctx context.Context, g *retry.Gate, n int, deadline time.Time, blocked *atomic.Int32) chan acquired {
	out := make(chan acquired, n)
	for range n {
		go func() {
			pass, err := g.Acquire(ctx, until(deadline), func() { blocked.Add(1) })
			out <- acquired{probe: pass.Probe, err: err, pass: pass}
		}()
	}
	return out
}

// passed returns the results available now, without waiting.
func passed(ch chan acquired) []acquired {
	var out []acquired
	for {
		select {
		case a := <-ch:
			out = append(out, a)
		default:
			return out
		}
	}
}

// halfOpen closes a gate for 10s in front of n senders, checks that nobody
// passes before the window end, then moves the clock to the window end and
// checks that exactly one sender passed, as the probe.
type halfOpen struct {
	clock   *retrytest.Clock
	gate    *retry.Gate
	results chan acquired
	blocked *atomic.Int32
	probe   retry.Pass // the last probe's pass
}

// release reports the probe's outcome: success, or nothing about the
// destination; it reports whether the hold ended.
func (h *halfOpen) release(success bool) bool {
	return h.gate.Report(h.probe, success, retry.HoldNone, time.Time{}).Ended != retry.HoldNone
}

func newHalfOpen(t *testing.T, ctx context.Context, n int) *halfOpen {
	t.Helper()
	h := &halfOpen{clock: retrytest.NewClock(t0), blocked: &atomic.Int32{}}
	h.gate = retry.NewGate(h.clock)
	require.True(t, throttle(h.gate, t0.Add(10*time.Second)), "the first throttle starts a window")

	h.results = senders(ctx, h.gate, n, time.Time{}, h.blocked)
	require.True(t, h.clock.WaitForTimers(n, time.Minute), "every sender waits on the clock")
	synctest.Wait()
	assert.Empty(t, passed(h.results), "nobody passes at the window start")
	assert.EqualValues(t, n, h.blocked.Load(), "onBlock ran once per sender")

	h.clock.Advance(10*time.Second - time.Nanosecond)
	synctest.Wait()
	assert.Empty(t, passed(h.results), "nobody passes before the window end")
	assert.Equal(t, n, h.clock.Pending(), "no timer fired before the window end")

	h.clock.Advance(time.Nanosecond)
	synctest.Wait()
	h.expectOneProbe(t)
	return h
}

// expectOneProbe checks that exactly one sender passed since the last look,
// as the probe, and that the others wait for its outcome, not for time.
func (h *halfOpen) expectOneProbe(t *testing.T) {
	t.Helper()
	got := passed(h.results)
	require.Len(t, got, 1, "exactly one sender passes")
	assert.True(t, got[0].probe)
	require.NoError(t, got[0].err)
	h.probe = got[0].pass
	assert.Zero(t, h.clock.Pending(), "the others wait for the probe's outcome, not for a timer")
	closed, remaining := held(h.gate)
	assert.True(t, closed, "half-open still counts as closed")
	assert.Zero(t, remaining)
}

// expectAllPass checks that the m remaining senders passed, none as probe.
func (h *halfOpen) expectAllPass(t *testing.T, m int) {
	t.Helper()
	got := passed(h.results)
	require.Len(t, got, m)
	for _, a := range got {
		assert.False(t, a.probe)
		assert.NoError(t, a.err)
	}
	closed, _ := held(h.gate)
	assert.False(t, closed)
}

func TestGateOpenLetsEveryoneThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := retrytest.NewClock(t0)
		g := retry.NewGate(clock)
		var blocked atomic.Int32
		// A deadline in the past does not matter while the gate is open.
		results := senders(context.Background(), g, 5, t0.Add(-time.Hour), &blocked)
		synctest.Wait()

		got := passed(results)
		require.Len(t, got, 5)
		for _, a := range got {
			assert.Equal(t, acquired{probe: false}, a)
		}
		assert.Zero(t, blocked.Load(), "onBlock runs only for a sender that waits")
		assert.Empty(t, clock.Waits())
	})
}

func TestGateProbeSuccessOpensForEveryone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 5
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := newHalfOpen(t, ctx, n)

		assert.True(t, h.release(true), "success ends the window")
		synctest.Wait()
		h.expectAllPass(t, n-1)
		assert.False(t, h.release(true), "nothing left to release")
		assert.EqualValues(t, n, h.blocked.Load(), "onBlock never ran twice for a sender")
	})
}

func TestGateProbeFailureHandsTheProbeToOneWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 5
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := newHalfOpen(t, ctx, n)

		for range n - 2 {
			assert.False(t, h.release(false), "a failed probe does not end the window")
			synctest.Wait()
			h.expectOneProbe(t)
		}
		assert.True(t, h.release(true))
		synctest.Wait()
		h.expectAllPass(t, 1)
	})
}

func TestGateProbeThrottledAgainClosesTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 5
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := newHalfOpen(t, ctx, n)

		tr := h.gate.Report(h.probe, false, retry.HoldThrottle, h.clock.Now().Add(10*time.Second))
		assert.Equal(t, retry.Transition{}, tr, "the hold goes on, it does not restart")
		synctest.Wait()
		assert.Empty(t, passed(h.results), "nobody passes")
		assert.Equal(t, n-1, h.clock.Pending(), "every other sender waits for the new window end")
		assert.False(t, h.release(true), "the throttled probe has nothing left to release")
		synctest.Wait()
		assert.Empty(t, passed(h.results), "a stale release does not open the gate")

		h.clock.Advance(10*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.Empty(t, passed(h.results), "nobody passes before the new window end")

		h.clock.Advance(time.Nanosecond)
		synctest.Wait()
		h.expectOneProbe(t)

		assert.True(t, h.release(true))
		synctest.Wait()
		h.expectAllPass(t, n-2)
	})
}

// TestGateLateAnswersNeverFreeTheProbe: answers to requests that left
// before the hold began (a late 429, a late 503, a late 401, a late
// permanent failure) never let a second probe out while one is in flight,
// whatever time they name.
func TestGateLateAnswersNeverFreeTheProbe(t *testing.T) {
	late := []struct {
		name    string
		success bool
		reason  retry.HoldReason
		until   time.Duration // from the probe's start
	}{
		{name: "late throttle ending earlier", reason: retry.HoldThrottle, until: time.Second},
		{name: "late throttle ending later", reason: retry.HoldThrottle, until: time.Minute},
		{name: "late outage", reason: retry.HoldOutage, until: time.Second},
		{name: "late unauthorized", reason: retry.HoldUnauthorized, until: time.Second},
		{name: "late permanent failure", reason: retry.HoldNone},
		{name: "late success", success: true},
	}
	for _, tt := range late {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 4
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				h := newHalfOpen(t, ctx, n)
				stale := retry.Pass{} // passed the open gate before the hold

				h.gate.Report(stale, tt.success, tt.reason, h.clock.Now().Add(tt.until))
				synctest.Wait()
				assert.Empty(t, passed(h.results), "nobody passes while the probe is out")
				h.clock.Advance(2 * time.Minute)
				synctest.Wait()
				assert.Empty(t, passed(h.results), "nobody passes while the probe is out, whatever time the late answer named")
				reason, _ := h.gate.State()
				assert.Equal(t, retry.HoldThrottle, reason)

				assert.True(t, h.release(true), "the probe's success opens the gate")
				synctest.Wait()
				h.expectAllPass(t, n-1)
			})
		})
	}
}

// TestGateOutage: an outage hold counts its failed probes for the probe
// schedule, and any success, the probe's or a late one, ends it.
func TestGateOutage(t *testing.T) {
	clock := retrytest.NewClock(t0)
	g := retry.NewGate(clock)
	tr := g.Hold(retry.HoldOutage, t0.Add(time.Second))
	assert.Equal(t, retry.HoldOutage, tr.Began)

	clock.Advance(time.Second)
	pass, err := g.Acquire(context.Background(), nil, nil)
	require.NoError(t, err)
	assert.True(t, pass.Probe)
	assert.Equal(t, retry.HoldOutage, pass.Held)
	assert.Equal(t, 1, pass.HoldFailures, "the failure that began the hold")

	assert.Equal(t, retry.Transition{}, g.Report(pass, false, retry.HoldOutage, clock.Now().Add(2*time.Second)))
	clock.Advance(2 * time.Second)
	pass, err = g.Acquire(context.Background(), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, pass.HoldFailures, "one failed probe more")

	// A late 503 neither extends the hold nor counts.
	g.Report(retry.Pass{}, false, retry.HoldOutage, clock.Now().Add(time.Hour))
	_, remaining := g.State()
	assert.Equal(t, time.Duration(0), remaining)

	// A late success shows the destination up: the hold ends.
	assert.Equal(t, retry.Transition{Ended: retry.HoldOutage}, g.Report(retry.Pass{}, true, retry.HoldNone, time.Time{}))
	reason, _ := g.State()
	assert.Equal(t, retry.HoldNone, reason)
	// The probe's answer after that says nothing new.
	assert.Equal(t, retry.Transition{}, g.Report(pass, true, retry.HoldNone, time.Time{}))
}

func TestHoldReasonString(t *testing.T) {
	assert.Equal(t, []string{"none", "throttle", "outage", "unauthorized"},
		[]string{retry.HoldNone.String(), retry.HoldThrottle.String(), retry.HoldOutage.String(), retry.HoldUnauthorized.String()})
}

func TestGateAcquireDeadline(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(clock *retrytest.Clock, g *retry.Gate) // closes the gate
		deadline time.Duration                               // from t0
		advance  time.Duration                               // clock move after the sender blocked
		want     acquired
		wantWait bool // the sender had to wait
	}{
		{
			name:     "deadline before the window end",
			setup:    func(_ *retrytest.Clock, g *retry.Gate) { throttle(g, t0.Add(10*time.Second)) },
			deadline: 3 * time.Second,
			advance:  3 * time.Second,
			want:     acquired{err: retry.ErrGateDeadline},
			wantWait: true,
		},
		{
			name:     "deadline already past",
			setup:    func(_ *retrytest.Clock, g *retry.Gate) { throttle(g, t0.Add(10*time.Second)) },
			deadline: -time.Second,
			want:     acquired{err: retry.ErrGateDeadline},
		},
		{
			name:     "deadline after the window end",
			setup:    func(_ *retrytest.Clock, g *retry.Gate) { throttle(g, t0.Add(10*time.Second)) },
			deadline: time.Minute,
			advance:  10 * time.Second,
			want:     acquired{probe: true},
			wantWait: true,
		},
		{
			name:     "deadline at the window end",
			setup:    func(_ *retrytest.Clock, g *retry.Gate) { throttle(g, t0.Add(10*time.Second)) },
			deadline: 10 * time.Second,
			advance:  10 * time.Second,
			want:     acquired{probe: true},
			wantWait: true,
		},
		{
			name: "deadline while another sender holds the probe",
			setup: func(_ *retrytest.Clock, g *retry.Gate) {
				throttle(g, t0)
				_, _ = g.Acquire(context.Background(), nil, nil) // takes the probe
			},
			deadline: 2 * time.Second,
			advance:  2 * time.Second,
			want:     acquired{err: retry.ErrGateDeadline},
			wantWait: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clock := retrytest.NewClock(t0)
				g := retry.NewGate(clock)
				tt.setup(clock, g)
				var blocked atomic.Int32
				results := senders(context.Background(), g, 1, t0.Add(tt.deadline), &blocked)
				synctest.Wait()
				if tt.wantWait {
					assert.Empty(t, passed(results), "the sender waits")
					assert.Equal(t, 1, clock.Pending())
					clock.Advance(tt.advance - time.Nanosecond)
					synctest.Wait()
					assert.Empty(t, passed(results), "the sender still waits a nanosecond before")
					clock.Advance(time.Nanosecond)
					synctest.Wait()
				}
				got := passed(results)
				require.Len(t, got, 1)
				assert.Equal(t, tt.want.probe, got[0].probe)
				assert.ErrorIs(t, got[0].err, tt.want.err)
				assert.Zero(t, clock.Pending(), "no timer left behind")
			})
		})
	}
}

func TestGateAcquireContextCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := retrytest.NewClock(t0)
		g := retry.NewGate(clock)
		throttle(g, t0.Add(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		var blocked atomic.Int32
		results := senders(ctx, g, 3, time.Time{}, &blocked)
		require.True(t, clock.WaitForTimers(3, time.Minute))

		cancel()
		synctest.Wait()
		got := passed(results)
		require.Len(t, got, 3)
		for _, a := range got {
			assert.False(t, a.probe)
			assert.ErrorIs(t, a.err, context.Canceled)
		}
		assert.Zero(t, clock.Pending(), "every timer was released")
		assert.Equal(t, t0, clock.Now())
		closed, remaining := held(g)
		assert.True(t, closed, "leaving does not open the gate")
		assert.Equal(t, time.Hour, remaining)
	})
}

func TestGateState(t *testing.T) {
	clock := retrytest.NewClock(t0)
	g := retry.NewGate(clock)
	state := func() [2]any {
		closed, remaining := held(g)
		return [2]any{closed, remaining}
	}

	assert.Equal(t, [2]any{false, time.Duration(0)}, state(), "a new gate is open")

	assert.True(t, throttle(g, t0.Add(10*time.Second)))
	assert.Equal(t, [2]any{true, 10 * time.Second}, state())

	assert.False(t, throttle(g, t0.Add(5*time.Second)), "an earlier end does not shorten the window")
	assert.Equal(t, [2]any{true, 10 * time.Second}, state())

	assert.False(t, throttle(g, t0.Add(20*time.Second)), "a later end extends the window")
	assert.Equal(t, [2]any{true, 20 * time.Second}, state())

	clock.Advance(4 * time.Second)
	assert.Equal(t, [2]any{true, 16 * time.Second}, state())

	clock.Advance(time.Minute)
	assert.Equal(t, [2]any{true, time.Duration(0)}, state(), "closed until a probe succeeds, even past the end")

	pass, err := g.Acquire(context.Background(), nil, nil)
	require.NoError(t, err)
	require.True(t, pass.Probe)
	assert.Equal(t, retry.HoldThrottle, g.Report(pass, true, retry.HoldNone, time.Time{}).Ended)
	assert.Equal(t, [2]any{false, time.Duration(0)}, state())

	assert.True(t, throttle(g, clock.Now().Add(time.Second)), "a throttle after the window ended starts a new one")
	assert.Equal(t, [2]any{true, time.Second}, state())
}

func TestGatesSharesOneGatePerURL(t *testing.T) {
	clock := retrytest.NewClock(t0)
	var gates retry.Gates

	a, releaseA := gates.Get("https://a.example:4318/v1/traces", clock)
	a2, releaseA2 := gates.Get("https://a.example:4318/v1/traces", clock)
	b, releaseB := gates.Get("https://b.example:4318/v1/traces", clock)
	assert.Same(t, a, a2, "one gate per URL")
	assert.NotSame(t, a, b, "another URL, another gate")

	throttle(a, t0.Add(time.Minute))
	closed, _ := held(a2)
	assert.True(t, closed, "a throttle is seen by every holder")
	closed, _ = held(b)
	assert.False(t, closed)

	releaseA()
	releaseA() // a second call must not release the other holder's reference
	a3, releaseA3 := gates.Get("https://a.example:4318/v1/traces", clock)
	assert.Same(t, a, a3, "still held by a2")

	releaseA2()
	releaseA3()
	a4, releaseA4 := gates.Get("https://a.example:4318/v1/traces", clock)
	defer releaseA4()
	assert.NotSame(t, a, a4, "freed after every release; a new gate starts open")
	closed, _ = held(a4)
	assert.False(t, closed)

	releaseB()
	b2, releaseB2 := gates.Get("https://b.example:4318/v1/traces", clock)
	defer releaseB2()
	assert.NotSame(t, b, b2)
}

func TestSleep(t *testing.T) {
	t.Run("waits on the clock", func(t *testing.T) {
		clock := retrytest.NewAutoClock(t0)
		require.NoError(t, retry.Sleep(context.Background(), clock, 3*time.Second))
		assert.Equal(t, []time.Duration{3 * time.Second}, clock.Waits())
		assert.Equal(t, t0.Add(3*time.Second), clock.Now())
	})
	t.Run("no wait for zero or less", func(t *testing.T) {
		clock := retrytest.NewAutoClock(t0)
		require.NoError(t, retry.Sleep(context.Background(), clock, 0))
		require.NoError(t, retry.Sleep(context.Background(), clock, -time.Second))
		assert.Empty(t, clock.Waits())
	})
	t.Run("a done context wins", func(t *testing.T) {
		clock := retrytest.NewClock(t0)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, retry.Sleep(ctx, clock, 0), context.Canceled)
		assert.ErrorIs(t, retry.Sleep(ctx, clock, time.Hour), context.Canceled)
		assert.Zero(t, clock.Pending(), "the timer was released")
	})
}
