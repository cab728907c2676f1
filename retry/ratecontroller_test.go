// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// TestRateTransitions is the rate controller's state machine, one row per
// transition, against the pure functions: no pacer, no lock, no clock.
// paceInterval is how long a request of 100 items takes at rate items a
// second, as the pacer books it.
func paceInterval(rate float64) time.Duration {
	return time.Duration(100 / rate * float64(time.Second))
}

// regainAt is how long a bare cut to a plateau of rate items a second
// (requests of 100 items) takes to climb back to it: 20 requests at that
// rate, at least 2 s and at most 6 s.
func regainAt(rate float64) time.Duration {
	return min(max(2*time.Second, 20*paceInterval(rate)), 6*time.Second)
}

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
	bareRefusal := func(at float64) retry.Refusal {
		return retry.Refusal{At: sec(at), Sent: sec(at - 0.01), Items: 100, Bare: true}
	}
	// bare is the state a bare cut at t0 left: 950 items a second,
	// climbing back to the 1000 the backend took over 2 s; acceptedRun
	// items accepted since in answered answers, refused of them bare
	// refusals.
	bare := func(acceptedRun, answered, refused int) retry.RateState {
		return retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: t0, Next: t0.Add(105263157), Epoch: 1,
			AcceptedRun: acceptedRun, Answered: answered, RefusedRun: refused, ItemsPerRequest: 100, FirstAccepted: sec(-10),
			Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true}
	}
	with := func(s retry.RateState, f func(*retry.RateState)) retry.RateState { f(&s); return s }
	// inRow is s after n bare 429s in a row, the last answered at at.
	inRow := func(s retry.RateState, n int, at float64) retry.RateState {
		s.Streak, s.LastRefusal = n, sec(at)
		return s
	}
	// windowOut is the state a bare refusal at 3 s left, from bare(0, 5, 5)
	// (nothing accepted since the cut; 1200 items over the last 2 s).
	windowOut := func(streak int, next time.Duration) retry.RateState {
		return with(bare(0, 0, 0), func(s *retry.RateState) {
			s.Since, s.Epoch, s.Ceiling, s.Plateau, s.Measured = sec(3), 2, 570, 600, false
			s.Regain = regainAt(600)
			s.Next = sec(3).Add(next)
			s.Streak, s.LastRefusal = streak, sec(3)
			if streak > 1 {
				s.Epoch++ // the slots booked at the cut's pace are void too
			}
		})
	}
	windowRefusal := func(s retry.RateState) retry.RateState { r := bareRefusal(3); r.Recent = 1200; return s.Refused(r) }
	// row is paced(0) after three bare 429s in a row, the first at start,
	// the last at last (seconds after t0, a multiple of 10 s), with
	// Windowed as given; sentAt accepts a request of 100 items sent at sent
	// (answered 10 ms later); rowEnded is the state such an acceptance of a
	// request sent at sent leaves, with Windowed as given: the row ended,
	// a run of one request begun.
	row := func(start, last float64, windowed bool) retry.RateState {
		return with(inRow(paced(0), 3, last), func(s *retry.RateState) { s.StreakStart, s.Windowed = sec(start), windowed })
	}
	sentAt := func(sent float64) func(retry.RateState) retry.RateState {
		return func(s retry.RateState) retry.RateState { return s.Accepted(sec(sent+0.01), sec(sent), 100) }
	}
	rowEnded := func(start, last, sent float64, windowed bool) retry.RateState {
		return with(paced(100), func(s *retry.RateState) {
			s.Answered, s.LastRefusal, s.StreakStart, s.Windowed = 1, sec(last), sec(start), windowed
			s.Run, s.RunStart = 1, sec(sent+0.01)
		})
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
			event: func(s retry.RateState) retry.RateState { return s.Accepted(t0, t0, 100) },
			want:  retry.RateState{AcceptedRun: 100, Answered: 1, ItemsPerRequest: 100, FirstAccepted: t0, Run: 1, RunStart: t0},
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
			name: "unlimited, refused after five requests accepted: paced at them",
			from: retry.RateState{FirstAccepted: sec(-10)},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Recent: 500})
			},
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 250, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100, FirstAccepted: sec(-10)},
		},
		{
			name: "unlimited, refused after fewer than five (a burst): a slow start from them",
			from: retry.RateState{FirstAccepted: sec(-0.1)},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Recent: 200})
			},
			want: retry.RateState{Mode: retry.RateSlowStart, Ceiling: 200, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100, FirstAccepted: sec(-0.1)},
		},
		{
			name: "unlimited, refused after a trickle: a slow start, never below one request a second",
			from: retry.RateState{FirstAccepted: sec(-10)},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Recent: 100})
			},
			want: retry.RateState{Mode: retry.RateSlowStart, Ceiling: 100, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100, FirstAccepted: sec(-10)},
		},
		{
			name:  "unlimited, hold ended: a slow start at one request a second",
			from:  retry.RateState{Epoch: 3},
			event: func(s retry.RateState) retry.RateState { return s.HoldEnded(t0, 50, 1) },
			want:  retry.RateState{Mode: retry.RateSlowStart, Ceiling: 50, Since: t0, Next: t0, Epoch: 4, ItemsPerRequest: 50},
		},
		{
			name: "nothing known, a bare 429: nothing to learn from, but the hold it begins is the first",
			from: retry.RateState{Epoch: 3},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Bare: true})
			},
			want: retry.RateState{Epoch: 3, ItemsPerRequest: 100, Answered: 1, RefusedRun: 1, Streak: 1, LastRefusal: t0, BareStart: t0},
		},
		{
			name: "nothing known, a 429 with a Retry-After: the server's hold, not the first bare one",
			from: retry.RateState{Epoch: 3, BareStart: sec(-1)},
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100})
			},
			want: retry.RateState{Epoch: 3, ItemsPerRequest: 100},
		},
		{
			name:  "the first bare hold's probe accepted, the destination's first acceptance: BareStart stays, for HoldEnded",
			from:  retry.RateState{Epoch: 3, BareStart: t0},
			event: func(s retry.RateState) retry.RateState { return s.Accepted(sec(1), sec(1), 50) },
			want:  retry.RateState{Epoch: 3, BareStart: t0, FirstAccepted: sec(1), AcceptedRun: 50, Answered: 1, ItemsPerRequest: 50, Run: 1, RunStart: sec(1)},
		},
		{
			name: "accepted after an earlier acceptance: BareStart is void, a later hold slow-starts",
			from: retry.RateState{Epoch: 3, BareStart: t0, FirstAccepted: sec(0.5)},
			event: func(s retry.RateState) retry.RateState {
				return s.Accepted(sec(1), sec(1), 50).HoldEnded(sec(1), 50, 1)
			},
			want: retry.RateState{Mode: retry.RateSlowStart, Ceiling: 50, Since: sec(1), Next: sec(1), Epoch: 4, ItemsPerRequest: 50, FirstAccepted: sec(0.5), Run: 1, RunStart: sec(1)},
		},
		{
			name:  "the first bare hold ended by its first probe: the pace stays unlimited",
			from:  retry.RateState{Epoch: 3, BareStart: t0, FirstAccepted: sec(1)},
			event: func(s retry.RateState) retry.RateState { return s.HoldEnded(sec(1), 50, 1) },
			want:  retry.RateState{Epoch: 3, ItemsPerRequest: 50, FirstAccepted: sec(1)},
		},
		{
			name:  "the first bare hold ended by a later probe (refused again first): a slow start",
			from:  retry.RateState{Epoch: 3, BareStart: t0, FirstAccepted: sec(6)},
			event: func(s retry.RateState) retry.RateState { return s.HoldEnded(sec(6), 50, 2) },
			want:  retry.RateState{Mode: retry.RateSlowStart, Ceiling: 50, Since: sec(6), Next: sec(6), Epoch: 4, ItemsPerRequest: 50, FirstAccepted: sec(6)},
		},
		{
			name:  "a row of bare 429s from 7 s to 9 s ended by a request sent 0.3 s after a multiple of 10 s: a fixed window that reset there",
			from:  row(7, 9, false),
			event: sentAt(10.3),
			want:  rowEnded(7, 9, 10.3, true),
		},
		{
			name:  "such a row ended by a request sent 1.5 s after the multiple: no window (forgotten)",
			from:  row(7, 9, true),
			event: sentAt(11.5),
			want:  rowEnded(7, 9, 11.5, false),
		},
		{
			name:  "a row that began 1 s before the multiple (a 1 s window, a bucket): no window",
			from:  row(9, 9.5, true),
			event: sentAt(10.3),
			want:  rowEnded(9, 9.5, 10.3, false),
		},
		{
			name:  "a row whose last refusal came 1.5 s before the multiple: a window",
			from:  row(5, 8.5, false),
			event: sentAt(10.3),
			want:  rowEnded(5, 8.5, 10.3, true),
		},
		{
			name:  "a row whose last refusal came 2 s before the multiple (the reset may have come any time since): no window",
			from:  row(5, 8, true),
			event: sentAt(10.3),
			want:  rowEnded(5, 8, 10.3, false),
		},
		{
			name:  "one bare 429, then accepted: what the window says is kept",
			from:  with(inRow(paced(0), 1, 14), func(s *retry.RateState) { s.Windowed = true }),
			event: func(s retry.RateState) retry.RateState { return s.Accepted(sec(20.31), sec(20.3), 100) },
			want: with(paced(100), func(s *retry.RateState) {
				s.Answered, s.LastRefusal, s.Windowed = 1, sec(14), true
				s.Run, s.RunStart = 1, sec(20.31)
			}),
		},
		{
			name:  "paced, hold ended: the learned pace is kept",
			from:  paced(0),
			event: func(s retry.RateState) retry.RateState { return s.HoldEnded(sec(5), 100, 1) },
			want:  paced(0),
		},
		{
			name:  "paced, accepted: counted since the cut",
			from:  paced(300),
			event: func(s retry.RateState) retry.RateState { return s.Accepted(sec(1), sec(1), 100) },
			want:  func() retry.RateState { s := paced(400); s.Answered, s.Run, s.RunStart = 1, 1, sec(1); return s }(),
		},
		{
			name:  "paced, accepted but sent before the cut: not counted, it says nothing of the new pace",
			from:  paced(300),
			event: func(s retry.RateState) retry.RateState { return s.Accepted(sec(0.2), sec(-0.01), 100) },
			want:  func() retry.RateState { s := paced(300); s.Answered, s.Run, s.RunStart = 1, 1, sec(0.2); return s }(),
		},
		{
			name:  "paced, refused after less was accepted than 60 % of the pace: 90 % of what was accepted binds",
			from:  paced(500),
			event: func(s retry.RateState) retry.RateState { return s.Refused(refusal(1, 0.5)) },
			want:  retry.RateState{Mode: retry.RatePaced, Ceiling: 0.9 * 500, Since: sec(1), Next: sec(1), Epoch: 2, ItemsPerRequest: 100, FirstAccepted: sec(-5)},
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
			// A slow start begun at a refusal whose Retry-After held the
			// destination for 1 s: its first request left at 1 s, and
			// the 300 items accepted since then say 300 a second, where
			// over the 2 s since it began they said 150.
			name: "slow start, its first request 1 s after it began, refused: ended with what it accepted since that request",
			from: func() retry.RateState { s := slowStart; s.AcceptedRun = 300; return s }(),
			event: func(s retry.RateState) retry.RateState {
				s, _, _ = s.Reserve(sec(1), 100)
				s, _, _ = s.Reserve(sec(1), 100)
				return s.Refused(refusal(2, 1.9))
			},
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 300, Since: sec(2), Next: sec(2), Epoch: 2, ItemsPerRequest: 100},
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
			name: "unlimited, bare refusal: paced 5 % below the rate requests went at, the next one interval on",
			from: retry.RateState{FirstAccepted: sec(-10), AcceptedRun: 5000, Answered: 50},
			event: func(s retry.RateState) retry.RateState {
				r := bareRefusal(0)
				r.Recent, r.RecentSent = 1800, 2000
				return s.Refused(r)
			},
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: t0, Next: t0.Add(105263157), Epoch: 1, ItemsPerRequest: 100,
				FirstAccepted: sec(-10), Bare: true, Plateau: 1000, Regain: 2 * time.Second, Streak: 1, LastRefusal: t0},
		},
		{
			name:  "bare, refused within 1.79 requests of the cut: too soon to tell, no cut",
			from:  with(bare(100, 1, 0), func(s *retry.RateState) { s.Measured = false }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(0.15)) },
			want:  inRow(with(bare(100, 2, 1), func(s *retry.RateState) { s.Measured = false }), 1, 0.15),
		},
		{
			name:  "bare, refused below the rate the backend took: refused whatever the pace, no cut, counted",
			from:  with(bare(900, 10, 0), func(s *retry.RateState) { s.BackgroundAnswered = 20 }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(1)) },
			want: inRow(with(bare(900, 11, 1), func(s *retry.RateState) {
				s.BackgroundAnswered, s.BackgroundRefused = 21, 1
			}), 1, 1),
		},
		{
			name:  "bare, below the rate the backend took, the first in a row: counted in the background share",
			from:  with(bare(900, 10, 1), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 1 }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(1)) },
			want: inRow(with(bare(900, 11, 2), func(s *retry.RateState) {
				s.BackgroundAnswered, s.BackgroundRefused = 21, 2
			}), 1, 1),
		},
		{
			name:  "bare, below the rate the backend took, the second in a row: a limit that refuses everything for now, not counted in the background share",
			from:  inRow(with(bare(900, 10, 1), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 1 }), 1, 0.9),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(1)) },
			want: with(inRow(with(bare(900, 11, 2), func(s *retry.RateState) {
				s.BackgroundAnswered, s.BackgroundRefused = 20, 1
			}), 2, 1), func(s *retry.RateState) {
				// the next slot two intervals on at the pace of the moment
				s.Next, s.Epoch = sec(1).Add(time.Duration(2*float64(paceInterval(993.75)))), 2
				s.StreakStart = sec(0.9) // the row's first
			}),
		},
		{
			name:  "bare, below the rate the backend took, the third in a row: not counted either",
			from:  inRow(with(bare(900, 10, 2), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 2 }), 2, 0.9),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(1)) },
			want: with(inRow(with(bare(900, 11, 3), func(s *retry.RateState) {
				s.BackgroundAnswered, s.BackgroundRefused = 20, 2
			}), 3, 1), func(s *retry.RateState) {
				s.Next, s.Epoch = sec(1).Add(time.Duration(4*float64(paceInterval(993.75)))), 2
			}),
		},
		{
			name: "bare, nothing accepted since the cut nor over the last 2 s (a window that ran out long ago): no cut, the refusal holds the destination",
			from: bare(0, 5, 5),
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(bareRefusal(3)) // Recent: 0
			},
			want: inRow(bare(0, 6, 6), 1, 3),
		},
		{
			name: "bare, the second in a row with a backlog's slots booked past the push: they are void, the next slot two intervals on",
			from: with(inRow(bare(0, 5, 5), 1, 2.5), func(s *retry.RateState) { s.Next = sec(10) }),
			event: func(s retry.RateState) retry.RateState {
				return s.Refused(bareRefusal(3)) // Recent: 0, no cut
			},
			// 3 s after the cut the pace is 1000 × (1 + 0.041 × 1²) = 1041
			want: with(inRow(bare(0, 6, 6), 2, 3), func(s *retry.RateState) {
				s.Next, s.Epoch = sec(3).Add(time.Duration(2*float64(paceInterval(1041)))), 2
				s.StreakStart = sec(2.5)
			}),
		},
		{
			name:  "bare, refused past it: 5 % below what the backend took since the cut, climbing back to it",
			from:  bare(3000, 30, 0),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(3)) },
			want: inRow(with(bare(0, 0, 0), func(s *retry.RateState) {
				s.Since, s.Next, s.Epoch = sec(3), sec(3).Add(105263157), 2
			}), 1, 3),
		},
		{
			name:  "bare, refused past it with nothing accepted since the cut (a window ran out): the last 2 s, not measured",
			from:  bare(0, 5, 5),
			event: windowRefusal,
			want:  windowOut(1, 175438596),
		},
		{
			name:  "bare, the second in a row (sent after the last refusal came back, nothing accepted since): cut, and the next slot two intervals on",
			from:  inRow(bare(0, 5, 5), 1, 2.5),
			event: windowRefusal,
			want:  with(windowOut(2, 2*175438596), func(s *retry.RateState) { s.StreakStart = sec(2.5) }),
		},
		{
			name:  "bare, the fourth in a row: eight intervals on",
			from:  inRow(bare(0, 5, 5), 3, 2.5),
			event: windowRefusal,
			want:  windowOut(4, 8*175438596),
		},
		{
			name:  "bare, the fifth in a row: still eight (maxStreakGrowths)",
			from:  inRow(bare(0, 5, 5), 4, 2.5),
			event: windowRefusal,
			want:  windowOut(5, 8*175438596),
		},
		{
			name:  "bare, sent before the last refusal came back (in flight with it): not in a row",
			from:  inRow(bare(0, 5, 5), 1, 2.995),
			event: windowRefusal,
			want:  windowOut(1, 175438596),
		},
		{
			name: "bare with RateLimit headers: the quota tracker says when there is room, not in a row",
			from: inRow(bare(0, 5, 5), 1, 2.5),
			event: func(s retry.RateState) retry.RateState {
				r := bareRefusal(3)
				r.Recent, r.Quota = 1200, true
				return s.Refused(r)
			},
			want: windowOut(1, 175438596),
		},
		{
			name:  "bare, accepted after refusals in a row: the row ends",
			from:  inRow(bare(0, 5, 5), 3, 2.5),
			event: func(s retry.RateState) retry.RateState { return s.Accepted(sec(3), sec(3), 100) },
			want:  with(inRow(bare(100, 6, 5), 0, 2.5), func(s *retry.RateState) { s.Run, s.RunStart = 1, sec(3) }),
		},
		{
			name: "bare 503 (shedding), past the rate the backend took: 5 % below the rate requests went at, not what was accepted",
			from: bare(3000, 30, 0),
			event: func(s retry.RateState) retry.RateState {
				r := bareRefusal(3)
				r.Shed, r.Recent, r.RecentSent = true, 1200, 2400
				return s.Refused(r)
			},
			want: with(bare(0, 0, 0), func(s *retry.RateState) {
				s.Since, s.Epoch, s.Ceiling, s.Plateau, s.Measured = sec(3), 2, 1140, 1200, false
				s.Next = sec(3).Add(87719298)
			}),
		},
		{
			name: "bare 503 (shedding), refused within three requests of the cut (past the 1.79 of a 429): too soon to tell, no cut",
			from: with(bare(100, 1, 0), func(s *retry.RateState) { s.Measured = false }),
			event: func(s retry.RateState) retry.RateState {
				r := bareRefusal(0.25)
				r.Shed = true
				return s.Refused(r)
			},
			want: with(bare(100, 1, 0), func(s *retry.RateState) { s.Measured = false }), // unchanged: a 503 is not counted in the background share
		},
		{
			// climbing from 950 back to a plateau of 1000 read over too
			// short a span (Measured unset); 400 items accepted in the
			// 0.5 s since the cut, fewer than 5 requests
			name:  "bare, climbing back to a plateau not measured, the first in a row, 1 of 5 answers refused, a short measure: stray, no cut",
			from:  with(bare(400, 4, 0), func(s *retry.RateState) { s.Measured = false }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(0.5)) },
			want:  inRow(with(bare(400, 5, 1), func(s *retry.RateState) { s.Measured = false }), 1, 0.5),
		},
		{
			// 800 items a second taken since the cut: 5 % below it, the
			// plateau still not measured
			name:  "bare, as the stray one but 2 of 5 answers refused (more than a quarter): cut",
			from:  with(bare(400, 4, 1), func(s *retry.RateState) { s.Measured = false }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(0.5)) },
			want: inRow(with(bare(0, 0, 0), func(s *retry.RateState) {
				s.Since, s.Epoch, s.Ceiling, s.Plateau, s.Measured = sec(0.5), 2, 760, 800, false
				s.Next, s.Regain = sec(0.5).Add(paceInterval(760)), regainAt(800)
			}), 1, 0.5),
		},
		{
			name:  "bare, as the stray one but the second in a row: cut, the next request two intervals out",
			from:  inRow(with(bare(400, 4, 0), func(s *retry.RateState) { s.Measured = false }), 1, 0.45),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(0.5)) },
			want: inRow(with(bare(0, 0, 0), func(s *retry.RateState) {
				s.Since, s.Epoch, s.Ceiling, s.Plateau, s.Measured = sec(0.5), 3, 760, 800, false
				s.Next, s.Regain = sec(0.5).Add(2*paceInterval(760)), regainAt(800)
				s.StreakStart = sec(0.45)
			}), 2, 0.5),
		},
		{
			// 600 items over 1.2 s: a measure long enough (5 requests,
			// 1 s); 500 items a second, 5 % below it, now measured
			name:  "bare, as the stray one but a measure long enough since the cut: cut, the plateau measured",
			from:  with(bare(600, 6, 0), func(s *retry.RateState) { s.Measured = false }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(1.2)) },
			want: inRow(with(bare(0, 0, 0), func(s *retry.RateState) {
				s.Since, s.Epoch, s.Ceiling, s.Plateau = sec(1.2), 2, 475, 500
				s.Next, s.Regain = sec(1.2).Add(paceInterval(475)), regainAt(500)
			}), 1, 1.2),
		},
		{
			name: "bare, a background share of a half: grossed up by it",
			from: with(bare(1500, 29, 19), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 10 }),
			// 500 items a second taken, half refused whatever the pace:
			// 1000 sent; 5 % below, and no more than the pace of the moment
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(3)) },
			want: inRow(with(bare(0, 0, 0), func(s *retry.RateState) {
				s.Since, s.Next, s.Epoch = sec(3), sec(3).Add(105263157), 2
				s.BackgroundAnswered, s.BackgroundRefused = 16, 8
			}), 1, 3),
		},
		{
			name: "bare, a background share read from fewer than 20 answers: none, the cut as without",
			from: with(bare(1500, 29, 19), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 19, 10 }),
			// 500 items a second taken: 5 % below it
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(3)) },
			want: inRow(with(bare(0, 0, 0), func(s *retry.RateState) {
				s.Since, s.Ceiling, s.Plateau, s.Epoch = sec(3), 475, 500, 2
				s.Next, s.Regain = sec(3).Add(paceInterval(475)), regainAt(500)
				memory := 0.8 // each cut keeps 80 % of the counts
				s.BackgroundAnswered, s.BackgroundRefused = 19*memory, 10*memory
			}), 1, 3),
		},
		{
			name:  "bare, refused past it but no more often than the background share: no cut",
			from:  with(bare(1500, 29, 9), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 10 }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(3)) },
			want:  inRow(with(bare(1500, 30, 10), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 10 }), 1, 3),
		},
		{
			// 5 of 30 refused where the backend refuses a tenth whatever the
			// pace: a chance of 18 % (a fixed tolerance of 1.2 × the share
			// cut here, at 3.6)
			name:  "bare, refused past it more often than the background share, but not improbably for it: no cut",
			from:  with(bare(1500, 29, 4), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 2 }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(3)) },
			want:  inRow(with(bare(1500, 30, 5), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 2 }), 1, 3),
		},
		{
			// 9 of 30 refused where the background share is a tenth: a
			// chance of 0.2 %, a limit
			name:  "bare, refused past it improbably often for the background share: cut, grossed up by it",
			from:  with(bare(1500, 29, 8), func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 20, 2 }),
			event: func(s retry.RateState) retry.RateState { return s.Refused(bareRefusal(3)) },
			want: func() retry.RateState {
				margin, memory := 0.05, 0.8
				accepted := 500 / (1 - 2.0/20) // 1500 items over 3 s, a tenth refused whatever the pace
				return inRow(with(bare(0, 0, 0), func(s *retry.RateState) {
					s.Since, s.Epoch, s.Ceiling, s.Plateau = sec(3), 2, (1-margin)*accepted, accepted
					s.Next, s.Regain = sec(3).Add(paceInterval((1-margin)*accepted)), regainAt(accepted)
					s.BackgroundAnswered, s.BackgroundRefused = 20*memory, 2*memory
				}), 1, 3)
			}(),
		},
		{
			name: "refused with more in flight than the backend was seen to accept at once: a concurrency limit, the pace kept",
			from: paced(300),
			event: func(s retry.RateState) retry.RateState {
				r := refusal(1, 0.9)
				r.InFlight, r.MaxAcceptedInFlight = 3, 2
				return s.Refused(r)
			},
			want: with(paced(300), func(s *retry.RateState) { s.Concurrency, s.ConcurrencySince = 2, sec(1) }),
		},
		{
			name:  "a concurrency limit a quiet period old: forgotten",
			from:  retry.RateState{Concurrency: 2, ConcurrencySince: t0, Epoch: 3},
			event: func(s retry.RateState) retry.RateState { return s.At(sec(60), time.Minute) },
			want:  retry.RateState{Epoch: 3},
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
			// The counts per clock second are TestSecondWindow's.
			got.Seconds = tt.want.Seconds
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

// TestRateBareCurve: after a bare cut the pace climbs back from the ceiling
// to the plateau over Regain as a cubic (fast at first), then past it.
func TestRateBareCurve(t *testing.T) {
	s := retry.RateState{Mode: retry.RatePaced, Bare: true, Ceiling: 900, Plateau: 1000, Since: t0, Regain: 2 * time.Second, ItemsPerRequest: 100}
	for _, tt := range []struct {
		after time.Duration
		want  float64
	}{
		{0, 900},
		{time.Second, 1000 - 100*0.125}, // half way: seven eighths of the climb
		{2 * time.Second, 1000},
		{4 * time.Second, 1000 * (1 + 0.041*4)}, // past it: 4.1 % × s² since
	} {
		assert.InDelta(t, tt.want, s.Rate(t0.Add(tt.after)), 1e-9, "%s after the cut", tt.after)
	}
	// Nothing refused below the plateau over at least 20 answers (a limit
	// only the probe crosses): past it the pace grows a quarter as fast.
	quiet := s
	quiet.BackgroundAnswered = 20
	assert.True(t, quiet.Quiet())
	assert.InDelta(t, 1000*(1+0.041*0.25*4), quiet.Rate(t0.Add(4*time.Second)), 1e-9, "quiet: a quarter of the probe")
	assert.InDelta(t, 1000-100*0.125, quiet.Rate(t0.Add(time.Second)), 1e-9, "quiet: the climb back as fast")
	// One refusal among 200 answers (0.5 %, the counts of a stray refusal
	// some cuts ago, faded): still quiet.
	faded := quiet
	faded.BackgroundAnswered, faded.BackgroundRefused = 200, 1
	assert.True(t, faded.Quiet(), "a share of 0.5 percent reads as nil")
	for name, f := range map[string]func(*retry.RateState){
		"one refused below the plateau in 20 (5 %)": func(s *retry.RateState) { s.BackgroundRefused = 1 },
		"two refused in 100 (2 %)":                  func(s *retry.RateState) { s.BackgroundAnswered, s.BackgroundRefused = 100, 2 },
		"fewer than 20 answers read":                func(s *retry.RateState) { s.BackgroundAnswered = 19 },
	} {
		loud := quiet
		f(&loud)
		assert.False(t, loud.Quiet(), name)
		assert.InDelta(t, 1000*(1+0.041*4), loud.Rate(t0.Add(4*time.Second)), 1e-9, "%s: the probe as fast", name)
	}
}

// TestRateBareRegain: a bare cut climbs back to the plateau over the time
// of 20 requests at it, at least 2 s and at most 10.19 s (a fleet member
// sending a request a second climbs back in 10.19 s, not 20).
func TestRateBareRegain(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, tt := range []struct {
		accepted int // items accepted over the 3 s since the last cut
		plateau  float64
		want     time.Duration
	}{
		{6000, 2000, 2 * time.Second},        // 20 requests a second: 1 s, the least is 2 s
		{1500, 500, 4 * time.Second},         // 5 a second: 4 s
		{300, 100, 10190 * time.Millisecond}, // 1 a second: 20 s, the most is 10.19 s
	} {
		from := retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: t0, Next: t0, Epoch: 1, AcceptedRun: tt.accepted,
			Answered: 10, ItemsPerRequest: 100, FirstAccepted: sec(-10), Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true}
		got := from.Refused(retry.Refusal{At: sec(3), Sent: sec(2.99), Items: 100, Bare: true})
		require.Equal(t, sec(3), got.Since, "cut")
		assert.InDelta(t, tt.plateau, got.Plateau, 1e-9)
		assert.Equal(t, tt.want, got.Regain, "plateau %v items/s", tt.plateau)
	}
}

