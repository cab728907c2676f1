// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrGateDeadline is returned by Acquire when the caller's deadline passes
// while the gate still holds.
var ErrGateDeadline = errors.New("the destination was still held at the payload's deadline")

// HoldReason is why a gate holds its destination.
type HoldReason int

const (
	// HoldNone: the gate is open.
	HoldNone HoldReason = iota
	// HoldThrottle: the backend asked to wait (Retry-After, 429).
	HoldThrottle
	// HoldOutage: requests fail retryably and none succeeds.
	HoldOutage
	// HoldUnauthorized: the backend answered 401.
	HoldUnauthorized
)

var holdNames = [...]string{"none", "throttle", "outage", "unauthorized"}

func (r HoldReason) String() string { return holdNames[r] }

// Gate is shared by every sender to one destination. It is in one of three
// states, the same words the logs, the metrics and the README use:
//   - open: everyone sends;
//   - holding (for throttle, outage or unauthorized) until T: nobody sends;
//   - probing: from T on, one sender, the probe, goes first, and the others
//     wait for its outcome. A success opens the gate; a failure of the same
//     kind holds again (outage holds grow along the backoff schedule); any
//     other outcome hands the probe to the next sender.
//
// Only the probe moves a holding gate on. A late answer to a request that
// left before the hold began can lengthen a throttle hold (the server said
// wait), or open an outage hold with a success (the destination is up), and
// nothing else: it never takes or frees the probe.
type Gate struct {
	clock Clock

	mu        sync.Mutex
	reason    HoldReason // HoldNone while open
	until     time.Time  // nobody sends before this
	failures  int        // holds in a row: 1 when the hold began, +1 per failed probe
	probe     uint64     // ticket of the probe out, 0 when none
	tickets   uint64
	successes uint64 // answers that showed the destination up
	changed   chan struct{}
	pacer     *Pacer
	// version counts the changes of (reason, until, failures); watchers
	// are told of each, in Hold.
	version  uint64
	watchers map[int]func(Hold)
	nextW    int
}

// Hold is what a gate holds for, until when, after how many failures in a
// row: what a restart needs to know to go on holding (Snapshot, Restore).
type Hold struct {
	Reason   HoldReason
	Until    time.Time
	Failures int
	// Version orders the holds a gate reports: a watcher told of two
	// keeps the higher.
	Version uint64
}

// Pacer returns the destination's pacer, made by create the first time.
func (g *Gate) Pacer(create func() *Pacer) *Pacer {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pacer == nil {
		g.pacer = create()
	}
	return g.pacer
}

// NewGate returns an open gate.
func NewGate(clock Clock) *Gate {
	return &Gate{clock: clock, changed: make(chan struct{})}
}

// Snapshot returns the gate's hold (Reason HoldNone when open).
func (g *Gate) Snapshot() Hold {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holdLocked()
}

func (g *Gate) holdLocked() Hold {
	if g.reason == HoldNone {
		return Hold{Version: g.version}
	}
	return Hold{Reason: g.reason, Until: g.until, Failures: g.failures, Version: g.version}
}

// Restore makes an open gate hold as h says: a hold a previous process
// was in when it stopped. Its end is kept; once it has passed, the next
// sender is the probe. A gate that already holds, or has seen a success,
// is left as it is.
func (g *Gate) Restore(h Hold) bool {
	g.mu.Lock()
	if h.Reason == HoldNone || g.reason != HoldNone || g.successes > 0 || g.probe != 0 {
		g.mu.Unlock()
		return false
	}
	g.reason, g.until, g.failures = h.Reason, h.Until, max(h.Failures, 1)
	g.broadcastLocked()
	notify := g.changeLocked()
	g.mu.Unlock()
	notify()
	return true
}

// Watch calls f with the gate's hold after every change of it (not under
// the gate's lock; two calls may overlap, Version orders them). The
// returned function stops it.
func (g *Gate) Watch(f func(Hold)) (stop func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.watchers == nil {
		g.watchers = map[int]func(Hold){}
	}
	id := g.nextW
	g.nextW++
	g.watchers[id] = f
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.watchers, id)
	}
}

// changeLocked counts a change of the hold and returns what tells the
// watchers, to call once the lock is released.
func (g *Gate) changeLocked() func() {
	g.version++
	if len(g.watchers) == 0 {
		return func() {}
	}
	h := g.holdLocked()
	fs := make([]func(Hold), 0, len(g.watchers))
	for _, f := range g.watchers {
		fs = append(fs, f)
	}
	return func() {
		for _, f := range fs {
			f(h)
		}
	}
}

// Pass is a sender's permission to send once.
type Pass struct {
	// Probe is set when the sender is the probe of a holding gate.
	Probe bool
	// Successes is the destination's success count when the pass was given.
	Successes uint64
	// Held is the reason of the hold the probe goes out for (HoldNone for
	// a sender that passed an open gate), and HoldFailures the gate's count
	// of holds in a row for it.
	Held         HoldReason
	HoldFailures int
	ticket       uint64
}

