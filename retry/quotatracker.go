// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"time"
)

// How the quota tracker waits.
const (
	// quotaSlack is how much more of the quota than a request's cost a
	// request waits for when the quota comes back as it goes (the clocks'
	// and the network's slack).
	quotaSlack = 0.05
	// resetAnswerLimit is the longest requests wait for the answer to the
	// first request after a quota's reset; without it by then they stop
	// waiting for it.
	resetAnswerLimit = time.Second
	// QuotaHoldBound is the longest the RateLimit headers alone hold
	// requests back: then one request goes against them, alone, and its
	// answer tests them. Accepted, it shows them wrong (a quota that says
	// nothing is left while the backend takes everything): they are
	// ignored until the backend next refuses a request. Refused (429), it
	// hands the wait to the server's Retry-After.
	QuotaHoldBound = 5 * time.Second
	// maxResetFall bounds how many times what a request was seen to cost
	// the fall from a whole quota to the first answer after a reset may be
	// and still be taken for one request's cost.
	maxResetFall = 4
)

// quotaTracker follows the quota that RateLimit headers announce: what is
// left, when it is whole again, whether it comes back as it goes (a token
// bucket) or only at its reset (a window), and what a request costs in its
// unit. It also counts the requests in flight, whose answers are not yet
// in. It reads no clock and takes no lock: the Pacer does both.
type quotaTracker struct {
	quota       RateLimit // the last answer's headers
	remaining   float64   // local estimate at remainingAt, in the quota's unit
	remainingAt time.Time
	resetAt     time.Time // when the quota is whole again
	cost        costEstimator
	spread      answerSpread // the answers' counts while no cost is learned
	lastQuota   float64      // remaining in the previous answer, -1 if none
	lastAnswer  time.Time    // when the previous answer came
	refill      float64      // units per second the quota comes back at, once seen to (0: at its reset)
	burst       float64      // what a bucket holds at most, when less than its quota (0: the quota)
	outstanding int          // requests that left and have no answer yet
	overlapped  bool         // two or more were in flight at once since none was
	afterReset  time.Time    // when the first request after a reset went out; the others wait for its answer
	heldSince   time.Time    // since when the headers have held requests back (zero: they do not)
	testing     bool         // a request left against the headers, alone; its answer tests them
	distrusted  bool         // the headers were shown wrong: ignored until the backend refuses a request
}

func newQuotaTracker() quotaTracker { return quotaTracker{lastQuota: -1} }

// depart is asked when a request is about to leave at now. When the
// remaining quota will not cover it, it returns when the quota will (never
// later than the quota's reset, nor than now + maxWait) and false; with
// untilAnswer set, it waits for an answer to a request in flight first,
// and the time returned bounds that wait. Otherwise it returns now and
// true and counts the request as gone, so that requests leaving together
// do not all count on the same remainder.
func (q *quotaTracker) depart(now time.Time, maxWait time.Duration) (at time.Time, untilAnswer, ok bool) {
	if q.distrusted || !q.quota.Present || q.lastQuota < 0 {
		// Nothing holds it back, but it is counted in flight, as its
		// answer will be counted off.
		q.leave()
		return now, false, true
	}
	cost := q.requestCost()
	if limit := now.Add(maxWait); q.resetAt.After(limit) {
		// No pacing is longer than retry_after::max: a reset announced
		// further away is taken to come then.
		q.resetAt = limit
	}
	if q.refill == 0 && !q.resetAt.IsZero() && !q.resetAt.After(now) {
		// A window was reset: whole again, as far as we know. One request
		// goes first; its answer tells what is left and what a request
		// costs before the others follow.
		q.remaining, q.remainingAt, q.resetAt = q.size()-cost, now, time.Time{}
		q.leave()
		q.afterReset, q.heldSince = now, time.Time{}
		return now, false, true
	}
	if !q.afterReset.IsZero() && q.outstanding > 0 && now.Sub(q.afterReset) < resetAnswerLimit {
		return q.afterReset.Add(resetAnswerLimit), true, false
	}
	avail := q.available(now)
	if avail >= cost || !q.resetAt.After(now) {
		q.remaining, q.remainingAt = avail-cost, now
		q.leave()
		q.heldSince = time.Time{}
		return now, false, true
	}
	if q.heldSince.IsZero() {
		q.heldSince = now
	}
	if now.Sub(q.heldSince) >= QuotaHoldBound && q.outstanding == 0 {
		// Held this long by the headers alone: one request goes against
		// them, alone, so that its answer is known to be its own.
		q.remaining, q.remainingAt = avail-cost, now
		q.leave()
		q.heldSince, q.testing = now, true
		return now, false, true
	}
	at = q.resetAt
	if q.refill > 0 {
		// It comes back as it goes: until enough has, and a little more.
		wait := time.Duration((cost*(1+quotaSlack) - avail) / q.refill * float64(time.Second))
		at = minTime(now.Add(wait), q.resetAt)
	}
	at = minTime(minTime(at, now.Add(maxWait)), q.heldSince.Add(QuotaHoldBound))
	if !at.After(now) {
		// The bound has passed, but requests are in flight: the test
		// waits for their answers.
		return now.Add(resetAnswerLimit), true, false
	}
	// Requests in flight were counted off what is left, but the backend
	// may have counted some of them in the answers already in (answers
	// come in any order): the next answer may show the quota not spent.
	return at, q.outstanding > 0, false
}

