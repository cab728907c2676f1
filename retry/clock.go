// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"context"
	"time"
)

// Clock is where the retry loop reads time and waits. Tests inject a fake one
// so that nothing sleeps for real.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a function
	// that releases the timer early.
	After(d time.Duration) (<-chan time.Time, func())
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// After starts a real timer.
func (RealClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// sleepOn waits d on clock, or until ctx is done; it returns ctx.Err() then.
func sleepOn(ctx context.Context, clock Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	ch, stop := clock.After(d)
	defer stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
		return nil
	}
}
