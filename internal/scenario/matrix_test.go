// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// TestMatrixCellsBoundTheSpace: every cell is a valid limiter under a
// unique name that Build finds; every kind and every hint appears; the
// limits span 2 to 50 requests a second and the batches 50 to 5 000 spans;
// the limited cells are offered twice their limit; the sporadic cell has
// its never-refusing twin, with the same load, as its reference.
func TestMatrixCellsBoundTheSpace(t *testing.T) {
	cells := MatrixCells()
	names := map[string]bool{}
	kinds := map[limiter.Kind]bool{}
	hints := map[limiter.Hint]bool{}
	windows := map[time.Duration]bool{}
	minRate, maxRate := math.Inf(1), 0.0
	minBatch, maxBatch := math.MaxInt, 0
	for _, c := range cells {
		require.NoError(t, c.Limiter.Validate(), c.Name)
		assert.False(t, names[c.Name], "%s twice", c.Name)
		names[c.Name] = true
		kinds[c.Limiter.Kind], hints[c.Limiter.Hint] = true, true
		if c.Limiter.Kind == limiter.FixedWindow {
			windows[c.Limiter.Window] = true
		}
		s, err := DefaultParams().Build(c.Name)
		require.NoError(t, err)
		assert.Equal(t, c.Name, s.Name)
		assert.Equal(t, demobackend.ModeLimiter, s.Backend.Mode)
		assert.Equal(t, c.Limiter, s.Backend.Limiter)
		require.NotNil(t, s.Cell)
		assert.Equal(t, c.Batch, s.Load.Spans)
		assert.Equal(t, c.Batches(), s.Load.Senders*s.Load.Batches)
		assert.InDelta(t, c.Offered*c.For.Seconds(), float64(c.Batches()), 1, c.Name)
		minBatch, maxBatch = min(minBatch, c.Batch), max(maxBatch, c.Batch)
		rate := c.Offered
		if c.Limiter.Kind.HasQuota() {
			rate = c.LimitRPS()
			assert.InDelta(t, 2*rate, c.Offered, 1e-9, "%s: offered twice the limit", c.Name)
		}
		minRate, maxRate = math.Min(minRate, rate), math.Max(maxRate, rate)
		if c.Reference != "" {
			ref, ok := CellByName(c.Reference)
			require.True(t, ok, c.Reference)
			assert.Equal(t, limiter.Unlimited, ref.Limiter.Kind)
			assert.Equal(t, c.Load(), ref.Load(), "the reference has the same load")
		}
	}
	for _, k := range limiter.Kinds {
		if k == limiter.Flapping {
			// Not one of the limiters: the extra cells have it.
			continue
		}
		assert.True(t, kinds[k], "kind %s in no cell", k)
	}
	for _, h := range limiter.Hints {
		assert.True(t, hints[h], "hint %s in no cell", h)
	}
	assert.True(t, windows[time.Second] && windows[10*time.Second], "fixed windows of 1 s and 10 s")
	assert.Equal(t, 2.0, minRate)
	assert.Equal(t, 50.0, maxRate)
	assert.Equal(t, 50, minBatch)
	assert.Equal(t, 5000, maxBatch)
	_, err := DefaultParams().Build("gcra/none/3rps/50")
	assert.ErrorContains(t, err, "or a cell's name")
}

// TestLongCells: a long cell is a limited matrix cell without a hint, its
// load three times as long, built by its name and not in the matrix.
func TestLongCells(t *testing.T) {
	long := LongCells()
	require.NotEmpty(t, long)
	inMatrix := map[string]bool{}
	for _, c := range MatrixCells() {
		inMatrix[c.Name] = true
	}
	for _, c := range long {
		short, ok := CellByName(strings.TrimPrefix(c.Name, "long-"))
		require.True(t, ok, c.Name)
		assert.False(t, inMatrix[c.Name], "%s in the matrix", c.Name)
		assert.True(t, c.Limiter.Kind.HasQuota(), c.Name)
		assert.Equal(t, limiter.HintNone, c.Limiter.Hint, c.Name)
		assert.Equal(t, 3*short.For, c.For, c.Name)
		assert.Equal(t, 3*short.Batches(), c.Batches(), c.Name)
		assert.Equal(t, short.Limiter, c.Limiter, c.Name)
		s, err := DefaultParams().Build(c.Name)
		require.NoError(t, err)
		assert.Equal(t, c.Name, s.Name)
	}
	_, ok := CellByName("long-gcra/none/2rps/5000")
	assert.True(t, ok)
	_, ok = CellByName("long-gcra/ratelimit/20rps/200")
	assert.False(t, ok, "a cell with a hint has no long twin")
}

