// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// TestRateTransitions is the rate controller's state machine, one row per
// transition, against the pure functions: no pacer, no lock, no clock.
func TestRateTransitions(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// paced is a pace of 1000 items a second learned at t0 from requests
	// of 100 items, after which acceptedRun items were accepted.
	paced := func(acceptedRun int) retry.RateState {
		return retry.RateState{Mode: retry.RatePaced, Ceiling: 1000, Since: t0, Next: t0, Epoch: 1, AcceptedRun: acceptedRun, ItemsPerRequest: 100, FirstAccepted: sec(-5)}
	}
	slowStart := retry.RateState{Mode: retry.RateSlowStart, Ceiling: 100, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100}
	refusal := func(at, sent float64) retry.Refusal {
		return retry.Refusal{At: sec(at), Sent: sec(sent), Items: 100}
	}
	tests := []struct {
		name  string
		from  retry.RateState
		event func(retry.RateState) retry.RateState
		want  retry.RateState
	}{
		{
			name:  "unlimited, accepted: counted, to learn from at the first refusal",
			from:  retry.RateState{},
			event: func(s retry.RateState) retry.RateState { return s.Accepted(t0, 100) },
			want:  retry.RateState{AcceptedRun: 100, ItemsPerRequest: 100, FirstAccepted: t0},
		},
		{
			name: "unlimited, refused with nothing accepted: nothing to learn, still unlimited",
			from: retry.RateState{},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 50})
			},
			want: retry.RateState{ItemsPerRequest: 50},
		},
		{
			name: "unlimited, refused: paced at what was accepted over the last 2 s",
			from: retry.RateState{FirstAccepted: sec(-10), AcceptedRun: 5000},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Recent: 1900})
			},
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100, FirstAccepted: sec(-10)},
		},
		{
			name: "unlimited, refused half a second after the first acceptance: spread over a second at least",
			from: retry.RateState{FirstAccepted: sec(-0.5)},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Recent: 800})
			},
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 800, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100, FirstAccepted: sec(-0.5)},
		},
		{
			name: "unlimited, refused after a trickle: never below one request a second",
			from: retry.RateState{FirstAccepted: sec(-10)},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Recent: 100})
			},
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 100, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100, FirstAccepted: sec(-10)},
		},
		{
			name:  "unlimited, hold ended: a slow start at one request a second",
			from:  retry.RateState{Epoch: 3},
			event: func(s retry.RateState) retry.RateState { return s.HoldEnded(t0, 50) },
			want:  retry.RateState{Mode: retry.RateSlowStart, Ceiling: 50, Since: t0, Next: t0, Epoch: 4, ItemsPerRequest: 50},
		},
		{
			name:  "paced, hold ended: the learned pace is kept",
			from:  paced(0),
			event: func(s retry.RateState) retry.RateState { return s.HoldEnded(sec(5), 100) },
			want:  paced(0),
		},
		{
			name:  "paced, accepted: counted since the cut",
			from:  paced(300),
			event: func(s retry.RateState) retry.RateState { return s.Accepted(sec(1), 100) },
			want:  paced(400),
		},
		{
			name:  "paced, refused after less was accepted than 60 % of the pace: what was accepted binds",
			from:  paced(500),
			event: func(s retry.RateState) retry.RateState { return s.Refused(refusal(1, 0.5)) },
			want:  retry.RateState{Mode: retry.RatePaced, Ceiling: 500, Since: sec(1), Next: sec(1), Epoch: 2, ItemsPerRequest: 100, FirstAccepted: sec(-5)},
		},
		{
			name:  "paced, refused after more was accepted: 60 % of the pace of the moment",
			from:  paced(3000),
			event: func(s retry.RateState) retry.RateState { return s.Refused(refusal(1, 0.5)) },
			// the pace a second after the cut: 1000 × 1.005 + 15
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 0.6 * 1020, Since: sec(1), Next: sec(1), Epoch: 2, ItemsPerRequest: 100, FirstAccepted: sec(-5)},
		},
		{
			name:  "paced, refused, sent before the last cut: in flight with the refused one, no second cut",
			from:  paced(3000),
			event: func(s retry.RateState) retry.RateState { return s.Refused(refusal(1, -0.01)) },
			want:  paced(3000),
		},
		{
			name: "paced, a hold's probe refused: the hold goes on, no cut",
			from: paced(3000),
			event: func(s retry.RateState) retry.RateState {
				r := refusal(6, 5)
				r.Probe = true
				return s.Refused(r)
			},
			want: paced(3000),
		},
		{
			name:  "slow start, refused: ended with what it accepted, not cut further",
			from:  func() retry.RateState { s := slowStart; s.AcceptedRun = 500; return s }(),
			event: func(s retry.RateState) retry.RateState { return s.Refused(refusal(2, 1.9)) },
			want:  retry.RateState{Mode: retry.RatePaced, Ceiling: 250, Since: sec(2), Next: sec(2), Epoch: 2, ItemsPerRequest: 100},
		},
		{
			name: "slow start, its probe refused at once: ends it at one request a second",
			from: slowStart,
			event: func(s retry.RateState) retry.RateState {
				r := refusal(0, 0)
				r.Probe = true
				return s.Refused(r)
			},
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 100, Since: t0, Next: t0, Epoch: 2, ItemsPerRequest: 100},
		},
		{
			name:  "paced, within the quiet period: unchanged",
			from:  paced(300),
			event: func(s retry.RateState) retry.RateState { return s.At(sec(59.9), time.Minute) },
			want:  paced(300),
		},
		{
			name:  "paced, a quiet period after the cut: unlimited again, the epoch kept",
			from:  paced(300),
			event: func(s retry.RateState) retry.RateState { return s.At(sec(60), time.Minute) },
			want:  retry.RateState{Epoch: 1, ItemsPerRequest: 100},
		},
		{
			name:  "slow start, a quiet period after it began: unlimited again",
			from:  slowStart,
			event: func(s retry.RateState) retry.RateState { return s.At(sec(60), time.Minute) },
			want:  retry.RateState{Epoch: 1, ItemsPerRequest: 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := tt.from
			got := tt.event(from)
			assert.Equal(t, tt.want.Mode, got.Mode)
			assert.InDelta(t, tt.want.Ceiling, got.Ceiling, 1e-9, "ceiling")
			got.Ceiling, tt.want.Ceiling = 0, 0
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.from, from, "a transition does not touch the state it was given")
		})
	}
}

