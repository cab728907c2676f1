// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// A hold kept from a previous process is restored with its end: nobody
// passes before it, then one probe. A gate that has heard from its
// destination, or holds already, is not changed by it.
func TestGateRestore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := retrytest.NewClock(t0)
		g := retry.NewGate(clock)
		require.True(t, g.Restore(retry.Hold{Reason: retry.HoldUnauthorized, Until: t0.Add(30 * time.Second), Failures: 2}))
		reason, remaining := g.State()
		assert.Equal(t, retry.HoldUnauthorized, reason)
		assert.Equal(t, 30*time.Second, remaining)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var blocked atomic.Int32
		results := senders(ctx, g, 3, time.Time{}, &blocked)
		synctest.Wait()
		assert.Empty(t, passed(results), "held as before the restart")
		clock.Advance(30 * time.Second)
		synctest.Wait()
		probe := passed(results)
		require.Len(t, probe, 1, "one probe at the hold's end")
		assert.Equal(t, retry.HoldUnauthorized, probe[0].pass.Held)
		assert.Equal(t, 2, probe[0].pass.HoldFailures, "the count of holds in a row is kept")
		g.Report(probe[0].pass, true, retry.HoldNone, time.Time{})
		synctest.Wait()
		assert.Len(t, passed(results), 2)

		assert.False(t, g.Restore(retry.Hold{Reason: retry.HoldThrottle, Until: t0.Add(time.Hour)}), "heard from: a kept hold is stale")
		holding := retry.NewGate(clock)
		holding.Hold(retry.HoldOutage, t0.Add(time.Minute))
		assert.False(t, holding.Restore(retry.Hold{Reason: retry.HoldThrottle, Until: t0.Add(time.Hour)}))
	})
}

// A hold whose end passed while the collector was down is restored as a
// probe: the next sender goes alone.
func TestGateRestorePastHoldProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := retrytest.NewClock(t0)
		g := retry.NewGate(clock)
		require.True(t, g.Restore(retry.Hold{Reason: retry.HoldThrottle, Until: t0.Add(-time.Hour)}))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var blocked atomic.Int32
		results := senders(ctx, g, 3, time.Time{}, &blocked)
		synctest.Wait()
		first := passed(results)
		require.Len(t, first, 1)
		assert.True(t, first[0].probe)
	})
}

// Watch reports every change of the hold, in versions that order them, and
// nothing for a report that changes nothing.
func TestGateWatch(t *testing.T) {
	clock := retrytest.NewClock(t0)
	g := retry.NewGate(clock)
	var mu sync.Mutex
	var seen []retry.Hold
	stop := g.Watch(func(h retry.Hold) { mu.Lock(); seen = append(seen, h); mu.Unlock() })
	g.Hold(retry.HoldThrottle, t0.Add(time.Minute))
	g.Hold(retry.HoldThrottle, t0.Add(time.Minute)) // the same: no change
	g.Hold(retry.HoldThrottle, t0.Add(2*time.Minute))
	g.Report(retry.Pass{}, true, retry.HoldNone, time.Time{}) // a late success does not end a throttle hold
	clock.Advance(2 * time.Minute)
	p, err := g.Acquire(context.Background(), nil, nil)
	require.NoError(t, err)
	g.Report(p, true, retry.HoldNone, time.Time{})
	stop()
	g.Hold(retry.HoldOutage, t0.Add(time.Hour))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 3)
	assert.Equal(t, retry.Hold{Reason: retry.HoldThrottle, Until: t0.Add(time.Minute), Failures: 1, Version: 1}, seen[0])
	assert.Equal(t, retry.Hold{Reason: retry.HoldThrottle, Until: t0.Add(2 * time.Minute), Failures: 1, Version: 2}, seen[1])
	assert.Equal(t, retry.Hold{Version: 3}, seen[2], "the hold ended")
}
