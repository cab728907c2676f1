// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// A run with a yield leaves the loop instead of waiting at a held gate
// when the yield says so: at once, having sent nothing and waited for
// nothing, Interrupted with ErrYielded. A yield that says no waits as any
// run does; an open gate never asks.
func TestLoopYieldsAtAHeldGate(t *testing.T) {
	clock := retrytest.NewClock(t0)
	h := newHarness(clock, defaultPolicy(), 0)
	var asked atomic.Int32
	sends := 0
	send := func(context.Context, int) retry.Response { sends++; return resp(200) }

	out := h.loop.Run(retry.WithYield(context.Background(), func() bool { asked.Add(1); return true }), send)
	require.Equal(t, retry.Delivered, out.Kind, "an open gate: the run sends")
	assert.Zero(t, asked.Load(), "an open gate does not ask")

	h.gate.Hold(retry.HoldThrottle, t0.Add(time.Minute))
	sends = 0
	out = h.loop.Run(retry.WithYield(context.Background(), func() bool { asked.Add(1); return true }), send)
	assert.Equal(t, retry.Interrupted, out.Kind)
	require.ErrorIs(t, out.Err, retry.ErrYielded)
	assert.Zero(t, sends)
	assert.Empty(t, clock.Waits(), "nothing waited")
	assert.False(t, out.Shutdown)

	done := make(chan retry.Outcome, 1)
	go func() { done <- h.loop.Run(retry.WithYield(context.Background(), func() bool { return false }), send) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "a yield that says no waits at the gate")
	clock.Advance(time.Minute)
	assert.Equal(t, retry.Delivered, (<-done).Kind)
}
