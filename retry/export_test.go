// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"context"
	"fmt"
	"time"
)

// The package's own workings, under the names its external tests
// (package retry_test) use. None of them is part of the package's API
// (doc.go lists that).
type (
	Attempt       = attemptFacts
	State         = payloadState
	Slot          = paceSlot
	Refusal       = refusedAnswer
	RateState     = rateState
	RateMode      = rateMode
	CostEstimator = costEstimator
	AnswerSpread  = answerSpread
	Crowding      = crowding
)

const (
	RateUnlimited          = rateUnlimited
	RateSlowStart          = rateSlowStart
	RatePaced              = ratePaced
	NotCrowded             = notCrowded
	CrowdedFirst           = crowdedFirst
	CrowdedLearned         = crowdedLearned
	MinBackoffInterval     = minBackoffInterval
	MinWait                = minWait
	MaxRateLimitCount      = maxRateLimitCount
	MaxRateLimitFieldBytes = maxRateLimitFieldBytes
	MaxRateLimitPolicies   = maxRateLimitPolicies
	MaxRateLimitReset      = maxRateLimitReset
)

var (
	BackoffDelay    = backoffDelay
	Jitter          = scaleJitter
	Sleep           = sleepOn
	NewPacer        = newPacer
	ParseRetryAfter = parseRetryAfter
)

// Decide is decide: the pure decision on one attempt.
func (p Policy) Decide(s State, a Attempt) (State, Decision) { return p.decide(s, a) }

// State is snapshot: the rate controller's state as of now.
func (p *Pacer) State() RateState { return p.snapshot() }

// Run is RunItems for a payload of one item.
func (l *Loop) Run(ctx context.Context, send SendFunc) Outcome { return l.RunItems(ctx, 1, send) }

// SetRandom replaces the jitter source (a function returning [0, 1)).
func (l *Loop) SetRandom(r func() float64) { l.random = r }

// Hold makes the gate hold for reason until until, as a report from an
// attempt that passed an open gate would. Only tests use it, to set the scene.
func (g *Gate) Hold(reason HoldReason, until time.Time) Transition {
	g.mu.Lock()
	successes := g.successes
	g.mu.Unlock()
	return g.Report(Pass{Successes: successes}, false, reason, until)
}

// The pacer's bookkeeping, which the loop calls.
func (p *Pacer) Reserve(now time.Time, items int) Slot { return p.reserve(now, items) }
func (p *Pacer) Depart(now time.Time) Slot             { return p.depart(now) }
func (p *Pacer) Unanswered()                           { p.unanswered() }
func (p *Pacer) Current(slot Slot) bool                { return p.current(slot) }
func (p *Pacer) Accepted(now time.Time, items, inFlight int, rl RateLimit) bool {
	return p.accepted(now, now, items, inFlight, rl)
}
func (p *Pacer) Refused(r Refusal, rl RateLimit)              { p.refused(r, rl) }
func (p *Pacer) HoldEnded(now time.Time, items, failures int) { p.holdEnded(now, items, failures) }
func (p *Pacer) Observed(now time.Time, rl RateLimit)         { p.observed(now, rl) }

// AnsweredPending is answeredPending: a refused or unanswered request counted against a tentative concurrency limit.
func (s rateState) AnsweredPending() rateState { return s.answeredPending() }
func (p *Pacer) Lately(r Refusal) (bool, Crowding) {
	f := p.lately(r)
	return f.Accepted, f.Crowding
}

// LatelyUnlearned is whether lately reads the destination as one nothing
// is known of, for the hold a bare 429 begins (Policy).
func (p *Pacer) LatelyUnlearned(r Refusal) bool { return p.lately(r).Unlearned }

// BinomialTail is binomialTail, for its test.
var BinomialTail = binomialTail

// WindowRowStart is windowRowStart.
func (s RateState) WindowRowStart(r Refusal) time.Time { return s.windowRowStart(r) }

// CheckAnswer is checkAnswer.
func (s RateState) CheckAnswer(r Refusal) bool { return s.checkAnswer(r) }