// requestCost is what a request costs in the quota's unit: as learned,
// and one unit until it is (the unit may be requests). Requests in flight
// are counted at it both when they leave and when an answer that does not
// count them comes (counted at nothing there, they let one request too
// many go past a spent quota: docs/benchmarks.md, "The model against the
// real matrix, and a network's round trip").
func (q *quotaTracker) requestCost() float64 {
	if c, ok := q.cost.PerRequest(); ok {
		return c
	}
	return 1
}

// leave counts a request that leaves.
func (q *quotaTracker) leave() {
	q.outstanding++
	if q.outstanding > 1 {
		q.overlapped = true
	}
}

// answered counts an answer, or a request that got none: one request
// fewer in flight. Once none is, requests are alone again.
func (q *quotaTracker) answered() {
	q.outstanding = max(0, q.outstanding-1)
	if q.outstanding == 0 {
		q.overlapped = false
	}
}

// available is the quota left at t, as far as the answers and the requests
// that left since tell.
func (q *quotaTracker) available(t time.Time) float64 {
	avail := q.remaining
	if d := t.Sub(q.remainingAt); d > 0 && q.refill > 0 {
		avail = min(q.size(), avail+q.refill*d.Seconds())
	}
	return avail
}

// unanswered records that a request that left got no answer (its
// connection failed).
func (q *quotaTracker) unanswered() {
	q.answered()
	q.afterReset = time.Time{}
	q.testing = false
}

// answer is what became of a request, for observe.
type answer int

const (
	answerOther     answer = iota // neither accepted nor throttled
	answerAccepted                // a 2xx
	answerThrottled               // a 429, or a usable Retry-After
)

