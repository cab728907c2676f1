// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

func TestBackoffDelayDefaults(t *testing.T) {
	cfg := retry.NewDefaultBackoffConfig()
	const ms = time.Millisecond

	tests := []struct {
		name   string
		n      int
		jitter float64
		want   time.Duration
	}{
		{name: "first failure", n: 1, want: 1 * time.Second},
		{name: "second failure", n: 2, want: 2 * time.Second},
		{name: "third failure", n: 3, want: 4 * time.Second},
		{name: "fourth failure", n: 4, want: 8 * time.Second},
		{name: "fifth failure", n: 5, want: 16 * time.Second},
		{name: "sixth failure hits max_interval", n: 6, want: 30 * time.Second},
		{name: "far past the ceiling", n: 100, want: 30 * time.Second},
		{name: "exponent overflows float64", n: 5000, want: 30 * time.Second},
		{name: "half jitter", n: 1, jitter: 0.5, want: 1*time.Second + 250*ms},
		{name: "half jitter on the ceiling", n: 10, jitter: 0.5, want: 30*time.Second + 250*ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retry.BackoffDelay(cfg, tt.n, tt.jitter))
		})
	}

	t.Run("jitter just under one stays under base plus 500ms", func(t *testing.T) {
		for n, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 7: 30 * time.Second} {
			got := retry.BackoffDelay(cfg, n, 0.999)
			assert.Greater(t, got, base+499*ms, "n=%d", n)
			assert.Less(t, got, base+500*ms, "n=%d", n)
		}
	})
}

func TestBackoffDelayShapes(t *testing.T) {
	tests := []struct {
		name string
		cfg  retry.BackoffConfig
		want []time.Duration // for n = 1, 2, ...
	}{
		{
			name: "multiplier 1 is constant",
			cfg:  retry.BackoffConfig{InitialInterval: 3 * time.Second, Multiplier: 1, MaxInterval: time.Minute},
			want: []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second},
		},
		{
			name: "multiplier 1.5",
			cfg:  retry.BackoffConfig{InitialInterval: 2 * time.Second, Multiplier: 1.5, MaxInterval: time.Minute},
			want: []time.Duration{2 * time.Second, 3 * time.Second, 4500 * time.Millisecond},
		},
		{
			name: "ceiling equal to the initial interval",
			cfg:  retry.BackoffConfig{InitialInterval: 5 * time.Second, Multiplier: 2, MaxInterval: 5 * time.Second},
			want: []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second},
		},
		{
			name: "ceiling in the middle",
			cfg:  retry.BackoffConfig{InitialInterval: time.Second, Multiplier: 3, MaxInterval: 10 * time.Second},
			want: []time.Duration{time.Second, 3 * time.Second, 9 * time.Second, 10 * time.Second, 10 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				assert.Equal(t, want, retry.BackoffDelay(tt.cfg, i+1, 0), "n=%d", i+1)
			}
		})
	}
}

func TestJitter(t *testing.T) {
	tests := []struct {
		name  string
		bound time.Duration
		r     float64
		want  time.Duration
	}{
		{name: "zero r", bound: 500 * time.Millisecond, r: 0, want: 0},
		{name: "half", bound: 500 * time.Millisecond, r: 0.5, want: 250 * time.Millisecond},
		{name: "quarter of retry_after jitter", bound: 250 * time.Millisecond, r: 0.25, want: 62500 * time.Microsecond},
		{name: "zero bound", bound: 0, r: 0.9, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retry.Jitter(tt.bound, tt.r))
		})
	}

	t.Run("r in [0, 1) stays in [0, bound)", func(t *testing.T) {
		const bound = 500 * time.Millisecond
		for _, r := range []float64{0, 0.001, 0.1, 0.5, 0.9, 0.999, 0.999999999} {
			got := retry.Jitter(bound, r)
			assert.GreaterOrEqual(t, got, time.Duration(0), "r=%g", r)
			assert.Less(t, got, bound, "r=%g", r)
		}
	})
}

