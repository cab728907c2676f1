// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package retrytest holds test doubles for package retry.
package retrytest // import "github.com/otlphttpretry/otlphttpretry/retry/retrytest"

import (
	"sort"
	"sync"
	"time"
)

// Clock is a fake retry.Clock. Time moves only when a test calls Advance, or,
// with AutoAdvance, whenever somebody waits: then the wait returns at once and
// the clock jumps by the waited duration. Every requested wait is recorded.
type Clock struct {
	mu          sync.Mutex
	now         time.Time
	autoAdvance bool
	timers      []*timer
	waits       []time.Duration
	changed     chan struct{}
}

type timer struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a manual fake clock at start.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start, changed: make(chan struct{})}
}

// NewAutoClock returns a fake clock that advances by every wait asked of it.
func NewAutoClock(start time.Time) *Clock {
	c := NewClock(start)
	c.autoAdvance = true
	return c
}

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After registers a timer d from now.
func (c *Clock) After(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	t := &timer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if c.autoAdvance {
		if d > 0 {
			c.now = c.now.Add(d)
		}
		t.ch <- c.now
		c.fireLocked()
		return t.ch, func() {}
	}
	if !t.at.After(c.now) {
		t.ch <- c.now
	} else {
		c.timers = append(c.timers, t)
	}
	c.notifyLocked()
	return t.ch, func() { c.stop(t) }
}

func (c *Clock) stop(t *timer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			c.notifyLocked()
			return
		}
	}
}

// Advance moves the clock by d and fires every timer that is due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireLocked()
}

func (c *Clock) fireLocked() {
	sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.notifyLocked()
}

func (c *Clock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Pending returns how many timers are waiting.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers blocks until at least n timers are waiting, or timeout passes
// in real time (a guard against a hung test, not a timing assertion); it
// reports whether n were reached.
func (c *Clock) WaitForTimers(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		got, ch := len(c.timers), c.changed
		c.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// Waits returns every duration that was waited for, in order.
func (c *Clock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}
