// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// problems splits a Validate error into its messages.
func problems(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "Validate should join its errors: %v", err)
	var out []string
	for _, e := range joined.Unwrap() {
		out = append(out, e.Error())
	}
	return out
}

// assertProblems checks that err holds exactly one message per key, each
// starting with the key and containing its fix.
func assertProblems(t *testing.T, err error, want map[string]string) {
	t.Helper()
	msgs := problems(t, err)
	require.Len(t, msgs, len(want), "messages: %q", msgs)
	for key, fix := range want {
		found := false
		for _, m := range msgs {
			if strings.HasPrefix(m, key+": ") && strings.Contains(m, fix) {
				found = true
			}
		}
		assert.True(t, found, "no message for %s containing %q in %q", key, fix, msgs)
	}
}

func TestBackoffConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*retry.BackoffConfig)
		want   map[string]string // key -> part of the message
	}{
		{name: "defaults", modify: func(*retry.BackoffConfig) {}},
		{name: "one attempt means no retry and is fine", modify: func(c *retry.BackoffConfig) { c.MaxAttempts = 1 }},
		{name: "multiplier 1 is fine", modify: func(c *retry.BackoffConfig) { c.Multiplier = 1 }},
		{name: "no jitter is fine", modify: func(c *retry.BackoffConfig) { c.Jitter = 0 }},
		{name: "max_interval equal to initial_interval is fine", modify: func(c *retry.BackoffConfig) { c.MaxInterval = c.InitialInterval }},

		{name: "zero max_attempts", modify: func(c *retry.BackoffConfig) { c.MaxAttempts = 0 }, want: map[string]string{"backoff::max_attempts": "must be at least 1"}},
		{name: "negative max_attempts", modify: func(c *retry.BackoffConfig) { c.MaxAttempts = -3 }, want: map[string]string{"backoff::max_attempts": "-3 must be at least 1"}},
		{name: "zero initial_interval", modify: func(c *retry.BackoffConfig) { c.InitialInterval = 0 }, want: map[string]string{"backoff::initial_interval": "must be at least 100ms"}},
		{name: "negative initial_interval", modify: func(c *retry.BackoffConfig) { c.InitialInterval = -time.Second }, want: map[string]string{"backoff::initial_interval": "-1s must be at least 100ms"}},
		{name: "initial_interval below the floor", modify: func(c *retry.BackoffConfig) {
			c.InitialInterval, c.MaxInterval, c.Jitter = time.Nanosecond, time.Nanosecond, 0
		}, want: map[string]string{"backoff::initial_interval": "1ns must be at least 100ms, the floor"}},
		{name: "initial_interval at the floor is fine", modify: func(c *retry.BackoffConfig) { c.InitialInterval = 100 * time.Millisecond }},
		{name: "multiplier below 1", modify: func(c *retry.BackoffConfig) { c.Multiplier = 0.5 }, want: map[string]string{"backoff::multiplier": "0.5 must be at least 1"}},
		{name: "zero multiplier", modify: func(c *retry.BackoffConfig) { c.Multiplier = 0 }, want: map[string]string{"backoff::multiplier": "must be at least 1"}},
		{name: "max_interval below initial_interval", modify: func(c *retry.BackoffConfig) { c.MaxInterval = 500 * time.Millisecond }, want: map[string]string{"backoff::max_interval": "must be at least initial_interval (1s)"}},
		{name: "negative jitter", modify: func(c *retry.BackoffConfig) { c.Jitter = -time.Millisecond }, want: map[string]string{"backoff::jitter": "must not be negative"}},
		{name: "max_attempts at its bound is fine", modify: func(c *retry.BackoffConfig) { c.MaxAttempts = 100 }},
		{name: "multiplier at its bound is fine", modify: func(c *retry.BackoffConfig) { c.Multiplier = 100 }},
		{name: "jitter equal to max_interval is fine", modify: func(c *retry.BackoffConfig) { c.Jitter = c.MaxInterval }},
		{name: "max_interval of a day is fine", modify: func(c *retry.BackoffConfig) { c.MaxInterval = 24 * time.Hour }},

		{name: "max_attempts above its bound", modify: func(c *retry.BackoffConfig) { c.MaxAttempts = 101 }, want: map[string]string{"backoff::max_attempts": "101 must be at most 100"}},
		// 1e30 decoded by mapstructure into an int on amd64.
		{name: "max_attempts wrapped by a float decode", modify: func(c *retry.BackoffConfig) { c.MaxAttempts = math.MinInt64 }, want: map[string]string{"backoff::max_attempts": "must be at least 1"}},
		{name: "largest max_attempts", modify: func(c *retry.BackoffConfig) { c.MaxAttempts = math.MaxInt64 }, want: map[string]string{"backoff::max_attempts": "must be at most 100"}},
		{name: "NaN multiplier", modify: func(c *retry.BackoffConfig) { c.Multiplier = math.NaN() }, want: map[string]string{"backoff::multiplier": "NaN must be a finite number between 1 and 100"}},
		{name: "infinite multiplier", modify: func(c *retry.BackoffConfig) { c.Multiplier = math.Inf(1) }, want: map[string]string{"backoff::multiplier": "+Inf must be a finite number between 1 and 100"}},
		{name: "negative infinite multiplier", modify: func(c *retry.BackoffConfig) { c.Multiplier = math.Inf(-1) }, want: map[string]string{"backoff::multiplier": "-Inf must be a finite number between 1 and 100"}},
		{name: "multiplier above its bound", modify: func(c *retry.BackoffConfig) { c.Multiplier = 100.5 }, want: map[string]string{"backoff::multiplier": "100.5 must be at most 100"}},
		{name: "max_interval above a day", modify: func(c *retry.BackoffConfig) { c.MaxInterval = 1000000 * time.Hour }, want: map[string]string{"backoff::max_interval": "1000000h0m0s must be at most 24h0m0s"}},
		{name: "largest max_interval", modify: func(c *retry.BackoffConfig) { c.MaxInterval = math.MaxInt64 }, want: map[string]string{"backoff::max_interval": "must be at most 24h0m0s"}},
		{name: "jitter above max_interval", modify: func(c *retry.BackoffConfig) { c.Jitter = 31 * time.Second }, want: map[string]string{"backoff::jitter": "31s must not exceed backoff::max_interval (30s)"}},
		{
			name:   "largest max_interval and jitter",
			modify: func(c *retry.BackoffConfig) { c.MaxInterval, c.Jitter = math.MaxInt64, math.MaxInt64 },
			want:   map[string]string{"backoff::max_interval": "must be at most 24h0m0s"},
		},
		{
			name: "every key wrong at once",
			modify: func(c *retry.BackoffConfig) {
				*c = retry.BackoffConfig{MaxAttempts: 0, InitialInterval: time.Minute, Multiplier: 0.9, MaxInterval: time.Second, Jitter: -1}
			},
			want: map[string]string{
				"backoff::max_attempts": "must be at least 1",
				"backoff::multiplier":   "must be at least 1",
				"backoff::max_interval": "must be at least initial_interval",
				"backoff::jitter":       "must not be negative",
			},
		},
		{
			name:   "zero value",
			modify: func(c *retry.BackoffConfig) { *c = retry.BackoffConfig{} },
			want: map[string]string{
				"backoff::max_attempts":     "must be at least 1",
				"backoff::initial_interval": "must be at least 100ms",
				"backoff::multiplier":       "must be at least 1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := retry.NewDefaultBackoffConfig()
			tt.modify(&cfg)
			err := cfg.Validate()
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assertProblems(t, err, tt.want)
		})
	}
}

func TestRetryAfterConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*retry.RetryAfterConfig)
		want   map[string]string
	}{
		{name: "defaults", modify: func(*retry.RetryAfterConfig) {}},
		{name: "zero default is fine", modify: func(c *retry.RetryAfterConfig) { c.Default = 0 }},
		{name: "default equal to max is fine", modify: func(c *retry.RetryAfterConfig) { c.Default = c.Max }},
		{name: "max_elapsed exactly three maxes is fine", modify: func(c *retry.RetryAfterConfig) { c.MaxElapsed = 3 * c.Max }},
		{name: "zero jitter is fine", modify: func(c *retry.RetryAfterConfig) { c.Jitter = 0 }},
		{name: "jitter at its bound is fine", modify: func(c *retry.RetryAfterConfig) { c.Jitter = 5 * time.Second }},

		{name: "negative default", modify: func(c *retry.RetryAfterConfig) { c.Default = -time.Second }, want: map[string]string{"retry_after::default": "-1s must not be negative"}},
		{name: "default above max", modify: func(c *retry.RetryAfterConfig) { c.Default = 301 * time.Second }, want: map[string]string{"retry_after::default": "must not exceed retry_after::max (5m0s)"}},
		{
			name:   "zero max",
			modify: func(c *retry.RetryAfterConfig) { c.Max = 0 },
			want: map[string]string{
				"retry_after::max":     "must be at least 1s",
				"retry_after::default": "must not exceed retry_after::max (0s)",
			},
		},
		{
			name:   "negative max",
			modify: func(c *retry.RetryAfterConfig) { c.Max, c.Default = -time.Second, 0 },
			want: map[string]string{
				"retry_after::max":     "-1s must be at least 1s",
				"retry_after::default": "must not exceed retry_after::max",
			},
		},
		{name: "max_elapsed one nanosecond short", modify: func(c *retry.RetryAfterConfig) { c.MaxElapsed = 3*c.Max - 1 }, want: map[string]string{"retry_after::max_elapsed": "must allow at least three capped waits (3 x retry_after::max = 15m0s)"}},
		{name: "max_elapsed equal to max", modify: func(c *retry.RetryAfterConfig) { c.MaxElapsed = c.Max }, want: map[string]string{"retry_after::max_elapsed": "three capped waits"}},
		{name: "negative jitter", modify: func(c *retry.RetryAfterConfig) { c.Jitter = -time.Millisecond }, want: map[string]string{"retry_after::jitter": "must be between 0s and 5s"}},
		{name: "jitter above its bound", modify: func(c *retry.RetryAfterConfig) { c.Jitter = 5*time.Second + 1 }, want: map[string]string{"retry_after::jitter": "must be between 0s and 5s"}},
		{name: "max of a day is fine", modify: func(c *retry.RetryAfterConfig) { c.Max, c.MaxElapsed = 24*time.Hour, 72*time.Hour }},
		{name: "max_elapsed of a year is fine", modify: func(c *retry.RetryAfterConfig) { c.MaxElapsed = 8760 * time.Hour }},
		{
			// 3 x max overflowed int64 and wrapped negative: max_elapsed 1s passed.
			name:   "max so large that three of it overflow",
			modify: func(c *retry.RetryAfterConfig) { c.Max, c.MaxElapsed = 1000000*time.Hour, time.Second },
			want: map[string]string{
				"retry_after::max":         "1000000h0m0s must be at most 24h0m0s",
				"retry_after::max_elapsed": "1s must allow at least three capped waits (3 x retry_after::max = more than 2562047h47m16.854775807s)",
			},
		},
		{
			name:   "largest max and max_elapsed",
			modify: func(c *retry.RetryAfterConfig) { c.Max, c.MaxElapsed = math.MaxInt64, math.MaxInt64 },
			want: map[string]string{
				"retry_after::max":         "must be at most 24h0m0s",
				"retry_after::max_elapsed": "must be at most 8760h0m0s",
			},
		},
		{name: "max above a day", modify: func(c *retry.RetryAfterConfig) { c.Max, c.MaxElapsed = 25*time.Hour, 75*time.Hour }, want: map[string]string{"retry_after::max": "25h0m0s must be at most 24h0m0s"}},
		{name: "max below the floor", modify: func(c *retry.RetryAfterConfig) { c.Max, c.Default, c.Jitter = time.Millisecond, 0, 0 }, want: map[string]string{"retry_after::max": "1ms must be at least 1s"}},
		{name: "max at the floor, default 0 and no jitter are fine", modify: func(c *retry.RetryAfterConfig) {
			c.Max, c.Default, c.Jitter, c.MaxElapsed = time.Second, 0, 0, 3*time.Second
		}},
		{name: "max_elapsed above a year", modify: func(c *retry.RetryAfterConfig) { c.MaxElapsed = 8761 * time.Hour }, want: map[string]string{"retry_after::max_elapsed": "8761h0m0s must be at most 8760h0m0s"}},
		{
			// -2s >= 3 x -1s: the three-waits check alone let it through.
			name: "negative max_elapsed",
			modify: func(c *retry.RetryAfterConfig) {
				c.Max, c.Default, c.MaxElapsed = -time.Second, -time.Second, -2*time.Second
			},
			want: map[string]string{
				"retry_after::max":         "-1s must be at least 1s",
				"retry_after::default":     "-1s must not be negative",
				"retry_after::max_elapsed": "-2s must not be negative",
			},
		},
		{
			name:   "zero value",
			modify: func(c *retry.RetryAfterConfig) { *c = retry.RetryAfterConfig{} },
			want:   map[string]string{"retry_after::max": "must be at least 1s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := retry.NewDefaultRetryAfterConfig()
			tt.modify(&cfg)
			err := cfg.Validate()
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assertProblems(t, err, tt.want)
		})
	}
}

func TestUnauthorizedConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*retry.UnauthorizedConfig)
		want   map[string]string
	}{
		{name: "defaults", modify: func(*retry.UnauthorizedConfig) {}},
		{name: "one second is fine", modify: func(c *retry.UnauthorizedConfig) { c.ProbeInterval = time.Second }},
		{name: "a day is fine", modify: func(c *retry.UnauthorizedConfig) { c.ProbeInterval = 24 * time.Hour }},

		{name: "below a second", modify: func(c *retry.UnauthorizedConfig) { c.ProbeInterval = 999 * time.Millisecond }, want: map[string]string{"unauthorized::probe_interval": "999ms must be at least 1s"}},
		{name: "zero", modify: func(c *retry.UnauthorizedConfig) { c.ProbeInterval = 0 }, want: map[string]string{"unauthorized::probe_interval": "0s must be at least 1s"}},
		{name: "negative", modify: func(c *retry.UnauthorizedConfig) { c.ProbeInterval = -time.Minute }, want: map[string]string{"unauthorized::probe_interval": "-1m0s must be at least 1s"}},
		{name: "above a day", modify: func(c *retry.UnauthorizedConfig) { c.ProbeInterval = 25 * time.Hour }, want: map[string]string{"unauthorized::probe_interval": "25h0m0s must be at most 24h0m0s"}},
		{name: "largest", modify: func(c *retry.UnauthorizedConfig) { c.ProbeInterval = math.MaxInt64 }, want: map[string]string{"unauthorized::probe_interval": "must be at most 24h0m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := retry.NewDefaultUnauthorizedConfig()
			assert.Equal(t, time.Minute, cfg.ProbeInterval, "documented default")
			tt.modify(&cfg)
			err := cfg.Validate()
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assertProblems(t, err, tt.want)
		})
	}
}

func TestOutageConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*retry.OutageConfig)
		want   map[string]string
	}{
		{name: "defaults: no limit", modify: func(*retry.OutageConfig) {}},
		{name: "an hour is fine", modify: func(c *retry.OutageConfig) { c.MaxDuration = time.Hour }},
		{name: "a year is fine", modify: func(c *retry.OutageConfig) { c.MaxDuration = 8760 * time.Hour }},

		{name: "negative", modify: func(c *retry.OutageConfig) { c.MaxDuration = -time.Minute }, want: map[string]string{"outage::max_duration": "-1m0s must not be negative (0 means no limit)"}},
		{name: "above a year", modify: func(c *retry.OutageConfig) { c.MaxDuration = 8761 * time.Hour }, want: map[string]string{"outage::max_duration": "8761h0m0s must be at most 8760h0m0s; use 0 for no limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := retry.NewDefaultOutageConfig()
			assert.Zero(t, cfg.MaxDuration, "documented default")
			tt.modify(&cfg)
			err := cfg.Validate()
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assertProblems(t, err, tt.want)
		})
	}
}
