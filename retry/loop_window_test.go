// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// windowRunAt sends 60 payloads one after the other through a loop with
// pacing on, no jitter, behind a fixed window of 10 requests per 10 s
// without hints (the windows on the multiples of 10 s since t0), the
// clock starting phase into a window. It returns the answers' times (since
// t0) and statuses, and the attempts' events.
func windowRunAt(t *testing.T, phase time.Duration, observe ...func(*retry.Pacer)) (at []time.Duration, status []int, attempts []retry.Event) {
	t.Helper()
	return windowRunOff(t, phase, 0, observe...)
}

// windowRunOff is windowRunAt behind a window whose windows begin offset
// past the multiples of 10 s (limiter.Spec.Offset).
func windowRunOff(t *testing.T, phase, offset time.Duration, observe ...func(*retry.Pacer)) (at []time.Duration, status []int, attempts []retry.Event) {
	t.Helper()
	h, clock, lim := windowHarnessOff(t, phase, offset)
	send := func(context.Context, int) retry.Response {
		now := clock.Now()
		for _, o := range observe {
			o(h.loop.Pacer()) // as the request leaves
		}
		s := lim.Admit(now, limiter.Request{Items: 100}).Status
		at, status = append(at, now.Sub(t0)), append(status, s)
		return retry.Response{Status: s, Header: http.Header{}}
	}
	for range 60 {
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, send).Kind)
	}
	return at, status, h.events.of(retry.EventAttempt)
}

// windowHarness is a loop with pacing on and no jitter, its clock starting
// phase into a window, and a fixed window of 10 requests per 10 s without
// hints (the windows on the multiples of 10 s since t0).
func windowHarness(t *testing.T, phase time.Duration) (*harness, *retrytest.Clock, *limiter.Limiter) {
	t.Helper()
	return windowHarnessOff(t, phase, 0)
}

// windowHarnessOff is windowHarness with the windows offset past the
// multiples.
func windowHarnessOff(t *testing.T, phase, offset time.Duration) (*harness, *retrytest.Clock, *limiter.Limiter) {
	t.Helper()
	policy := defaultPolicy()
	policy.Pacing = retry.NewDefaultPacingConfig()
	policy.RetryAfter.Jitter = 0
	clock := retrytest.NewAutoClock(t0.Add(phase))
	lim, err := limiter.New(limiter.Spec{Kind: limiter.FixedWindow, Limit: 10, Window: 10 * time.Second, Offset: offset, Hint: limiter.HintNone})
	require.NoError(t, err)
	return newHarness(clock, policy, 0), clock, lim
}

// windowPhase is where windowRun starts in a window: a phase at which a
// row of refusals ends just after a multiple of 10 s, as the clock's rule
// needs to learn the window. One payload at a time, that happens at some
// phases only: of 15 phases 0.7 s apart from 0.1 s, at 5.7 s alone, with
// the thirteenth step's law and with the twelfth step's (whose test began
// at 0.5 s, off that grid, where this law begins no window hold). Since
// the fourteenth step the window's runs find it too, at most phases
// (TestLoopAFixedWindowIsFoundByItsRuns).
const windowPhase = 5700 * time.Millisecond

// windowRun is windowRunAt at windowPhase.
func windowRun(t *testing.T) ([]time.Duration, []int, []retry.Event) {
	return windowRunAt(t, windowPhase)
}

// refusedPerWindow counts the refusals in each 10 s window.
func refusedPerWindow(at []time.Duration, status []int) map[int]int {
	n := map[int]int{}
	for i, a := range at {
		if status[i] != http.StatusOK {
			n[int(a/(10*time.Second))]++
		}
	}
	return n
}

// windowCount is what one of the backend's windows accepted and refused.
type windowCount struct{ accepted, refused int }

