// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

const ms = time.Millisecond

// TestLoopRun drives one payload through scripted responses on a clock that
// jumps by every wait, and checks the outcome and the exact waits.
func TestLoopRun(t *testing.T) {
	refused := opErr("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED))
	badCert := &url.Error{Op: "Post", URL: "https://collector:4318/v1/traces", Err: x509.UnknownAuthorityError{}}

	tests := []struct {
		name         string
		policy       func(*retry.Policy) // changes to defaultPolicy, if any
		up           bool                // other senders succeed meanwhile: the destination is up
		random       float64             // what the jitter source returns
		responses    []retry.Response    // the last one repeats
		wantKind     retry.OutcomeKind
		wantReason   retry.DropReason
		wantAttempts int
		wantWaits    []time.Duration
		wantOutcomes []string // Event.Outcome of each attempt
		check        func(t *testing.T, h *harness, out retry.Outcome)
	}{
		{
			name:         "success on the first try",
			responses:    []retry.Response{resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 1,
			wantOutcomes: []string{"success"},
			check: func(t *testing.T, h *harness, out retry.Outcome) {
				assert.NoError(t, out.Err)
				assert.Equal(t, 200, out.Last.Status)
				attempt := h.events.of(retry.EventAttempt)[0]
				assert.Equal(t, 1, attempt.Attempt)
				assert.Equal(t, 5, attempt.MaxAttempts)
				assert.Equal(t, retry.ActionSuccess, attempt.Action)
				assert.Equal(t, "200", attempt.Reason)
				assert.Empty(t, attempt.Path)
				assert.Empty(t, h.events.of(retry.EventHoldStart))
			},
		},
		{
			name:         "503 four times then 200 waits 1s 2s 4s 8s without jitter",
			up:           true,
			responses:    concat(times(4, resp(503)), []retry.Response{resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 5,
			wantWaits:    []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			wantOutcomes: []string{"retryable", "retryable", "retryable", "retryable", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				for i, e := range h.events.of(retry.EventAttempt)[:4] {
					assert.Equal(t, retry.PathBackoff, e.Path, "attempt %d", i+1)
					assert.Equal(t, retry.ParsedMissing, e.RetryAfter.Result, "attempt %d", i+1)
					assert.Equal(t, time.Second<<i, e.Delay, "attempt %d", i+1)
				}
				assert.Empty(t, h.events.of(retry.EventHoldStart), "the backoff path never closes the gate")
			},
		},
		{
			name:         "503 four times then 200 with half jitter adds 250ms to each wait",
			up:           true,
			random:       0.5,
			responses:    concat(times(4, resp(503)), []retry.Response{resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 5,
			wantWaits:    []time.Duration{1250 * ms, 2250 * ms, 4250 * ms, 8250 * ms},
			wantOutcomes: []string{"retryable", "retryable", "retryable", "retryable", "success"},
		},
		{
			name:         "500 five times exhausts the retries",
			up:           true,
			responses:    []retry.Response{resp(500)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropRetriesExhausted,
			wantAttempts: 5,
			wantWaits:    []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			wantOutcomes: []string{"retryable", "retryable", "retryable", "retryable", "retryable"},
			check: func(t *testing.T, h *harness, out retry.Outcome) {
				last := h.events.of(retry.EventAttempt)[4]
				assert.Empty(t, last.Path, "nothing follows the last attempt")
				assert.Zero(t, last.Delay)
				assert.Equal(t, 500, out.Last.Status)
			},
		},
		{
			name:         "502, 503 and 504 while others succeed spend no attempt: past the fifth, along the backoff schedule",
			up:           true,
			responses:    concat(times(3, resp(503)), []retry.Response{resp(502), resp(504), resp(503), resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 7,
			wantWaits:    []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second},
			wantOutcomes: []string{"retryable", "retryable", "retryable", "retryable", "retryable", "retryable", "success"},
		},
		{
			name:         "max_attempts 1 never retries",
			up:           true,
			policy:       func(p *retry.Policy) { p.Backoff.MaxAttempts = 1 },
			responses:    []retry.Response{resp(500)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropRetriesExhausted,
			wantAttempts: 1,
			wantOutcomes: []string{"retryable"},
		},
		{
			name: "429 Retry-After 7 waits exactly 7s with no backoff stacked",
			policy: func(p *retry.Policy) {
				p.Backoff.InitialInterval, p.Backoff.MaxInterval = time.Hour, time.Hour
			},
			responses:    []retry.Response{withRetryAfter(429, "7"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{7 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				e := h.events.of(retry.EventAttempt)[0]
				assert.Equal(t, retry.PathRateLimit, e.Path)
				assert.Equal(t, retry.SourceHeader, e.Source)
				assert.Equal(t, 7*time.Second, e.Delay)
				assert.Equal(t, t0.Add(7*time.Second), e.Until)
				assert.Equal(t, "429", e.Reason)
				require.NotNil(t, e.RetryAfter)
				assert.Equal(t, retry.RetryAfter{Result: retry.ParsedSeconds, Raw: "7", Delay: 7 * time.Second}, *e.RetryAfter)

				starts := h.events.of(retry.EventHoldStart)
				require.Len(t, starts, 1)
				assert.Equal(t, t0.Add(7*time.Second), starts[0].Until)
				assert.Len(t, h.events.of(retry.EventHoldEnd), 1, "the probe's success ends the window")
				reason, _ := h.gate.State()
				assert.Equal(t, retry.HoldNone, reason)
			},
		},
		{
			name:         "429 Retry-After 7 adds retry_after jitter only",
			random:       0.5,
			responses:    []retry.Response{withRetryAfter(429, "7"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{7*time.Second + 125*ms}, // 0.5 x 250ms, not 0.5 x 500ms
			wantOutcomes: []string{"throttled", "success"},
		},
		{
			name:         "429 Retry-After as an HTTP-date",
			responses:    []retry.Response{withRetryAfter(429, t0.Add(42*time.Second).Format(http.TimeFormat)), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{42 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
		},
		{
			name:         "rate-limit retries do not spend backoff attempts",
			up:           true,
			responses:    concat(times(10, withRetryAfter(429, "1")), times(4, resp(503)), []retry.Response{resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 15,
			wantWaits:    append(repeatDur(10, time.Second), 1*time.Second, 2*time.Second, 4*time.Second, 8*time.Second),
			wantOutcomes: append(append(repeatStr(10, "throttled"), repeatStr(4, "retryable")...), "success"),
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				assert.Len(t, h.events.of(retry.EventHoldStart), 1, "one window, extended by each 429")
				assert.Len(t, h.events.of(retry.EventHoldEnd), 1)
			},
		},
		{
			name:         "backoff failures add up across a rate-limit retry",
			up:           true,
			responses:    concat(times(2, resp(500)), []retry.Response{withRetryAfter(429, "1")}, times(3, resp(500))),
			wantKind:     retry.Dropped,
			wantReason:   retry.DropRetriesExhausted,
			wantAttempts: 6,
			wantWaits:    []time.Duration{1 * time.Second, 2 * time.Second, 1 * time.Second, 4 * time.Second, 8 * time.Second},
			wantOutcomes: []string{"retryable", "retryable", "throttled", "retryable", "retryable", "retryable"},
		},
		{
			name:         "429 without Retry-After waits the default 5s",
			responses:    []retry.Response{resp(429), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{5 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				e := h.events.of(retry.EventAttempt)[0]
				assert.Equal(t, retry.SourceDefault, e.Source)
				assert.Equal(t, retry.ParsedMissing, e.RetryAfter.Result)
			},
		},
		{
			name:         "429 with an invalid Retry-After waits the default",
			responses:    []retry.Response{withRetryAfter(429, "soon"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{5 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				assert.Equal(t, retry.SourceDefault, h.events.of(retry.EventAttempt)[0].Source)
			},
		},
		{
			name:         "429 with a negative Retry-After waits the default",
			responses:    []retry.Response{withRetryAfter(429, "-1"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{5 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
		},
		{
			name:         "429 Retry-After 0 retries without waiting",
			responses:    []retry.Response{withRetryAfter(429, "0"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantOutcomes: []string{"throttled", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				assert.Equal(t, t0, h.clock.Now())
			},
		},
		{
			name:         "429 Retry-After 100000 is capped to 300s",
			responses:    []retry.Response{withRetryAfter(429, "100000"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{300 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				e := h.events.of(retry.EventAttempt)[0]
				assert.Equal(t, retry.SourceCapped, e.Source)
				assert.True(t, e.RetryAfter.Capped)
				assert.Equal(t, 300*time.Second, e.Delay)
			},
		},
		{
			name:         "503 with Retry-After takes the rate-limit path",
			responses:    []retry.Response{withRetryAfter(503, "3"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{3 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				e := h.events.of(retry.EventAttempt)[0]
				assert.Equal(t, retry.PathRateLimit, e.Path)
				assert.Equal(t, retry.SourceHeader, e.Source)
				assert.Len(t, h.events.of(retry.EventHoldStart), 1)
			},
		},
		{
			name:         "503 with an invalid Retry-After takes the backoff path",
			up:           true,
			responses:    []retry.Response{withRetryAfter(503, "soon"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{time.Second},
			wantOutcomes: []string{"retryable", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				e := h.events.of(retry.EventAttempt)[0]
				assert.Equal(t, retry.PathBackoff, e.Path)
				assert.Equal(t, retry.ParsedInvalid, e.RetryAfter.Result)
				assert.Empty(t, e.Source)
				assert.Empty(t, h.events.of(retry.EventHoldStart))
			},
		},
		{
			name:         "endless 429 Retry-After 300 spends the throttle budget after three waits",
			policy:       func(p *retry.Policy) { p.RetryAfter.MaxElapsed = 3 * p.RetryAfter.Max },
			responses:    []retry.Response{withRetryAfter(429, "300")},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropThrottleBudgetExhausted,
			wantAttempts: 4,
			wantWaits:    repeatDur(3, 300*time.Second),
			wantOutcomes: repeatStr(4, "throttled"),
			check: func(t *testing.T, h *harness, out retry.Outcome) {
				assert.Equal(t, 900*time.Second, h.clock.Now().Sub(t0), "dropped right at max_elapsed")
				assert.Equal(t, 429, out.Last.Status)
			},
		},
		{
			name: "endless 429 with jitter: three full waits, the fourth try is dropped",
			policy: func(p *retry.Policy) {
				p.RetryAfter.MaxElapsed = 3 * p.RetryAfter.Max
			},
			random:       0.5,
			responses:    []retry.Response{withRetryAfter(429, "300")},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropThrottleBudgetExhausted,
			wantAttempts: 4,
			// windows end at 300.125s, 600.25s and 900.375s: jitter never
			// cuts the last wait short; the budget drops at the next 429
			wantWaits:    repeatDur(3, 300*time.Second+125*ms),
			wantOutcomes: repeatStr(4, "throttled"),
			check: func(t *testing.T, h *harness, out retry.Outcome) {
				assert.Equal(t, 429, out.Last.Status)
				assert.Equal(t, 900*time.Second+375*ms, h.clock.Now().Sub(t0))
			},
		},
		{
			name:         "a single huge Retry-After is retried within the budget",
			policy:       func(p *retry.Policy) { p.RetryAfter.MaxElapsed = 3 * p.RetryAfter.Max },
			responses:    []retry.Response{withRetryAfter(429, "99999999999999999999999"), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{300 * time.Second},
			wantOutcomes: []string{"throttled", "success"},
		},
		{
			name:         "400 drops at once",
			responses:    []retry.Response{resp(400)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropPermanentStatus,
			wantAttempts: 1,
			wantOutcomes: []string{"permanent"},
		},
		{
			name:         "override turns 503 into a drop",
			policy:       func(p *retry.Policy) { p.Overrides = map[int]retry.Action{503: retry.ActionDrop} },
			responses:    []retry.Response{resp(503)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropPermanentStatus,
			wantAttempts: 1,
			wantOutcomes: []string{"permanent"},
		},
		{
			name:         "override turns 400 into a retry",
			up:           true,
			policy:       func(p *retry.Policy) { p.Overrides = map[int]retry.Action{400: retry.ActionRetry} },
			responses:    []retry.Response{resp(400), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{time.Second},
			wantOutcomes: []string{"retryable", "success"},
		},
		{
			name:         "connection refused is retried on the backoff path",
			up:           true,
			responses:    []retry.Response{transportErr(refused), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{time.Second},
			wantOutcomes: []string{"network_error", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				e := h.events.of(retry.EventAttempt)[0]
				assert.Equal(t, retry.ReasonConnectionRefused, e.Reason)
				assert.Equal(t, retry.PathBackoff, e.Path)
				assert.Nil(t, e.RetryAfter, "no header to parse without a response")
			},
		},
		{
			name:         "network errors exhaust the retries",
			up:           true,
			responses:    []retry.Response{transportErr(refused)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropRetriesExhausted,
			wantAttempts: 5,
			wantWaits:    []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			wantOutcomes: repeatStr(5, "network_error"),
		},
		{
			name:         "a refused certificate drops at once",
			responses:    []retry.Response{transportErr(badCert)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropPermanentError,
			wantAttempts: 1,
			wantOutcomes: []string{"permanent"},
			check: func(t *testing.T, _ *harness, out retry.Outcome) {
				assert.ErrorIs(t, out.Err, badCert)
			},
		},
		{
			name:         "a destination that is down holds the payload at the gate: one probe per backoff interval, at most retry_after::default to a backend that answers 503, nothing dropped",
			responses:    concat(times(7, resp(503)), []retry.Response{resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 8,
			wantWaits:    []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second},
			wantOutcomes: append(repeatStr(7, "retryable"), "success"),
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				for i, e := range h.events.of(retry.EventAttempt)[:7] {
					assert.Equal(t, retry.PathOutage, e.Path, "attempt %d", i+1)
					assert.Equal(t, retry.HoldOutage, e.Hold, "attempt %d", i+1)
					assert.Equal(t, i > 0, e.Probe, "attempt %d: every attempt after the first is the gate's probe", i+1)
				}
				starts := h.events.of(retry.EventHoldStart)
				require.Len(t, starts, 1, "one outage")
				assert.Equal(t, retry.HoldOutage, starts[0].Held)
				ends := h.events.of(retry.EventHoldEnd)
				require.Len(t, ends, 1)
				assert.Equal(t, retry.HoldOutage, ends[0].Held)
			},
		},
		{
			name:         "connection refused for minutes costs no attempt: the probe interval stops at max_interval",
			responses:    concat(times(10, transportErr(refused)), []retry.Response{resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 11,
			wantWaits:    append([]time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, repeatDur(5, 30*time.Second)...),
			wantOutcomes: append(repeatStr(10, "network_error"), "success"),
		},
		{
			name:         "outage probes are jittered like backoff waits",
			random:       0.5,
			responses:    concat(times(3, transportErr(refused)), []retry.Response{resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 4,
			wantWaits:    []time.Duration{1250 * ms, 2250 * ms, 4250 * ms},
			wantOutcomes: append(repeatStr(3, "network_error"), "success"),
		},
		{
			name:         "outage::max_duration drops a payload whose outage lasts that long",
			policy:       func(p *retry.Policy) { p.Outage.MaxDuration = 10 * time.Second },
			responses:    []retry.Response{resp(503)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropOutageExhausted,
			wantAttempts: 4,
			wantWaits:    []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 3 * time.Second},
			wantOutcomes: repeatStr(4, "retryable"),
			check: func(t *testing.T, _ *harness, out retry.Outcome) {
				assert.ErrorIs(t, out.Err, retry.ErrGateDeadline)
			},
		},
		{
			name:         "a throttle that turns into an outage starts the outage schedule afresh",
			responses:    concat(times(3, withRetryAfter(429, "10")), times(2, resp(503)), []retry.Response{resp(200)}),
			wantKind:     retry.Delivered,
			wantAttempts: 6,
			wantWaits:    []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second, 1 * time.Second, 2 * time.Second},
			wantOutcomes: append(append(repeatStr(3, "throttled"), repeatStr(2, "retryable")...), "success"),
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				starts := h.events.of(retry.EventHoldStart)
				require.Len(t, starts, 2)
				assert.Equal(t, retry.HoldThrottle, starts[0].Held)
				assert.Equal(t, retry.HoldOutage, starts[1].Held)
			},
		},
		{
			name:         "401 holds the destination and probes every probe_interval until accepted",
			responses:    []retry.Response{resp(401), resp(401), resp(401), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 4,
			wantWaits:    repeatDur(3, time.Minute),
			wantOutcomes: []string{"unauthorized", "unauthorized", "unauthorized", "success"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				for i, e := range h.events.of(retry.EventAttempt)[:3] {
					assert.Equal(t, retry.PathUnauthorized, e.Path, "attempt %d", i+1)
					assert.Equal(t, time.Minute, e.Delay, "attempt %d", i+1)
				}
				starts := h.events.of(retry.EventHoldStart)
				require.Len(t, starts, 1, "the hold is reported once, not per probe")
				assert.Equal(t, retry.HoldUnauthorized, starts[0].Held)
				ends := h.events.of(retry.EventHoldEnd)
				require.Len(t, ends, 1)
				assert.Equal(t, retry.HoldUnauthorized, ends[0].Held)
			},
		},
		{
			name:         "401 with a longer probe_interval",
			policy:       func(p *retry.Policy) { p.Unauthorized.ProbeInterval = 5 * time.Minute },
			responses:    []retry.Response{resp(401), resp(200)},
			wantKind:     retry.Delivered,
			wantAttempts: 2,
			wantWaits:    []time.Duration{5 * time.Minute},
			wantOutcomes: []string{"unauthorized", "success"},
		},
		{
			name:         "401 with on_unauthorized drop drops the payload",
			policy:       func(p *retry.Policy) { p.HoldOnUnauthorized = false },
			responses:    []retry.Response{resp(401)},
			wantKind:     retry.Dropped,
			wantReason:   retry.DropUnauthorized,
			wantAttempts: 1,
			wantOutcomes: []string{"unauthorized"},
			check: func(t *testing.T, h *harness, _ retry.Outcome) {
				assert.Empty(t, h.events.of(retry.EventHoldStart), "drop mode never holds the destination")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := defaultPolicy()
			if tt.policy != nil {
				tt.policy(&policy)
			}
			h := newHarness(retrytest.NewAutoClock(t0), policy, tt.random)
			s := newScript(tt.responses...)
			send := s.send
			if tt.up {
				send = othersSucceed(h.gate, send)
			}

			out := h.loop.Run(context.Background(), send)

			assert.Equal(t, tt.wantKind, out.Kind, "outcome %v: %v", out.Kind, out.Err)
			assert.Equal(t, tt.wantReason, out.Reason)
			assert.Equal(t, tt.wantAttempts, out.Attempts, "Outcome.Attempts")
			assert.Equal(t, tt.wantAttempts, s.calls(), "requests sent")
			if tt.wantKind == retry.Delivered {
				assert.NoError(t, out.Err)
			} else {
				assert.Error(t, out.Err)
			}
			for i, a := range s.attemptNumbers() {
				assert.Equal(t, i+1, a, "send gets the 1-based attempt number")
			}
			if len(tt.wantWaits) == 0 {
				assert.Empty(t, h.clock.Waits(), "waits")
			} else {
				assert.Equal(t, tt.wantWaits, h.clock.Waits(), "waits")
			}
			assert.Equal(t, tt.wantOutcomes, h.events.outcomes(), "Event.Outcome of each attempt")
			assert.Zero(t, h.loop.Waiting(), "nobody is left waiting")
			if tt.check != nil {
				tt.check(t, h, out)
			}
		})
	}
}

func repeatStr(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestEventOutcome(t *testing.T) {
	tests := []struct {
		name  string
		event retry.Event
		want  string
	}{
		{name: "2xx", event: retry.Event{Decision: retry.Decision{Action: retry.ActionSuccess}, Response: resp(200)}, want: "success"},
		{name: "503 on the backoff path", event: retry.Event{Decision: retry.Decision{Action: retry.ActionRetry, Path: retry.PathBackoff}, Response: resp(503)}, want: "retryable"},
		{name: "503 with nothing left", event: retry.Event{Decision: retry.Decision{Action: retry.ActionRetry}, Response: resp(503)}, want: "retryable"},
		{name: "429 on the rate-limit path", event: retry.Event{Decision: retry.Decision{Action: retry.ActionRetry, Throttled: true, Path: retry.PathRateLimit}, Response: resp(429)}, want: "throttled"},
		{name: "429 with the rate-limit budget spent", event: retry.Event{Decision: retry.Decision{Action: retry.ActionRetry, Throttled: true}, Response: resp(429)}, want: "throttled"},
		{name: "400", event: retry.Event{Decision: retry.Decision{Action: retry.ActionDrop}, Response: resp(400)}, want: "permanent"},
		{name: "refused certificate", event: retry.Event{Decision: retry.Decision{Action: retry.ActionDrop}, Response: transportErr(errors.New("x509"))}, want: "permanent"},
		{name: "no response", event: retry.Event{Decision: retry.Decision{Action: retry.ActionRetry, Path: retry.PathBackoff}, Response: transportErr(errors.New("refused"))}, want: "network_error"},
		{name: "401", event: retry.Event{Decision: retry.Decision{Action: retry.ActionUnauthorized}, Response: resp(401)}, want: "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.event.Outcome())
		})
	}
}

func TestOutcomeKindString(t *testing.T) {
	assert.Equal(t, "success", retry.Delivered.String())
	assert.Equal(t, "dropped", retry.Dropped.String())
	assert.Equal(t, "interrupted", retry.Interrupted.String())
}

// TestLoopUnauthorizedDropMode: with on_unauthorized: drop, a 401 drops
// its payload and later payloads are still sent.
func TestLoopUnauthorizedDropMode(t *testing.T) {
	policy := defaultPolicy()
	policy.HoldOnUnauthorized = false
	h := newHarness(retrytest.NewAutoClock(t0), policy, 0)

	first := newScript(resp(401))
	out := h.loop.Run(context.Background(), first.send)
	assert.Equal(t, retry.Dropped, out.Kind)
	assert.Equal(t, retry.DropUnauthorized, out.Reason)
	assert.Equal(t, 1, out.Attempts)
	assert.Empty(t, h.clock.Waits())

	next := newScript(resp(200))
	for range 3 {
		got := h.loop.Run(context.Background(), next.send)
		assert.Equal(t, retry.Delivered, got.Kind)
		assert.Equal(t, 1, got.Attempts)
	}
	assert.Equal(t, 3, next.calls(), "requests sent by later payloads")
	assert.Empty(t, h.events.of(retry.EventHoldStart))
}

// TestLoopHoldReportedOnce has four payloads get a 401 at the same time:
// the hold is reported once, nobody is dropped, one probe goes out after
// the probe interval, and its success lets everybody through.
func TestLoopHoldReportedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(retrytest.NewClock(t0), defaultPolicy(), 0)
		const n = 4
		var arrived sync.WaitGroup
		arrived.Add(n)
		release := make(chan struct{})
		var mu sync.Mutex
		calls := 0
		send := func(context.Context, int) retry.Response {
			mu.Lock()
			calls++
			first := calls <= n
			mu.Unlock()
			if !first {
				return resp(200)
			}
			arrived.Done()
			<-release // every payload has its request in flight
			return resp(401)
		}
		outs := make(chan retry.Outcome, n)
		for range n {
			go func() { outs <- h.loop.Run(context.Background(), send) }()
		}
		arrived.Wait()
		close(release)
		synctest.Wait()
		assert.Empty(t, outs, "nobody is dropped for a 401")
		assert.EqualValues(t, n, h.loop.Waiting())
		require.Len(t, h.events.of(retry.EventHoldStart), 1)
		assert.Equal(t, retry.HoldUnauthorized, h.events.of(retry.EventHoldStart)[0].Held)

		h.clock.Advance(time.Minute)
		synctest.Wait()
		require.Len(t, outs, n)
		for range n {
			out := <-outs
			assert.Equal(t, retry.Delivered, out.Kind)
			assert.Equal(t, 2, out.Attempts)
		}
		mu.Lock()
		assert.Equal(t, 2*n, calls, "one 401 each, then the probe, then the others")
		mu.Unlock()
		assert.Len(t, h.events.of(retry.EventHoldStart), 1)
		assert.Len(t, h.events.of(retry.EventHoldEnd), 1)
		assert.Len(t, h.events.of(retry.EventAttempt), 2*n)
	})
}

// TestLoopInterruptedDuringWait ends a long wait with Stop or with the
// caller's context: Run returns at once, the clock never moves.
func TestLoopInterruptedDuringWait(t *testing.T) {
	tests := []struct {
		name     string
		response retry.Response
		stop     bool // Stop the loop; otherwise cancel the payload's context
		wantErr  error
	}{
		{name: "Stop during a Retry-After wait", response: withRetryAfter(429, "300"), stop: true, wantErr: context.Canceled},
		{name: "Stop during a backoff wait", response: resp(503), stop: true, wantErr: context.Canceled},
		{name: "cancel during a Retry-After wait", response: withRetryAfter(429, "300"), wantErr: context.Canceled},
		{name: "cancel during a backoff wait", response: resp(503), wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(retrytest.NewClock(t0), defaultPolicy(), 0)
				s := newScript(tt.response)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan retry.Outcome, 1)
				go func() { done <- h.loop.Run(ctx, s.send) }()

				require.True(t, h.clock.WaitForTimers(1, time.Minute), "Run should be waiting on the clock")
				assert.EqualValues(t, 1, h.loop.Waiting())
				if tt.stop {
					h.loop.Stop()
				} else {
					cancel()
				}
				synctest.Wait() // Run has returned or is blocked for good

				var out retry.Outcome
				select {
				case out = <-done:
				default:
					t.Fatal("Run is still waiting after the interruption")
				}
				assert.Equal(t, retry.Interrupted, out.Kind)
				assert.Equal(t, 1, out.Attempts)
				assert.ErrorIs(t, out.Err, tt.wantErr)
				assert.Equal(t, t0, h.clock.Now(), "the clock was not advanced")
				assert.Zero(t, h.clock.Pending(), "the timer was released")
				assert.Zero(t, h.loop.Waiting())
				assert.Equal(t, 1, s.calls())
			})
		})
	}
}

// TestLoopStopDuringThrottleThenDrain: after Stop, nothing is sent to a
// destination whose gate holds.
func TestLoopStopDuringThrottleThenDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(retrytest.NewClock(t0), defaultPolicy(), 0)
		s := newScript(withRetryAfter(429, "300"), resp(200))
		done := make(chan retry.Outcome, 1)
		go func() { done <- h.loop.Run(context.Background(), s.send) }()
		require.True(t, h.clock.WaitForTimers(1, time.Minute))

		h.loop.Stop()
		synctest.Wait()
		require.Len(t, done, 1)
		assert.Equal(t, retry.Interrupted, (<-done).Kind)

		out := h.loop.Run(context.Background(), s.send)
		assert.Equal(t, retry.Interrupted, out.Kind)
		assert.Zero(t, out.Attempts)
		assert.Equal(t, 1, s.calls(), "no request while the gate holds")
		assert.Equal(t, t0, h.clock.Now())
	})
}

// TestLoopDrainAfterStop: after Stop each payload gets one attempt and no
// wait; after a retryable failure, no payload gets any.
func TestLoopDrainAfterStop(t *testing.T) {
	refused := opErr("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED))
	tests := []struct {
		name       string
		first      retry.Response // answer to the first drain attempt
		wantKind   retry.OutcomeKind
		wantReason retry.DropReason
		wantLater  int // requests made by three later payloads answered 200
	}{
		{name: "503 stops the drain", first: resp(503), wantKind: retry.Interrupted, wantLater: 0},
		{name: "429 stops the drain", first: withRetryAfter(429, "1"), wantKind: retry.Interrupted, wantLater: 0},
		{name: "network error stops the drain", first: transportErr(refused), wantKind: retry.Interrupted, wantLater: 0},
		{name: "success keeps draining", first: resp(200), wantKind: retry.Delivered, wantLater: 3},
		{name: "permanent failure keeps draining", first: resp(400), wantKind: retry.Dropped, wantReason: retry.DropPermanentStatus, wantLater: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(retrytest.NewAutoClock(t0), defaultPolicy(), 0)
			h.loop.Stop()

			first := newScript(tt.first, resp(200))
			out := h.loop.Run(context.Background(), first.send)
			assert.Equal(t, tt.wantKind, out.Kind, "%v", out.Err)
			assert.Equal(t, tt.wantReason, out.Reason)
			assert.Equal(t, 1, out.Attempts)
			assert.Equal(t, 1, first.calls(), "exactly one attempt in drain")

			later := newScript(resp(200))
			for range 3 {
				got := h.loop.Run(context.Background(), later.send)
				if tt.wantLater == 0 {
					assert.Equal(t, retry.Interrupted, got.Kind)
					assert.Zero(t, got.Attempts)
				} else {
					assert.Equal(t, retry.Delivered, got.Kind)
				}
			}
			assert.Equal(t, tt.wantLater, later.calls())
			assert.Empty(t, h.clock.Waits(), "nothing waits after Stop")
			reason, _ := h.gate.State()
			assert.Equal(t, retry.HoldNone, reason, "the drain never makes the gate hold")
		})
	}
}

// TestLoopDrainAtPace: after Stop, a loop whose interrupted payloads are
// kept (KeepInterrupted: a persistent queue) attempts a payload only when
// the pacer lets it leave at once; the others are interrupted unsent, for
// the next process. Without it (a queue in memory), or with nothing
// learned, every payload gets its one attempt at once.
func TestLoopDrainAtPace(t *testing.T) {
	paced := retry.KeptPace{At: t0, Mode: "paced", Ceiling: 1, Since: t0, ItemsPerRequest: 1}
	tests := []struct {
		name     string
		keep     bool
		pace     retry.KeptPace
		wantSent int
	}{
		{name: "kept, paced at one a second: one now, the others kept unsent", keep: true, pace: paced, wantSent: 1},
		{name: "in memory, paced: every payload attempted", keep: false, pace: paced, wantSent: 3},
		{name: "kept, nothing learned: every payload attempted", keep: true, wantSent: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := defaultPolicy()
			policy.Pacing = retry.NewDefaultPacingConfig()
			h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
			if tt.pace.Mode != "" {
				require.True(t, h.loop.Pacer().Restore(tt.pace))
			}
			if tt.keep {
				h.loop.KeepInterrupted()
			}
			h.loop.Stop()

			s := newScript(resp(200))
			var kinds []retry.OutcomeKind
			for range 3 {
				out := h.loop.Run(context.Background(), s.send)
				kinds = append(kinds, out.Kind)
				if out.Kind == retry.Interrupted {
					assert.Zero(t, out.Attempts)
					assert.True(t, out.Shutdown, "interrupted by the shutdown: a persistent queue keeps it")
				}
			}
			assert.Equal(t, tt.wantSent, s.calls(), "requests sent after Stop: %v", kinds)
			assert.Equal(t, t0, h.clock.Now(), "nothing waits after Stop")
		})
	}
}

// TestLoopStopWhileAttemptInFlight: Stop does not cut an attempt short, and
// its outcome decides whether later payloads still get their drain attempt.
func TestLoopStopWhileAttemptInFlight(t *testing.T) {
	refused := opErr("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED))
	tests := []struct {
		name      string
		inFlight  retry.Response // answer to the attempt in flight at Stop
		wantKind  retry.OutcomeKind
		wantLater int // requests made by three later payloads answered 200
	}{
		{name: "503 after Stop ends the drain", inFlight: resp(503), wantKind: retry.Interrupted, wantLater: 0},
		{name: "429 after Stop ends the drain", inFlight: withRetryAfter(429, "30"), wantKind: retry.Interrupted, wantLater: 0},
		{name: "network error after Stop ends the drain", inFlight: transportErr(refused), wantKind: retry.Interrupted, wantLater: 0},
		{name: "success after Stop keeps draining", inFlight: resp(200), wantKind: retry.Delivered, wantLater: 3},
		{name: "permanent failure after Stop keeps draining", inFlight: resp(400), wantKind: retry.Dropped, wantLater: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(retrytest.NewClock(t0), defaultPolicy(), 0)
				inFlight := make(chan struct{})
				answer := make(chan struct{})
				var sendCtxErr error
				send := func(ctx context.Context, _ int) retry.Response {
					close(inFlight)
					<-answer
					sendCtxErr = ctx.Err()
					return tt.inFlight
				}
				done := make(chan retry.Outcome, 1)
				go func() { done <- h.loop.Run(context.Background(), send) }()
				<-inFlight

				h.loop.Stop()
				synctest.Wait()
				assert.Empty(t, done, "Stop does not abandon an attempt in flight")
				close(answer)
				synctest.Wait()
				require.Len(t, done, 1)
				out := <-done
				assert.NoError(t, sendCtxErr, "Stop never cancels the attempt's context")
				assert.Equal(t, tt.wantKind, out.Kind, "%v", out.Err)
				assert.Equal(t, 1, out.Attempts)
				assert.Zero(t, h.clock.Pending(), "nothing waits after Stop")

				later := newScript(resp(200))
				for range 3 {
					h.loop.Run(context.Background(), later.send)
				}
				assert.Equal(t, tt.wantLater, later.calls(), "requests by later payloads")
			})
		})
	}
}

// TestLoopBudgetCountsFromAClosedGate: a payload that finds the gate holding
// by another sender spends its throttle budget waiting there, unsent; the
// gate lets it wait one capped wait (and its jitter) past max_elapsed, so a
// payload waiting out its own last wait still gets its try.
func TestLoopBudgetCountsFromAClosedGate(t *testing.T) {
	tests := []struct {
		name         string
		closedFor    time.Duration // the window another sender opened
		wantKind     retry.OutcomeKind
		wantReason   retry.DropReason
		wantAttempts int
		wantWaits    []time.Duration
	}{
		{name: "window longer than the budget", closedFor: 2 * time.Hour, wantKind: retry.Dropped, wantReason: retry.DropThrottleBudgetExhausted, wantAttempts: 0, wantWaits: []time.Duration{30*time.Minute + 300*time.Second + 250*ms}},
		{name: "window within the budget", closedFor: 10 * time.Minute, wantKind: retry.Delivered, wantAttempts: 1, wantWaits: []time.Duration{10 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(retrytest.NewAutoClock(t0), defaultPolicy(), 0)
			h.gate.Hold(retry.HoldThrottle, t0.Add(tt.closedFor))
			s := newScript(resp(200))

			out := h.loop.Run(context.Background(), s.send)
			assert.Equal(t, tt.wantKind, out.Kind, "%v", out.Err)
			assert.Equal(t, tt.wantReason, out.Reason)
			assert.Equal(t, tt.wantAttempts, out.Attempts)
			assert.Equal(t, tt.wantAttempts, s.calls())
			assert.Equal(t, tt.wantWaits, h.clock.Waits())
			if tt.wantKind == retry.Dropped {
				assert.ErrorIs(t, out.Err, retry.ErrGateDeadline)
			}
		})
	}
}

// TestLoopPoisonPayload: a payload that keeps failing while requests of
// other payloads succeed is the payload's fault, not the destination's: its
// first failure (nothing had succeeded yet) holds at the gate, and once the
// destination is shown up it spends its counted attempts and is dropped.
func TestLoopPoisonPayload(t *testing.T) {
	h := newHarness(retrytest.NewAutoClock(t0), defaultPolicy(), 0)
	s := newScript(resp(500))
	send := func(ctx context.Context, attempt int) retry.Response {
		if attempt > 1 {
			// From the second attempt on, others get through meanwhile.
			h.gate.Report(retry.Pass{}, true, retry.HoldNone, time.Time{})
		}
		return s.send(ctx, attempt)
	}
	out := h.loop.Run(context.Background(), send)
	assert.Equal(t, retry.Dropped, out.Kind)
	assert.Equal(t, retry.DropRetriesExhausted, out.Reason)
	assert.Equal(t, 6, out.Attempts, "one attempt before the destination was shown up, then max_attempts")
	assert.Equal(t, []time.Duration{1 * time.Second, 1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, h.clock.Waits())
	paths := []retry.Path{}
	for _, e := range h.events.of(retry.EventAttempt) {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []retry.Path{retry.PathOutage, retry.PathBackoff, retry.PathBackoff, retry.PathBackoff, retry.PathBackoff, retry.PathNone}, paths)
}

// TestLoopPermanentAnswerEndsAnOutage: the probe of an outage that gets a
// permanent answer (400) is dropped, and the answer shows the destination
// up: the gate opens for everyone.
func TestLoopPermanentAnswerEndsAnOutage(t *testing.T) {
	h := newHarness(retrytest.NewAutoClock(t0), defaultPolicy(), 0)
	h.gate.Hold(retry.HoldOutage, t0.Add(time.Second))
	out := h.loop.Run(context.Background(), newScript(resp(400)).send)
	assert.Equal(t, retry.Dropped, out.Kind)
	assert.Equal(t, retry.DropPermanentStatus, out.Reason)
	reason, _ := h.gate.State()
	assert.Equal(t, retry.HoldNone, reason)
	require.Len(t, h.events.of(retry.EventHoldEnd), 1)
	assert.Equal(t, retry.HoldOutage, h.events.of(retry.EventHoldEnd)[0].Held)
}

// TestLoopFloorUnderRetryNow: the first "retry now" (Retry-After 0, or a
// date not in the future) of a payload may retry at once; further ones
// escalate along the backoff schedule, on the rate-limit path.
func TestLoopFloorUnderRetryNow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
	}{
		{name: "zero", value: "0"},
		{name: "date in the past", value: t0.Add(-time.Hour).Format(http.TimeFormat)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(retrytest.NewAutoClock(t0), defaultPolicy(), 0)
			s := newScript(append(times(5, withRetryAfter(429, tc.value)), resp(200))...)
			out := h.loop.Run(context.Background(), s.send)
			assert.Equal(t, retry.Delivered, out.Kind)
			assert.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, h.clock.Waits(),
				"the first retries at once (no wait), then 1 s, 2 s, 4 s, 8 s")
			var sources []retry.DelaySource
			for _, e := range h.events.of(retry.EventAttempt)[:5] {
				assert.Equal(t, retry.PathRateLimit, e.Path)
				sources = append(sources, e.Source)
			}
			assert.Equal(t, []retry.DelaySource{retry.SourceHeader, retry.SourceFloor, retry.SourceFloor, retry.SourceFloor, retry.SourceFloor}, sources)
		})
	}
}

// throttledOnce returns a loop with pacing on that has delivered ten
// payloads of 100 items, then one refused with Retry-After: 1 and accepted
// on its retry, so that it has learned a pace; and the script that accepts
// everything.
func throttledOnce(t *testing.T) (*harness, *script) {
	t.Helper()
	policy := defaultPolicy()
	policy.Pacing = retry.NewDefaultPacingConfig()
	h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
	accepted := newScript(resp(200))
	for range 10 {
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, accepted.send).Kind)
	}
	throttled := newScript(withRetryAfter(429, "1"), resp(200))
	require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, throttled.send).Kind)
	return h, accepted
}

// TestLoopPacesAfterAThrottle: once the destination has refused a payload
// after accepting others, waiting payloads leave at the learned rate, not
// all at once; the pacer's waits are reported.
func TestLoopPacesAfterAThrottle(t *testing.T) {
	h, accepted := throttledOnce(t)
	rate := h.loop.Pacer().Rate()
	require.Positive(t, rate, "a rate was learned at the refusal")

	before := len(h.clock.Waits())
	for range 6 {
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, accepted.send).Kind)
	}
	paced := h.events.of(retry.EventPaced)
	require.NotEmpty(t, paced)
	for _, e := range paced {
		assert.Equal(t, retry.PaceRate, e.Paced)
	}
	waits := h.clock.Waits()[before:]
	require.NotEmpty(t, waits)
	for _, w := range waits {
		// payloads of 100 items leave about 100/rate apart (the rate grows
		// a little every second without a refusal)
		assert.InDelta(t, 100/rate, w.Seconds(), 0.1*100/rate, "paced wait")
	}
}

// TestLoopARefusedProbeDoesNotCutThePace: a payload refused at the pace
// cuts it; the hold's probe, refused again, says only that the hold goes
// on and leaves the pace as the first refusal set it.
func TestLoopARefusedProbeDoesNotCutThePace(t *testing.T) {
	h, accepted := throttledOnce(t)
	for range 5 {
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, accepted.send).Kind)
	}
	var ceilings []float64
	answers := []retry.Response{withRetryAfter(429, "1"), withRetryAfter(429, "1"), resp(200)}
	out := h.loop.RunItems(context.Background(), 100, func(_ context.Context, attempt int) retry.Response {
		ceilings = append(ceilings, h.loop.Pacer().Ceiling())
		return answers[attempt-1]
	})
	require.Equal(t, retry.Delivered, out.Kind)
	require.Len(t, ceilings, 3)
	assert.NotEqual(t, ceilings[0], ceilings[1], "the refusal at the pace cut it")
	assert.Equal(t, ceilings[1], ceilings[2], "the refused probe left it")
	probes := 0
	for _, e := range h.events.of(retry.EventAttempt) {
		if e.Probe {
			probes++
		}
	}
	assert.Positive(t, probes)
}

// TestLoopCutsOnceForRequestsInFlightTogether: two payloads in flight when
// the first is refused are refused together: the second refusal, of a
// request that left before the first one's cut, cuts the pace no further.
func TestLoopCutsOnceForRequestsInFlightTogether(t *testing.T) {
	policy := defaultPolicy()
	policy.Pacing = retry.NewDefaultPacingConfig()
	policy.RetryAfter.Jitter = 0
	clock := retrytest.NewClock(t0)
	attempts := make(chan retry.Event, 16)
	loop := retry.NewLoop(policy, clock, retry.NewGate(clock), func(_ context.Context, e retry.Event) {
		if e.Kind == retry.EventAttempt {
			attempts <- e
		}
	})
	loop.SetRandom(func() float64 { return 0 })
	p := loop.Pacer()
	// A pace of 1000 items a second was learned; then other senders had
	// 500 items accepted.
	for i := range 10 {
		p.Accepted(t0.Add(time.Duration(i)*100*time.Millisecond), 100, 0, retry.RateLimit{})
	}
	clock.Advance(time.Second)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Probe: false}, retry.RateLimit{})
	clock.Advance(50 * time.Millisecond)
	for range 5 {
		p.Accepted(clock.Now(), 100, 0, retry.RateLimit{})
	}

	type call struct {
		started chan struct{}
		answer  chan retry.Response
	}
	outcomes := make(chan retry.Outcome, 2)
	run := func() call {
		c := call{started: make(chan struct{}, 4), answer: make(chan retry.Response, 4)}
		go func() {
			outcomes <- loop.RunItems(context.Background(), 100, func(context.Context, int) retry.Response {
				c.started <- struct{}{}
				return <-c.answer
			})
		}()
		return c
	}
	a := run()
	<-a.started
	b := run()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the second payload waits for its paced slot")
	clock.Advance(time.Second)
	<-b.started // both in flight

	clock.Advance(10 * time.Millisecond)
	a.answer <- withRetryAfter(429, "1")
	<-attempts
	cut := p.Ceiling()
	require.Less(t, cut, 1000.0, "the first refusal cut the pace")
	clock.Advance(10 * time.Millisecond)
	b.answer <- withRetryAfter(429, "1")
	<-attempts
	assert.Equal(t, cut, p.Ceiling(), "the second refusal, of a request in flight with the first, cut nothing more")

	// After the hold both are accepted.
	a.answer <- resp(200)
	b.answer <- resp(200)
	for done := 0; done < 2; {
		select {
		case out := <-outcomes:
			assert.Equal(t, retry.Delivered, out.Kind)
			done++
		default:
			if clock.WaitForTimers(1, 10*time.Millisecond) {
				clock.Advance(time.Second)
			}
		}
	}
}

// TestLoopPacingOffSendsAtOnce: with pacing off nothing is paced.
func TestLoopPacingOffSendsAtOnce(t *testing.T) {
	h := newHarness(retrytest.NewAutoClock(t0), defaultPolicy(), 0)
	assert.Nil(t, h.loop.Pacer())
	accepted := newScript(resp(200))
	for range 5 {
		h.loop.RunItems(context.Background(), 100, accepted.send)
	}
	h.loop.RunItems(context.Background(), 100, newScript(withRetryAfter(429, "1"), resp(200)).send)
	for range 5 {
		h.loop.RunItems(context.Background(), 100, accepted.send)
	}
	assert.Empty(t, h.events.of(retry.EventPaced))
	assert.Equal(t, []time.Duration{time.Second}, h.clock.Waits())
}

// TestLoopSlowStartAfterAWindow: a destination that refused from its first
// answer, then let the hold's probe through, does not get everything that
// waited at once: the payloads after the probe leave one second apart at
// first, then closer and closer (the pace doubles every second).
func TestLoopSlowStartAfterAWindow(t *testing.T) {
	policy := defaultPolicy()
	policy.Pacing = retry.NewDefaultPacingConfig()
	policy.RetryAfter.Jitter = 0
	h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
	windowed := newScript(withRetryAfter(429, "5"), resp(200))
	require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, windowed.send).Kind)
	require.Equal(t, []time.Duration{5 * time.Second}, h.clock.Waits(), "the window, then the probe")

	deliverAccepted(t, h, 5)
	waits := h.clock.Waits()[1:]
	require.Len(t, waits, 4, "the first payload after the probe leaves at once, the others are paced")
	assert.Equal(t, time.Second, waits[0], "one request a second at first")
	for i := 1; i < len(waits); i++ {
		assert.Less(t, waits[i], waits[i-1], "the pace grows")
	}
	for _, e := range h.events.of(retry.EventPaced) {
		assert.Equal(t, retry.PaceRate, e.Paced)
	}
}

// TestLoopAFirstBare429HoldsBriefly: a 429 without Retry-After to the
// very first request says nothing of a limit (a backend that refuses a few
// per cent at random refuses the first request now and then): the
// destination is held 1 s, not retry_after::default, and when the probe
// is accepted what waited leaves at once, unpaced. When the probe is
// refused too, the next hold is the rest of retry_after::default and a
// slow start follows it, as after a window
// (TestLoopSlowStartAfterAWindow).
func TestLoopAFirstBare429HoldsBriefly(t *testing.T) {
	policy := defaultPolicy()
	policy.Pacing = retry.NewDefaultPacingConfig()
	policy.RetryAfter.Jitter = 0
	t.Run("the probe accepted: unlimited", func(t *testing.T) {
		h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
		first := newScript(resp(429), resp(200))
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, first.send).Kind)
		assert.Equal(t, []time.Duration{time.Second}, h.clock.Waits(), "held 1 s, then the probe")
		assert.Equal(t, retry.SourceFirst, h.events.of(retry.EventAttempt)[0].Source)
		deliverAccepted(t, h, 5)
		assert.Len(t, h.clock.Waits(), 1, "what waited leaves at once")
		assert.Empty(t, h.events.of(retry.EventPaced), "nothing paced")
		assert.Zero(t, h.loop.Pacer().Rate(), "no pace")
	})
	t.Run("the probe refused: the rest of the default, then a slow start", func(t *testing.T) {
		h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
		first := newScript(resp(429), resp(429), resp(200))
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, first.send).Kind)
		assert.Equal(t, []time.Duration{time.Second, 4 * time.Second}, h.clock.Waits(), "1 s, then the rest of retry_after::default")
		sources := []retry.DelaySource{}
		for _, e := range h.events.of(retry.EventAttempt)[:2] {
			sources = append(sources, e.Source)
		}
		assert.Equal(t, []retry.DelaySource{retry.SourceFirst, retry.SourceDefault}, sources)
		deliverAccepted(t, h, 3)
		waits := h.clock.Waits()[2:]
		require.Len(t, waits, 2, "the first payload after the probe leaves at once, the others are paced")
		assert.Equal(t, time.Second, waits[0], "one request a second at first")
	})
}

// deliverAccepted runs n payloads of 100 items through h, each accepted at
// its first attempt.
func deliverAccepted(t *testing.T, h *harness, n int) {
	t.Helper()
	accepted := newScript(resp(200))
	for range n {
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, accepted.send).Kind)
	}
}

// TestLoopFloorUnderEveryZeroWait: configs that once let a refusing
// destination be flooded (issue 19). Whatever the config, every hold but
// the first "retry now" lasts at least retry.MinWait, so that one payload
// sends at most 16 requests in 15 s (retry_after::max and
// backoff::initial_interval have floors in Validate as well; here they are
// bypassed, to show the floor under the holds alone).
func TestLoopFloorUnderEveryZeroWait(t *testing.T) {
	sec := time.Second
	bare429 := resp(429)
	for _, tc := range []struct {
		name      string
		policy    func(*retry.Policy)
		answer    retry.Response
		wantWaits []time.Duration
	}{
		{
			name:      "retry_after::default 0, no jitter, bare 429",
			policy:    func(p *retry.Policy) { p.RetryAfter.Default, p.RetryAfter.Jitter = 0, 0 },
			answer:    bare429,
			wantWaits: []time.Duration{sec, 2 * sec, 4 * sec, 8 * sec},
		},
		{
			name:      "retry_after::default 0 alone, bare 429",
			policy:    func(p *retry.Policy) { p.RetryAfter.Default = 0 },
			answer:    bare429,
			wantWaits: []time.Duration{sec, 2 * sec, 4 * sec, 8 * sec},
		},
		{
			name: "retry_after::max 1ms, Retry-After 60",
			policy: func(p *retry.Policy) {
				p.RetryAfter.Max, p.RetryAfter.Default, p.RetryAfter.Jitter = time.Millisecond, 0, 0
			},
			answer:    withRetryAfter(429, "60"),
			wantWaits: []time.Duration{time.Millisecond, sec, 2 * sec, 4 * sec, 8 * sec},
		},
		{
			name: "backoff 1ns, 503",
			policy: func(p *retry.Policy) {
				p.Backoff.InitialInterval, p.Backoff.MaxInterval, p.Backoff.Jitter = time.Nanosecond, time.Nanosecond, 0
			},
			answer:    resp(503),
			wantWaits: repeatDur(15, sec),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := defaultPolicy()
			tc.policy(&policy)
			h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
			s := newScript(append(times(40, tc.answer), resp(200))...)
			var sent []time.Time
			h.loop.Run(context.Background(), func(ctx context.Context, attempt int) retry.Response {
				sent = append(sent, h.clock.Now())
				return s.send(ctx, attempt)
			})
			waits := h.clock.Waits()
			require.GreaterOrEqual(t, len(waits), len(tc.wantWaits))
			assert.Equal(t, tc.wantWaits, waits[:len(tc.wantWaits)])
			inWindow := 0
			for _, at := range sent {
				if at.Sub(t0) < 15*sec {
					inWindow++
				}
			}
			assert.LessOrEqual(t, inWindow, 16, "requests in 15 s")
		})
	}
}

// TestLoopBare429SlowsThePaceWithoutHolding: once the destination has
// accepted requests, a 429 without Retry-After holds nobody: the pace
// slows, and the refused payload goes back to the gate and leaves at its
// paced slot, spending no counted attempt.
func TestLoopBare429SlowsThePaceWithoutHolding(t *testing.T) {
	policy := defaultPolicy()
	policy.Pacing = retry.NewDefaultPacingConfig()
	h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
	accepted := newScript(resp(200))
	for range 10 {
		require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, accepted.send).Kind)
	}
	require.Zero(t, h.loop.Pacer().Rate(), "unlimited before the refusal")
	refused := newScript(resp(429), resp(429), resp(200))
	out := h.loop.RunItems(context.Background(), 100, refused.send)
	require.Equal(t, retry.Delivered, out.Kind)
	assert.Equal(t, 3, out.Attempts)
	assert.Empty(t, h.events.of(retry.EventHoldStart), "no hold")
	for _, e := range h.events.of(retry.EventAttempt)[10:12] {
		assert.Equal(t, retry.PathPace, e.Path)
		assert.Equal(t, "throttled", e.Outcome())
	}
	assert.Positive(t, h.loop.Pacer().Rate(), "a pace was learned")
	assert.NotEmpty(t, h.events.of(retry.EventPaced), "the retry waited for its paced slot")
}

// TestLoopSheddingLosesNothing: a backend that answers 503 to a payload
// again and again while it accepts others (load shedding) never drops it:
// the answers speak about the backend, and spend no counted attempt.
func TestLoopSheddingLosesNothing(t *testing.T) {
	for _, pacing := range []bool{false, true} {
		t.Run(fmt.Sprintf("pacing %v", pacing), func(t *testing.T) {
			policy := defaultPolicy()
			if pacing {
				policy.Pacing = retry.NewDefaultPacingConfig()
			}
			h := newHarness(retrytest.NewAutoClock(t0), policy, 0)
			accepted := newScript(resp(200))
			require.Equal(t, retry.Delivered, h.loop.RunItems(context.Background(), 100, accepted.send).Kind)
			shed := newScript(append(times(8, resp(503)), resp(200))...)
			out := h.loop.RunItems(context.Background(), 100, othersSucceed(h.gate, shed.send))
			assert.Equal(t, retry.Delivered, out.Kind, "eight 503s, more than backoff::max_attempts")
			assert.Equal(t, 9, out.Attempts)
			for _, e := range h.events.of(retry.EventAttempt)[1:9] {
				assert.Equal(t, "retryable", e.Outcome())
				assert.NotEqual(t, retry.PathOutage, e.Path, "the backend accepts others: no outage")
			}
		})
	}
}
