// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

// A 10 s window's schedule started from a reset that only a probe showed
// (rateState.WindowProbed: the exporter timed the probe to a multiple of
// windowAlign, and any limiter with room accepts it then) checks itself in
// its first window: after the take, it sends more requests into the same
// window (the checks, windowCheckGap apart, so that one's answer comes
// before the next leaves). A reset the backend showed itself (refusing up
// to the multiple, accepting just after it) is not checked, nor a window
// of a second, scheduled once two of its ends showed the same take
// (secondwindow.go).
//
// A fixed window refuses every request after its take until it resets:
// windowConfirm checks refused in a row confirm the schedule (the take is
// what the window accepted), and the checks booked after them are void;
// until then a refused check holds nothing and cuts nothing. A limiter
// that is no such window (a GCRA shared by a fleet, whose probe at a
// multiple was accepted by chance) accepts most checks, and refuses one
// now and then: once windowChecks+1 checks were accepted in the window,
// the schedule was wrong, and it ends. Unchecked, such a schedule is never
// refused, and sent a fleet member its take of five or six requests per
// 10 s to the end of the load: 83-100 s of delivery where the fleet
// delivered in 45-55 s; confirmed by one refused check, a member that
// behind the GCRA's 10 % refusals met one among its checks kept it too
// (docs/benchmarks.md, "Found after the seventeenth step" and the
// eighteenth step).

// windowCheck is what the schedule's checks showed so far.
type windowCheck struct {
	// On while the schedule is unconfirmed.
	On bool
	// At is the window the last accepted request was sent in, Got how
	// many requests sent in it were accepted; Refused counts the checks
	// refused in a row since.
	At           time.Time
	Got, Refused int
}

// checking says whether a schedule runs and is unconfirmed.
func (s rateState) checking() bool {
	return s.WindowTake > 0 && s.Check.On
}

// windowLimit is how many requests a scheduled window books: its take, and
// while the schedule is unconfirmed the checks (as many as it takes to
// accept windowChecks+1 or to refuse windowConfirm in a row).
func (s rateState) windowLimit() int {
	if s.checking() {
		return s.WindowTake + tuning.windowChecks + tuning.windowConfirm
	}
	return s.WindowTake
}

// checkAccepted counts an acceptance of a request sent at sent while the
// schedule is unconfirmed: per window (Check.At, Check.Got). A window that
// accepted more than its take and every check was no fixed window of that
// take: the schedule ends, the destination is no longer taken for a
// window (Windowed, PrevRun), and the pace starts slow from what the
// window accepted.
func (s rateState) checkAccepted(now, sent time.Time) rateState {
	c := &s.Check
	if !s.checking() {
		return s
	}
	w := s.scheduledStart(sent)
	switch {
	case w.Before(c.At):
		return s
	case w.After(c.At):
		c.At, c.Got = w, 0
	}
	c.Got++
	c.Refused = 0
	if c.Got <= s.WindowTake+tuning.windowChecks {
		return s
	}
	rate := requestsToItems(float64(c.Got)/s.windowLen().Seconds(), s.ItemsPerRequest)
	s = s.endSchedule()
	s.Windowed, s.WindowProbed, s.PrevRun = false, false, 0
	return s.restart(now, rate, rateSlowStart)
}

// checkAnswer says whether r, a refusal, is a check's: the schedule is
// unconfirmed, and r is a bare 429 (not a 502, 503 or 504, nor a quota's)
// of a request sent in the window whose take was accepted. It holds
// nothing (lateFacts.WindowHold).
func (s rateState) checkAnswer(r refusedAnswer) bool {
	return s.checking() && r.Bare && !r.Shed && !r.Quota && s.scheduledStart(r.Sent).Equal(s.Check.At) && s.Check.Got >= s.WindowTake
}

// checkRefused learns from r when it is a check's refusal (checkAnswer),
// and says whether it was. Such a refusal changes nothing but the count
// of checks refused in a row; the windowConfirm-th confirms the schedule:
// the window's take becomes what it accepted (checks accepted before show
// a take that much larger), the window is full, and the slots booked
// after this one are void (the checks, and any in a later window, which
// are booked again).
func (s rateState) checkRefused(r refusedAnswer) (rateState, bool) {
	if !s.checkAnswer(r) {
		return s, false
	}
	c := &s.Check
	c.Refused++
	if c.Refused < tuning.windowConfirm {
		return s, true
	}
	at := c.At
	s.WindowTake, s.Check, s.WindowProbed = c.Got, windowCheck{}, false
	switch {
	case s.WindowAt.Equal(at):
		// Full: the next request is booked in the next window.
		s.WindowSent = s.WindowTake
	case s.WindowAt.After(at):
		// Booked into a later window already: those slots are void too,
		// and are booked again from its start.
		s.WindowSent, s.Next = 0, s.WindowAt.Add(windowScheduleSlack)
	}
	s.Epoch++
	return s, true
}
