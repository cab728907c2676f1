// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// stoppedClock reads a time the test sets.
type stoppedClock struct{ now time.Time }

func (c *stoppedClock) Now() time.Time { return c.now }

func (c *stoppedClock) After(time.Duration) (<-chan time.Time, func()) {
	return make(chan time.Time), func() {}
}

// TestPacerReadersChangeNothing: the metric callbacks read Rate, Ceiling,
// Quota and State at any time, a quiet period after the last refusal too;
// they leave the pacer as it was, so that a transition with a time read
// before them still sees the pace it had.
func TestPacerReadersChangeNothing(t *testing.T) {
	t0 := time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)
	clock := &stoppedClock{now: t0}
	p := newPacer(clock, NewDefaultPacingConfig(), 5*time.Minute)
	for i := range 10 {
		p.accepted(t0.Add(time.Duration(i)*100*time.Millisecond), t0.Add(time.Duration(i)*100*time.Millisecond), 100, 0, RateLimit{})
	}
	p.refused(refusedAnswer{At: t0.Add(time.Second), Sent: t0.Add(time.Second), Items: 100, Probe: false}, RateLimit{})
	before := p.rate

	clock.now = t0.Add(2 * time.Minute) // past the quiet period
	assert.Zero(t, p.Rate(), "reads as unlimited")
	assert.Zero(t, p.Ceiling(), "reads as unlimited")
	assert.Equal(t, rateUnlimited, p.snapshot().Mode)
	p.Quota()
	assert.Equal(t, before, p.rate, "the readers changed the state")
}
