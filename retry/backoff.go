// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"time"
)

// maxWait is the longest time.Duration: every wait saturates there.
const maxWait = time.Duration(math.MaxInt64)

// backoffDelay is the wait after the n-th failure on the backoff path
// (n >= 1): InitialInterval x Multiplier^(n-1), no more than MaxInterval,
// plus jitter x Jitter (the config's), where jitter is a number in [0, 1).
//
// It saturates rather than wraps: whatever the config and n, the result is
// between 0 and the largest time.Duration. An n below 1 counts as 1, a
// negative interval as 0, and a multiplier that is not a number as one that
// has already reached MaxInterval.
func backoffDelay(c BackoffConfig, n int, jitter float64) time.Duration {
	ceiling := max(c.MaxInterval, 0)
	n = max(n, 1)
	d := ceiling
	// In float64, so that neither the power nor the product can wrap; a
	// product that is not below the ceiling (+Inf, NaN included) is the ceiling.
	base := float64(max(c.InitialInterval, 0)) * math.Pow(c.Multiplier, float64(n-1))
	if base < float64(ceiling) {
		d = time.Duration(base)
	}
	return addSaturating(d, scaleJitter(c.Jitter, jitter))
}

// scaleJitter scales bound by r in [0, 1). It saturates: r is clamped to [0, 1]
// (NaN counts as 0), a negative bound adds nothing, and the result is never
// above bound.
func scaleJitter(bound time.Duration, r float64) time.Duration {
	if bound <= 0 || !(r > 0) { // !(r > 0) also catches NaN
		return 0
	}
	if r >= 1 {
		return bound
	}
	// r x bound < bound in real numbers, but float64(bound) may round up
	// past it (to 2^63 for the largest bound): clamp before converting.
	j := r * float64(bound)
	if j >= float64(bound) {
		return bound
	}
	return time.Duration(j)
}

// addSaturating adds two non-negative durations, stopping at maxWait.
func addSaturating(a, b time.Duration) time.Duration {
	if a > maxWait-b {
		return maxWait
	}
	return a + b
}