// A wait is never negative and never wraps around, whatever the config and
// the failure count: a huge max_interval plus jitter, a huge multiplier, a
// huge n, or a config Validate would refuse.
func TestBackoffDelaySaturates(t *testing.T) {
	const maxDuration = time.Duration(math.MaxInt64)
	tests := []struct {
		name   string
		cfg    retry.BackoffConfig
		n      int
		jitter float64
		want   time.Duration
	}{
		{
			name: "largest max_interval plus jitter",
			cfg:  retry.BackoffConfig{InitialInterval: time.Second, Multiplier: 2, MaxInterval: maxDuration, Jitter: 500 * time.Millisecond},
			n:    100, jitter: 0.999, want: maxDuration,
		},
		{
			name: "largest max_interval and largest jitter",
			cfg:  retry.BackoffConfig{InitialInterval: time.Second, Multiplier: 2, MaxInterval: maxDuration, Jitter: maxDuration},
			n:    math.MaxInt, jitter: 0.999, want: maxDuration,
		},
		{
			name: "interval just under the float64 ceiling",
			cfg:  retry.BackoffConfig{InitialInterval: maxDuration - 1000, Multiplier: 1, MaxInterval: maxDuration, Jitter: time.Second},
			n:    1, jitter: 0.5, want: maxDuration,
		},
		{
			name: "huge multiplier",
			cfg:  retry.BackoffConfig{InitialInterval: time.Second, Multiplier: math.MaxFloat64, MaxInterval: time.Minute, Jitter: time.Second},
			n:    3, jitter: 0, want: time.Minute,
		},
		{
			name: "infinite multiplier",
			cfg:  retry.BackoffConfig{InitialInterval: time.Second, Multiplier: math.Inf(1), MaxInterval: time.Minute},
			n:    2, want: time.Minute,
		},
		{
			name: "NaN multiplier waits max_interval",
			cfg:  retry.BackoffConfig{InitialInterval: time.Second, Multiplier: math.NaN(), MaxInterval: time.Minute},
			n:    2, want: time.Minute,
		},
		{
			name: "largest n",
			cfg:  retry.NewDefaultBackoffConfig(),
			n:    math.MaxInt, want: 30 * time.Second,
		},
		{
			name: "n below 1 is the first wait",
			cfg:  retry.NewDefaultBackoffConfig(),
			n:    math.MinInt, want: time.Second,
		},
		{
			name: "negative intervals wait nothing",
			cfg:  retry.BackoffConfig{InitialInterval: -time.Second, Multiplier: 2, MaxInterval: -time.Second, Jitter: -time.Second},
			n:    3, jitter: 0.5, want: 0,
		},
		{
			name: "jitter fraction out of range is clamped",
			cfg:  retry.BackoffConfig{InitialInterval: time.Second, Multiplier: 1, MaxInterval: time.Second, Jitter: maxDuration},
			n:    1, jitter: 2, want: maxDuration,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := retry.BackoffDelay(tt.cfg, tt.n, tt.jitter)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("every n and jitter on the largest config stays non-negative and non-decreasing", func(t *testing.T) {
		cfg := retry.BackoffConfig{InitialInterval: time.Nanosecond, Multiplier: 100, MaxInterval: maxDuration, Jitter: maxDuration}
		prev := time.Duration(0)
		for n := 1; n <= 64; n++ {
			got := retry.BackoffDelay(cfg, n, 0.999999)
			assert.GreaterOrEqual(t, got, prev, "n=%d", n)
			prev = got
		}
	})
}

func TestJitterSaturates(t *testing.T) {
	const maxDuration = time.Duration(math.MaxInt64)
	tests := []struct {
		name  string
		bound time.Duration
		r     float64
		want  time.Duration
	}{
		{name: "largest bound, r just under 1", bound: maxDuration, r: 0.9999999999999999, want: maxDuration - 1023},
		{name: "largest bound, r of 1", bound: maxDuration, r: 1, want: maxDuration},
		{name: "r above 1 is clamped to the bound", bound: time.Second, r: 7, want: time.Second},
		{name: "negative r adds nothing", bound: time.Second, r: -0.5, want: 0},
		{name: "NaN r adds nothing", bound: time.Second, r: math.NaN(), want: 0},
		{name: "negative bound adds nothing", bound: -time.Second, r: 0.5, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retry.Jitter(tt.bound, tt.r))
		})
	}
}