// TestRateConcurrencyGrows: a learned concurrency limit grows by one every
// 10 s, so that a limit learned too low is left behind.
func TestRateConcurrencyGrows(t *testing.T) {
	s := retry.RateState{Concurrency: 2, ConcurrencySince: t0}
	assert.Equal(t, 2, s.ConcurrencyAt(t0.Add(9*time.Second)))
	assert.Equal(t, 3, s.ConcurrencyAt(t0.Add(10*time.Second)))
	assert.Equal(t, 0, retry.RateState{}.ConcurrencyAt(t0), "none learned: no limit")
}

// TestRateCrowding: whether a refusal came from crossing a concurrency
// limit, and the limit it shows, from what was in flight when it left and
// when it was answered and what the backend accepted lately.
func TestRateCrowding(t *testing.T) {
	learned := retry.RateState{Concurrency: 2, ConcurrencySince: t0}
	tentative := retry.RateState{Concurrency: 2, ConcurrencySince: t0, Tentative: true, Pending: 2}
	for _, tt := range []struct {
		name  string
		state retry.RateState
		r     retry.Refusal
		want  retry.Crowding
		limit int
	}{
		{"alone in flight, nothing else out: no concurrency signal", retry.RateState{}, retry.Refusal{InFlight: 1, Bare: true}, retry.NotCrowded, 0},
		{"alone in flight once something was accepted: no concurrency signal", retry.RateState{},
			retry.Refusal{InFlight: 1, Others: 3, MaxAcceptedInFlight: 1, Recent: 100, Bare: true}, retry.NotCrowded, 0},
		{"left alone, nothing accepted yet, three that left after it still out (they may have arrived first): at most those, tentatively",
			retry.RateState{}, retry.Refusal{InFlight: 1, Others: 3, Bare: true}, retry.CrowdedFirst, 3},
		{"left with three in flight, the backend accepted two at once lately: a limit of two", retry.RateState{},
			retry.Refusal{InFlight: 3, MaxAcceptedInFlight: 2, Recent: 100, Bare: true}, retry.CrowdedLearned, 2},
		{"left with two in flight, the backend accepted two at once: not past it", retry.RateState{},
			retry.Refusal{InFlight: 2, MaxAcceptedInFlight: 2, Recent: 100, Bare: true}, retry.NotCrowded, 0},
		{"past a learned limit of two", learned, retry.Refusal{InFlight: 3, MaxAcceptedInFlight: 3, Recent: 100}, retry.CrowdedLearned, 2},
		{"past a learned limit by those in flight at its answer", learned, retry.Refusal{InFlight: 2, Others: 2, MaxAcceptedInFlight: 2, Recent: 100}, retry.CrowdedLearned, 2},
		{"within a learned limit", learned, retry.Refusal{InFlight: 2, Others: 1, MaxAcceptedInFlight: 2, Recent: 100}, retry.NotCrowded, 0},
		{"nothing accepted yet, two others still out: at most those ahead of it, tentatively", retry.RateState{},
			retry.Refusal{InFlight: 3, Others: 2, Bare: true}, retry.CrowdedFirst, 2},
		{"nothing accepted yet, the others all answered: the backend refuses everything", retry.RateState{},
			retry.Refusal{InFlight: 3, Others: 0, Bare: true}, retry.NotCrowded, 0},
		{"nothing accepted yet, a 503 with others out: shedding, no concurrency signal", retry.RateState{},
			retry.Refusal{InFlight: 3, Others: 2, Bare: true, Shed: true}, retry.NotCrowded, 0},
		{"a tentative limit is no learned one: crowded first again", tentative,
			retry.Refusal{InFlight: 3, Others: 2, Bare: true}, retry.CrowdedFirst, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, limit := tt.state.Crowding(tt.r)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.limit, limit)
		})
	}
}

