// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"crypto/x509"
	"errors"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// TestDecide is the README's "What each response does", one row per
// response, against the pure decision step: no loop, no clock, no gate.
func TestDecide(t *testing.T) {
	refused := opErr("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED))
	badCert := &url.Error{Op: "Post", URL: "https://collector:4318/v1/traces", Err: x509.UnknownAuthorityError{}}
	now := t0
	// up: a request to the destination succeeded while this one was out.
	up := func(a retry.Attempt) retry.Attempt { a.SuccessesAtStart, a.Successes = 1, 2; return a }
	// lately: pacing is on and the backend accepted a request within 2 s.
	lately := func(a retry.Attempt) retry.Attempt { a.AcceptedLately = true; return a }
	crowded := func(c retry.Crowding, a retry.Attempt) retry.Attempt { a.Crowding = c; return a }
	// unlearned: pacing is on and the pacer knows nothing of the
	// destination yet (nothing accepted, no pace).
	unlearned := func(a retry.Attempt) retry.Attempt { a.Unlearned = true; return a }
	// probeOf: the attempt was the probe of a throttle hold confirmed
	// failures times, begun by a bare 429 while nothing was known, ago
	// before it (none when ago is 0).
	probeOf := func(failures int, ago time.Duration, a retry.Attempt) retry.Attempt {
		a.Held, a.HoldFailures = retry.HoldThrottle, failures
		if ago > 0 {
			a.FirstBare = now.Add(-ago)
		}
		return a
	}
	// windowed: the destination was seen to reset at a multiple of 10 s
	// on the clock, and this is the first bare 429 in a row.
	windowed := func(a retry.Attempt) retry.Attempt { a.WindowHold, a.WindowSeen = true, true; return a }
	// counted: a window found by its runs' counts alone, not yet seen to
	// reset on the clock.
	counted := func(a retry.Attempt) retry.Attempt { a.WindowHold = true; return a }
	// after: the attempt's answer came d after t0 (a multiple of 10 s).
	after := func(d time.Duration, a retry.Attempt) retry.Attempt { a.Now = now.Add(d); return a }
	// rowFrom: the refused request's row of bare 429s began at d after
	// t0, after a run of acceptances (windowRowProbes).
	rowFrom := func(d time.Duration, a retry.Attempt) retry.Attempt { a.RowStart = now.Add(d); return a }
	// phased: the destination's windows begin d past the clock's
	// multiples of 10 s (rateState.WindowPhase).
	phased := func(d time.Duration, a retry.Attempt) retry.Attempt { a.WindowPhase = d; return a }
	pacing := func(p *retry.Policy) { p.Pacing.Enabled = true }
	attempt := func(r retry.Response) retry.Attempt {
		a := retry.Attempt{Response: r, Now: now}
		if r.Status != 0 {
			a.RetryAfter = retry.ParseRetryAfter(r.Header, now, 300*time.Second)
		}
		return a
	}
	type want struct {
		next   retry.Next
		path   retry.Path
		hold   retry.HoldReason
		drop   retry.DropReason
		delay  time.Duration
		source retry.DelaySource
	}
	tests := []struct {
		name     string
		policy   func(*retry.Policy)
		state    retry.State
		attempt  retry.Attempt
		want     want
		throttle bool
	}{
		{name: "2xx: delivered", attempt: attempt(resp(204)), want: want{next: retry.NextDeliver}},
		{name: "3xx: dropped, redirects are never followed", attempt: attempt(resp(307)), want: want{next: retry.NextDrop, drop: retry.DropPermanentStatus}},
		{name: "400: dropped", attempt: attempt(resp(400)), want: want{next: retry.NextDrop, drop: retry.DropPermanentStatus}},
		{name: "403: dropped, per batch", attempt: attempt(resp(403)), want: want{next: retry.NextDrop, drop: retry.DropPermanentStatus}},
		{name: "413: dropped", attempt: attempt(resp(413)), want: want{next: retry.NextDrop, drop: retry.DropPermanentStatus}},
		{name: "501: dropped", attempt: attempt(resp(501)), want: want{next: retry.NextDrop, drop: retry.DropPermanentStatus}},
		{name: "refused certificate: dropped", attempt: attempt(transportErr(badCert)), want: want{next: retry.NextDrop, drop: retry.DropPermanentError}},
		{
			name: "401: the destination is held for one probe interval, nothing dropped", attempt: attempt(resp(401)),
			want: want{next: retry.NextGate, path: retry.PathUnauthorized, hold: retry.HoldUnauthorized, delay: time.Minute},
		},
		{
			name: "401 with on_unauthorized: drop: dropped", attempt: attempt(resp(401)),
			policy: func(p *retry.Policy) { p.HoldOnUnauthorized = false },
			want:   want{next: retry.NextDrop, drop: retry.DropUnauthorized},
		},
		{
			name: "429 Retry-After 7: held 7 s, no backoff stacked", attempt: attempt(withRetryAfter(429, "7")), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 7 * time.Second, source: retry.SourceHeader},
		},
		{
			name: "429 without Retry-After: held the default 5 s", attempt: attempt(resp(429)), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5 * time.Second, source: retry.SourceDefault},
		},
		{
			name: "429 Retry-After beyond the cap: held the cap", attempt: attempt(withRetryAfter(429, "100000")), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 300 * time.Second, source: retry.SourceCapped},
		},
		{
			name: "503 with Retry-After: the rate-limit path", attempt: attempt(withRetryAfter(503, "2")), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 2 * time.Second, source: retry.SourceHeader},
		},
		{
			name: "429 Retry-After 0, the first: at once", attempt: attempt(withRetryAfter(429, "0")), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, source: retry.SourceHeader},
		},
		{
			name: "429 Retry-After 0, the third: the backoff schedule's second wait", attempt: attempt(withRetryAfter(429, "0")), throttle: true,
			state: retry.State{RetryNow: 2},
			want:  want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 2 * time.Second, source: retry.SourceFloor},
		},
		{
			name: "429 after the rate-limit budget: dropped", attempt: attempt(withRetryAfter(429, "7")), throttle: true,
			state: retry.State{ThrottleStart: now.Add(-31 * time.Minute)},
			// the gate is still told to hold: the server asked everyone to wait
			want: want{next: retry.NextDrop, hold: retry.HoldThrottle, drop: retry.DropThrottleBudgetExhausted, source: retry.SourceHeader},
		},
		{
			name: "503 while nothing succeeds: an outage, the gate holds 1 s", attempt: attempt(resp(503)),
			want: want{next: retry.NextGate, path: retry.PathOutage, hold: retry.HoldOutage, delay: time.Second},
		},
		{
			name: "connection refused while nothing succeeds: an outage", attempt: attempt(transportErr(refused)),
			want: want{next: retry.NextGate, path: retry.PathOutage, hold: retry.HoldOutage, delay: time.Second},
		},
		{
			name: "the outage's fourth failed probe, a refused connection: the gate holds 8 s", attempt: func() retry.Attempt {
				a := attempt(transportErr(refused))
				a.Held, a.HoldFailures = retry.HoldOutage, 3
				return a
			}(),
			want: want{next: retry.NextGate, path: retry.PathOutage, hold: retry.HoldOutage, delay: 8 * time.Second},
		},
		{
			name: "the outage's fourth failed probe, a 503: the gate holds retry_after::default (5 s), the backend answers", attempt: func() retry.Attempt {
				a := attempt(resp(503))
				a.Held, a.HoldFailures = retry.HoldOutage, 3
				return a
			}(),
			want: want{next: retry.NextGate, path: retry.PathOutage, hold: retry.HoldOutage, delay: 5 * time.Second},
		},
		{
			name: "the outage's fourth failed probe, a 502, retry_after::default 20 s: 8 s, the backoff", attempt: func() retry.Attempt {
				a := attempt(resp(502))
				a.Held, a.HoldFailures = retry.HoldOutage, 3
				return a
			}(),
			policy: func(p *retry.Policy) { p.RetryAfter.Default = 20 * time.Second },
			want:   want{next: retry.NextGate, path: retry.PathOutage, hold: retry.HoldOutage, delay: 8 * time.Second},
		},
		{
			name: "503 after outage::max_duration: dropped", attempt: attempt(resp(503)),
			policy: func(p *retry.Policy) { p.Outage.MaxDuration = time.Minute },
			state:  retry.State{FailStart: now.Add(-time.Minute)},
			want:   want{next: retry.NextDrop, drop: retry.DropOutageExhausted},
		},
		{
			name: "503 while others succeed: the payload's own, backoff 1 s", attempt: up(attempt(resp(503))),
			want: want{next: retry.NextBackoff, path: retry.PathBackoff, delay: time.Second},
		},
		{
			name: "timeout while others succeed, the fourth: backoff 8 s", attempt: up(attempt(transportErr(timeoutError{}))),
			state: retry.State{Counted: 3},
			want:  want{next: retry.NextBackoff, path: retry.PathBackoff, delay: 8 * time.Second},
		},
		{
			name: "500 while others succeed, the fifth: dropped", attempt: up(attempt(resp(500))),
			state: retry.State{Counted: 4},
			want:  want{next: retry.NextDrop, drop: retry.DropRetriesExhausted},
		},
		{
			name: "503 while others succeed, after four counted: the backend's answer, not counted, backoff", attempt: up(attempt(resp(503))),
			state: retry.State{Counted: 4},
			want:  want{next: retry.NextBackoff, path: retry.PathBackoff, delay: time.Second},
		},
		{
			name: "502 while others succeed, the sixth: backoff 32 s capped at 30 s", attempt: up(attempt(resp(502))),
			state: retry.State{Busy: 5},
			want:  want{next: retry.NextBackoff, path: retry.PathBackoff, delay: 30 * time.Second},
		},
		{
			name: "504 while others succeed, with a pace to slow: back to the gate at the pace", attempt: lately(up(attempt(resp(504)))),
			state: retry.State{Counted: 4},
			want:  want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name: "503 with nothing succeeding, nothing accepted within 2 s: an outage", attempt: attempt(resp(503)),
			want: want{next: retry.NextGate, path: retry.PathOutage, hold: retry.HoldOutage, delay: time.Second},
		},
		{
			name: "503 with nothing succeeding since, but a request accepted within 2 s: the backend's answer, the pace", attempt: lately(attempt(resp(503))),
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name: "503 while others succeed, nothing accepted within 2 s: not counted, backoff", attempt: up(attempt(resp(503))),
			want: want{next: retry.NextBackoff, path: retry.PathBackoff, delay: time.Second},
		},
		{
			name: "503 after the rate-limit budget while others succeed: dropped", attempt: up(attempt(resp(503))),
			state: retry.State{ThrottleStart: now.Add(-31 * time.Minute)},
			want:  want{next: retry.NextDrop, drop: retry.DropThrottleBudgetExhausted},
		},
		{
			name: "429 without Retry-After, with a pace to slow: back to the gate at the pace, no hold", attempt: lately(attempt(resp(429))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name: "429 without Retry-After, nothing accepted within 2 s (a window ran out): held the default 5 s", attempt: attempt(resp(429)), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5 * time.Second, source: retry.SourceDefault},
		},
		{
			name: "429 without Retry-After, nothing known of the destination yet: held 1 s, not the default", attempt: unlearned(attempt(resp(429))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: time.Second, source: retry.SourceFirst},
		},
		{
			name: "429 without Retry-After to the probe of that hold, 1 s after: held until 5 s after the first", attempt: probeOf(1, time.Second, unlearned(attempt(resp(429)))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 4 * time.Second, source: retry.SourceDefault},
		},
		{
			name: "429 without Retry-After to the probe of that hold, 1.5 s after: held until 5 s after the first", attempt: probeOf(1, 1500*time.Millisecond, unlearned(attempt(resp(429)))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 3500 * time.Millisecond, source: retry.SourceDefault},
		},
		{
			name: "429 without Retry-After to the probe of that hold, 4.5 s after: held at least 1 s", attempt: probeOf(1, 4500*time.Millisecond, unlearned(attempt(resp(429)))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: time.Second, source: retry.SourceDefault},
		},
		{
			name: "429 without Retry-After to the probe of a hold a Retry-After began, nothing known: held the default 5 s", attempt: probeOf(1, 0, unlearned(attempt(resp(429)))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5 * time.Second, source: retry.SourceDefault},
		},
		{
			name: "429 without Retry-After to the second probe of the first hold: held the default 5 s", attempt: probeOf(2, time.Second, unlearned(attempt(resp(429)))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5 * time.Second, source: retry.SourceDefault},
		},
		{
			name: "429 without Retry-After, nothing known, retry_after::default 500ms: the default, shorter", attempt: unlearned(attempt(resp(429))), throttle: true,
			policy: func(p *retry.Policy) { p.RetryAfter.Default = 500 * time.Millisecond },
			want:   want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 500 * time.Millisecond, source: retry.SourceDefault},
		},
		{
			name: "429 Retry-After 7, nothing known of the destination yet: the server's wait", attempt: unlearned(attempt(withRetryAfter(429, "7"))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 7 * time.Second, source: retry.SourceHeader},
		},
		{
			name: "429 Retry-After 7 with a pace: the server's wait, held", attempt: lately(attempt(withRetryAfter(429, "7"))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 7 * time.Second, source: retry.SourceHeader},
		},
		{
			name:    "429 Retry-After 7 past a learned concurrency limit: the server's wait, this payload alone (the others keep within the limit)",
			attempt: crowded(retry.CrowdedLearned, lately(attempt(withRetryAfter(429, "7")))), throttle: true,
			want: want{next: retry.NextBackoff, path: retry.PathRateLimit, delay: 7 * time.Second, source: retry.SourceHeader},
		},
		{
			name:    "429 Retry-After 7 with nothing accepted yet but others in flight: the server's wait, this payload alone",
			attempt: crowded(retry.CrowdedFirst, attempt(withRetryAfter(429, "7"))), throttle: true,
			want: want{next: retry.NextBackoff, path: retry.PathRateLimit, delay: 7 * time.Second, source: retry.SourceHeader},
		},
		{
			name:   "429 without Retry-After at a destination that resets at multiples of 10 s, 3.2 s before the next: held until it, though a request was accepted lately",
			policy: pacing, attempt: after(6800*time.Millisecond, windowed(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 3200 * time.Millisecond, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After at a destination that resets at multiples of 10 s, 0.2 s before the next: held until it, no floor",
			policy: pacing, attempt: after(9800*time.Millisecond, windowed(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 200 * time.Millisecond, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After at a destination that resets at multiples of 10 s, 7 s before the next (past retry_after::default): held until it (the window refuses everything until then)",
			policy: pacing, attempt: after(3*time.Second, windowed(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 7 * time.Second, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After, a window found by its runs' counts only (not seen on the clock), 7 s before the next multiple (past retry_after::default): at the pace (a fleet member behind a shared limit has runs of equal length by chance)",
			policy: pacing, attempt: after(3*time.Second, counted(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name:   "429 without Retry-After, a window found by its runs' counts only, 5.03 s before the next multiple (just past retry_after::default: a load offered at twice the window's take spent it in half the window): held until it",
			policy: pacing, attempt: after(4970*time.Millisecond, counted(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5030 * time.Millisecond, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After, a window found by its runs' counts only, 5.03 s before the next multiple, retry_after::max 5 s: at the pace",
			policy: func(p *retry.Policy) { p.Pacing.Enabled = true; p.RetryAfter.Max = 5 * time.Second }, attempt: after(4970*time.Millisecond, counted(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name:   "429 without Retry-After, a window found by its runs' counts only, 6.1 s before the next multiple (past retry_after::default and 1 s): at the pace",
			policy: pacing, attempt: after(3900*time.Millisecond, counted(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name:   "429 without Retry-After, a window found by its runs' counts only, 2 s before the next multiple: held until it",
			policy: pacing, attempt: after(8*time.Second, counted(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 2 * time.Second, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After at a destination that resets at multiples of 10 s, 7 s before the next, past retry_after::max (6 s): at the pace",
			policy: func(p *retry.Policy) { p.Pacing.Enabled = true; p.RetryAfter.Max = 6 * time.Second }, attempt: after(3*time.Second, windowed(lately(attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name:   "429 without Retry-After, nothing accepted within 2 s, a multiple of 10 s 2 s away, its row begun 3 s before it after a run: probed just after the multiple",
			policy: pacing, attempt: rowFrom(7*time.Second, after(8*time.Second, attempt(resp(429)))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 2 * time.Second, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After at a destination whose windows begin 2.5 s past the multiples of 10 s, 3.2 s before the next multiple: held until the next window's start, 5.7 s away",
			policy: pacing, attempt: phased(2500*time.Millisecond, after(6800*time.Millisecond, windowed(lately(attempt(resp(429)))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5700 * time.Millisecond, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After, nothing accepted within 2 s, its row begun 3 s before, windows 2.5 s past the multiples: probed just after the next window's start, 4.5 s away, not at the multiple",
			policy: pacing, attempt: phased(2500*time.Millisecond, rowFrom(7*time.Second, after(8*time.Second, attempt(resp(429))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 4500 * time.Millisecond, source: retry.SourceWindow},
		},
		{
			name:   "429 without Retry-After, nothing accepted within 2 s, a multiple of 10 s 2 s away, its row begun 1 s before it (less than windowClosed): the default",
			policy: pacing, attempt: rowFrom(9*time.Second, after(9500*time.Millisecond, attempt(resp(429)))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5 * time.Second, source: retry.SourceDefault},
		},
		{
			name:   "429 without Retry-After at a destination that resets at multiples of 10 s, but others in flight past its concurrency limit: as without",
			policy: pacing, attempt: after(6800*time.Millisecond, crowded(retry.CrowdedLearned, windowed(lately(attempt(resp(429)))))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name:   "429 without Retry-After, nothing accepted within 2 s, a multiple of 10 s 2 s away, no window seen: the default (no probe at the multiple)",
			policy: pacing, attempt: after(8*time.Second, attempt(resp(429))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, delay: 5 * time.Second, source: retry.SourceDefault},
		},
		{
			name:    "429 Retry-After 0 with nothing accepted yet but others in flight: held (a retry-now is no concurrency signal; its floors apply at the gate)",
			attempt: crowded(retry.CrowdedFirst, attempt(withRetryAfter(429, "0"))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathRateLimit, hold: retry.HoldThrottle, source: retry.SourceHeader},
		},
		{
			name:    "429 without Retry-After, nothing accepted yet but others in flight: back to the gate, no hold (the requests in flight tell)",
			attempt: crowded(retry.CrowdedFirst, attempt(resp(429))), throttle: true,
			want: want{next: retry.NextGate, path: retry.PathPace},
		},
		{
			name: "status_overrides 503: drop", attempt: attempt(resp(503)),
			policy: func(p *retry.Policy) { p.Overrides = map[int]retry.Action{503: retry.ActionDrop} },
			want:   want{next: retry.NextDrop, drop: retry.DropPermanentStatus},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := defaultPolicy()
			if tt.policy != nil {
				tt.policy(&policy)
			}
			before := tt.state
			_, d := policy.Decide(tt.state, tt.attempt)
			got := want{next: d.Next, path: d.Path, hold: d.Hold, drop: d.Drop, delay: d.Delay, source: d.Source}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.throttle, d.Throttled)
			if d.Next == retry.NextGate || d.Next == retry.NextBackoff {
				assert.Equal(t, tt.attempt.Now.Add(d.Delay), d.Until, "a hold lasts the decision's delay")
			}
			assert.Equal(t, before, tt.state, "Decide does not touch the caller's state")
		})
	}
}

// TestDecideCountsAttempts: the next State counts every attempt, and the
// backoff path's failures only while the destination is shown up.
func TestDecideCountsAttempts(t *testing.T) {
	policy := defaultPolicy()
	s := retry.State{}
	s, _ = policy.Decide(s, retry.Attempt{Response: resp(503), Now: t0})
	assert.Equal(t, 1, s.Attempts)
	assert.Zero(t, s.Counted, "an outage spends no counted attempt")
	assert.Equal(t, t0, s.FailStart)
	s, _ = policy.Decide(s, retry.Attempt{Response: resp(503), Now: t0.Add(time.Second), Successes: 1})
	assert.Equal(t, 2, s.Attempts)
	assert.Zero(t, s.Counted, "a 503 while others succeed speaks about the backend: not counted")
	s, _ = policy.Decide(s, retry.Attempt{Response: resp(500), Now: t0.Add(2 * time.Second), Successes: 1})
	assert.Equal(t, 1, s.Counted, "a 500 while others succeed: the failure is the payload's")
	_, d := policy.Decide(s, retry.Attempt{Response: transportErr(errors.New("boom")), Now: t0.Add(3 * time.Second), Successes: 1})
	assert.Equal(t, retry.PathBackoff, d.Path)
	assert.Equal(t, "network", d.Reason)
	assert.Equal(t, http.StatusOK, resp(200).Status)
}
