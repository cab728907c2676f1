// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

// Where a destination's 10 s windows begin. A fixed window resets at the
// multiples of its length on its own clock, or wherever it began counting
// (at a key's first request, say): the multiples of windowAlign on this
// exporter's clock are only the first guess (WindowPhase 0). A row of bare
// 429s that looks like a window's end (phaseFromRow) and an acceptance
// after it bracket a reset: the window refused up to the row's last
// refusal, and took the accepted request. When no start of a window at the
// phase lies in between (give or take windowPhaseSlack), the phase was
// wrong, and becomes the accepted request's place past the multiples: the
// latest the reset can have been, so that a hold or probe timed to the
// next start comes after the window's reset, at most the bracket late. That
// acceptance shows no reset (it set the phase); the next row's, at the new
// starts, does, and the hold its runs' counts begin may wait for that start
// past retry_after::default (windowPhaseHold). Off the multiples by 2.5 s, the matrix's 10 s window was
// held and probed at the multiples, which refused, and its runs' counts
// held it to them again: refused 7.7-11.1 % in real runs, up to 10.4 % of
// the model's seeds and delivered 1.31 times core's time
// (docs/benchmarks.md, nineteenth step).

// windowPhaseSlack is how far before a window's start at the phase a
// request may have been sent and still be taken for that window's first:
// a request arrives after it leaves.
const windowPhaseSlack = windowScheduleSlack

// windowStart is the start of the 10 s window that holds t: the multiple
// of windowAlign at or before t, moved by WindowPhase.
func (s rateState) windowStart(t time.Time) time.Time {
	return t.Add(-s.WindowPhase).Truncate(windowAlign).Add(s.WindowPhase)
}

// scheduledStart is the start of the scheduled window that holds t: a 10 s
// window's at the phase, a second's (secondwindow.go) at the clock's
// seconds.
func (s rateState) scheduledStart(t time.Time) time.Time {
	if length := s.windowLen(); length != windowAlign {
		return t.Truncate(length)
	}
	return s.windowStart(t)
}

// phaseFromRow learns from the acceptance of a request sent at sent that
// ends a row of bare 429s which looks like a window's end: two or more in
// a row, or a window hold's, after a run of at least measuredRequests
// acceptances, begun at least windowClosed before sent. When no window
// starts at the phase between the row's last refusal and sent (give or
// take windowPhaseSlack), the phase becomes sent's place past the clock's
// multiples of windowAlign, and moved is set.
func (s rateState) phaseFromRow(sent time.Time) (_ rateState, moved bool) {
	start := s.StreakStart
	switch {
	case s.Streak == 1 && s.RowWindow:
		start = s.LastRefusal
	case s.Streak < 2:
		return s, false
	}
	if float64(s.RowStartRun) < tuning.measuredRequests || sent.Sub(start) < tuning.windowClosed {
		return s, false
	}
	if s.windowStart(sent.Add(windowPhaseSlack)).After(s.LastRefusal) {
		s.PhaseMoved = false
		return s, false
	}
	s.WindowPhase, s.PhaseMoved = sent.Sub(sent.Truncate(windowAlign)), true
	return s, true
}