// TestRateTentativeConcurrency: a limit learned from a refusal before
// anything was accepted is tentative: an acceptance confirms it; when the
// answers of the requests in flight with the refusal are all refused, or a
// throttle hold ends, it is forgotten; a learned limit survives a hold's
// end (and starts no slow start: the limit paces what waited).
func TestRateTentativeConcurrency(t *testing.T) {
	first := retry.RateState{}.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Bare: true, InFlight: 3, Others: 2})
	assert.Equal(t, retry.RateState{ItemsPerRequest: 100, Answered: 1, RefusedRun: 1, Concurrency: 2, ConcurrencySince: t0, Tentative: true, Pending: 2, Streak: 1, LastRefusal: t0}, first)

	confirmed := first.Accepted(t0, t0, 100)
	assert.Equal(t, 2, confirmed.Concurrency)
	assert.False(t, confirmed.Tentative)
	assert.Zero(t, confirmed.Pending)
	assert.Equal(t, retry.RateUnlimited, confirmed.Mode, "no pace from a concurrency refusal")

	lower := first.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Bare: true, InFlight: 2, Others: 1})
	assert.Equal(t, 1, lower.Concurrency, "left with one ahead of it, still out: a limit of one, tentatively")
	assert.True(t, lower.Tentative)
	assert.Equal(t, 1, lower.Pending)
	alone := first.Refused(retry.Refusal{At: t0, Sent: t0, Items: 100, Bare: true, InFlight: 2})
	assert.Zero(t, alone.Concurrency, "refused with nothing else out and nothing accepted: the backend refuses everything, forgotten")
	gone := first.AnsweredPending().AnsweredPending()
	assert.Zero(t, gone.Concurrency, "both in flight with it refused too: forgotten")
	assert.False(t, gone.Tentative)

	assert.Zero(t, first.HoldEnded(t0, 100, 1).Concurrency, "a hold ended: the tentative limit did not explain it")
	assert.Equal(t, retry.RateSlowStart, first.HoldEnded(t0, 100, 1).Mode)
	held := confirmed.HoldEnded(t0, 100, 1)
	assert.Equal(t, 2, held.Concurrency, "a learned limit survives a hold's end")
	assert.Equal(t, retry.RateUnlimited, held.Mode, "and paces what waited: no slow start")
}

