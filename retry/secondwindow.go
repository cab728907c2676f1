// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

// A fixed window of a second: what the clock's seconds show of one, and
// the schedule it starts (rateState.WindowTake with WindowLen a second).
//
// A bare cut takes what the backend accepted since the last cut as its
// limit. Behind a fixed window of a second, that span holds the silence
// after the last refusal and the part of a second the pace left unused:
// the rate it reads is below the window's take, the cut sets the pace a
// bareMargin below that, and the pace probes back up for seconds (the
// matrix's 1 s window used 82-91 % of its limit). The window itself says
// what it takes: it refuses the request after its take, within the same
// clock second, and accepts again only in the next.

// secondWindow is the length of a fixed window that is learned from the
// clock's seconds.
const secondWindow = time.Second

// secondCounts are the counts per clock second that show a fixed window
// of a second.
type secondCounts struct {
	// At is the clock second the last accepted request was sent in, Run
	// how many accepted requests were sent in it.
	At  time.Time
	Run int
	// Refused is the clock second of a bare 429 that came after Count (at
	// least secondTake) of them, zero when none waits for an acceptance to
	// tell whether it was a window's end; Take is the take the last such
	// end showed, zero when the last bare 429 showed none.
	Refused     time.Time
	Count, Take int
}

// secondAccepted counts an acceptance of a request sent at sent: per clock
// second, and as the end of a second's refusal (Seconds.Refused). Accepted
// in a later second than that refusal, it shows the window's take
// (Seconds.Count); the second such showing of the same take in a row (give
// or take one request, the smaller kept) starts the schedule, unless one
// runs. Accepted in the refusal's own second, the refusal was no window's
// end.
func (s rateState) secondAccepted(now, sent time.Time) rateState {
	c := &s.Seconds
	second := sent.Truncate(secondWindow)
	if !c.Refused.IsZero() {
		if second.After(c.Refused) {
			if c.Take > 0 && abs(c.Take-c.Count) <= 1 && s.WindowTake == 0 {
				// This request is the second's first answered (slots
				// booked for this second before now were booked at the
				// pace the refusal cut). Two windows' ends showed the
				// take: the schedule is not checked (windowCheck), a
				// check would cost a refusal.
				s = s.startSchedule(now, second, secondWindow, min(c.Take, c.Count), false)
			}
			c.Take = c.Count
		} else {
			c.Take = 0
		}
		c.Refused, c.Count = time.Time{}, 0
	}
	if second.Equal(c.At) {
		c.Run++
	} else {
		c.At, c.Run = second, 1
	}
	return s
}

// secondRefused notes a bare 429 (not a 502, 503 or 504, nor a refusal of
// quota or of concurrency) of a request sent at r.Sent: when at least
// secondTake requests sent in its clock second were accepted, it may be a
// window's end (Seconds.Refused, Seconds.Count), until an acceptance tells
// (secondAccepted); a row's later refusals in that second change nothing.
// Any other bare 429 is no window's end, and the take seen before is
// forgotten.
func (s rateState) secondRefused(r refusedAnswer) rateState {
	c := &s.Seconds
	second := r.Sent.Truncate(secondWindow)
	switch {
	case !c.Refused.IsZero() && second.Equal(c.Refused):
	case c.Refused.IsZero() && second.Equal(c.At) && float64(c.Run) >= max(tuning.measuredRequests, tuning.secondTake):
		c.Refused, c.Count = second, c.Run
	default:
		c.Refused, c.Count, c.Take = time.Time{}, 0, 0
	}
	return s
}
