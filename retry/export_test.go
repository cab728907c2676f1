// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"context"
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
	return p.accepted(now, items, inFlight, rl)
}
func (p *Pacer) Refused(r Refusal, rl RateLimit)      { p.refused(r, rl) }
func (p *Pacer) HoldEnded(now time.Time, items int)   { p.holdEnded(now, items) }
func (p *Pacer) Observed(now time.Time, rl RateLimit) { p.observed(now, rl) }

// AnsweredPending is answeredPending: a refused or unanswered request counted against a tentative concurrency limit.
func (s rateState) AnsweredPending() rateState     { return s.answeredPending() }
func (p *Pacer) Lately(r Refusal) (bool, Crowding) { return p.lately(r) }