// TestRatePace: the pace at a time after Since, in each state.
func TestRatePace(t *testing.T) {
	paced := retry.RateState{Mode: retry.RatePaced, Ceiling: 1000, Since: t0, ItemsPerRequest: 100}
	slow := retry.RateState{Mode: retry.RateSlowStart, Ceiling: 50, Since: t0, ItemsPerRequest: 50}
	for _, tt := range []struct {
		name  string
		state retry.RateState
		after time.Duration
		want  float64
	}{
		{"unlimited: 0", retry.RateState{Ceiling: 1000, Since: t0}, time.Second, 0},
		{"paced, at the cut: the ceiling", paced, 0, 1000},
		{"paced, read before the cut (a clock read before the lock): the ceiling", paced, -time.Second, 1000},
		// 0.15 of a request of 100 items a second more every second, and
		// 0.5 % of the ceiling times the square of the seconds
		{"paced, a second on", paced, time.Second, 1000*1.005 + 15},
		{"paced, 3 s on", paced, 3 * time.Second, 1000*1.045 + 45},
		{"paced, 20 s on", paced, 20 * time.Second, 1000*3 + 300},
		{"slow start, at its beginning: one request a second", slow, 0, 50},
		{"slow start, 3 s on: doubled three times", slow, 3 * time.Second, 400},
		{"slow start, an hour on: finite", slow, time.Hour, 50 * (1 << 60)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.InEpsilon(t, max(tt.want, 1e-300), max(tt.state.Rate(t0.Add(tt.after)), 1e-300), 1e-9)
		})
	}
}

// TestRateReserve: slots at the pace, one after the other; none when
// unlimited.
func TestRateReserve(t *testing.T) {
	s := retry.RateState{Mode: retry.RatePaced, Ceiling: 1000, Since: t0, Next: t0, ItemsPerRequest: 100}
	var at time.Time
	var source retry.PaceSource
	s, at, source = s.Reserve(t0, 100)
	assert.Equal(t, t0, at, "the first leaves at once")
	assert.Equal(t, retry.PaceNone, source)
	s, at, source = s.Reserve(t0, 100)
	assert.Equal(t, retry.PaceRate, source)
	assert.Equal(t, t0.Add(100*time.Millisecond), at, "100 items at 1000 a second: 100 ms later")
	_, at, _ = s.Reserve(t0.Add(time.Second), 100)
	assert.Equal(t, t0.Add(time.Second), at, "a request after a pause leaves at once")

	u, at, source := retry.RateState{}.Reserve(t0, 100)
	assert.Equal(t, t0, at)
	assert.Equal(t, retry.PaceNone, source)
	assert.Equal(t, retry.RateState{}, u, "nothing booked when unlimited")
}
