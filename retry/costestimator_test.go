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

func TestCostEstimatorMovingAverage(t *testing.T) {
	var e retry.CostEstimator // DefaultCostAlpha, 0.2
	e.Observe(100, 90, 1)
	e.Observe(90, 70, 1) // 10 + 0.2*(20-10)
	got, _ := e.PerRequest()
	assert.InDelta(t, 12.0, got, 1e-9)

	// An observation over n requests weighs like n observations of one.
	e = retry.CostEstimator{Alpha: 0.5}
	e.Observe(100, 70, 3) // 10
	e.Observe(70, 10, 2)  // 30 a request, weight 1-(1-0.5)^2 = 0.75
	got, _ = e.PerRequest()
	assert.InDelta(t, 25.0, got, 1e-9)
	one := retry.CostEstimator{Alpha: 0.5}
	one.Observe(100, 70, 3)
	one.Observe(70, 40, 1)
	one.Observe(40, 10, 1)
	gotOne, _ := one.PerRequest()
	assert.InDelta(t, got, gotOne, 1e-9, "two observations of one request each")
}

func TestCostEstimatorConvergesAndFollows(t *testing.T) {
	var e retry.CostEstimator
	remaining := int64(1_000_000)
	for range 50 {
		e.Observe(remaining, remaining-512, 1) // 512 bytes a request
		remaining -= 512
	}
	got, _ := e.PerRequest()
	assert.InDelta(t, 512.0, got, 1e-6)
	for range 50 { // the payloads grow
		e.Observe(remaining, remaining-2048, 1)
		remaining -= 2048
	}
	got, _ = e.PerRequest()
	assert.InDelta(t, 2048.0, got, 1)
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

func TestCostEstimatorAlphaOutOfRangeIsTheDefault(t *testing.T) {
	for _, alpha := range []float64{0, -1, 1.5, math.NaN(), math.Inf(1)} {
		e := retry.CostEstimator{Alpha: alpha}
		e.Observe(100, 90, 1)
		e.Observe(90, 70, 1)
		got, _ := e.PerRequest()
		assert.InDelta(t, 12.0, got, 1e-9, "alpha %v", alpha)
	}
	e := retry.CostEstimator{Alpha: 1} // only the newest counts
	e.Observe(100, 90, 1)
	e.Observe(90, 70, 1)
	got, _ := e.PerRequest()
	assert.Equal(t, 20.0, got)
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