// TestWindowHold: a bare 429 holds the destination until the window resets
// only at a destination seen to reset at a multiple of 10 s, and only the
// first in a row (a second says the multiple was no reset).
func TestWindowHold(t *testing.T) {
	assert.True(t, retry.RateState{Windowed: true}.WindowHold())
	assert.False(t, retry.RateState{Windowed: true, Streak: 1}.WindowHold(), "the second in a row")
	assert.False(t, retry.RateState{}.WindowHold(), "no window seen")
	restore, err := retry.SetTuning(map[string]float64{"windowHolds": 0})
	require.NoError(t, err)
	defer restore()
	assert.False(t, retry.RateState{Windowed: true}.WindowHold(), "windowHolds off (the ninth step's law)")
}

// reserveSlots books n requests of 100 items at now, one after the other,
// and returns the state after them and when each may leave.
func reserveSlots(s retry.RateState, now time.Time, n int) (retry.RateState, []time.Time) {
	slots := make([]time.Time, 0, n)
	for range n {
		var at time.Time
		s, at, _ = s.Reserve(now, 100)
		slots = append(slots, at)
	}
	return s, slots
}

// windowSteps are the steps the window tests take, in seconds since t0:
// n requests of 100 items accepted from from, every apart (each sent
// when answered), and bare 429s at the times given (each sent 10 ms
// before).
func windowSteps() (sec func(float64) time.Time, accept func(retry.RateState, int, float64, float64) retry.RateState, refuse func(retry.RateState, ...float64) retry.RateState) {
	sec = func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	accept = func(s retry.RateState, n int, from, every float64) retry.RateState {
		for i := range n {
			at := sec(from + float64(i)*every)
			s = s.Accepted(at, at, 100)
		}
		return s
	}
	refuse = func(s retry.RateState, at ...float64) retry.RateState {
		for _, a := range at {
			s = s.Refused(retry.Refusal{At: sec(a), Sent: sec(a - 0.01), Items: 100, Bare: true})
		}
		return s
	}
	return sec, accept, refuse
}

