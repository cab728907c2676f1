// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

func TestCostEstimatorNothingObserved(t *testing.T) {
	var e retry.CostEstimator
	_, ok := e.PerRequest()
	assert.False(t, ok)
}

func TestCostEstimatorFirstObservationIsTheEstimate(t *testing.T) {
	var e retry.CostEstimator
	e.Observe(2000, 1700, 3) // 100 spans a request
	got, ok := e.PerRequest()
	require.True(t, ok)
	assert.Equal(t, 100.0, got)
}

// TestCostEstimatorRefillDoesNotHideTheCost: a token bucket refilling while
// requests of 500 are sent makes the count fall by less (or not at all);
// the estimate stays at the largest fall seen, so that the pacer does not
// take the quota for bigger than it is.
func TestCostEstimatorRefillDoesNotHideTheCost(t *testing.T) {
	var e retry.CostEstimator
	e.Observe(2000, 1500, 1) // the bucket was full: the whole cost shows
	for range 10 {
		e.Observe(1500, 1480, 1) // refilled 480 meanwhile
	}
	got, _ := e.PerRequest()
	assert.Equal(t, 500.0, got)
}

func TestCostEstimatorFollowsPayloadsThatGrowAndShrink(t *testing.T) {
	var e retry.CostEstimator
	remaining := int64(1_000_000)
	observe := func(cost int64) {
		e.Observe(remaining, remaining-cost, 1)
		remaining -= cost
	}
	for range 20 {
		observe(512)
	}
	got, _ := e.PerRequest()
	assert.Equal(t, 512.0, got)
	observe(2048) // a bigger payload shows at once
	got, _ = e.PerRequest()
	assert.Equal(t, 2048.0, got)
	for range 15 {
		observe(256)
	}
	got, _ = e.PerRequest()
	assert.Equal(t, 2048.0, got, "remembered for 16 observations")
	observe(256)
	got, _ = e.PerRequest()
	assert.Equal(t, 256.0, got, "then forgotten")

	// An observation over n requests counts the fall per request.
	var n retry.CostEstimator
	n.Observe(100, 40, 3)
	got, _ = n.PerRequest()
	assert.Equal(t, 20.0, got)
}

func TestCostEstimatorIgnoresNonsense(t *testing.T) {
	var e retry.CostEstimator
	e.Observe(100, 90, 1) // 10
	for _, o := range []struct {
		name          string
		before, after int64
		requests      int
	}{
		{"reset: the count went up", 5, 2000, 1},
		{"no change", 90, 90, 1},
		{"no requests", 90, 0, 0},
		{"negative requests", 90, 0, -3},
		{"negative before", -10, -20, 1},
		{"negative after", 90, -20, 1},
	} {
		e.Observe(o.before, o.after, o.requests)
		got, ok := e.PerRequest()
		assert.True(t, ok, o.name)
		assert.Equal(t, 10.0, got, o.name)
	}

	var empty retry.CostEstimator
	empty.Observe(5, 2000, 1)
	empty.Observe(7, 7, 1)
	_, ok := empty.PerRequest()
	assert.False(t, ok, "nothing usable observed")
}

func TestCostEstimatorExtremes(t *testing.T) {
	var e retry.CostEstimator
	e.Observe(math.MaxInt64, 0, 1)
	e.Observe(math.MaxInt64, 0, math.MaxInt)
	got, ok := e.PerRequest()
	require.True(t, ok)
	assert.False(t, math.IsNaN(got) || math.IsInf(got, 0))
	assert.Greater(t, got, 0.0)
}

// TestAnswerSpread: the answers to requests in flight together, in any
// order, span one request's cost fewer than there are answers; fewer than
// two answers, or counts that do not differ, show none.
func TestAnswerSpread(t *testing.T) {
	for _, tt := range []struct {
		name   string
		counts []float64
		cost   float64
		ok     bool
	}{
		{"none", nil, 0, false},
		{"one answer", []float64{3}, 0, false},
		{"counts that do not fall", []float64{5, 5, 5}, 0, false},
		{"a GCRA's burst, in another order than counted", []float64{2, 3, 0, 1}, 1, true},
		{"spans of 100 a request", []float64{700, 900, 800}, 100, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s retry.AnswerSpread
			for _, c := range tt.counts {
				s.Add(c)
			}
			cost, ok := s.PerRequest()
			assert.Equal(t, tt.ok, ok)
			assert.InDelta(t, tt.cost, cost, 1e-9)
		})
	}
}
