// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"time"
)

// What a refused answer does to the rate controller's state: Refused, and
// for a refusal without a hint the bare law (bareCut) and the spacing of
// refusals in a row (spaced).

// Refused learns from a refused answer.
//
// A refusal that came with more requests in flight than any the backend
// accepted lately (and more than one) says the backend takes only so many
// at once: the concurrency limit becomes the most it accepted, and the
// pace is not cut.
//
// A refusal with a Retry-After: at the first (from unlimited) the ceiling
// is what was accepted over the last acceptWindow, or since the first
// acceptance if that is more recent (over at least firstRefusalSpan); with
// nothing accepted there is nothing to learn yet, and with fewer than
// measuredRequests requests accepted the ceiling only starts a slow start.
// Later, a refusal of a request sent after the last cut cuts the pace to a
// paceMargin below what was accepted since that cut over the time since (a
// token bucket is empty at both refusals, so that is its rate), and to at
// most paceCut of the pace of the moment, which was too much; a slow
// start's pace doubled away from what it had accepted since its first
// request left (slowStartFromSend), which is all there is to go by, and
// is not cut further. A
// request in flight with the one whose refusal made the last cut, and a
// hold's probe (its refusal only says the hold goes on), cut nothing. The
// ceiling is never below one request a second.
//
// A bare refusal: see bareCut.
func (s rateState) Refused(r refusedAnswer) rateState {
	s.ItemsPerRequest = r.Items
	if checked, ok := s.checkRefused(r); ok {
		// A check's refusal: expected of a window whose take was reached.
		return checked.answeredPending()
	}
	if s.WindowTake > 0 {
		// The schedule was wrong: back to the pace at the window's rate.
		rate := s.windowRate()
		s = s.endSchedule().bare(r.At, rate, rate, true)
	}
	if r.Bare && !r.Shed {
		if r.Sent.After(s.LastRefusal) && !r.Quota {
			if s.Streak == 0 {
				s.RowStartRun, s.RowWindow, s.RowRunStart = s.Run, s.WindowHold(), s.RunStart
			}
			s.Streak++
			if s.Streak == 2 {
				s.StreakStart = s.LastRefusal
			}
		}
		s.LastRefusal = r.At
		s = s.background(r.At, true)
	}
	switch kind, limit := s.Crowding(r); kind {
	case crowdedLearned:
		// More in flight than the backend was seen to accept at once.
		s = s.answeredPending()
		if c := s.ConcurrencyAt(r.At); c == 0 || limit < c {
			s.Concurrency, s.ConcurrencySince, s.Tentative, s.Pending = limit, r.At, false, 0
		}
		return s
	case crowdedFirst:
		// Nothing accepted yet, others in flight: at most those ahead of
		// it at once, until their answers tell.
		s = s.answeredPending()
		if c := s.ConcurrencyAt(r.At); c == 0 || limit < c {
			s.Concurrency, s.ConcurrencySince, s.Tentative, s.Pending = limit, r.At, true, r.Others
		}
		return s
	}
	s = s.answeredPending().uncrowdedRefusal(r)
	if tuning.secondWindows && r.Bare && !r.Shed && !r.Quota {
		s = s.secondRefused(r)
	}
	if s.Unlearned() {
		switch {
		case !r.Bare || r.Shed:
			s.BareStart = time.Time{}
		case s.BareStart.IsZero():
			s.BareStart = r.At
		}
	}
	if s.Mode == ratePaced && (r.Probe || !r.Sent.After(s.Since)) {
		return s
	}
	floor := float64(max(r.Items, 1))
	if r.Bare && s.Mode != rateSlowStart {
		return s.bareCut(r, floor).spaced(r)
	}
	elapsed := max(r.At.Sub(s.Since), minCutElapsed)
	var ceiling float64
	switch s.Mode {
	case rateUnlimited:
		if r.Recent == 0 {
			return s
		}
		span := min(acceptWindow, max(firstRefusalSpan, r.At.Sub(s.FirstAccepted)))
		ceiling = float64(r.Recent) / span.Seconds()
		if float64(r.Recent) < tuning.measuredRequests*floor {
			// Fewer than measuredRequests accepted: a guess from a burst,
			// not the backend's rate. A slow start from it (doubling
			// every slowStartDoubling until the next refusal) finds the
			// rate in seconds, where the additive climb takes tens.
			return s.restart(r.At, max(ceiling, floor), rateSlowStart)
		}
	case rateSlowStart:
		if tuning.slowStartFromSend && !s.FirstSlot.IsZero() {
			elapsed = max(r.At.Sub(s.FirstSlot), minCutElapsed)
		}
		ceiling = min(float64(s.AcceptedRun)/elapsed.Seconds(), s.Rate(r.At))
	default:
		ceiling = min((1-tuning.paceMargin)*float64(s.AcceptedRun)/elapsed.Seconds(), tuning.paceCut*s.Rate(r.At))
	}
	return s.restart(r.At, max(ceiling, floor), ratePaced)
}

