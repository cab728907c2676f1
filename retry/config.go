// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// BackoffConfig is the counted exponential backoff for retryable failures
// that carry no usable Retry-After. With the defaults a payload is tried at
// 0, 1 s, 2 s, 4 s and 8 s (each wait plus 0-500 ms of jitter), then dropped.
type BackoffConfig struct {
	// MaxAttempts counts every attempt on this path, the first included.
	MaxAttempts int `mapstructure:"max_attempts"`
	// InitialInterval is the wait before the second attempt.
	InitialInterval time.Duration `mapstructure:"initial_interval"`
	// Multiplier grows the interval after each further failure.
	Multiplier float64 `mapstructure:"multiplier"`
	// MaxInterval is the ceiling on one interval, jitter excluded.
	MaxInterval time.Duration `mapstructure:"max_interval"`
	// Jitter is the upper bound of the uniform random time added to each wait.
	Jitter time.Duration `mapstructure:"jitter"`
	_      struct{}
}

// NewDefaultBackoffConfig returns the documented defaults.
func NewDefaultBackoffConfig() BackoffConfig {
	return BackoffConfig{
		MaxAttempts:     5,
		InitialInterval: time.Second,
		Multiplier:      2,
		MaxInterval:     30 * time.Second,
		Jitter:          500 * time.Millisecond,
	}
}

// Bounds of the backoff path. Each keeps a value Validate accepts from
// meaning something nobody can want.
const (
	// minBackoffInterval is the floor of backoff::initial_interval (and
	// so of every wait on the backoff path).
	minBackoffInterval = 100 * time.Millisecond
	// maxMaxAttempts: 100 attempts at the default 30 s ceiling are most of
	// an hour of retrying one payload on this path.
	maxMaxAttempts = 100
	// maxMultiplier: beyond it the second wait is already max_interval in
	// any config that passes the other checks.
	maxMultiplier = 100
	// maxSingleWait bounds every wait this exporter schedules in one go:
	// backoff::max_interval, retry_after::max (and so retry_after::default)
	// and unauthorized::probe_interval.
	maxSingleWait = 24 * time.Hour
	// maxBudget bounds the per-payload time budgets, retry_after::max_elapsed
	// and outage::max_duration, so that a budget plus a wait and its jitter
	// never overflows a time.Duration.
	maxBudget = 365 * 24 * time.Hour
)

// Validate names the key and the fix for every bad value.
func (c *BackoffConfig) Validate() error {
	var errs []error
	switch {
	case c.MaxAttempts < 1:
		errs = append(errs, fmt.Errorf("backoff::max_attempts: %d must be at least 1 (1 means no retry)", c.MaxAttempts))
	case c.MaxAttempts > maxMaxAttempts:
		errs = append(errs, fmt.Errorf("backoff::max_attempts: %d must be at most %d: that many attempts would keep one payload on this path for hours; use a smaller count", c.MaxAttempts, maxMaxAttempts))
	}
	if c.InitialInterval < minBackoffInterval {
		errs = append(errs, fmt.Errorf("backoff::initial_interval: %s must be at least %s, the floor under a payload's backoff wait; "+
			"a shorter one retries a failing payload faster than any backend can recover", c.InitialInterval, minBackoffInterval))
	}
	switch {
	case math.IsNaN(c.Multiplier) || math.IsInf(c.Multiplier, 0):
		errs = append(errs, fmt.Errorf("backoff::multiplier: %g must be a finite number between 1 and %d", c.Multiplier, maxMultiplier))
	case c.Multiplier < 1:
		errs = append(errs, fmt.Errorf("backoff::multiplier: %g must be at least 1", c.Multiplier))
	case c.Multiplier > maxMultiplier:
		errs = append(errs, fmt.Errorf("backoff::multiplier: %g must be at most %d: beyond that the second wait is already max_interval", c.Multiplier, maxMultiplier))
	}
	switch {
	case c.MaxInterval < c.InitialInterval:
		errs = append(errs, fmt.Errorf("backoff::max_interval: %s must be at least initial_interval (%s)", c.MaxInterval, c.InitialInterval))
	case c.MaxInterval > maxSingleWait:
		errs = append(errs, fmt.Errorf("backoff::max_interval: %s must be at most %s, the longest single wait this exporter schedules", c.MaxInterval, maxSingleWait))
	}
	switch {
	case c.Jitter < 0:
		errs = append(errs, fmt.Errorf("backoff::jitter: %s must not be negative", c.Jitter))
	case c.Jitter > c.MaxInterval && c.MaxInterval <= maxSingleWait:
		errs = append(errs, fmt.Errorf("backoff::jitter: %s must not exceed backoff::max_interval (%s): jitter spreads retries apart and should not outweigh the wait itself; lower jitter or raise max_interval", c.Jitter, c.MaxInterval))
	}
	return errors.Join(errs...)
}

