// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"time"
)

// How the learned rate moves. The measurements that chose each value are
// in docs/benchmarks.md ("The pacer's constants").
const (
	// paceCut is how much of the pace of the moment a refusal leaves at
	// most (a multiplicative decrease). Chosen on the fleet model (fairness
	// median 0.871 → 0.906 over 20 seeds with the additive step) and the
	// e2e quota test (4.2 % refused, 90.7 % used).
	paceCut = 0.6
	// paceStepRequests is how many requests a second the pace gains every
	// second since the last refusal (an additive increase, in requests/s
	// per second): the same for every exporter sharing a quota, whatever
	// its pace, so that one with a low pace gains on one with a high pace.
	// It is small, so that a single exporter with a small quota is not
	// refused more often for it. Chosen with paceCut.
	paceStepRequests = 0.15
	// paceProbe is how fast the rate also grows in proportion to the
	// ceiling: by paceProbe times the square of the seconds since the last
	// refusal (0.5 % after a second, 4.5 % after 3, twice the ceiling after
	// 14), as TCP CUBIC does with its window. A ceiling learned too low is
	// left behind in seconds, however high it is.
	paceProbe = 0.005
	// slowStartDoubling is how long the pace takes to double in a slow
	// start (the fleet's second after a window: at most the bucket's burst
	// plus one probe per collector).
	slowStartDoubling = time.Second
	// acceptWindow is how far back the accepted rate is measured at the
	// first refusal; firstRefusalSpan is the shortest time it is spread
	// over, so that a burst the backend had banked does not pass for its
	// rate.
	acceptWindow     = 2 * time.Second
	firstRefusalSpan = time.Second
	// minCutElapsed is the shortest time a cut spreads what was accepted
	// since the last cut over: a refusal at the very instant a slow start
	// began counts as one a millisecond later.
	minCutElapsed = time.Millisecond
	// maxDoublings bounds a slow start's exponent, so that the pace stays
	// finite however long a slow start lasts unrefused.
	maxDoublings = 60
)

// RateMode is the rate controller's state.
type RateMode uint8

const (
	// RateUnlimited: no pace; requests leave as they come. The controller
	// only counts what is accepted, to learn from at the first refusal.
	RateUnlimited RateMode = iota
	// RateSlowStart: a throttle hold ended before anything was learned;
	// the pace starts at Ceiling (one request a second) and doubles every
	// slowStartDoubling until the next refusal sets a ceiling.
	RateSlowStart
	// RatePaced: a refusal set Ceiling; the pace grows from it.
	RatePaced
)

var rateModeNames = [...]string{"unlimited", "slow_start", "paced"}

func (m RateMode) String() string { return rateModeNames[m] }

// RateState is the rate controller's whole state: a plain value, which
// the transitions below take and return, and which can be copied, compared
// and stored. Rates are in items per second; ItemsPerRequest converts the
// additive step, counted in requests, into items.
type RateState struct {
	Mode RateMode
	// Ceiling is the pace at Since: learned at the last refusal
	// (RatePaced), or a slow start's first pace.
	Ceiling float64
	// Since is when the pace's curve began: the last cut, or the slow
	// start's beginning.
	Since time.Time
	// Next is when the next request may leave at the pace.
	Next time.Time
	// Epoch counts the cuts: a slot booked in another epoch is void.
	Epoch uint64
	// AcceptedRun is how many items were accepted since Since.
	AcceptedRun int
	// ItemsPerRequest is the size of the last request answered.
	ItemsPerRequest int
	// FirstAccepted is the first acceptance since the pace was last
	// unlimited.
	FirstAccepted time.Time
}

// Refusal is a throttled answer, as the rate controller learns from it.
type Refusal struct {
	// At is when the answer came, Sent when its request left.
	At, Sent time.Time
	// Items is the request's size.
	Items int
	// Probe is set when the request was the probe of a throttle hold.
	Probe bool
	// Recent is how many items were accepted within acceptWindow before
	// At (the measure of the first refusal).
	Recent int
}

// At is the state at now: a pace QuietPeriod after its last cut is
// forgotten and the destination is unlimited again.
func (s RateState) At(now time.Time, quiet time.Duration) RateState {
	if s.Mode == RateUnlimited || now.Sub(s.Since) < quiet {
		return s
	}
	return RateState{Epoch: s.Epoch, ItemsPerRequest: s.ItemsPerRequest}
}

