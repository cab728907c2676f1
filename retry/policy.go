// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"net/http"
	"strconv"
	"time"
)

// This file holds every rule for what one attempt's result leads to, top to
// bottom. decide is pure: it reads the payload's payloadState and one attemptFacts and
// returns the next payloadState and a Decision. It sends nothing, waits for
// nothing and touches nothing shared; the loop carries the Decision out.

// Policy is what the loop decides with.
type Policy struct {
	Backoff      BackoffConfig
	RetryAfter   RetryAfterConfig
	Unauthorized UnauthorizedConfig
	Outage       OutageConfig
	Pacing       PacingConfig
	// Overrides replace the default action of a status code.
	Overrides map[int]Action
	// HoldOnUnauthorized holds the destination after a 401 (one probe per
	// Unauthorized.ProbeInterval, nothing dropped); otherwise the payload
	// that got the 401 is dropped and sending goes on.
	HoldOnUnauthorized bool
}

// payloadState is one payload's retry state. The zero payloadState is a payload that has
// not been sent yet.
type payloadState struct {
	// Attempts is how many requests were sent.
	Attempts int
	// Counted is how many failures were counted against
	// Backoff.MaxAttempts (the first attempt is the first count).
	Counted int
	// ThrottleStart is when the payload first met throttling (a throttled
	// response, or a gate held for throttling); the rate-limit budget runs
	// from it.
	ThrottleStart time.Time
	// FailStart is when the payload first failed retryably without a usable
	// Retry-After; the outage budget runs from it.
	FailStart time.Time
	// RetryNow counts the throttled answers that asked to retry at once
	// (Retry-After 0, or a date not in the future).
	RetryNow int
	// Busy counts the 502, 503 and 504 answers while the backend accepted
	// others, without pacing: they wait along the backoff schedule.
	Busy int
	// upMark is the destination's success count when the payload's first
	// failing attempt left: a larger count later shows the destination up.
	upMark   uint64
	upMarked bool
}

// attemptFacts is what the loop knows after one request.
type attemptFacts struct {
	Response Response
	// RetryAfter is the parsed Retry-After of a response that has a status.
	RetryAfter RetryAfter
	// Now is when the response (or the error) arrived.
	Now time.Time
	// SuccessesAtStart and Successes are the destination's count of
	// answers that showed it up (successes, permanent answers to one
	// payload) when this attempt left and now.
	SuccessesAtStart, Successes uint64
	// Held is the reason of the hold this attempt was the probe of
	// (HoldNone when it passed an open gate), and HoldFailures how many
	// times in a row that hold was confirmed.
	Held         HoldReason
	HoldFailures int
	// AcceptedLately is set when pacing is on and the backend accepted a
	// request within the last 2 s (the pacer's measure): an answer without
	// a hint that speaks about the backend (a bare 429, a 502, 503 or 504)
	// then slows the pace instead of holding the destination, and spends
	// no counted attempt.
	AcceptedLately bool
	// Unlearned is set when pacing is on and the pacer knows nothing of
	// the destination yet (rateState.Unlearned): a bare 429 that is not
	// the probe of a throttle hold then holds it for the pacer's first
	// hold (firstBareHold) when retry_after::default is longer. FirstBare
	// is when the bare 429 that began that hold came (zero when no such
	// refusal began it): a bare 429 to the hold's first probe holds the
	// destination until retry_after::default after it.
	Unlearned bool
	FirstBare time.Time
	// WindowHold is set when pacing is on, the destination was seen to
	// reset at a multiple of 10 s on the clock (a fixed window), and this
	// is the first bare 429 in a row (rateState.WindowHold): the bare 429
	// holds it until just after the next multiple, however recently the
	// backend accepted a request. RowStart is when the row of bare 429s
	// it belongs to began, when that row followed a run of acceptances
	// (zero otherwise): a hold of retry_after::default spanning a
	// multiple at least windowClosed after it probes just after the
	// multiple (windowRowProbes). Every multiple here is one of 10 s
	// moved by WindowPhase (below).
	WindowHold bool
	RowStart   time.Time
	// WindowPhase is how far past the clock's multiples of 10 s the
	// destination's windows begin (rateState.WindowPhase): the holds and
	// probes above wait for those starts.
	WindowPhase time.Duration
	// WindowSeen is set when that window was seen to reset on the clock
	// (rateState.Windowed), not only found by its runs' counts: only then
	// may its hold last past retry_after::default (windowPastSeen).
	WindowSeen bool
	// Crowding is set when pacing is on and the refused request left with
	// more requests in flight than the backend takes at once (the pacer's
	// measure, rateState.Crowding): a bare 429 then waits for an answer
	// instead of holding the destination, and a refusal with a Retry-After
	// past a learned concurrency limit holds only its payload.
	Crowding crowding
	// Random is a number in [0, 1) for jitter.
	Random float64
}