// RetryAfterConfig is the rate-limit path: how Retry-After is honoured.
type RetryAfterConfig struct {
	// Default is the wait for a 429 whose Retry-After is missing, empty,
	// invalid or negative.
	Default time.Duration `mapstructure:"default"`
	// Max caps any single wait the server asks for.
	Max time.Duration `mapstructure:"max"`
	// MaxElapsed is the time budget of the rate-limit path per payload,
	// counted from the payload's first throttled response or gate holding for throttling.
	// A throttled response after it drops the payload. It must allow at
	// least three capped waits. A payload that only waits at the gate
	// (others are being throttled) is dropped once MaxElapsed + Max +
	// Jitter has passed without its getting a try.
	MaxElapsed time.Duration `mapstructure:"max_elapsed"`
	// Jitter is the upper bound of a uniform random time added to each
	// wait, so that collectors told the same thing do not return in lockstep.
	Jitter time.Duration `mapstructure:"jitter"`
	_      struct{}
}

// NewDefaultRetryAfterConfig returns the documented defaults.
func NewDefaultRetryAfterConfig() RetryAfterConfig {
	return RetryAfterConfig{
		Default:    5 * time.Second,
		Max:        300 * time.Second,
		MaxElapsed: 30 * time.Minute,
		Jitter:     250 * time.Millisecond,
	}
}

// maxRetryAfterJitter bounds retry_after::jitter: jitter is meant to spread
// clients, not to change the wait the server asked for.
const maxRetryAfterJitter = 5 * time.Second

// Validate names the key and the fix for every bad value.
func (c *RetryAfterConfig) Validate() error {
	var errs []error
	if c.Default < 0 {
		errs = append(errs, fmt.Errorf("retry_after::default: %s must not be negative", c.Default))
	}
	switch {
	case c.Max < minWait:
		errs = append(errs, fmt.Errorf("retry_after::max: %s must be at least %s: Retry-After counts whole seconds, "+
			"and a shorter cap would turn every server's \"wait\" into \"retry now\"", c.Max, minWait))
	case c.Max > maxSingleWait:
		errs = append(errs, fmt.Errorf("retry_after::max: %s must be at most %s, the longest single wait this exporter honours", c.Max, maxSingleWait))
	}
	if c.Default > c.Max {
		errs = append(errs, fmt.Errorf("retry_after::default: %s must not exceed retry_after::max (%s)", c.Default, c.Max))
	}
	threeMax, overflow := mulSaturating(c.Max, 3)
	switch {
	case c.MaxElapsed < 0:
		errs = append(errs, fmt.Errorf("retry_after::max_elapsed: %s must not be negative", c.MaxElapsed))
	case c.MaxElapsed > maxBudget:
		errs = append(errs, fmt.Errorf("retry_after::max_elapsed: %s must be at most %s (a year)", c.MaxElapsed, maxBudget))
	case c.MaxElapsed < threeMax || overflow:
		shown := threeMax.String()
		if overflow {
			shown = "more than " + shown
		}
		errs = append(errs, fmt.Errorf("retry_after::max_elapsed: %s must allow at least three capped waits (3 x retry_after::max = %s)", c.MaxElapsed, shown))
	}
	if c.Jitter < 0 || c.Jitter > maxRetryAfterJitter {
		errs = append(errs, fmt.Errorf("retry_after::jitter: %s must be between 0s and %s", c.Jitter, maxRetryAfterJitter))
	}
	return errors.Join(errs...)
}

