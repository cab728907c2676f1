package retry

import (
	"errors"
	"fmt"
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

// Validate names the key and the fix for every bad value.
func (c *BackoffConfig) Validate() error {
	var errs []error
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("backoff::max_attempts: %d must be at least 1 (1 means no retry)", c.MaxAttempts))
	}
	if c.InitialInterval <= 0 {
		errs = append(errs, fmt.Errorf("backoff::initial_interval: %s must be positive", c.InitialInterval))
	}
	if c.Multiplier < 1 {
		errs = append(errs, fmt.Errorf("backoff::multiplier: %g must be at least 1", c.Multiplier))
	}
	if c.MaxInterval < c.InitialInterval {
		errs = append(errs, fmt.Errorf("backoff::max_interval: %s must be at least initial_interval (%s)", c.MaxInterval, c.InitialInterval))
	}
	if c.Jitter < 0 {
		errs = append(errs, fmt.Errorf("backoff::jitter: %s must not be negative", c.Jitter))
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
	// counted from the payload's first throttled response or closed gate.
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
	if c.Max <= 0 {
		errs = append(errs, fmt.Errorf("retry_after::max: %s must be positive", c.Max))
	}
	if c.Default > c.Max {
		errs = append(errs, fmt.Errorf("retry_after::default: %s must not exceed retry_after::max (%s)", c.Default, c.Max))
	}
	if c.MaxElapsed < 3*c.Max {
		errs = append(errs, fmt.Errorf("retry_after::max_elapsed: %s must allow at least three capped waits (3 x retry_after::max = %s)", c.MaxElapsed, 3*c.Max))
	}
	if c.Jitter < 0 || c.Jitter > maxRetryAfterJitter {
		errs = append(errs, fmt.Errorf("retry_after::jitter: %s must be between 0s and %s", c.Jitter, maxRetryAfterJitter))
	}
	return errors.Join(errs...)
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
	if c.ProbeInterval < minProbeInterval {
		return fmt.Errorf("unauthorized::probe_interval: %s must be at least %s", c.ProbeInterval, minProbeInterval)
	}
	return nil
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
	if c.MaxDuration < 0 {
		return fmt.Errorf("outage::max_duration: %s must not be negative (0 means no limit)", c.MaxDuration)
	}
	return nil
}