// Next is what a payload does after an attempt.
type Next int

const (
	// NextDeliver: delivered; done.
	NextDeliver Next = iota
	// NextDrop: dropped; done, never retried.
	NextDrop
	// NextGate: wait at the destination's gate, which the Decision's Hold
	// (or another sender's) keeps closed; spends no counted attempt.
	NextGate
	// NextBackoff: wait Delay on the payload's own, then try again.
	NextBackoff
	// nextInterrupted: the loop's own, never the policy's: the attempt was
	// cancelled by the caller, or failed retryably after Stop.
	nextInterrupted
)

var nextNames = [...]string{"deliver", "drop", "gate", "backoff", "interrupted"}

func (n Next) String() string { return nextNames[n] }

// Decision is what to do after an attempt.
type Decision struct {
	Action Action
	// Reason is the status code, or the network error's reason.
	Reason string
	// Throttled is set when the response took the rate-limit path (a
	// usable Retry-After, or a 429), whether or not a retry follows.
	Throttled bool
	// Hold tells the gate to hold the destination until Until; HoldNone
	// leaves the gate as it is.
	Hold  HoldReason
	Until time.Time
	Next  Next
	// Path is the retry path of a scheduled retry (NextGate, NextBackoff).
	Path Path
	// Delay is the wait before the next attempt (jitter included): the
	// backoff wait, or the hold's length.
	Delay time.Duration
	// Source says where a rate-limit Delay came from.
	Source DelaySource
	// Drop is why the payload is dropped (NextDrop).
	Drop DropReason
	// RetryAfterUsed is set when the Retry-After header was examined (a
	// retryable response with a status).
	RetryAfterUsed bool

	response Response // the loop's: the attempt's response
}

// decide applies the policy to one attempt of a payload.
func (p Policy) decide(s payloadState, a attemptFacts) (payloadState, Decision) {
	s.Attempts++
	resp := a.Response
	var d Decision
	if resp.Status == 0 {
		d.Action, d.Reason = ClassifyError(resp.Err)
	} else {
		d.Action, d.Reason = ClassifyStatus(resp.Status, p.Overrides), strconv.Itoa(resp.Status)
	}
	switch d.Action {
	case ActionSuccess:
		d.Next = NextDeliver
		return s, d
	case ActionDrop:
		d.Next, d.Drop = NextDrop, DropPermanentStatus
		if resp.Status == 0 {
			d.Drop = DropPermanentError
			if d.Reason == ReasonConfig {
				d.Drop = DropConfigError
			}
		}
		return s, d
	case ActionUnauthorized:
		return s, p.unauthorized(d, a)
	}
	if resp.Status != 0 {
		d.RetryAfterUsed = true
		if a.RetryAfter.Usable() || resp.Status == http.StatusTooManyRequests {
			return p.throttled(s, d, a)
		}
		if backendAnswer(resp.Status) && (a.AcceptedLately || a.Successes > s.upMarkFor(a)) {
			return p.busy(s, d, a)
		}
	}
	return p.failed(s, d, a)
}

