package retry

import (
	"math"
	"time"
)

// BackoffDelay is the wait after the n-th failure on the backoff path
// (n >= 1): InitialInterval x Multiplier^(n-1), no more than MaxInterval,
// plus jitter x Jitter, where jitter is a number in [0, 1).
func BackoffDelay(c BackoffConfig, n int, jitter float64) time.Duration {
	base := float64(c.InitialInterval) * math.Pow(c.Multiplier, float64(n-1))
	d := c.MaxInterval
	if base < float64(c.MaxInterval) {
		d = time.Duration(base)
	}
	return d + Jitter(c.Jitter, jitter)
}

// Jitter scales bound by r in [0, 1).
func Jitter(bound time.Duration, r float64) time.Duration {
	return time.Duration(r * float64(bound))
}