// SetTuning runs every pacer with defaultTuning but for the values in set,
// named as the fields of pacerTuning (durations in seconds), until the
// function it returns puts the default back: the model's variants of the
// pacer (TestPacerVariants). No pacer may run while it changes them.
func SetTuning(set map[string]float64) (restore func(), err error) {
	t := defaultTuning
	seconds := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	for name, v := range set {
		switch name {
		case "firstBareHold":
			t.firstBareHold = seconds(v)
		case "paceCut":
			t.paceCut = v
		case "paceStepRequests":
			t.paceStepRequests = v
		case "paceProbe":
			t.paceProbe = v
		case "slowStartDoubling":
			t.slowStartDoubling = seconds(v)
		case "firstBareCut":
			t.firstBareCut = v
		case "firstBareSpan":
			t.firstBareSpan = seconds(v)
		case "windowCountedSlack":
			t.windowCountedSlack = v != 0
		case "firstBareAfter":
			t.firstBareAfter = v
		case "firstBarePlateau":
			t.firstBarePlateau = v
		case "windowShare":
			t.windowShare = v
		case "secondTake":
			t.secondTake = v
		case "windowPastSeen":
			t.windowPastSeen = v != 0
		case "windowCheck":
			t.windowCheck = v != 0
		case "windowPhase":
			t.windowPhase = v != 0
		case "windowPhaseHold":
			t.windowPhaseHold = v != 0
		case "windowChecks":
			t.windowChecks = int(v)
		case "windowConfirm":
			t.windowConfirm = int(v)
		case "windowCheckGap":
			t.windowCheckGap = seconds(v)
		case "secondWindows":
			t.secondWindows = v != 0
		case "windowSchedule":
			t.windowSchedule = v != 0
		case "rowMeasure":
			t.rowMeasure = v != 0
		case "rowAge":
			t.rowAge = seconds(v)
		case "rowRun":
			t.rowRun = v
		case "rowIntervals":
			t.rowIntervals = v
		case "runPlateau":
			t.runPlateau = v != 0
		case "answerSpread":
			t.answerSpread = v != 0
		case "rowKeep":
			t.rowKeep = v != 0
		case "cutFromFirstSlot":
			t.cutFromFirstSlot = v != 0
		case "bareMargin":
			t.bareMargin = v
		case "regainRequests":
			t.regainRequests = v
		case "minRegain":
			t.minRegain = seconds(v)
		case "bareProbe":
			t.bareProbe = v
		case "quietProbe":
			t.quietProbe = v
		case "quietShare":
			t.quietShare = v
		case "maxRegain":
			t.maxRegain = seconds(v)
		case "measureRequests":
			t.measureRequests = v
		case "firstCrowdedByOthers":
			t.firstCrowdedByOthers = v != 0
		case "unlearnedTentative":
			t.unlearnedTentative = v != 0
		case "shedMeasureRequests":
			t.shedMeasureRequests = v
		case "minBareMeasure":
			t.minBareMeasure = seconds(v)
		case "measuredRequests":
			t.measuredRequests = v
		case "minMeasured":
			t.minMeasured = seconds(v)
		case "maxBackground":
			t.maxBackground = v
		case "backgroundMemory":
			t.backgroundMemory = v
		case "backgroundAlpha":
			t.backgroundAlpha = v
		case "streakGrowth":
			t.streakGrowth = v
		case "maxStreakGrowths":
			t.maxStreakGrowths = int(v)
		case "minBackgroundAnswers":
			t.minBackgroundAnswers = v
		case "strayShare":
			t.strayShare = v
		case "paceMargin":
			t.paceMargin = v
		case "windowHolds":
			t.windowHolds = v != 0
		case "answerCap":
			t.answerCap = v != 0
		case "slowStartFromSend":
			t.slowStartFromSend = v != 0
		case "windowCounts":
			t.windowCounts = v != 0
		case "windowRow":
			t.windowRow = int(v)
		case "windowRowProbes":
			t.windowRowProbes = v != 0
		case "windowPastDefault":
			t.windowPastDefault = v != 0
		case "windowProbes":
			t.windowProbes = v != 0
		case "windowClosed":
			t.windowClosed = seconds(v)
		case "windowLastRefusal":
			t.windowLastRefusal = seconds(v)
		case "windowSlack":
			t.windowSlack = seconds(v)
		case "backgroundStreak":
			t.backgroundStreak = int(v)
		default:
			return nil, fmt.Errorf("no tuning value %q", name)
		}
	}
	tuning = t
	return func() { tuning = defaultTuning }, nil
}

// BareTuningDefaults are the default values of the bare 429's law, named
// as SetTuning names them (durations in seconds): the centre of the
// random search's ranges (TestPacerSearch).
func BareTuningDefaults() map[string]float64 {
	t := defaultTuning
	return map[string]float64{
		"firstBareHold": t.firstBareHold.Seconds(), "firstBareCut": t.firstBareCut, "bareMargin": t.bareMargin,
		"regainRequests": t.regainRequests, "minRegain": t.minRegain.Seconds(), "maxRegain": t.maxRegain.Seconds(),
		"bareProbe": t.bareProbe, "quietProbe": t.quietProbe, "measureRequests": t.measureRequests,
		"minBareMeasure": t.minBareMeasure.Seconds(), "strayShare": t.strayShare, "streakGrowth": t.streakGrowth,
		"maxStreakGrowths": float64(t.maxStreakGrowths), "backgroundAlpha": t.backgroundAlpha,
		"backgroundMemory": t.backgroundMemory,
	}
}

// Add is add.
func (s *answerSpread) Add(remaining float64) { s.add(remaining) }
