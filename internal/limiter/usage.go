// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package limiter

import "time"

// Served is one request as a backend behind a limiter answered it.
type Served struct {
	Request
	// Arrival is when the limiter decided it; Done when its answer left
	// (for an accepted request of an in-flight limiter, the end of its
	// time open).
	Arrival, Done time.Time
	Accepted      bool
}

// Allowed is what the limiter allows over a span of d, in its Unit: for
// the token buckets and GCRA the burst plus the rate times d; for the
// windows one window's limit plus the window's rate (Limit per Window)
// times d, the same shape with a window's worth as the burst; for the
// in-flight limit Limit × d request-seconds. 0 for the kinds without a
// quota.
//
// A bucket that starts full allows exactly that; a fixed or sliding window
// allows it on average over the phase of the windows, give or take one
// window's limit over the whole span (so spans of many windows read
// best).
func (s Spec) Allowed(d time.Duration) float64 {
	if d < 0 {
		d = 0
	}
	t := d.Seconds()
	switch s.Kind {
	case TokenItems, TokenBytes, GCRA:
		return s.burst() + s.Rate*t
	case FixedWindow, SlidingWindow:
		return float64(s.Limit) * (1 + t/s.Window.Seconds())
	case InFlight:
		return float64(s.Limit) * t
	}
	return 0
}

// Used is the share of the limit used from from to to: what the accepted
// requests arriving in [from, to] counted in the limiter's Unit (items,
// wire bytes, requests) over Allowed(to - from); for the in-flight limit,
// the request-seconds accepted requests were open within [from, to] over
// Limit × (to - from). ok is false for the kinds without a quota and when
// nothing is allowed (an empty span of an in-flight limit).
func (s Spec) Used(served []Served, from, to time.Time) (float64, bool) {
	allowed := s.Allowed(to.Sub(from))
	if !s.Kind.HasQuota() || !(allowed > 0) {
		return 0, false
	}
	var used float64
	for _, r := range served {
		if !r.Accepted {
			continue
		}
		if s.Kind == InFlight {
			start, end := maxTime(r.Arrival, from), r.Done
			if to.Before(end) {
				end = to
			}
			if end.After(start) {
				used += end.Sub(start).Seconds()
			}
			continue
		}
		if r.Arrival.Before(from) || r.Arrival.After(to) {
			continue
		}
		switch s.Kind {
		case TokenItems:
			used += float64(r.Items)
		case TokenBytes:
			used += float64(r.Bytes)
		default:
			used++
		}
	}
	return used / allowed, true
}