// mulSaturating returns d x k for k >= 1, or the largest duration and true
// when the product does not fit.
func mulSaturating(d time.Duration, k int64) (time.Duration, bool) {
	if d > 0 && int64(d) > math.MaxInt64/k {
		return math.MaxInt64, true
	}
	if d < 0 && int64(d) < math.MinInt64/k {
		return math.MinInt64, true
	}
	return d * time.Duration(k), false
}

// UnauthorizedConfig is how the exporter holds a destination that answered
// 401 Unauthorized (on_unauthorized: hold): nothing is sent to it but one
// probe request every ProbeInterval, and nothing is dropped for it.
type UnauthorizedConfig struct {
	// ProbeInterval is the time between two probe requests while held.
	ProbeInterval time.Duration `mapstructure:"probe_interval"`
	_             struct{}
}

// NewDefaultUnauthorizedConfig returns the documented defaults: one probe a
// minute, so that a wrong key costs the backend one request a minute per
// destination and sender.
func NewDefaultUnauthorizedConfig() UnauthorizedConfig {
	return UnauthorizedConfig{ProbeInterval: time.Minute}
}

// minProbeInterval keeps a held destination from being probed into load.
const minProbeInterval = time.Second

// Validate names the key and the fix for every bad value.
func (c *UnauthorizedConfig) Validate() error {
	var errs []error
	switch {
	case c.ProbeInterval < minProbeInterval:
		errs = append(errs, fmt.Errorf("unauthorized::probe_interval: %s must be at least %s", c.ProbeInterval, minProbeInterval))
	case c.ProbeInterval > maxSingleWait:
		errs = append(errs, fmt.Errorf("unauthorized::probe_interval: %s must be at most %s: a destination whose key was fixed would wait that long to be tried again", c.ProbeInterval, maxSingleWait))
	}
	return errors.Join(errs...)
}

// OutageConfig bounds how long a destination may be down (every request
// fails retryably without Retry-After, none succeeds) before the payloads
// waiting for it are dropped.
type OutageConfig struct {
	// MaxDuration is how long a payload may wait out an outage, counted
	// from its first failure. Zero (the default) waits for as long as the
	// queue has room: the queue, not a timer, bounds an outage.
	MaxDuration time.Duration `mapstructure:"max_duration"`
	_           struct{}
}

// NewDefaultOutageConfig returns the documented defaults: no time limit.
func NewDefaultOutageConfig() OutageConfig { return OutageConfig{} }

// Validate names the key and the fix for every bad value.
func (c *OutageConfig) Validate() error {
	var errs []error
	switch {
	case c.MaxDuration < 0:
		errs = append(errs, fmt.Errorf("outage::max_duration: %s must not be negative (0 means no limit)", c.MaxDuration))
	case c.MaxDuration > maxBudget:
		errs = append(errs, fmt.Errorf("outage::max_duration: %s must be at most %s; use 0 for no limit", c.MaxDuration, maxBudget))
	}
	return errors.Join(errs...)
}

// PacingConfig is how the exporter paces a destination that has throttled.
type PacingConfig struct {
	// Enabled turns pacing on; off, a throttle window ends with every
	// waiting payload sent at once, as soon as the probe succeeds.
	Enabled bool `mapstructure:"enabled"`
	// RateLimitHeaders reads RateLimit / RateLimit-Policy (and the earlier
	// RateLimit-* and X-RateLimit-* forms) and waits for the reset when the
	// remaining quota will not cover the next request.
	RateLimitHeaders bool `mapstructure:"ratelimit_headers"`
	// QuietPeriod is how long the learned rate stays after the last
	// refusal; then the destination is unlimited again.
	QuietPeriod time.Duration `mapstructure:"quiet_period"`
	_           struct{}
}

// NewDefaultPacingConfig returns the documented defaults.
func NewDefaultPacingConfig() PacingConfig {
	return PacingConfig{Enabled: true, RateLimitHeaders: true, QuietPeriod: time.Minute}
}

// Validate names the key and the fix for every bad value.
func (c *PacingConfig) Validate() error {
	if c.QuietPeriod < time.Second || c.QuietPeriod > 24*time.Hour {
		return fmt.Errorf("pacing::quiet_period: %s must be between 1s and 24h", c.QuietPeriod)
	}
	return nil
}
