// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idealUsed is c.BestUsed for a load whose first batch reaches the backend
// phase into a window (windows fall on multiples of the window since the
// epoch).
func idealUsed(t *testing.T, c Cell, phase time.Duration) float64 {
	t.Helper()
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC).Truncate(c.Limiter.Window).Add(phase)
	used, ok := c.BestUsed(start)
	require.True(t, ok)
	return used
}

// TestFixedWindowUsedBound: the matrix's 10 s fixed window (120 batches
// offered at 10 a second into 50 per 10 s) cannot have 90 % of its limit
// used from the first request to the last delivery at every phase of the
// windows, whatever the exporter: the last window's share is less than a
// window's limit, and Allowed counts a whole window at its start. At the
// phase the model runs (windows starting with the load) the most is 80 %,
// and at 5 of 10 whole-second phases it is below 90 %. The long cell
// (three times the load) can reach 90 % at every phase.
func TestFixedWindowUsedBound(t *testing.T) {
	short, ok := CellByName("fixed-window-10s/none/5rps/1000")
	require.True(t, ok)
	long, ok := CellByName("long-fixed-window-10s/none/5rps/1000")
	require.True(t, ok)
	below := 0
	for p := range 10 {
		phase := time.Duration(p) * time.Second
		s, l := idealUsed(t, short, phase), idealUsed(t, long, phase)
		t.Logf("phase %s: at most %.1f %% used (long cell: %.1f %%)", phase, 100*s, 100*l)
		if s < GoalUsed {
			below++
		}
		assert.GreaterOrEqual(t, l, GoalUsed-1e-9, "long cell, phase %s", phase)
	}
	assert.InDelta(t, 0.80, idealUsed(t, short, 0), 0.005, "phase 0")
	assert.Positive(t, below, "phases at which no exporter reaches the goal")
}