// perWindow counts the answers in each of the backend's 10 s windows (they
// begin offset past the multiples), and how far into each its latest
// request came.
func perWindow(at []time.Duration, status []int, offset time.Duration) (map[int]*windowCount, map[int]time.Duration) {
	w, latest := map[int]*windowCount{}, map[int]time.Duration{}
	for i, a := range at {
		k := int((a - offset) / (10 * time.Second))
		if w[k] == nil {
			w[k] = &windowCount{}
		}
		if status[i] == http.StatusOK {
			w[k].accepted++
		} else {
			w[k].refused++
		}
		latest[k] = max(latest[k], a-offset-time.Duration(k)*10*time.Second)
	}
	return w, latest
}

// TestLoopAFixedWindowIsHeldUntilItResets: behind a fixed window without
// hints, a row of refusals ended just after a multiple of 10 s teaches the
// pacer the window; from then on the first refusal at each window's end
// holds the destination until the next multiple (source window), and the
// probe there is accepted: each of those windows' ends costs one refusal,
// where the ninth step's law (windowHolds off) sent another into the
// closed window. (Here one payload goes at a time, at a pace near the
// window's 1 request a second; the refusal that begins a window hold cuts
// the pace too.
// The model's long 10 s window, a backlog offered at twice the limit, is
// delivered as early either way: TestAFixedWindowIsHeldUntilItResets.)
func TestLoopAFixedWindowIsHeldUntilItResets(t *testing.T) {
	// The sixteenth step's rules find this window at its first row and
	// schedule every later window (TestLoopAFixedWindowIsProbedAtItsReset):
	// without them, the holds at each window's end show.
	restore, err := retry.SetTuning(map[string]float64{"windowRowProbes": 0, "windowPastDefault": 0})
	require.NoError(t, err)
	defer restore()
	at, status, attempts := windowRun(t)
	var ends []int // the windows whose end a window hold begun by a row's first refusal waited for
	for i, e := range attempts {
		if e.Source != retry.SourceWindow {
			continue
		}
		assert.Equal(t, e.Until.Truncate(10*time.Second), e.Until, "a window hold ends on a multiple of 10 s: %s", e.Until.Sub(t0))
		if i > 0 && attempts[i-1].Response.Status == http.StatusOK {
			ends = append(ends, int(e.Until.Sub(t0)/(10*time.Second))-1)
		}
	}
	require.NotEmpty(t, ends, "window holds")
	perWindow := refusedPerWindow(at, status)
	for _, w := range ends {
		assert.Equal(t, 1, perWindow[w], "refusals in the window from %d s, held until its end", 10*w)
	}

	restoreHolds, err := retry.SetTuning(map[string]float64{"windowHolds": 0, "windowRowProbes": 0, "windowPastDefault": 0})
	require.NoError(t, err)
	defer restoreHolds()
	at, status, attempts = windowRun(t)
	for _, e := range attempts {
		assert.NotEqual(t, retry.SourceWindow, e.Source, "no window hold with windowHolds (and the row's probes) off")
	}
	assert.Greater(t, refusedPerWindow(at, status)[ends[0]], 1, "with windowHolds off, the first of those windows' end: a row of refusals")
}

// TestLoopAFixedWindowIsProbedAtItsReset: the first row of refusals
// (the window's take ran out 4.3 s before its reset, after a run of ten
// acceptances) ends in a hold of retry_after::default that spans the
// reset: it ends just after the multiple (source window, windowRowProbes),
// the probe there is accepted, and that shows the window on the clock
// however long before the multiple the row's last refusal came. From
// then on each window's take is scheduled and nothing more is refused but
// the first scheduled window's two checks (windowCheck);
// without the rules (the fifteenth step's law) later windows' ends were
// refused again. (One payload at a time, the last window ends the run
// either way.)
func TestLoopAFixedWindowIsProbedAtItsReset(t *testing.T) {
	run := func() (probe bool, refusedAfter int) {
		at, status, attempts := windowRun(t)
		for _, e := range attempts {
			if e.Source == retry.SourceWindow && e.Until.Equal(t0.Add(10*time.Second)) {
				probe = true
			}
		}
		for i, a := range at {
			if a >= 10*time.Second && status[i] != http.StatusOK {
				refusedAfter++
			}
		}
		return probe, refusedAfter
	}
	probe, refusedAfter := run()
	assert.True(t, probe, "the first row's hold ends at the reset")
	assert.Equal(t, 2, refusedAfter, "once the window is known, only the schedule's two refused checks (windowCheck)")

	restore, err := retry.SetTuning(map[string]float64{"windowRowProbes": 0, "windowPastDefault": 0})
	require.NoError(t, err)
	defer restore()
	probeBefore, refusedAfterBefore := run()
	assert.False(t, probeBefore, "the law before: no probe at the reset")
	assert.Positive(t, refusedAfterBefore, "the law before: refused after the first window")
}