// Rate is the pace at now in items per second, 0 when unlimited: in a
// slow start, Ceiling doubled every slowStartDoubling; when paced, Ceiling
// plus paceStepRequests requests a second for every second since Since,
// plus paceProbe of Ceiling times the square of those seconds.
func (s RateState) Rate(now time.Time) float64 {
	// (Callers may read the clock before the state was last changed: now
	// may be a little before Since.)
	sec := max(now.Sub(s.Since).Seconds(), 0)
	switch s.Mode {
	case RateSlowStart:
		return s.Ceiling * math.Exp2(min(sec/slowStartDoubling.Seconds(), maxDoublings))
	case RatePaced:
		return s.Ceiling*(1+paceProbe*sec*sec) + requestsToItems(paceStepRequests, s.ItemsPerRequest)*sec
	}
	return 0
}

// requestsToItems converts a rate in requests a second into items a second
// at itemsPerRequest (at least one).
func requestsToItems(requests float64, itemsPerRequest int) float64 {
	return requests * float64(max(itemsPerRequest, 1))
}

// Reserve books the next slot at the pace for a request of items items:
// the state with the slot booked, and when the request may leave (now
// when unlimited or ahead of the pace) and why.
func (s RateState) Reserve(now time.Time, items int) (RateState, time.Time, PaceSource) {
	at, source := now, PaceNone
	if s.Mode == RateUnlimited {
		return s, at, source
	}
	if s.Next.After(at) {
		at, source = s.Next, PaceRate
	}
	s.Next = at.Add(time.Duration(float64(items) / s.Rate(at) * float64(time.Second)))
	return s, at, source
}

// Accepted counts a request of items items the backend accepted.
func (s RateState) Accepted(now time.Time, items int) RateState {
	if s.FirstAccepted.IsZero() {
		s.FirstAccepted = now
	}
	s.AcceptedRun += items
	s.ItemsPerRequest = items
	return s
}

// Refused learns from a throttled answer. At the first refusal (from
// unlimited) the ceiling is what was accepted over the last acceptWindow,
// or since the first acceptance if that is more recent (over at least
// firstRefusalSpan); with nothing accepted there is nothing to learn yet.
// Later, a refusal of a request sent after the last cut cuts the pace to
// what was accepted since that cut over the time since (a token bucket is
// empty at both refusals, so that is its rate), and to at most paceCut of
// the pace of the moment, which was too much; a slow start's pace doubled
// away from what it had accepted, which is all there is to go by, and is
// not cut further. A request in flight with the one whose refusal made the
// last cut, and a hold's probe (its refusal only says the hold goes on),
// cut nothing. The ceiling is never below one request a second.
func (s RateState) Refused(r Refusal) RateState {
	s.ItemsPerRequest = r.Items
	floor := float64(max(r.Items, 1))
	switch s.Mode {
	case RateUnlimited:
		if r.Recent == 0 {
			return s
		}
		span := min(acceptWindow, max(firstRefusalSpan, r.At.Sub(s.FirstAccepted)))
		return s.restart(r.At, max(float64(r.Recent)/span.Seconds(), floor), RatePaced)
	case RatePaced:
		if r.Probe || !r.Sent.After(s.Since) {
			return s
		}
	}
	elapsed := max(r.At.Sub(s.Since), minCutElapsed).Seconds()
	cut := paceCut
	if s.Mode == RateSlowStart {
		cut = 1
	}
	ceiling := min(float64(s.AcceptedRun)/elapsed, cut*s.Rate(r.At))
	return s.restart(r.At, max(ceiling, floor), RatePaced)
}

// HoldEnded starts a slow start at one request of items items a second
// when a throttle hold ended (its probe was accepted) with nothing
// learned: what waited is not released all at once, since nothing says
// what the backend will take. A learned pace is kept.
func (s RateState) HoldEnded(now time.Time, items int) RateState {
	s.ItemsPerRequest = items
	if s.Mode != RateUnlimited {
		return s
	}
	return s.restart(now, float64(max(items, 1)), RateSlowStart)
}

// restart starts the pace's curve afresh at now from ceiling, in mode, and
// voids the slots booked so far.
func (s RateState) restart(now time.Time, ceiling float64, mode RateMode) RateState {
	s.Mode, s.Ceiling = mode, ceiling
	s.Since, s.Next, s.AcceptedRun = now, now, 0
	s.Epoch++
	return s
}