// bareCut is Refused for a bare refusal of a request sent after the last
// cut (a 429 without a usable Retry-After, or a 502, 503 or 504 while the
// backend takes others). With nothing accepted lately there is nothing to
// learn. Within measureRequests requests of a bare cut, it is too soon to
// tell what the backend takes at the new pace: no cut; nor does a stray
// refusal while the pace climbs back to a plateau not measured (stray,
// strayShare). The first refusal (from unlimited), and any 502, 503 or
// 504, hold the pace a firstBareCut below the rate requests were going at
// and climb back to it: that slows a
// shedding backend without halving the pace at every cut. A 429 at a pace
// below a measured accepted rate cuts nothing: no limit refuses there, so
// the backend refuses a share whatever the pace (its background share is
// measured there); nor does one past it when the refusals since the last
// cut are not improbable for that share (backgroundAlpha).
// Otherwise the pace drops a bareMargin below the rate the backend
// accepted since the last cut (over the last acceptWindow when it accepted
// nothing since), grossed up by the background share, and climbs back to
// it over Regain. With nothing accepted since the last cut nor within
// acceptWindow (a 10 s window that ran out seconds ago), nothing is cut:
// measured over the last acceptWindow the pace would fall to the floor,
// one request a second, and take tens of seconds to climb back once the
// backend takes requests again; the refusal holds the destination
// instead (Policy), and spaced slows the requests that still go.
func (s rateState) bareCut(r refusedAnswer, floor float64) rateState {
	if s.Mode == rateUnlimited && r.Recent == 0 {
		return s
	}
	elapsed := r.At.Sub(s.Since)
	measure := tuning.measureRequests
	if r.Shed {
		measure = tuning.shedMeasureRequests
	}
	if s.Mode != rateUnlimited && s.Bare && elapsed < max(tuning.minBareMeasure, time.Duration(measure*float64(interval(s.ItemsPerRequest, s.Ceiling)))) {
		// Too soon to tell what the backend takes at this pace.
		return s
	}
	if s.stray(r) {
		return s
	}
	if s.Mode == rateUnlimited || r.Shed {
		// The first, and a 502, 503 or 504 (shedding is no limit to
		// learn): the pace holds a firstBareCut below the rate requests
		// were going at, and climbs back to it.
		//
		// The requests answered in the span count the first too, which
		// overstates the rate by one request when the span begins at the
		// first acceptance (three answers 0.25 s apart: 6 a second, not
		// 4). Counted from after the first, the limiter model met fewer
		// goals (the 1 s window, the sporadic cell and the 4 requests/s
		// bucket lost seeds, with firstBareCut 0.05 or 0): firstBareCut
		// was chosen with the overstatement.
		span := s.span(r.At, minBareSpan, acceptWindow).Seconds()
		sent := max((1-tuning.firstBareCut)*float64(r.RecentSent)/span, floor)
		ceiling, plateau := sent, sent/(1-tuning.firstBareCut)
		if !r.Shed {
			// The first bare 429's variants (off in the default).
			if tuning.firstBareSpan > 0 {
				accepted := float64(r.Recent) / s.span(r.At, tuning.firstBareSpan, acceptWindow).Seconds()
				ceiling = max(min(ceiling, (1-tuning.firstBareCut)*accepted), floor)
			}
			if tuning.firstBareAfter > 0 {
				after := float64(r.Recent)
				if r.At.Sub(s.FirstAccepted) <= acceptWindow {
					after -= tuning.firstBareAfter * float64(r.Items)
				}
				ceiling = max(min(ceiling, (1-tuning.firstBareCut)*after/span), floor)
			}
			if tuning.firstBarePlateau > 0 {
				plateau = ceiling / (1 - tuning.firstBareCut)
			}
		}
		return s.bare(r.At, ceiling, plateau, false)
	}
	if tuning.rowKeep && s.AcceptedRun == 0 && s.refusedWhatever(r.At) {
		// Deep in a row that refuses whatever the pace: its first
		// refusal cut, the spacing slows the requests, the hold follows
		// (Policy).
		return s
	}
	if s.AcceptedRun == 0 && r.Recent == 0 {
		// Nothing accepted since the last cut, nor within acceptWindow:
		// the refusal holds the destination (Policy), and says nothing of
		// the rate the backend takes once it takes requests again.
		return s
	}
	bg := s.Background()
	if s.Measured && (s.Rate(r.At) <= s.Plateau || binomialTail(s.Answered, s.RefusedRun, bg) >= tuning.backgroundAlpha) {
		// Below the rate the backend took, or refused as often as the
		// background share may well give: not a limit.
		return s
	}
	// What the backend took since the last cut (between two refusals,
	// where a bucket is empty at both); when it took nothing since (a
	// window that ran out), over the last acceptWindow. Only a run of at
	// least measuredRequests requests over at least minMeasured says
	// where a limit is: a window's start, or a bucket's burst, lets more
	// through for a moment.
	accepted := float64(r.Recent) / s.span(r.At, minBareSpan, acceptWindow).Seconds()
	if s.AcceptedRun > 0 {
		span := elapsed
		if tuning.cutFromFirstSlot && !s.FirstSlot.IsZero() {
			// Silence before the curve's first request, past the one
			// interval at its ceiling it was booked for, is not the
			// backend's rate.
			span = min(span, max(r.At.Sub(s.FirstSlot.Add(-interval(s.ItemsPerRequest, s.Ceiling))), minCutElapsed))
		}
		accepted = float64(s.AcceptedRun) / span.Seconds()
	}
	measured := s.longMeasure(r.At)
	accepted = max(accepted/(1-bg), floor)
	s.BackgroundAnswered *= tuning.backgroundMemory
	s.BackgroundRefused *= tuning.backgroundMemory
	plateau := accepted
	if tuning.runPlateau && s.AcceptedRun == 0 && !s.RowWindow {
		// Deep in a row (runPlateau): the pace is cut, its plateau is
		// what the backend took before the row.
		plateau = max(plateau, s.runRate())
	}
	return s.bare(r.At, min((1-tuning.bareMargin)*accepted, s.Rate(r.At)), plateau, measured)
}