// TestLoopAFixedWindowIsFoundByItsRuns: at a phase where no row of
// refusals ends just after a multiple of 10 s (0.1 s into a window), the
// window's runs find it: as many requests accepted after a row of refusals
// as before it, and the next refusal holds the destination until the
// window resets (source window), where the law before (windowCounts off,
// and the sixteenth step's windowRowProbes and windowPastDefault) began no
// window hold there; the run refuses fewer requests and delivers
// sooner.
func TestLoopAFixedWindowIsFoundByItsRuns(t *testing.T) {
	const phase = 100 * time.Millisecond
	count := func(at []time.Duration, status []int, attempts []retry.Event) (holds, refused int, last time.Duration) {
		for _, e := range attempts {
			if e.Source == retry.SourceWindow {
				holds++
				assert.Equal(t, e.Until.Truncate(10*time.Second), e.Until, "a window hold ends on a multiple of 10 s")
			}
		}
		for _, n := range refusedPerWindow(at, status) {
			refused += n
		}
		return holds, refused, at[len(at)-1]
	}
	holds, refused, last := count(windowRunAt(t, phase))
	assert.Positive(t, holds, "window holds")

	restore, err := retry.SetTuning(map[string]float64{"windowCounts": 0, "windowRowProbes": 0, "windowPastDefault": 0})
	require.NoError(t, err)
	defer restore()
	holdsBefore, refusedBefore, lastBefore := count(windowRunAt(t, phase))
	assert.Zero(t, holdsBefore, "the law before: no window hold at this phase")
	assert.Less(t, refused, refusedBefore, "refused")
	assert.Less(t, last, lastBefore, "the last answer")
}

// TestLoopAFixedWindowIsScheduled: once the pacer has seen the window
// reset on the clock, each later window's take leaves within an eighth of
// the window from its start (windowShare 8), and nothing more is sent into
// it: those windows refuse nothing, and the run ends seconds earlier than
// with the law before (windowSchedule off, where the requests went at the
// window's rate and the last window's were spread over seconds).
func TestLoopAFixedWindowIsScheduled(t *testing.T) {
	const phase = 100 * time.Millisecond
	var rates []float64
	at, status, _ := windowRunAt(t, phase, func(p *retry.Pacer) { rates = append(rates, p.Rate()) })
	windows, latest := perWindow(at, status, 0)
	last := int(at[len(at)-1] / (10 * time.Second))
	assert.InDelta(t, 100, rates[len(rates)-1], 1e-9, "the pace the gauge shows in a scheduled window: its take, 10 requests of 100 items per 10 s")
	scheduled := 0
	for k := last; k >= 0 && windows[k].refused == 0 && windows[k].accepted == 10 && latest[k] <= 1250*time.Millisecond+50*time.Millisecond; k-- {
		scheduled++
	}
	assert.GreaterOrEqual(t, scheduled, 2, "the last windows: 10 accepted, none refused, all sent within an eighth of the window")
	refused := 0
	for _, w := range windows {
		refused += w.refused
	}

	restore, err := retry.SetTuning(map[string]float64{"windowSchedule": 0})
	require.NoError(t, err)
	defer restore()
	atBefore, statusBefore, _ := windowRunAt(t, phase)
	windowsBefore, latestBefore := perWindow(atBefore, statusBefore, 0)
	refusedBefore := 0
	for k, w := range windowsBefore {
		refusedBefore += w.refused
		if w.accepted == 10 && w.refused == 0 {
			assert.Greater(t, latestBefore[k], 1300*time.Millisecond, "the law before: a window's take spread over it (window from %d s)", 10*k)
		}
	}
	assert.LessOrEqual(t, refused, refusedBefore, "refused")
	assert.Less(t, at[len(at)-1], atBefore[len(atBefore)-1]-5*time.Second, "the last answer, seconds earlier")
}