// Acquire waits until the caller may send. deadline, if not nil, is asked
// for the caller's deadline whenever the gate holds (a zero time waits for
// as long as the hold lasts) and returns the error to give up with.
// onBlock, if not nil, runs once when the caller first has to wait.
func (g *Gate) Acquire(ctx context.Context, deadline func(HoldReason, time.Time) time.Time, onBlock func()) (Pass, error) {
	blocked := false
	for {
		g.mu.Lock()
		now := g.clock.Now()
		pass := Pass{Successes: g.successes}
		if g.reason == HoldNone {
			g.mu.Unlock()
			return pass, nil
		}
		if g.probe == 0 && !now.Before(g.until) {
			g.tickets++
			g.probe = g.tickets
			pass.Probe, pass.ticket, pass.Held, pass.HoldFailures = true, g.probe, g.reason, g.failures
			g.mu.Unlock()
			return pass, nil
		}
		var dl time.Time
		if deadline != nil {
			dl = deadline(g.reason, now)
		}
		if !dl.IsZero() && !now.Before(dl) {
			g.mu.Unlock()
			return Pass{}, ErrGateDeadline
		}
		wake := g.until
		if g.probe != 0 || (!dl.IsZero() && dl.Before(wake)) {
			wake = dl // zero while a probe is out without a deadline: wait for a change only
		}
		changed := g.changed
		g.mu.Unlock()

		if !blocked && onBlock != nil {
			onBlock()
		}
		blocked = true
		var timer <-chan time.Time
		stop := func() {}
		if !wake.IsZero() {
			timer, stop = g.clock.After(wake.Sub(now))
		}
		select {
		case <-ctx.Done():
			stop()
			return Pass{}, ctx.Err()
		case <-changed:
		case <-timer:
		}
		stop()
	}
}

// Transition is a change of the gate's state that a Report caused.
type Transition struct {
	// Began is the reason of a hold that began (the gate was open), or
	// that replaced a hold of another reason.
	Began HoldReason
	// Ended is the reason of a hold that ended (the gate opened).
	Ended HoldReason
}

// Report tells the gate how the attempt made with pass ended: up (the
// destination answered with a success, or with a permanent status for that
// one payload), or a hold until until for reason, or neither (HoldNone: the
// outcome says nothing about the destination, such as a failure counted
// against the payload itself).
func (g *Gate) Report(pass Pass, up bool, reason HoldReason, until time.Time) (t Transition) {
	g.mu.Lock()
	before := g.holdLocked()
	notify := func() {}
	defer func() {
		if after := g.holdLocked(); after.Reason != before.Reason || !after.Until.Equal(before.Until) || after.Failures != before.Failures {
			notify = g.changeLocked()
		}
		g.mu.Unlock()
		notify()
	}()
	isProbe := pass.Probe && pass.ticket == g.probe
	if isProbe {
		g.probe = 0
	}
	switch {
	case up:
		g.successes++
		if g.reason != HoldNone && (isProbe || g.reason == HoldOutage) {
			t.Ended = g.reason
			g.reason, g.failures, g.probe = HoldNone, 0, 0
		}
	case reason == HoldNone:
		// Says nothing about the destination: a freed probe goes to the
		// next sender.
	case g.reason == HoldNone:
		g.reason, g.until, g.failures = reason, until, 1
		t.Began = reason
	case isProbe:
		if reason != g.reason {
			t.Began = reason
			g.failures = 0
		}
		g.reason, g.until = reason, until
		g.failures++
	case reason == HoldThrottle && until.After(g.until):
		if g.reason != reason {
			t.Began = reason
			g.failures = 1
		}
		g.reason, g.until = reason, until
	}
	g.broadcastLocked()
	return t
}

// State reports why the gate holds (HoldNone when open) and how long until
// it lets the next sender through.
func (g *Gate) State() (HoldReason, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reason == HoldNone {
		return HoldNone, 0
	}
	return g.reason, max(g.until.Sub(g.clock.Now()), 0)
}

func (g *Gate) successCount() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.successes
}

func (g *Gate) broadcastLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Gates shares one Gate per destination among the exporters of a process,
// so that every sender to a held destination waits.
type Gates struct {
	mu    sync.Mutex
	gates map[string]*sharedGate
}

type sharedGate struct {
	gate *Gate
	refs int
}

// Get returns the gate of the destination key, creating it on first use;
// call the returned release when the exporter shuts down.
func (s *Gates) Get(key string, clock Clock) (*Gate, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = map[string]*sharedGate{}
	}
	sg, ok := s.gates[key]
	if !ok {
		sg = &sharedGate{gate: NewGate(clock)}
		s.gates[key] = sg
	}
	sg.refs++
	var once sync.Once
	return sg.gate, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			sg.refs--
			if sg.refs == 0 {
				delete(s.gates, key)
			}
		})
	}
}