// TestWindowCounted: a fixed window takes as many requests in each window.
// After a row of windowRow or more bare 429s that ended at least
// windowClosed after its run began, a run as long as the one before that
// row (give or take one) has reached the window's limit again: its first
// bare 429 holds the destination (WindowHold), as at a window seen to
// reset at a multiple of 10 s, and that hold's probe, accepted just after
// the multiple, shows the window on the clock (Windowed). Not after a
// shorter row (a backend that
// refuses at random refuses two in a row now and then), nor after a
// shorter cycle (a 1 s window), nor when the runs differ by two; and a
// run that a window hold ended counts as the one before for the next.
func TestWindowCounted(t *testing.T) {
	_, accept, refuse := windowSteps()
	// 50 accepted over 5 s, refused from 5 s to 7 s, accepted again at
	// 12 s (a hold's probe, 2 s after the window reset at the multiple):
	// the run before the row was 50, begun 12 s before the row ended.
	window := accept(refuse(accept(retry.RateState{}, 50, 0, 0.1), 5, 5.1, 5.3, 5.9, 7), 1, 12, 0.1)
	for _, tt := range []struct {
		name string
		s    retry.RateState
		hold bool
	}{
		{"a run of 50 again", accept(window, 49, 12.1, 0.1), true},
		{"a run of 49", accept(window, 48, 12.1, 0.1), true},
		{"a run of 51", accept(window, 50, 12.1, 0.1), true},
		{"a run of 48", accept(window, 47, 12.1, 0.1), false},
		{"a run of 52", accept(window, 51, 12.1, 0.1), false},
		{"two in a row", accept(accept(refuse(accept(retry.RateState{}, 50, 0, 0.1), 5, 5.1), 1, 12, 0.1), 49, 12.1, 0.1), false},
		{"a 1 s cycle", accept(accept(refuse(accept(retry.RateState{}, 50, 0, 0.01), 0.5, 0.6, 0.8), 1, 1, 0.01), 49, 1.01, 0.01), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.hold, tt.s.WindowHold())
			assert.False(t, tt.s.Windowed, "not from the clock's multiples")
		})
	}

	// The hold's row: one refusal, held until the window reset, the run
	// after it as long again.
	held := refuse(accept(window, 49, 12.1, 0.1), 17.5)
	next := accept(held, 50, 20, 0.1)
	assert.True(t, accept(held, 1, 20, 0.1).Run == 1 && next.WindowHold(), "a run that a window hold ended counts for the next")
	// That hold waited for the multiple at 20 s: its probe, accepted just
	// after it, shows the window resetting on the clock's multiples.
	assert.True(t, accept(held, 1, 20, 0.1).Windowed, "accepted just after the multiple the hold waited for")
	assert.False(t, accept(held, 1, 21.5, 0.1).Windowed, "accepted 1.5 s after it: the reset may have come any time")
	assert.False(t, accept(refuse(accept(window, 40, 12.1, 0.1), 17.5), 1, 20, 0.1).Windowed, "a bare 429 that began no window hold")
	// A count-matched refusal just after a multiple (the next one too far
	// for a hold: the policy paces instead), and the next request accepted
	// at once, within 1 s of that multiple: no multiple lies between the
	// two, nothing shows a reset there.
	early := refuse(accept(window, 49, 19.8, 0.004), 20.3)
	require.True(t, early.RowWindow, "the runs matched")
	assert.False(t, accept(early, 1, 20.5, 0.1).Windowed, "no multiple between the refusal and the acceptance")

	restore, err := retry.SetTuning(map[string]float64{"windowCounts": 0})
	require.NoError(t, err)
	defer restore()
	assert.False(t, accept(window, 49, 12.1, 0.1).WindowHold(), "windowCounts off (the law before)")
}

// TestRateCutVariants: the two variants of the bare cut measured against
// the default in docs/benchmarks.md ("Main after the two start fixes"),
// each off in the default: firstBareSpan (the first cut also at most what
// was accepted over a span, so that a spent burst does not pass for a
// rate) and cutFromFirstSlot (a later cut's measure leaves out the
// silence before the curve's first request, past the interval it was
// booked for).
func TestRateCutVariants(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	with := func(set map[string]float64, f func()) { withTuning(t, set, f) }

	// Two requests of 100 items accepted from 0.48 s before, the third
	// refused: 300 items sent, 200 accepted.
	burst := retry.RateState{FirstAccepted: sec(-0.48), AcceptedRun: 200, ItemsPerRequest: 100}
	first := retry.Refusal{At: t0, Sent: sec(-0.01), Items: 100, Bare: true, Recent: 200, RecentSent: 300}
	got := burst.Refused(first)
	assert.InDelta(t, 0.95*300/0.48, got.Ceiling, 1e-6, "default: a twentieth below the rate requests went at")
	assert.InDelta(t, 300/0.48, got.Plateau, 1e-6)
	with(map[string]float64{"firstBareSpan": 1}, func() {
		got := burst.Refused(first)
		assert.InDelta(t, 0.95*200, got.Ceiling, 1e-6, "firstBareSpan: a twentieth below what was accepted over 1 s")
		assert.InDelta(t, 300/0.48, got.Plateau, 1e-6, "and climbing back to the rate requests went at")
	})
	with(map[string]float64{"firstBareAfter": 1}, func() {
		got := burst.Refused(first)
		assert.InDelta(t, 0.95*100/0.48, got.Ceiling, 1e-6, "firstBareAfter: a twentieth below what was accepted after the first acceptance")
		assert.InDelta(t, 300/0.48, got.Plateau, 1e-6, "and climbing back to the rate requests went at")
		old := burst
		old.FirstAccepted = sec(-3)
		many := first
		many.Recent, many.RecentSent = 600, 700
		assert.InDelta(t, 0.95*600/2, old.Refused(many).Ceiling, 1e-6, "a first acceptance before the last 2 s: what was accepted over them, all counted")
	})
	with(map[string]float64{"firstBareAfter": 1, "firstBarePlateau": 1}, func() {
		got := burst.Refused(first)
		assert.InDelta(t, 0.95*100/0.48, got.Ceiling, 1e-6)
		assert.InDelta(t, 100/0.48, got.Plateau, 1e-6, "firstBarePlateau: climbing back to what was accepted after the first acceptance")
	})

	// A bare cut at t0 to 950 items a second; its first request left only
	// at 2 s (a row of refusals spaced it out); 3 000 items accepted since;
	// refused at 5 s, past the plateau.
	cut := retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: t0, Next: t0, Epoch: 1, AcceptedRun: 3000, Answered: 30,
		ItemsPerRequest: 100, FirstAccepted: sec(-10), Bare: true, Plateau: 1000, Regain: 2 * time.Second, FirstSlot: sec(2)}
	later := retry.Refusal{At: sec(5), Sent: sec(4.99), Items: 100, Bare: true, Recent: 1200, RecentSent: 1300}
	assert.InDelta(t, 0.95*3000/5, cut.Refused(later).Ceiling, 1e-6, "default: over the 5 s since the cut")
	booked := paceInterval(950) // the one interval the first request was booked for
	with(map[string]float64{"cutFromFirstSlot": 1}, func() {
		from := sec(2).Add(-booked)
		assert.InDelta(t, 0.95*3000/sec(5).Sub(from).Seconds(), cut.Refused(later).Ceiling, 1e-6,
			"cutFromFirstSlot: over the time since one interval before the first request")
		onTime := cut
		onTime.FirstSlot = t0.Add(booked)
		assert.InDelta(t, 0.95*3000/5, onTime.Refused(later).Ceiling, 1e-3, "a first request on time: the same as the default")
	})
}