// TestLoopARowProbeDoesNotFlood: a backend that took ten requests and then
// answers every request with a bare 429 for 60 s (no window: it refuses
// across the multiples of 10 s too) is probed no more often with the row's
// probes (windowRowProbes) than without them: a hold that ends at a
// multiple is a shorter hold, not an extra request, and the next one is
// held retry_after::default again. Whichever probe the backend accepts
// first, everything is delivered.
func TestLoopARowProbeDoesNotFlood(t *testing.T) {
	run := func() (during int, gaps []time.Duration, probes int) {
		policy := defaultPolicy()
		policy.Pacing = retry.NewDefaultPacingConfig()
		policy.RetryAfter.Jitter = 0
		clock := retrytest.NewAutoClock(t0.Add(3 * time.Second))
		h := newHarness(clock, policy, 0)
		var sent int
		var from, last time.Time
		send := func(context.Context, int) retry.Response {
			now := clock.Now()
			sent++
			if sent == 11 {
				from = now
			}
			if !from.IsZero() && now.Before(from.Add(60*time.Second)) {
				during++
				if !last.IsZero() {
					gaps = append(gaps, now.Sub(last))
				}
				last = now
				return retry.Response{Status: http.StatusTooManyRequests, Header: http.Header{}}
			}
			return retry.Response{Status: http.StatusOK, Header: http.Header{}}
		}
		for range 20 {
			require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, send).Kind)
		}
		for _, e := range h.events.of(retry.EventAttempt) {
			if e.Source == retry.SourceWindow {
				probes++
			}
		}
		return during, gaps, probes
	}
	during, gaps, probes := run()
	assert.Positive(t, probes, "holds ended at a multiple to probe it")
	restore, err := retry.SetTuning(map[string]float64{"windowRowProbes": 0})
	require.NoError(t, err)
	defer restore()
	duringBefore, _, probesBefore := run()
	assert.Zero(t, probesBefore, "without the row's probes")
	t.Logf("requests into the 60 s of refusals: %d (without the row's probes: %d)", during, duringBefore)
	assert.LessOrEqual(t, during, duringBefore, "no more requests into the refusals")
	long := 0
	for _, g := range gaps {
		if g >= 4*time.Second {
			long++
		}
	}
	assert.GreaterOrEqual(t, long, 8, "held seconds at a time through the 60 s: %v", gaps)
}

// secondWindowRun sends n payloads one after the other through a loop
// with pacing on, no jitter, behind a fixed window of 20 requests a second
// without hints (the windows on the clock's seconds), the clock starting
// 300 ms into a second. It returns the answers' times (since t0) and
// statuses.
func secondWindowRun(t *testing.T, n int) (at []time.Duration, status []int) {
	t.Helper()
	policy := defaultPolicy()
	policy.Pacing = retry.NewDefaultPacingConfig()
	policy.RetryAfter.Jitter = 0
	clock := retrytest.NewAutoClock(t0.Add(300 * time.Millisecond))
	h := newHarness(clock, policy, 0)
	lim, err := limiter.New(limiter.Spec{Kind: limiter.FixedWindow, Limit: 20, Window: time.Second, Hint: limiter.HintNone})
	require.NoError(t, err)
	send := func(context.Context, int) retry.Response {
		now := clock.Now()
		s := lim.Admit(now, limiter.Request{Items: 100}).Status
		at, status = append(at, now.Sub(t0)), append(status, s)
		return retry.Response{Status: s, Header: http.Header{}}
	}
	for range n {
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, send).Kind)
	}
	return at, status
}