// observe takes an answer: one request fewer in flight, and, when headers
// is set, the quota its RateLimit headers report. It learns how much one
// request costs in the quota's unit from how the remaining count fell since
// the previous answer, and whether the quota comes back as it goes (a token
// bucket: the count rose before the announced reset) or only at its reset
// (a window). Of a bucket it credits the refill, at the policy's q/w, both
// to what a request cost and to what is left as time passes.
//
// The answer to a request sent against the headers (see QuotaHoldBound)
// tests them: accepted, they are distrusted, and observe reports true (once
// for each time they are); a throttle refusal makes them trusted again.
func (q *quotaTracker) observe(now time.Time, rl RateLimit, headers bool, a answer) (distrusted bool) {
	alone := !q.overlapped                   // no two requests were in flight at once since none was: none with this one
	first := !q.afterReset.IsZero() && alone // the answer to the first request after a reset
	q.answered()
	q.afterReset = time.Time{}
	switch {
	case a == answerThrottled:
		q.distrusted = false
	case a == answerAccepted && q.testing && !q.distrusted:
		q.distrusted, q.heldSince, distrusted = true, time.Time{}, true
	}
	q.testing = false
	if !headers || !rl.Present {
		return distrusted
	}
	pol, ok := rl.Binding(nil)
	if !ok || !pol.HasRemaining {
		return distrusted
	}
	remaining := float64(pol.Remaining)
	size := math.Inf(1)
	if pol.HasQuota {
		size = float64(pol.Quota)
	}
	switch {
	case first && pol.HasQuota:
		// The quota was whole at the reset, and one request was counted;
		// unless the fall is more than maxResetFall times what requests
		// were seen to cost: then the quota never comes back whole (a
		// bucket whose remaining count its burst caps below the quota).
		// It is a bucket that comes back as it goes, at q/w, and holds
		// at most what this answer shows plus a request.
		// Before any answer came alone, the answers to the requests in
		// flight together tell the cost by their spread: without it, a
		// bucket's first fall after its reset, which its burst caps, was
		// taken for the cost of one request (tens of requests' worth:
		// a request a reset, a second, for good).
		c, ok := q.cost.PerRequest()
		if !ok && tuning.answerSpread {
			c, ok = q.spread.PerRequest()
		}
		q.spread = answerSpread{}
		switch {
		case !ok || float64(pol.Quota-pol.Remaining) <= maxResetFall*c:
			q.cost.Observe(pol.Quota, pol.Remaining, 1)
		case pol.Window > 0:
			q.refill = size / pol.Window.Seconds()
			q.burst = remaining + c
		}
	case q.lastQuota >= 0:
		// (Only an answer to a request that was alone in flight shows
		// it: answers to requests in flight together come in any order.)
		if alone && remaining > q.lastQuota && now.Before(q.resetAt) && pol.HasQuota && pol.Window > 0 {
			q.refill = size / pol.Window.Seconds()
		}
		credit := 0.0
		if d := now.Sub(q.lastAnswer); d > 0 && q.refill > 0 {
			credit = min(q.refill*d.Seconds(), math.Max(0, size-q.lastQuota))
		}
		// Between two answers to requests that were not in flight
		// together, one request was counted. (Answers to requests in
		// flight together may come in another order than the backend
		// counted them.)
		if alone {
			q.cost.Observe(int64(q.lastQuota+credit), pol.Remaining, 1)
		}
	}
	if _, ok := q.cost.PerRequest(); !ok && !first && a == answerAccepted {
		// (A refused request is not counted in the quota.)
		q.spread.add(remaining)
	}
	// Answers to requests in flight together come in any order: one that
	// shows more left than the answer before it, before the reset, is
	// older than that one, and adds nothing to what was counted since.
	stale := !alone && q.lastQuota >= 0 && remaining > q.lastQuota && now.Before(q.resetAt)
	q.quota, q.lastAnswer = rl, now
	if !stale {
		q.lastQuota = remaining
	}
	// Requests that left after this one are not counted in its answer.
	// Of an older answer (stale), a window's count only falls until its
	// reset: the lowest count holds (lastQuota), less the requests still
	// in flight (none, once every answer is in: then what is left is known
	// again); a bucket's is taken at its lowest.
	left := q.lastQuota - q.requestCost()*float64(q.outstanding)
	if stale && q.refill > 0 {
		left = min(remaining-q.requestCost()*float64(q.outstanding), q.available(now))
	}
	q.remaining, q.remainingAt = left, now
	switch {
	case pol.HasReset:
		q.resetAt = now.Add(pol.Reset)
	case pol.Window > 0:
		q.resetAt = now.Add(pol.Window)
	default:
		q.resetAt = time.Time{}
	}
	return distrusted
}

// size is the binding policy's quota (or what its bucket was seen to hold
// at most), +Inf when none is announced.
func (q *quotaTracker) size() float64 {
	size := math.Inf(1)
	if pol, ok := q.quota.Binding(nil); ok && pol.HasQuota {
		size = float64(pol.Quota)
	}
	if q.burst > 0 {
		size = min(size, q.burst)
	}
	return size
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