// TestWindowProbedRow: a row of bare 429s after a run of at least
// measuredRequests acceptances, begun at least windowClosed before a
// multiple of 10 s, is probed just after it (its start is the row's
// RowStart, Policy), and the probe, accepted 0.2 s after the multiple,
// shows the window reset there though the row's last refusal came 2.6 s
// before it: the window's take is scheduled (the run before the row,
// 75). Not after a run shorter than measuredRequests (no RowStart, no
// reset), nor with windowRowProbes off (the fifteenth step's law: the
// last refusal must come within windowLastRefusal of the multiple).
func TestWindowProbedRow(t *testing.T) {
	sec, accept, refuse := windowSteps()
	run := accept(retry.RateState{}, 75, 0, 0.1)
	row := refuse(run, 7.5, 7.6, 7.8, 8.3)
	bare := retry.Refusal{At: sec(9.9), Sent: sec(9.87), Items: 100, Bare: true}
	assert.Equal(t, sec(7.5), row.WindowRowStart(bare), "the row's first refusal")
	assert.Equal(t, sec(9.9), run.WindowRowStart(bare), "a refusal after the run begins the row")
	held := refuse(row, 9.9)
	probed := accept(held, 1, 20.2, 0.1)
	assert.True(t, probed.Windowed, "the probe just after the multiple shows the reset")
	assert.Equal(t, 75, probed.WindowTake, "the run before the row")
	assert.False(t, accept(held, 1, 21.5, 0.1).Windowed, "a probe 1.5 s after the multiple shows nothing")

	short := refuse(accept(retry.RateState{}, 4, 0, 0.1), 7.5, 7.6, 7.8, 8.3)
	assert.True(t, short.WindowRowStart(bare).IsZero(), "after a run of four: no probe at the multiple")
	assert.False(t, accept(refuse(short, 9.9), 1, 20.2, 0.1).Windowed)

	restore, err := retry.SetTuning(map[string]float64{"windowRowProbes": 0})
	require.NoError(t, err)
	defer restore()
	assert.True(t, row.WindowRowStart(bare).IsZero(), "windowRowProbes off")
	assert.False(t, accept(held, 1, 20.2, 0.1).Windowed, "windowRowProbes off: the last refusal 2.6 s before the multiple")
}

// TestWindowSchedule: an acceptance that shows a fixed window reset on the
// clock's multiples starts its schedule: the window takes as many requests
// as the run before the row (WindowTake); Reserve lets them leave an
// eighth of the window's rate apart, without the pace, and books the one
// after them at the next window's start (plus windowScheduleSlack); a
// refusal ends the schedule, and the pace goes on at the window's rate.
func TestWindowSchedule(t *testing.T) {
	sec, accept, refuse := windowSteps()
	// As in TestWindowCounted: 50 accepted, a row, 50 again, a window
	// hold from 17.5 s, its probe accepted just after the multiple at 20 s.
	window := accept(refuse(refuse(refuse(refuse(accept(retry.RateState{}, 50, 0, 0.1), 5), 5.1), 5.3), 5.9), 1, 12, 0.1)
	held := refuse(accept(window, 49, 12.1, 0.1), 17.5)
	require.True(t, held.WindowHold() || held.RowWindow, "the count rule held it")
	s := accept(held, 1, 20, 0.1)
	require.True(t, s.Windowed)
	assert.Equal(t, 50, s.WindowTake, "the run before the row")

	// The probe took one of the window's 50: 49 more leave 25 ms apart
	// (10 s / (8 × 50)) from now, whatever the pace; then, the schedule
	// unconfirmed, its four checks (windowCheck: as many as it takes to
	// accept three or to refuse two in a row), the first 25 ms after the
	// take and the others 100 ms apart; the next waits for the next
	// window.
	now := sec(20.2)
	s, slots := reserveSlots(s, now, 55)
	assert.Equal(t, now, slots[0], "the first at once")
	assert.Equal(t, now.Add(48*25*time.Millisecond), slots[48], "the window's 49 more, 25 ms apart")
	assert.Equal(t, now.Add(49*25*time.Millisecond), slots[49], "the first check")
	assert.Equal(t, []time.Time{slots[49].Add(100 * time.Millisecond), slots[49].Add(200 * time.Millisecond), slots[49].Add(300 * time.Millisecond)},
		slots[50:53], "the other three, 100 ms apart")
	assert.Equal(t, sec(30.05), slots[53], "the next at the next window's start")
	assert.Equal(t, sec(30.075), slots[54])
	assert.InDelta(t, 500, s.PaceAt(sec(35)), 1e-9, "the pace a gauge shows: the window's take, 50 requests of 100 items per 10 s")

	// A request left in the next window: the count starts again there.
	s2, at, _ := accept(held, 1, 20, 0.1).Reserve(sec(31), 100)
	assert.Equal(t, sec(31), at, "a new window on the clock: room again")
	assert.Equal(t, 1, s2.WindowSent)

	// A refusal ends the schedule: the pace at the window's rate, 50
	// requests of 100 items per 10 s.
	r := refuse(s, 30.1)
	assert.Zero(t, r.WindowTake)
	assert.InDelta(t, 500, r.Rate(sec(30.1)), 1e-6, "items a second")

	// No schedule from a hold its runs began whose probe came 1.5 s after
	// the multiple (not Windowed), nor from the count rule alone, nor with
	// windowSchedule off (the law before).
	assert.Zero(t, accept(held, 1, 21.5, 0.1).WindowTake)
	assert.Zero(t, window.WindowTake)
	restore, err := retry.SetTuning(map[string]float64{"windowSchedule": 0})
	require.NoError(t, err)
	defer restore()
	assert.Zero(t, accept(held, 1, 20, 0.1).WindowTake, "windowSchedule off")
}

// TestWindowCheck: a 10 s window's schedule that only a probe timed to the
// multiple showed (WindowProbed) checks itself in its first window
// (windowCheck); one the backend's own refusals up to the multiple showed
// does not. A fixed window refuses every request after its
// take: two refused checks in a row confirm the schedule (no cut, no row,
// no hold, the slots booked after them void, those in a later window
// booked again from its start), and checks accepted before
// them show a take that much larger. One refused check alone changes
// nothing but the count; an accepted one starts it again (a GCRA refuses
// one now and then). A window that accepts the take and three checks is
// no such window (a shared GCRA): the schedule ends, the destination is no
// longer taken for a window, and the pace starts slow from what the window
// accepted. A refusal before the take was accepted ends the schedule as
// before; with windowCheck off (the seventeenth step's law) nothing is
// checked.
func TestWindowCheck(t *testing.T) {
	sec, accept, refuse := windowSteps()
	// As in TestWindowSchedule: a take of 50 scheduled from the probe
	// accepted at 20 s.
	window := accept(refuse(refuse(refuse(refuse(accept(retry.RateState{}, 50, 0, 0.1), 5), 5.1), 5.3), 5.9), 1, 12, 0.1)
	scheduled := accept(refuse(accept(window, 49, 12.1, 0.1), 17.5), 1, 20, 0.1)
	require.Equal(t, 50, scheduled.WindowTake)
	require.True(t, scheduled.WindowProbed, "the reset seen only by the hold's probe, timed to the multiple")
	require.True(t, scheduled.Check.On, "unconfirmed")

	// A reset the backend showed itself: a run of 50 from 10 s, refused
	// from 15 s to 19.6 s, accepted again at 20.1 s: scheduled unchecked.
	direct := accept(refuse(accept(retry.RateState{}, 50, 10, 0.1), 15, 16, 17.5, 19.6), 1, 20.1, 0.1)
	require.Equal(t, 50, direct.WindowTake)
	assert.True(t, direct.Windowed)
	assert.False(t, direct.WindowProbed, "the last refusal 0.4 s before the multiple")
	assert.False(t, direct.Check.On, "shown by the backend's own refusals: no checks")
	_, slots := reserveSlots(direct, sec(20.2), 50)
	assert.Equal(t, sec(30.05), slots[49], "the 50th at the next window")

	taken := accept(scheduled, 49, 20.1, 0.02) // the window's 50, the last at 21.08 s
	check := retry.Refusal{At: sec(21.3), Sent: sec(21.29), Items: 100, Bare: true}
	assert.True(t, taken.CheckAnswer(check), "a bare 429 after the take: a check's")
	assert.True(t, taken.WindowHold(), "a window's limit reached")
	assert.False(t, accept(scheduled, 48, 20.1, 0.02).CheckAnswer(check), "before the take was accepted: no check's")
	assert.False(t, taken.CheckAnswer(retry.Refusal{At: sec(21.3), Sent: sec(21.29), Items: 100, Bare: true, Shed: true}), "a 503: no check's")

	once := refuse(taken, 21.3)
	assert.Equal(t, 50, once.WindowTake, "one refused check: the schedule goes on")
	assert.True(t, once.Check.On)
	assert.Equal(t, 1, once.Check.Refused)
	assert.Zero(t, once.Streak, "no row of refusals")
	assert.Equal(t, taken.Epoch, once.Epoch, "nothing void")

	confirmed := refuse(once, 21.4)
	assert.Equal(t, 50, confirmed.WindowTake, "two refused in a row: confirmed")
	assert.False(t, confirmed.Check.On)
	assert.Zero(t, confirmed.Streak, "no row of refusals")
	assert.Equal(t, taken.Rate(sec(21.4)), confirmed.Rate(sec(21.4)), "no cut")
	assert.Greater(t, confirmed.Epoch, once.Epoch, "the checks booked after them void")
	_, slots = reserveSlots(confirmed, sec(21.5), 1)
	assert.Equal(t, sec(30.05), slots[0], "confirmed: no more checks, the next at the next window")
	assert.False(t, confirmed.WindowProbed, "confirmed: a later schedule is not checked")

	// Slots already booked into the next window when the confirmation
	// comes are void with the checks: that window is booked again from its
	// start, its whole take.
	ahead, _ := reserveSlots(taken, sec(21.1), 60) // the window's 53 more, then 7 from 30 s
	require.Equal(t, sec(30), ahead.WindowAt)
	_, slots = reserveSlots(refuse(ahead, 21.3, 21.4), sec(21.5), 51)
	assert.Equal(t, sec(30.05), slots[0], "booked again from the next window's start")
	assert.True(t, slots[49].Before(sec(40)), "the next window's whole take")
	assert.Equal(t, sec(40.05), slots[50], "then the window after it")

	oneMore := refuse(accept(taken, 1, 21.2, 0.1), 21.3, 21.4)
	assert.Equal(t, 51, oneMore.WindowTake, "a check accepted, the next two refused: the take one larger")
	assert.False(t, oneMore.Check.On)
	again := refuse(accept(once, 1, 21.35, 0.1), 21.45)
	assert.True(t, again.Check.On, "refused, accepted, refused: not two in a row")
	assert.Equal(t, 1, again.Check.Refused)

	wrong := accept(taken, 3, 21.2, 0.02)
	assert.Zero(t, wrong.WindowTake, "the take and three checks accepted: no window of 50")
	assert.False(t, wrong.Windowed, "no longer taken for a window")
	assert.False(t, wrong.WindowProbed)
	assert.False(t, wrong.WindowHold())
	assert.Equal(t, retry.RateSlowStart, wrong.Mode)
	assert.InDelta(t, 530, wrong.Rate(sec(21.24)), 1e-6, "from what the window accepted: 53 requests of 100 items per 10 s")
	assert.Equal(t, 50, accept(taken, 2, 21.2, 0.02).WindowTake, "two checks accepted: the third decides")
	assert.Zero(t, accept(refuse(taken, 21.15), 3, 21.2, 0.02).WindowTake, "a check refused, three accepted after it: ended too")

	early := refuse(accept(scheduled, 30, 20.1, 0.02), 21)
	assert.Zero(t, early.WindowTake, "refused before the take was accepted: the schedule was wrong, as before")
	assert.Zero(t, refuse(taken, 31).WindowTake,
		"a refusal of the first request sent in a later window confirms nothing: the schedule was wrong")

	restore, err := retry.SetTuning(map[string]float64{"windowCheck": 0})
	require.NoError(t, err)
	defer restore()
	off := accept(refuse(accept(window, 49, 12.1, 0.1), 17.5), 1, 20, 0.1)
	require.Equal(t, 50, off.WindowTake)
	_, slots = reserveSlots(off, sec(20.2), 50)
	assert.Equal(t, sec(30.05), slots[49], "windowCheck off: the 50th at the next window")
	assert.Equal(t, 50, accept(off, 60, 20.1, 0.02).WindowTake, "windowCheck off: never ended by acceptances")
	assert.Zero(t, refuse(accept(off, 49, 20.1, 0.02), 21.4).WindowTake, "windowCheck off: any refusal ends it")
}