// TestLoopASecondWindowIsScheduled: behind a fixed window of 20 requests a
// second without hints, two windows' ends that showed the same take start
// the schedule (secondWindows): from then on each second takes its 20
// within its first quarter, and none is refused, where the law before
// (secondWindows off) paced the requests below the window's take (the
// rate it accepted between two refusals counts the silence after the
// first) and was still refused now and then; 300 payloads are delivered
// seconds earlier.
func TestLoopASecondWindowIsScheduled(t *testing.T) {
	const n = 300
	type second struct {
		accepted, refused int
		latest            time.Duration
	}
	perSecond := func(at []time.Duration, status []int) []second {
		w := make([]second, int(at[len(at)-1]/time.Second)+1)
		for i, a := range at {
			k := int(a / time.Second)
			if status[i] == http.StatusOK {
				w[k].accepted++
			} else {
				w[k].refused++
			}
			w[k].latest = max(w[k].latest, a-time.Duration(k)*time.Second)
		}
		return w
	}
	at, status := secondWindowRun(t, n)
	seconds := perSecond(at, status)
	full := seconds[len(seconds)/2 : len(seconds)-1] // the second half, but the last (partial) second
	for k, s := range full {
		assert.Equal(t, second{accepted: 20}, second{accepted: s.accepted, refused: s.refused}, "second %d of the second half", k)
		assert.LessOrEqual(t, s.latest, 250*time.Millisecond, "second %d: its take within its first quarter", k)
	}
	refused := 0
	for _, s := range status {
		if s != http.StatusOK {
			refused++
		}
	}

	restore, err := retry.SetTuning(map[string]float64{"secondWindows": 0})
	require.NoError(t, err)
	defer restore()
	atBefore, statusBefore := secondWindowRun(t, n)
	refusedBefore, under := 0, 0
	for _, s := range statusBefore {
		if s != http.StatusOK {
			refusedBefore++
		}
	}
	before := perSecond(atBefore, statusBefore)
	for _, s := range before[len(before)/2 : len(before)-1] {
		if s.accepted < 20 {
			under++
		}
	}
	t.Logf("refused %d, last answer %v; the law before: refused %d, last answer %v, %d of %d seconds of the second half below the take",
		refused, at[len(at)-1], refusedBefore, atBefore[len(atBefore)-1], under, len(before)-1-len(before)/2)
	assert.Positive(t, under, "the law before: seconds of the second half below the window's take")
	assert.Less(t, refused, refusedBefore, "refused")
	assert.Less(t, at[len(at)-1], atBefore[len(atBefore)-1]-time.Second, "the last answer, a second or more earlier")
}

// TestLoopAWrongScheduleEnds: a backend that looks like a fixed window of
// 10 requests per 10 s until its reset at 10 s, and from then on takes
// everything (as a GCRA shared by a fleet takes a member's requests when
// its probe at a multiple was accepted by chance), but for one refusal
// just after the schedule's take when refuseOnce is set (the GCRA refuses
// a tenth of the fleet's requests): the schedule that the probe at 10 s
// starts sends its take and its checks, and three accepted end it
// (windowCheck); the pace then climbs, and the 100 payloads are delivered
// within the next window. Unchecked (the seventeenth step's law, no
// refusal), or confirmed by the one refusal (windowConfirm 1, the check's
// first form), the schedule sent 10 per 10 s until the quiet period forgot
// it.
func TestLoopAWrongScheduleEnds(t *testing.T) {
	const n = 100
	run := func(refuseOnce bool) (perWindow map[int]int, last time.Duration) {
		h, clock, lim := windowHarness(t, windowPhase)
		perWindow = map[int]int{}
		send := func(context.Context, int) retry.Response {
			now := clock.Now()
			s := http.StatusOK
			switch {
			case now.Before(t0.Add(10 * time.Second)):
				s = lim.Admit(now, limiter.Request{Items: 100}).Status
			case refuseOnce && perWindow[1] == 10:
				refuseOnce, s = false, http.StatusTooManyRequests
			}
			if s == http.StatusOK {
				perWindow[int(now.Sub(t0)/(10*time.Second))]++
			}
			last = now.Sub(t0)
			return retry.Response{Status: s, Header: http.Header{}}
		}
		for range n {
			require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, send).Kind)
		}
		return perWindow, last
	}
	for _, refuseOnce := range []bool{false, true} {
		perWindow, last := run(refuseOnce)
		t.Logf("refused once after the take %v: accepted per 10 s window %v, last answer %v", refuseOnce, perWindow, last)
		assert.Greater(t, perWindow[1], 10+3, "the take and three checks accepted, then the pace climbed")
		assert.Less(t, last, 20*time.Second, "delivered within the window after the reset")
	}
	for _, before := range []struct {
		law        map[string]float64
		refuseOnce bool
	}{{map[string]float64{"windowCheck": 0}, false}, {map[string]float64{"windowConfirm": 1}, true}} {
		law := before.law
		restore, err := retry.SetTuning(law)
		require.NoError(t, err)
		perWindow, last := run(before.refuseOnce)
		restore()
		t.Logf("%v, refused once after the take %v: accepted per 10 s window %v, last answer %v", law, before.refuseOnce, perWindow, last)
		require.Equal(t, 10, perWindow[1], "%v: the schedule took the probe at 10 s for a window of 10", law)
		assert.Equal(t, 10, perWindow[2], "%v: 10 in the next window too, never refused", law)
		assert.Greater(t, last, 60*time.Second, "%v: 10 per 10 s", law)
	}
}

