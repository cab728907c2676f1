package retry

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrGateDeadline is returned by Acquire when the caller's deadline passes
// while the gate is still closed.
var ErrGateDeadline = errors.New("throttle gate still closed at the payload's rate-limit deadline")

// Gate holds back every sender to one destination while that destination
// has asked to wait. It is a circuit breaker keyed on throttling:
//   - open: everyone sends;
//   - closed until T: nobody sends before T;
//   - at T one sender, the probe, goes first (half-open); the others wait
//     for its outcome. Success opens the gate; another throttle closes it
//     again; any other outcome hands the probe to the next sender.
type Gate struct {
	clock Clock

	mu      sync.Mutex
	closed  bool      // a window is in force (closed or half-open)
	until   time.Time // nobody sends before this
	probing bool      // a probe is out
	changed chan struct{}
}

// NewGate returns an open gate.
func NewGate(clock Clock) *Gate {
	return &Gate{clock: clock, changed: make(chan struct{})}
}

// Acquire waits until the caller may send. probe reports that the caller is
// the half-open probe and must call Release with its outcome. onBlock, if
// not nil, runs once when the caller first has to wait. A zero deadline
// waits for as long as the gate stays closed.
func (g *Gate) Acquire(ctx context.Context, deadline time.Time, onBlock func()) (probe bool, err error) {
	blocked := false
	for {
		g.mu.Lock()
		now := g.clock.Now()
		switch {
		case !g.closed:
			g.mu.Unlock()
			return false, nil
		case !g.probing && !now.Before(g.until):
			g.probing = true
			g.mu.Unlock()
			return true, nil
		}
		if !deadline.IsZero() && !now.Before(deadline) {
			g.mu.Unlock()
			return false, ErrGateDeadline
		}
		wake := g.until
		if g.probing || (!deadline.IsZero() && deadline.Before(wake)) {
			wake = deadline // zero while probing without a deadline: wait for a change only
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
			return false, ctx.Err()
		case <-changed:
		case <-timer:
		}
		stop()
	}
}

// Throttle closes the gate until at least until. It reports whether this
// started a new throttle window (the gate was open).
func (g *Gate) Throttle(until time.Time) (started bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	started = !g.closed
	if started || until.After(g.until) {
		g.until = until
	}
	g.closed = true
	g.probing = false
	g.broadcastLocked()
	return started
}

// Release reports the probe's outcome when it was not a throttle (Throttle
// reports that). success opens the gate and reports that the window ended;
// otherwise the next waiting sender becomes the probe.
func (g *Gate) Release(success bool) (ended bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.probing {
		return false // a throttle during the probe already re-closed the gate
	}
	g.probing = false
	if success {
		g.closed = false
		ended = true
	}
	g.broadcastLocked()
	return ended
}

// State reports whether a window is in force and how long until the gate
// lets the next sender through.
func (g *Gate) State() (closed bool, remaining time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		return false, 0
	}
	return true, max(g.until.Sub(g.clock.Now()), 0)
}

func (g *Gate) broadcastLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Gates shares one Gate per destination URL among the exporters of a
// process, so that every sender to a throttling destination waits.
type Gates struct {
	mu    sync.Mutex
	gates map[string]*sharedGate
}

type sharedGate struct {
	gate *Gate
	refs int
}

// Get returns the gate of url, creating it on first use; call the returned
// release when the exporter shuts down.
func (s *Gates) Get(url string, clock Clock) (*Gate, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = map[string]*sharedGate{}
	}
	sg, ok := s.gates[url]
	if !ok {
		sg = &sharedGate{gate: NewGate(clock)}
		s.gates[url] = sg
	}
	sg.refs++
	var once sync.Once
	return sg.gate, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if sg.refs--; sg.refs == 0 {
				delete(s.gates, url)
			}
		})
	}
}
