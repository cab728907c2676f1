package retry

import "math"

// DefaultCostAlpha is the weight CostEstimator gives one request's
// observation when its Alpha is not set.
const DefaultCostAlpha = 0.2

// CostEstimator learns how much of a quota one request consumes, from how
// the remaining count (RateLimit's r, X-RateLimit-Remaining) falls: the unit
// of the quota is not given (spans, bytes or requests). It is an
// exponentially weighted moving average of the fall per request.
//
// Observations where the count does not fall are ignored: a rise is a reset
// (or a refill) and says nothing of the cost, and a count that stays put
// cannot be told from one the server has not updated yet, so ignoring it
// errs towards a higher cost, the side kind to the backend. The caller
// should not observe across a reset it knows of (the fall would be
// understated). Negative counts and non-positive request numbers are
// ignored. The zero value is ready to use; it is not safe for concurrent
// use.
type CostEstimator struct {
	// Alpha is the weight of one request in (0, 1]; an observation
	// spanning n requests weighs like n observations of one request each,
	// 1-(1-Alpha)^n. Outside (0, 1] (zero included) DefaultCostAlpha is
	// used.
	Alpha float64

	estimate float64
	ok       bool
}

// Observe records that the remaining count went from remainingBefore to
// remainingAfter over requests requests.
func (e *CostEstimator) Observe(remainingBefore, remainingAfter int64, requests int) {
	if requests <= 0 || remainingBefore < 0 || remainingAfter < 0 || remainingAfter >= remainingBefore {
		return
	}
	perRequest := float64(remainingBefore-remainingAfter) / float64(requests)
	if !e.ok {
		e.estimate, e.ok = perRequest, true
		return
	}
	alpha := e.Alpha
	if !(alpha > 0 && alpha <= 1) {
		alpha = DefaultCostAlpha
	}
	weight := 1 - math.Pow(1-alpha, float64(requests))
	e.estimate = (1-weight)*e.estimate + weight*perRequest
}

// PerRequest is the estimated cost of one request, once something was
// observed.
func (e *CostEstimator) PerRequest() (float64, bool) {
	return e.estimate, e.ok
}