// TestWindowPhase: a fixed window whose 10 s windows begin 2.5 s past the
// clock's multiples. Its first run of 50 (from 2.5 s) runs out at 7.5 s;
// the row's probe at the multiple (10.05 s) is refused too, and a hold's
// probe is accepted at 15.1 s: no multiple lies between the row's last
// refusal and that acceptance, so the multiples were wrong. The phase
// becomes the acceptance's place past them (5.1 s: the latest the reset
// can have been), and that acceptance shows no reset. The next run of 50
// runs out at 20.1 s; the next row's probe, at the next start at the
// phase (25.1 s), is accepted: a reset shown at the phase, whose take is
// scheduled at its starts. A row ended across a multiple keeps the phase
// (the aligned windows of TestWindowCheck); so does a row too short to
// look like a window's end (a run of four before it, or ended within
// windowClosed of its start); with windowPhase off (the eighteenth step's
// law) the multiples stay, and the second row's probe shows nothing.
func TestWindowPhase(t *testing.T) {
	sec, accept, refuse := windowSteps()
	first := accept(refuse(accept(retry.RateState{}, 50, 2.5, 0.1), 7.5, 7.6, 7.8, 8.4, 10.06), 1, 15.1, 0.1)
	assert.Equal(t, 5100*time.Millisecond, first.WindowPhase, "the multiples were wrong: the phase at the acceptance")
	assert.False(t, first.Windowed, "the acceptance that set the phase shows no reset")
	assert.True(t, first.PhaseMoved, "a counted hold may wait for the next start (windowPhaseHold)")
	assert.Zero(t, first.WindowTake)
	row := refuse(accept(first, 49, 15.2, 0.1), 20.1, 20.2, 20.4, 21)
	second := accept(row, 1, 25.15, 0.1)
	assert.Equal(t, 5100*time.Millisecond, second.WindowPhase, "a start at the phase between the row and the acceptance: kept")
	assert.True(t, second.Windowed, "the probe just after the start at the phase shows the reset")
	assert.True(t, second.WindowProbed)
	assert.False(t, second.PhaseMoved, "a row ended across a start at the phase")
	assert.Equal(t, 50, second.WindowTake, "the run before the row")
	_, slots := reserveSlots(second, sec(25.2), 54)
	assert.True(t, slots[52].Before(sec(35.1)), "the take and its checks in the window that began at 25.1 s")
	assert.Equal(t, sec(35.15), slots[53], "then the next window's start at the phase")

	aligned := accept(refuse(accept(retry.RateState{}, 50, 0, 0.1), 5, 5.1, 5.3, 5.9, 7), 1, 12, 0.1)
	assert.Zero(t, aligned.WindowPhase, "a multiple between the row and the acceptance: kept")
	short := accept(refuse(accept(retry.RateState{}, 4, 2.5, 0.1), 7.5, 7.6, 7.8, 8.4, 10.06), 1, 15.1, 0.1)
	assert.Zero(t, short.WindowPhase, "after a run of four: no window's end")
	quick := accept(refuse(accept(retry.RateState{}, 50, 2.5, 0.1), 7.5, 7.6), 1, 8.5, 0.1)
	assert.Zero(t, quick.WindowPhase, "a row ended 1 s after it began: no window's end")

	restore, err := retry.SetTuning(map[string]float64{"windowPhase": 0})
	require.NoError(t, err)
	defer restore()
	off := accept(refuse(accept(retry.RateState{}, 50, 2.5, 0.1), 7.5, 7.6, 7.8, 8.4, 10.06), 1, 15.1, 0.1)
	assert.Zero(t, off.WindowPhase, "windowPhase off")
	offSecond := accept(refuse(accept(off, 49, 15.2, 0.1), 20.1, 20.2, 20.4, 21), 1, 25.15, 0.1)
	assert.False(t, offSecond.Windowed, "windowPhase off: 5.15 s past the multiple, no reset shown")
	assert.Zero(t, offSecond.WindowTake)
}

// TestSecondWindow: a fixed window of a second refuses the request after
// its take, within the same clock second, and accepts again in the next.
// A bare 429 after at least secondTake acceptances of requests sent in its
// second, with the next acceptance in a later second, shows that take;
// two such in a row (give or take one, the smaller kept) start the
// schedule of a window a second long: its take at once, then the next
// second. Not when a request sent in the refusal's second is accepted
// after it (a bucket refills at any time), nor when the takes differ by
// two, nor below secondTake, nor with secondWindows off (the law before).
func TestSecondWindow(t *testing.T) {
	sec, accept, refuse := windowSteps()
	// Second 0: 12 accepted 50 ms apart, the 13th refused at 0.65 s;
	// second 1: accepted from 1.05 s.
	first := accept(refuse(accept(retry.RateState{}, 12, 0, 0.05), 0.65), 1, 1.05, 0.05)
	require.Zero(t, first.WindowTake, "one window's end alone")
	again := func(s retry.RateState, n int) retry.RateState {
		// Second 1 goes on to n accepted, a refusal at 1.9 s; second 2
		// accepts at 2.02 s.
		return accept(refuse(accept(s, n-1, 1.1, 0.05), 1.9), 1, 2.02, 0.05)
	}
	s := again(first, 12)
	assert.Equal(t, 12, s.WindowTake, "the take both windows showed")
	assert.Equal(t, time.Second, s.WindowLen)

	// The request accepted at 2.02 s was the window's first: 11 more leave
	// 1 s / (8 × 12) apart from now, whatever the pace; the 12th booked
	// waits for the next second (two windows' ends showed the take: no
	// checks, windowCheck).
	now := sec(2.03)
	s, slots := reserveSlots(s, now, 13)
	gap := time.Second / 96
	assert.Equal(t, now, slots[0], "the first at once")
	assert.Equal(t, now.Add(10*gap), slots[10], "the window's 11 more, an eighth of a second for all")
	assert.Equal(t, sec(3.05), slots[11], "the next at the next second's start")
	assert.Equal(t, sec(3.05).Add(gap), slots[12])
	assert.InDelta(t, 1200, s.PaceAt(sec(3.5)), 1e-9, "the pace a gauge shows: 12 requests of 100 items a second")

	// A refusal ends the schedule: the pace at the window's rate.
	r := refuse(s, 3.2)
	assert.Zero(t, r.WindowTake)
	assert.InDelta(t, 1200, r.Rate(sec(3.2)), 1e-6, "items a second")

	assert.Equal(t, 12, again(first, 13).WindowTake, "takes of 12 and 13: the smaller")
	assert.Zero(t, again(first, 14).WindowTake, "takes of 12 and 14")
	// A request sent in the refusal's second, accepted after it: no
	// window's end, and the take shown before is forgotten.
	bucket := accept(refuse(accept(first, 11, 1.1, 0.05), 1.66), 1, 1.7, 0.05)
	assert.Zero(t, again(bucket, 12).WindowTake, "a bucket: accepted again within the second")
	// Below secondTake: 8 a second.
	few := accept(refuse(accept(retry.RateState{}, 8, 0, 0.1), 0.85), 1, 1.05, 0.1)
	assert.Zero(t, accept(refuse(accept(few, 7, 1.15, 0.1), 1.9), 1, 2.02, 0.1).WindowTake, "8 a second: below secondTake")

	restore, err := retry.SetTuning(map[string]float64{"secondWindows": 0})
	require.NoError(t, err)
	defer restore()
	assert.Zero(t, again(accept(refuse(accept(retry.RateState{}, 12, 0, 0.05), 0.65), 1, 1.05, 0.05), 12).WindowTake, "secondWindows off")
}