// backendAnswer reports whether a status speaks about the backend rather
// than the payload: a gateway that got no good answer (502), a backend
// that is overloaded or shedding load (503), a gateway that timed out
// (504). (429 goes the throttle path.)
func backendAnswer(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// upMarkFor is the success count against which the attempt shows the
// destination up: the payload's mark once it failed, or the count when
// this attempt left.
func (s payloadState) upMarkFor(a attemptFacts) uint64 {
	if s.upMarked {
		return s.upMark
	}
	return a.SuccessesAtStart
}

// unauthorized: a 401 holds the destination for one probe interval (the
// payload waits at the gate, nothing is dropped), or drops the payload.
func (p Policy) unauthorized(d Decision, a attemptFacts) Decision {
	if !p.HoldOnUnauthorized {
		d.Next, d.Drop = NextDrop, DropUnauthorized
		return d
	}
	d.Hold, d.Next, d.Path = HoldUnauthorized, NextGate, PathUnauthorized
	d.Delay = p.Unauthorized.ProbeInterval
	d.Until = a.Now.Add(d.Delay)
	return d
}

// throttled: the server asked to wait (Retry-After, or a 429 without a
// usable one). The wait is the server's, or the default, plus jitter;
// everyone waits it at the gate. No backoff attempt is spent; the payload's
// rate-limit budget is checked here, after a try, never while it waits.
func (p Policy) throttled(s payloadState, d Decision, a attemptFacts) (payloadState, Decision) {
	ra := a.RetryAfter
	d.Throttled = true
	// A fixed window's limit reached, held until it resets: within
	// retry_after::default (and windowSlack, windowCountedSlack), or
	// (windowPastDefault) within retry_after::max.
	bound := p.RetryAfter.Default
	if tuning.windowPastDefault {
		switch {
		case a.WindowSeen || !tuning.windowPastSeen:
			bound = max(bound, p.RetryAfter.Max)
		case tuning.windowCountedSlack:
			bound = min(bound+tuning.windowSlack, max(bound, p.RetryAfter.Max))
		}
	}
	window := !ra.Usable() && a.WindowHold && a.Crowding == notCrowded && p.Pacing.Enabled &&
		nextWindow(a.Now, a.WindowPhase).Before(a.Now.Add(bound))
	if !ra.Usable() && (a.AcceptedLately || a.Crowding != notCrowded) && !window {
		return p.paced(s, d, a)
	}
	d.Delay, d.Source = ra.Delay, SourceHeader
	first := tuning.firstBareHold > 0 && tuning.firstBareHold < p.RetryAfter.Default
	switch {
	case window:
		d.Delay, d.Source = nextWindow(a.Now, a.WindowPhase).Sub(a.Now), SourceWindow
	case !ra.Usable() && first && a.Unlearned && a.Held != HoldThrottle:
		d.Delay, d.Source = tuning.firstBareHold, SourceFirst
	case !ra.Usable() && first && a.Unlearned && !a.FirstBare.IsZero() && a.Held == HoldThrottle && a.HoldFailures == 1:
		// The first hold's probe refused too: until the default after
		// the refusal that began it, so that a destination refusing
		// everything for now is held as long as before, with one probe
		// more (and one jitter, as before: a second one, and the probe's
		// round trip, spread a fleet's returns further).
		d.Delay, d.Source = max(a.FirstBare.Add(p.RetryAfter.Default).Sub(a.Now), minWait), SourceDefault
	case !ra.Usable():
		d.Delay, d.Source = p.RetryAfter.Default, SourceDefault
	case ra.Capped:
		d.Source = SourceCapped
	}
	// A hold without a hint that spans a multiple of windowAlign probes
	// just after it when its row looks like a window's end
	// (windowRowProbes); the rule's first form (windowProbes, a variant
	// only), whatever the row.
	rowProbe := !a.RowStart.IsZero() && nextWindow(a.Now, a.WindowPhase).Sub(a.RowStart) >= tuning.windowClosed
	if (tuning.windowProbes || rowProbe) && d.Source == SourceDefault && p.Pacing.Enabled && nextWindow(a.Now, a.WindowPhase).Before(a.Now.Add(d.Delay)) {
		d.Delay, d.Source = nextWindow(a.Now, a.WindowPhase).Sub(a.Now), SourceWindow
	}
	if d.Delay < minWait && d.Source != SourceWindow {
		// A floor under "retry now" (Retry-After 0, a date in the past, a
		// retry_after::default below minWait): the first may; further
		// ones, on this payload or at this destination's gate, escalate
		// along the backoff schedule, never below minWait (still on the
		// rate-limit budget).
		s.RetryNow++
		n := s.RetryNow - 1
		if a.Held == HoldThrottle {
			n = max(n, a.HoldFailures)
		}
		if n > 0 {
			d.Delay, d.Source = p.floorDelay(n), SourceFloor
		}
	}
	d.Delay += scaleJitter(p.RetryAfter.Jitter, a.Random)
	d.Until = a.Now.Add(d.Delay)
	// Refused for crossing a concurrency limit (learned, or first seen,
	// with the requests ahead of it still out): the payload waits what the
	// server asked on its own, and the others keep within the limit.
	alone := a.Crowding == crowdedLearned || (a.Crowding == crowdedFirst && ra.Usable() && ra.Delay >= minWait)
	if !alone {
		d.Hold = HoldThrottle
	}
	if s.ThrottleStart.IsZero() {
		s.ThrottleStart = a.Now
	}
	if a.Now.Sub(s.ThrottleStart) >= p.RetryAfter.MaxElapsed {
		d.Next, d.Drop, d.Delay = NextDrop, DropThrottleBudgetExhausted, 0
		return s, d
	}
	d.Next, d.Path = NextGate, PathRateLimit
	if alone {
		d.Next = NextBackoff
	}
	return s, d
}

// nextWindow is the first start of a 10 s window after now: a multiple of
// windowAlign on the clock, moved by phase (rateState.WindowPhase).
func nextWindow(now time.Time, phase time.Duration) time.Time {
	return now.Add(-phase).Truncate(windowAlign).Add(windowAlign + phase)
}

// busy: a 502, 503 or 504 without a usable Retry-After while the backend
// accepts other requests (some succeeded since this payload's first
// failure, or while this attempt was out). The answer speaks about the
// backend, not about this payload: it spends no counted attempt. With
// pacing it slows the pace and the payload tries again at it; without,
// the payload waits along the backoff schedule on its own. Either way the
// rate-limit budget bounds it.
func (p Policy) busy(s payloadState, d Decision, a attemptFacts) (payloadState, Decision) {
	if !s.upMarked {
		s.upMark, s.upMarked = a.SuccessesAtStart, true
	}
	if a.AcceptedLately {
		return p.paced(s, d, a)
	}
	s.Busy++
	d.Delay = backoffDelay(p.Backoff, s.Busy, a.Random)
	if s.ThrottleStart.IsZero() {
		s.ThrottleStart = a.Now
	}
	if a.Now.Sub(s.ThrottleStart) >= p.RetryAfter.MaxElapsed {
		d.Next, d.Drop, d.Delay = NextDrop, DropThrottleBudgetExhausted, 0
		return s, d
	}
	d.Next, d.Path, d.Until = NextBackoff, PathBackoff, a.Now.Add(d.Delay)
	return s, d
}

// paced: an answer without a hint that speaks about the backend (a bare
// 429, or a 502, 503 or 504 while others are accepted) at a destination
// whose pacer paces or can learn a pace. The pacer slows down (or learns
// that the backend refuses this share whatever the pace); the payload
// goes back to the gate, which stays open, and leaves at its next slot.
// No counted attempt is spent; the rate-limit budget bounds it.
func (p Policy) paced(s payloadState, d Decision, a attemptFacts) (payloadState, Decision) {
	if s.ThrottleStart.IsZero() {
		s.ThrottleStart = a.Now
	}
	if a.Now.Sub(s.ThrottleStart) >= p.RetryAfter.MaxElapsed {
		d.Next, d.Drop = NextDrop, DropThrottleBudgetExhausted
		return s, d
	}
	d.Next, d.Path, d.Until = NextGate, PathPace, a.Now
	return s, d
}

// failed: a retryable failure without a usable Retry-After (5xx, timeout,
// refused or reset connection). While the destination is shown to be up
// (some request to it succeeded since this payload's first failure), the
// failure is the payload's: it spends a counted attempt and backs off on
// its own, and is dropped once they are spent. Otherwise the destination is
// down: the payload waits at the gate, which lets one probe through per
// backoff interval, and spends nothing.
func (p Policy) failed(s payloadState, d Decision, a attemptFacts) (payloadState, Decision) {
	if !s.upMarked {
		s.upMark, s.upMarked = a.SuccessesAtStart, true
	}
	if s.FailStart.IsZero() {
		s.FailStart = a.Now
	}
	if a.Successes > s.upMark {
		s.Counted++
		if s.Counted >= p.Backoff.MaxAttempts {
			d.Next, d.Drop = NextDrop, DropRetriesExhausted
			return s, d
		}
		d.Next, d.Path = NextBackoff, PathBackoff
		d.Delay = backoffDelay(p.Backoff, s.Counted, a.Random)
		d.Until = a.Now.Add(d.Delay)
		return s, d
	}
	if p.Outage.MaxDuration > 0 && a.Now.Sub(s.FailStart) >= p.Outage.MaxDuration {
		d.Next, d.Drop = NextDrop, DropOutageExhausted
		return s, d
	}
	// The probe interval grows along the backoff schedule while the
	// outage lasts; after a 502, 503 or 504 it grows to
	// retry_after::default at most (answerCap): the backend answers, and
	// one that sheds a share of its requests refuses that share of the
	// probes too.
	n := 1
	if a.Held == HoldOutage {
		n = a.HoldFailures + 1
	}
	d.Hold, d.Next, d.Path = HoldOutage, NextGate, PathOutage
	d.Delay = p.floorDelay(n)
	if tuning.answerCap && backendAnswer(a.Response.Status) {
		d.Delay = min(d.Delay, max(p.RetryAfter.Default, minWait))
	}
	d.Delay += scaleJitter(p.Backoff.Jitter, a.Random)
	d.Until = a.Now.Add(d.Delay)
	return s, d
}

// minWait is the floor under every hold of a destination but the first
// "retry now": whatever the config and the server say, a destination that
// refuses every request gets at most one request per minWait once a
// refusal is back (besides the requests already in flight then).
const minWait = time.Second

// floorDelay is the n-th wait (n >= 1) of a hold that goes on: the backoff
// schedule without jitter, never below minWait.
func (p Policy) floorDelay(n int) time.Duration {
	return max(backoffDelay(p.Backoff, n, 0), minWait)
}

// gateDeadline is how long a payload may wait at a gate held for reason,
// and the drop reason when that passes. A zero time waits for as long as
// the hold lasts. It records the start of the payload's throttling the
// first time it meets a gate held for throttling.
func (p Policy) gateDeadline(s *payloadState, reason HoldReason, now time.Time) (time.Time, DropReason) {
	switch reason {
	case HoldThrottle:
		if s.ThrottleStart.IsZero() {
			s.ThrottleStart = now
		}
		// A payload waiting out its own last wait before the budget ends
		// must still get its try: allow one more capped wait.
		ra := p.RetryAfter
		return s.ThrottleStart.Add(ra.MaxElapsed + ra.Max + ra.Jitter), DropThrottleBudgetExhausted
	case HoldOutage:
		if p.Outage.MaxDuration <= 0 {
			return time.Time{}, DropNone
		}
		if s.FailStart.IsZero() {
			s.FailStart = now
		}
		return s.FailStart.Add(p.Outage.MaxDuration), DropOutageExhausted
	}
	return time.Time{}, DropNone
}