// longMeasure says whether what was accepted since the last cut, at at,
// is long enough a measure to say where a limit is: at least
// measuredRequests requests over at least minMeasured.
func (s rateState) longMeasure(at time.Time) bool {
	return float64(s.AcceptedRun) >= tuning.measuredRequests*float64(max(s.ItemsPerRequest, 1)) && at.Sub(s.Since) >= tuning.minMeasured
}

// stray says whether a bare refusal is a stray one (strayShare): the pace
// climbs back below a plateau that was not measured, the refusal is the
// first in a row, at most strayShare of the answers since the cut were
// refused, and what was accepted since is too short a measure.
func (s rateState) stray(r refusedAnswer) bool {
	if s.Mode != ratePaced || !s.Bare || s.Measured || r.Shed || s.Streak > 1 || s.Rate(r.At) > s.Plateau {
		return false
	}
	return float64(s.RefusedRun) <= tuning.strayShare*float64(s.Answered) && !s.longMeasure(r.At)
}

// span is how long before at a measure over window reaches: window, or
// since the first acceptance when that is more recent, and at least least.
func (s rateState) span(at time.Time, least, window time.Duration) time.Duration {
	return min(window, max(least, at.Sub(s.FirstAccepted)))
}

// bare starts the curve of a bare cut at now: from ceiling back to plateau
// over Regain, and past it after.
func (s rateState) bare(now time.Time, ceiling, plateau float64, measured bool) rateState {
	s = s.restart(now, ceiling, ratePaced)
	s.Bare, s.Plateau, s.Measured = true, max(plateau, ceiling), measured
	s.Regain = min(max(tuning.minRegain, time.Duration(tuning.regainRequests*float64(interval(s.ItemsPerRequest, s.Plateau)))), tuning.maxRegain)
	// The refusal shows the backend at its limit now: the next request
	// leaves one interval later.
	s.Next = now.Add(interval(s.ItemsPerRequest, ceiling))
	return s
}

// spaced pushes the next slot out after a bare 429 that follows another
// in a row (Streak): to streakGrowth^(Streak-1) intervals at the pace
// after it (at most streakGrowth^maxStreakGrowths), voiding the slots
// booked before, so that a backend that refuses everything for now is
// asked less and less often until it accepts again. The next slot is that
// one even when slots were booked past it: a backlog books them one
// interval apart, and left booked they would leave one interval apart
// into the backend that refuses them (their payloads pass the gate again
// and book from the new slot on).
func (s rateState) spaced(r refusedAnswer) rateState {
	if s.Streak < 2 || s.Mode != ratePaced || r.Shed {
		return s
	}
	k := float64(min(s.Streak-1, tuning.maxStreakGrowths))
	s.Next = r.At.Add(time.Duration(float64(interval(s.ItemsPerRequest, s.Rate(r.At))) * math.Pow(tuning.streakGrowth, k)))
	s.Epoch++
	return s
}

// runRate is the rate, in items a second, the backend accepted over the
// run of acceptances before the row of bare 429s (Streak two or more) that
// a refusal goes on: from the run's first acceptance to the row's first
// refusal, when that run is a long measure (measuredRequests requests over
// at least minMeasured); zero otherwise.
func (s rateState) runRate() float64 {
	span := s.StreakStart.Sub(s.RowRunStart)
	if s.Streak < 2 || s.RowRunStart.IsZero() || float64(s.RowStartRun) < tuning.measuredRequests || span <= 0 || span < tuning.minMeasured {
		return 0
	}
	return requestsToItems(float64(s.RowStartRun)/span.Seconds(), s.ItemsPerRequest)
}