// TestRateRowsThatRefuseWhatever: the variants rowKeep and rowMeasure
// (off in the default, measured in docs/benchmarks.md, "Tried after the
// nineteenth step"). A row of bare 429s (two or more, nothing accepted
// since its first) after a run of at least rowRun acceptances, that has
// lasted rowAge and rowIntervals intervals at the pace, refuses whatever
// the pace, as a flapping backend or a window that ran out does. A refusal deep
// in it cuts nothing (rowKeep), where the measure over the last
// acceptWindow would read the row's silence as the backend's rate and cut
// to a fraction of it; a refusal in a row younger than rowAge cuts as
// before. The acceptance that ends such a row measures what the backend
// accepts afresh (rowMeasure), at the pace of the moment: the next cut is
// of what was accepted since, not of a span that holds the row.
func TestRateRowsThatRefuseWhatever(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	rule := func(f func()) { withTuning(t, map[string]float64{"rowKeep": 1, "rowMeasure": 1}, f) }
	// Cut at 1 s by the row's first refusal to 1 800 items a second;
	// refused since, the row's first at 1 s.
	row := retry.RateState{Mode: retry.RatePaced, Ceiling: 1800, Since: sec(1), Next: sec(1), Epoch: 1, ItemsPerRequest: 100,
		FirstAccepted: sec(-10), Bare: true, Plateau: 2000, Regain: 2 * time.Second,
		Streak: 3, StreakStart: sec(1), LastRefusal: sec(1.4), RowStartRun: 40}
	deep := retry.Refusal{At: sec(2.2), Sent: sec(2.19), Items: 100, Bare: true, Recent: 400, RecentSent: 1000}
	young := retry.Refusal{At: sec(1.6), Sent: sec(1.59), Items: 100, Bare: true, Recent: 400, RecentSent: 1000}
	// The default: cut to what the last 2 s, mostly the row, accepted.
	assert.InDelta(t, 0.95*400/2, row.Refused(deep).Ceiling, 1e-6, "default: cut within the row")
	law := row.Refused(young).Ceiling
	assert.Less(t, law, 1800.0, "default: a row 0.6 s old cuts")
	rule(func() {
		assert.InDelta(t, 1800, row.Refused(deep).Ceiling, 1e-6, "rowKeep: 1.2 s into the row, no cut")
		assert.InDelta(t, law, row.Refused(young).Ceiling, 1e-6, "rowKeep: a row 0.6 s old cuts as in the default")
		// After a run of four acceptances (a fleet's member, its share
		// taken by the others, is refused in rows after short runs), or
		// at a pace of five requests a second (eight intervals: 1.6 s),
		// the row cuts.
		short := row
		short.RowStartRun = 4
		assert.InDelta(t, 0.95*400/2, short.Refused(deep).Ceiling, 1e-6, "rowKeep: a row after a run of 4 cuts")
		slow := row
		slow.Ceiling, slow.Plateau = 500, 500
		assert.Less(t, slow.Refused(deep).Ceiling, 500.0, "rowKeep: 1.2 s into a row at 5 requests a second, a cut")
	})

	// The row ends at 4 s (the request that ended it left before the new
	// measure began); nine more accepted in the 2 s after; refused at 6 s.
	after := func() (atEnd, pace float64, cut retry.RateState) {
		s := row.Accepted(sec(4), sec(3.99), 100)
		atEnd, pace = row.Rate(sec(4)), s.Rate(sec(4))
		for i := 1; i < 10; i++ {
			at := sec(4 + 0.2*float64(i))
			s = s.Accepted(at, at.Add(-10*time.Millisecond), 100)
		}
		return atEnd, pace, s.Refused(retry.Refusal{At: sec(6), Sent: sec(5.99), Items: 100, Bare: true, Recent: 1000, RecentSent: 1100})
	}
	_, _, cut := after()
	assert.InDelta(t, 0.95*1000/5, cut.Ceiling, 1e-6, "default: over the 5 s since the cut, the row's 3 s in it")
	rule(func() {
		atEnd, pace, cut := after()
		assert.InDelta(t, atEnd, pace, 1e-6, "rowMeasure: the pace of the moment kept")
		assert.InDelta(t, 0.95*900/2, cut.Ceiling, 1e-6, "rowMeasure: what was accepted since the row ended, over the 2 s since")
	})
}

// TestRateRowPlateau: a bare 429 deep in a row (nothing accepted since the
// last cut) cuts the pace to what the last acceptWindow accepted, as
// before, but the plateau the pace climbs back to is the rate the run
// before the row was accepted at (runPlateau): behind a backend that flaps,
// that is what it takes once it takes requests again. Not after a run too
// short to measure, nor in a row the runs' counts read as a window's end
// (RowWindow); with runPlateau off, the plateau is the last 2 s.
func TestRateRowPlateau(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// A run of 40 requests of 100 items from -1 s to the row's first
	// refusal at 1 s (2 000 items a second), cut there to 1 800; refused
	// since.
	row := retry.RateState{Mode: retry.RatePaced, Ceiling: 1800, Since: sec(1), Next: sec(1), Epoch: 1, ItemsPerRequest: 100,
		FirstAccepted: sec(-10), Bare: true, Plateau: 2000, Regain: 2 * time.Second,
		Streak: 3, StreakStart: sec(1), LastRefusal: sec(1.4), RowStartRun: 40, RowRunStart: sec(-1)}
	deep := retry.Refusal{At: sec(2.2), Sent: sec(2.19), Items: 100, Bare: true, Recent: 400, RecentSent: 1000}
	cut := row.Refused(deep)
	assert.InDelta(t, 0.95*400/2, cut.Ceiling, 1e-6, "the pace: cut to what the last 2 s accepted")
	assert.InDelta(t, 2000, cut.Plateau, 1e-6, "the plateau: the run before the row")
	assert.InDelta(t, 2000, cut.Rate(sec(2.2).Add(cut.Regain)), 1e-6, "climbed back to the run's rate over Regain")

	short := row
	short.RowStartRun = 4
	assert.InDelta(t, 400/2, short.Refused(deep).Plateau, 1e-6, "a run of 4: the last 2 s")
	quick := row
	quick.RowRunStart = sec(0.5)
	assert.InDelta(t, 400/2, quick.Refused(deep).Plateau, 1e-6, "a run of half a second: the last 2 s")
	window := row
	window.RowWindow = true
	assert.InDelta(t, 400/2, window.Refused(deep).Plateau, 1e-6, "a window's end by the runs' counts: the last 2 s")
	// A row's first refusal (accepted since the last cut) measures since
	// the cut, as before.
	first := row
	first.Streak, first.StreakStart, first.LastRefusal, first.AcceptedRun, first.Since, first.Next = 0, time.Time{}, time.Time{}, 3000, sec(-1), sec(-1)
	firstCut := first.Refused(retry.Refusal{At: sec(1), Sent: sec(0.99), Items: 100, Bare: true, Recent: 4000, RecentSent: 4000})
	assert.InDelta(t, 3000/2.0, firstCut.Plateau, 1e-6, "a row's first refusal: what was accepted since the cut")

	// A run with no span (minMeasured 0, its row begun at its first
	// acceptance) gives no rate, not an infinite one.
	withTuning(t, map[string]float64{"minMeasured": 0}, func() {
		instant := row
		instant.RowRunStart = sec(1)
		assert.InDelta(t, 400/2, instant.Refused(deep).Plateau, 1e-6, "a run of no span: the last 2 s")
	})
	withTuning(t, map[string]float64{"runPlateau": 0}, func() {
		off := row.Refused(deep)
		assert.InDelta(t, cut.Ceiling, off.Ceiling, 1e-6, "runPlateau off: the same cut")
		assert.InDelta(t, 400/2, off.Plateau, 1e-6, "runPlateau off: the plateau is the last 2 s")
	})
}