// TestExtraCells: the extra cells run by their names, are not in the
// matrix, and each has a limit, but the flapping backends (no limit, every
// kind of limiter has a cell in the matrix or here).
func TestExtraCells(t *testing.T) {
	extra := ExtraCells()
	require.Len(t, extra, 15)
	flapping := 0
	inMatrix := map[string]bool{}
	for _, c := range MatrixCells() {
		inMatrix[c.Name] = true
	}
	for _, c := range extra {
		assert.True(t, strings.HasPrefix(c.Name, "x-"), c.Name)
		assert.False(t, inMatrix[c.Name], "%s in the matrix", c.Name)
		assert.False(t, inMatrix[strings.TrimPrefix(c.Name, "x-")], "%s twins a matrix cell", c.Name)
		if c.Limiter.Kind == limiter.Flapping {
			flapping++
			assert.Less(t, c.Limiter.Down, c.Limiter.Window, c.Name)
		} else {
			assert.True(t, c.Limiter.Kind.HasQuota(), c.Name)
		}
		got, ok := CellByName(c.Name)
		require.True(t, ok, c.Name)
		assert.Equal(t, c, got)
		s, err := DefaultParams().Build(c.Name)
		require.NoError(t, err)
		assert.Equal(t, c.Name, s.Name)
	}
	assert.Equal(t, 2, flapping, "two flapping backends")
	c, ok := CellByName("x-sliding-window-1s/ratelimit/50rps/50/20ms")
	require.True(t, ok)
	assert.Equal(t, 20*time.Millisecond, c.Latency)
	plain, ok := CellByName("sliding-window-1s/ratelimit/50rps/50")
	require.True(t, ok)
	assert.Equal(t, plain.Limiter, c.Limiter, "the matrix's cell, with a latency")
	c, ok = CellByName("x-fixed-window-10s/none/5rps/1000/off2.5s")
	require.True(t, ok)
	plain, ok = CellByName("fixed-window-10s/none/5rps/1000")
	require.True(t, ok)
	plain.Limiter.Offset = 2500 * time.Millisecond
	assert.Equal(t, plain.Limiter, c.Limiter, "the matrix's cell, its windows 2.5 s past the multiples")
	c, ok = CellByName("x-gcra/retry-after/10rps/500")
	require.True(t, ok)
	assert.Equal(t, limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintRetryAfter, Rate: 10, Burst: 2, Seed: 1}, c.Limiter)
	assert.Equal(t, 20.0, c.Offered)
}

// TestBatchWireBytes: a batch's gzipped size grows with its spans, and is
// what a bytes bucket's cell is scaled by.
func TestBatchWireBytes(t *testing.T) {
	small, large := BatchWireBytes(50), BatchWireBytes(5000)
	assert.Greater(t, large, 10*small)
	assert.Less(t, large, len(NewBodies().Get(0, 0, 5000)), "gzipped")
	c, ok := CellByName("token-bytes/retry-after/4rps/5000")
	require.True(t, ok)
	assert.InDelta(t, 4*float64(large), c.Limiter.Rate, 1e-9)
	assert.InDelta(t, 4, c.LimitRPS(), 1e-9)
}

// TestLimitFigures: a cell's refusals are its limiter's (not a window's),
// and the share of its limit used runs from the first request to the one
// that completed delivery (for an in-flight limit, to its answer), or to
// the last accepted request while spans are missing.
func TestLimitFigures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	records := []demobackend.Record{
		{Arrival: sec(0), Status: 429}, // a window's
		{Arrival: sec(0), Status: 200, Items: 10, Answered: sec(0.5)},
		{Arrival: sec(1), Status: 429, Limited: true},
		{Arrival: sec(2), Status: 200, Items: 10, Answered: sec(3)},
		{Arrival: sec(4), Status: 200, Items: 10, Answered: sec(4.5)}, // after delivery was complete
	}
	gcra := &Cell{Limiter: limiter.Spec{Kind: limiter.GCRA, Rate: 1, Burst: 1}}
	limited, used := limitFigures(gcra, records, sec(2))
	assert.Equal(t, 1, *limited)
	// 2 requests over 1 + 1 × 2 s.
	assert.InDelta(t, 2.0/3, *used, 1e-9)
	// Incomplete: to the last accepted request, 3 over 1 + 4.
	_, used = limitFigures(gcra, records, time.Time{})
	assert.InDelta(t, 3.0/5, *used, 1e-9)
	// In flight: 0.5 + 1 s open over 1 × 3 s.
	_, used = limitFigures(&Cell{Limiter: limiter.Spec{Kind: limiter.InFlight, Limit: 1}}, records, sec(2))
	assert.InDelta(t, 1.5/3, *used, 1e-9)
	// No quota: no share.
	_, used = limitFigures(&Cell{Limiter: limiter.Spec{Kind: limiter.Shed, Share: 0.5}}, records, sec(2))
	assert.Nil(t, used)
}

