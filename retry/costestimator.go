// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

// costWindow is how many observations costEstimator remembers.
const costWindow = 16

// costEstimator learns how much of a quota one request consumes, from how
// the remaining count (RateLimit's r, X-RateLimit-Remaining) falls: the unit
// of the quota is not given (spans, bytes or requests).
//
// A quota that refills while requests are sent (a token bucket) makes the
// count fall by less than the requests cost, and by nothing at all when the
// requests come exactly at the refill rate. So the estimate is the largest
// fall per request among the last 16 observations, not an average: it errs
// towards a higher cost, the side kind to the backend, and it still follows
// payloads that shrink, 16 observations later.
//
// Observations where the count does not fall are ignored: a rise is a reset
// (or a refill) and says nothing of the cost, and a count that stays put
// cannot be told from one the server has not updated yet. Negative counts
// and non-positive request numbers are ignored. The zero value is ready to
// use; it is not safe for concurrent use.
type costEstimator struct {
	falls [costWindow]float64 // per request, newest at falls[(n-1)%costWindow]
	n     int
}

// Observe records that the remaining count went from remainingBefore to
// remainingAfter over requests requests.
func (e *costEstimator) Observe(remainingBefore, remainingAfter int64, requests int) {
	if requests <= 0 || remainingBefore < 0 || remainingAfter < 0 || remainingAfter >= remainingBefore {
		return
	}
	e.falls[e.n%costWindow] = float64(remainingBefore-remainingAfter) / float64(requests)
	e.n++
}

// PerRequest is the estimated cost of one request, once something was
// observed.
func (e *costEstimator) PerRequest() (float64, bool) {
	if e.n == 0 {
		return 0, false
	}
	largest := 0.0
	for _, f := range e.falls[:min(e.n, costWindow)] {
		largest = max(largest, f)
	}
	return largest, true
}

// answerSpread is what the acceptances that came before any cost was
// learned showed: the highest and the lowest remaining counts, and how
// many acceptances. Answers to requests in flight together come in any
// order, so the fall between two of them says nothing of one request's
// cost; but once they are in, n acceptances that each counted one more
// request span n-1 requests' cost, whatever their order (less what a
// bucket refilled meanwhile, and more what other clients spent). A refused
// request is not counted in the quota, and its answer not in the spread.
type answerSpread struct {
	hi, lo float64
	n      int
}

// add records an answer's remaining count.
func (s *answerSpread) add(remaining float64) {
	if s.n == 0 || remaining > s.hi {
		s.hi = remaining
	}
	if s.n == 0 || remaining < s.lo {
		s.lo = remaining
	}
	s.n++
}

// PerRequest is the cost of one request the spread shows, once two
// answers showed different counts.
func (s answerSpread) PerRequest() (float64, bool) {
	if s.n < 2 || s.hi <= s.lo {
		return 0, false
	}
	return (s.hi - s.lo) / float64(s.n-1), true
}
