// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

// The kept pace's workings (pacekeep.go), under the names its external
// tests use.
var KeptOf = keptOf

// Resumed is resumed: the state a fresh pacer resumes from k at now.
func (k KeptPace) Resumed(now time.Time, quiet time.Duration) (RateState, bool) {
	return k.resumed(now, quiet)
}

// WorthKeeping reports whether a change from a to b is one the pacer's
// watchers are told of (keptCurve).
func WorthKeeping(a, b RateState) bool { return curveOf(a) != curveOf(b) }