// TestBestUsedOfARun: a run of the matrix's 10 s fixed window has the
// most any exporter could use at its own phase next to what it used: 80 %
// when its first request came at a window's start, 82.8 % a second into
// one (TestFixedWindowUsedBound); no bound for a limiter whose share used
// does not hang on the clock, nor for a run without requests.
func TestBestUsedOfARun(t *testing.T) {
	c, ok := CellByName("fixed-window-10s/none/5rps/1000")
	require.True(t, ok)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) []demobackend.Record {
		return []demobackend.Record{{Arrival: t0.Add(d), Status: 200}, {Arrival: t0.Add(d + time.Second), Status: 429, Limited: true}}
	}
	best := bestUsed(&c, at(0))
	require.NotNil(t, best)
	assert.InDelta(t, 0.80, *best, 0.0005)
	best = bestUsed(&c, at(time.Second))
	require.NotNil(t, best)
	assert.InDelta(t, 0.828, *best, 0.0005)
	assert.Nil(t, bestUsed(&c, nil))
	// The same window 2.5 s past the multiples: a first request 2.5 s
	// into the clock's window comes at its window's start, as at 0.
	off, ok := CellByName("x-fixed-window-10s/none/5rps/1000/off2.5s")
	require.True(t, ok)
	best = bestUsed(&off, at(2500*time.Millisecond))
	require.NotNil(t, best)
	assert.InDelta(t, 0.80, *best, 0.0005)
	best = bestUsed(&off, at(3500*time.Millisecond))
	require.NotNil(t, best)
	assert.InDelta(t, 0.828, *best, 0.0005)
	gcra, ok := CellByName("gcra/none/2rps/5000")
	require.True(t, ok)
	assert.Nil(t, bestUsed(&gcra, at(0)))
}

// TestBareFleet: the fleet behind a request-rate limiter without hints
// has the quota's rate in requests, and no Retry-After anywhere.
func TestBareFleet(t *testing.T) {
	f := BareFleet(50)
	require.NotNil(t, f.Limiter)
	require.NoError(t, f.Limiter.Validate())
	assert.Equal(t, limiter.GCRA, f.Limiter.Kind)
	assert.Equal(t, limiter.HintNone, f.Limiter.Hint)
	assert.InDelta(t, 100, f.Limiter.Rate, 1e-9)
	assert.Zero(t, f.RetryAfter)
	assert.Contains(t, f.Description(), "answering bare 429 for 5s, then a GCRA of 100 requests/s (burst 10), bare 429")
}

// TestStartDelay: a fixed window's cell with a Phase starts its load that
// far into one of the limiter's windows (on the clock, moved by its
// Offset); without one, or for another kind of cell, at once.
func TestStartDelay(t *testing.T) {
	p := DefaultParams()
	s, err := p.Build("fixed-window-10s/none/5rps/1000")
	require.NoError(t, err)
	at := time.Date(2026, 1, 1, 0, 0, 3, 0, time.UTC) // 3 s into a 10 s window
	assert.Zero(t, s.StartDelay(at), "no phase")
	s.Phase = 7500 * time.Millisecond
	assert.Equal(t, 4500*time.Millisecond, s.StartDelay(at))
	assert.Equal(t, 7500*time.Millisecond, s.StartDelay(at.Add(7*time.Second)), "past the phase: the next window's")
	o, err := p.Build("x-fixed-window-10s/none/5rps/1000/off2.5s")
	require.NoError(t, err)
	o.Phase = 7500 * time.Millisecond
	assert.Equal(t, 7*time.Second, o.StartDelay(at), "into the limiter's window, which began at 2.5 s")
	g, err := p.Build("gcra/none/2rps/5000")
	require.NoError(t, err)
	g.Phase = 7500 * time.Millisecond
	assert.Zero(t, g.StartDelay(at), "no window")
}