// TestLoopAWindowOffTheMultiples: behind a fixed window whose windows
// begin 2.5 s past the multiples of 10 s, the rows of refusals that do not
// end across a multiple move the windows' phase (windowPhase), the holds
// and probes go to the starts at the phase, and the window is scheduled
// there: the last windows (of the backend's, from 2.5 s past a multiple)
// take their 10 each and refuse nothing, and the run refuses fewer and
// ends earlier than with the eighteenth step's law (windowPhase off),
// whose holds and probes at the multiples were refused; and with
// windowPhaseHold off, a counted hold too far from the next start at the
// phase went at the pace, and refused more.
func TestLoopAWindowOffTheMultiples(t *testing.T) {
	const offset = 2500 * time.Millisecond
	count := func(at []time.Duration, status []int) (map[int]*windowCount, int) {
		windows, _ := perWindow(at, status, offset)
		refused := 0
		for _, w := range windows {
			refused += w.refused
		}
		return windows, refused
	}
	at, status, attempts := windowRunOff(t, windowPhase, offset)
	windows, refused := count(at, status)
	last := int((at[len(at)-1] - offset) / (10 * time.Second))
	clean := 0
	for k := last; k >= 0 && windows[k].refused == 0 && windows[k].accepted == 10; k-- {
		clean++
	}
	assert.GreaterOrEqual(t, clean, 2, "the last windows: their 10 accepted, none refused")
	held := false
	for _, e := range attempts {
		if e.Source == retry.SourceWindow && e.Until.After(t0.Add(20*time.Second)) {
			held = true
			assert.NotEqual(t, e.Until.Truncate(10*time.Second), e.Until, "a later window hold ends at a start at the phase, not at a multiple")
		}
	}
	assert.True(t, held, "a window hold after the phase moved")

	// A counted hold more than retry_after::default from the next start
	// at the moved phase goes at the pace without windowPhaseHold: its
	// spaced refusals, more of them.
	restore, err := retry.SetTuning(map[string]float64{"windowPhaseHold": 0})
	require.NoError(t, err)
	atPaced, statusPaced, _ := windowRunOff(t, windowPhase, offset)
	_, refusedPaced := count(atPaced, statusPaced)
	restore()
	assert.Less(t, refused, refusedPaced, "refused, windowPhaseHold off")

	restore, err = retry.SetTuning(map[string]float64{"windowPhase": 0})
	require.NoError(t, err)
	defer restore()
	atBefore, statusBefore, _ := windowRunOff(t, windowPhase, offset)
	_, refusedBefore := count(atBefore, statusBefore)
	assert.Less(t, refused, refusedBefore, "refused")
	assert.Less(t, at[len(at)-1], atBefore[len(atBefore)-1], "the last answer")
}
