// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// idealUsed is the most of a fixed window's limit any exporter can use in
// cell c, from the first request to the last delivery, when the load
// starts phase into a window: an exporter that knows the window sends
// each batch as soon as it is offered and the window has room, and so
// delivers the load as early as it can be delivered, which is what
// maximises the share used (the accepted requests are the load's, and
// Allowed only grows with the time they take).
func idealUsed(t *testing.T, c Cell, phase time.Duration) float64 {
	t.Helper()
	w := c.Limiter.Window
	// A start on a multiple of the window (windows fall on multiples of
	// the window since the epoch), moved by phase.
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC).Truncate(w).Add(phase)
	l := c.Load()
	var offers []time.Time
	for s := range l.Senders {
		for k := range l.Batches {
			sec := float64(s)/float64(l.Senders)/l.Rate + float64(k)/l.Rate
			offers = append(offers, start.Add(time.Duration(sec*float64(time.Second))))
		}
	}
	slices.SortFunc(offers, func(a, b time.Time) int { return a.Compare(b) })
	lim, err := limiter.New(c.Limiter)
	require.NoError(t, err)
	var served []limiter.Served
	now := start
	for _, at := range offers {
		now = maxTime(now, at)
		for !lim.Admit(now, limiter.Request{Items: c.Batch}).Accepted() {
			now = now.Truncate(w).Add(w)
		}
		served = append(served, limiter.Served{Arrival: now, Done: now, Accepted: true})
	}
	used, ok := c.Limiter.Used(served, served[0].Arrival, served[len(served)-1].Arrival)
	require.True(t, ok)
	return used
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
