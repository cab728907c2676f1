package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Response is what one attempt got back.
type Response struct {
	// Status is the HTTP status code, 0 when no response arrived.
	Status int
	// Header holds the response headers.
	Header http.Header
	// Err describes the failure: the transport error when Status is 0, the
	// backend's message otherwise. Nil on success.
	Err error
}

// Policy is what the loop decides with.
type Policy struct {
	Backoff    BackoffConfig
	RetryAfter RetryAfterConfig
	// Overrides replace the default action of a status code.
	Overrides map[int]Action
	// HaltOnUnauthorized stops all sending after the first 401.
	HaltOnUnauthorized bool
}

// Paths a retry can take.
const (
	PathRateLimit = "rate_limit"
	PathBackoff   = "backoff"
)

// Drop reasons the loop reports.
const (
	DropRetriesExhausted        = "retries_exhausted"
	DropThrottleBudgetExhausted = "throttle_budget_exhausted"
	DropPermanentStatus         = "permanent_status"
	DropPermanentError          = "permanent_error"
	DropUnauthorized            = "unauthorized"
	DropUnauthorizedHalt        = "unauthorized_halt"
)

// Loop sends one payload until it is delivered, dropped or interrupted. One
// Loop serves every payload of an exporter, concurrently.
type Loop struct {
	policy   Policy
	clock    Clock
	gate     *Gate
	observe  Observer
	random   func() float64
	halted   atomic.Bool
	waiting  atomic.Int64
	stopCtx  context.Context
	stop     context.CancelFunc
	drainBad atomic.Bool // an attempt after Stop failed retryably
}

// NewLoop builds a loop that waits on clock, shares gate with every sender
// to the same destination and reports to observe (which may be nil).
func NewLoop(policy Policy, clock Clock, gate *Gate, observe Observer) *Loop {
	if observe == nil {
		observe = func(context.Context, Event) {}
	}
	stopCtx, stop := context.WithCancel(context.Background())
	return &Loop{policy: policy, clock: clock, gate: gate, observe: observe, random: rand.Float64, stopCtx: stopCtx, stop: stop}
}

// SetRandom replaces the jitter source (a function returning [0, 1)).
func (l *Loop) SetRandom(r func() float64) { l.random = r }

// Stop ends every wait at once; payloads waiting come back Interrupted.
// After Stop, each payload gets at most one attempt, and none once an
// attempt has failed retryably or while the gate is closed.
func (l *Loop) Stop() { l.stop() }

// Stopping reports whether Stop was called.
func (l *Loop) Stopping() bool { return l.stopCtx.Err() != nil }

// Halted reports whether a 401 has stopped all sending.
func (l *Loop) Halted() bool { return l.halted.Load() }

// Waiting returns how many payloads are waiting for a retry right now.
func (l *Loop) Waiting() int64 { return l.waiting.Load() }

// Run sends a payload through send until it is delivered, dropped or
// interrupted. send gets ctx (never cancelled by Stop, so an attempt in
// flight completes) and the attempt number, 1-based.
func (l *Loop) Run(ctx context.Context, send func(ctx context.Context, attempt int) Response) Outcome {
	if l.halted.Load() {
		return dropped(DropUnauthorizedHalt, 0, Response{}, errHalted)
	}
	if l.stopCtx.Err() != nil {
		return l.drain(ctx, send)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.stopCtx, cancel)()

	r := run{Loop: l}
	for {
		if err := r.passGate(waitCtx); err != nil {
			if errors.Is(err, ErrGateDeadline) {
				return dropped(DropThrottleBudgetExhausted, r.attempt, r.last, err)
			}
			return interrupted(r.attempt, r.last, err)
		}
		if l.halted.Load() {
			r.release(false)
			return dropped(DropUnauthorizedHalt, r.attempt, r.last, errHalted)
		}
		e := r.try(ctx, send)
		if e.Response.Status == 0 && ctx.Err() != nil {
			e.Action, e.Reason = ClassifyError(e.Response.Err)
			r.observe(context.WithoutCancel(ctx), e)
			r.release(false)
			return interrupted(r.attempt, e.Response, ctx.Err())
		}
		if out, done := r.decide(waitCtx, &e); done {
			return out
		}
	}
}

// run is one payload's state.
type run struct {
	*Loop
	attempt       int
	backoffFails  int
	throttleStart time.Time
	probe         bool
	last          Response
}

// try makes the next attempt and returns its (not yet classified) event.
func (r *run) try(ctx context.Context, send func(ctx context.Context, attempt int) Response) Event {
	r.attempt++
	started := r.clock.Now()
	r.last = send(ctx, r.attempt)
	return Event{Kind: EventAttempt, Attempt: r.attempt, MaxAttempts: r.policy.Backoff.MaxAttempts, Response: r.last, Duration: r.clock.Now().Sub(started)}
}

// passGate waits at the destination's gate, within the payload's
// rate-limit budget once the payload has met throttling.
func (r *run) passGate(ctx context.Context) error {
	if closed, _ := r.gate.State(); closed && r.throttleStart.IsZero() {
		r.throttleStart = r.clock.Now()
	}
	// A payload waiting out its own last wait before the budget ends must
	// still get its try: the gate's deadline allows one more capped wait.
	var deadline time.Time
	if !r.throttleStart.IsZero() {
		ra := r.policy.RetryAfter
		deadline = r.throttleStart.Add(ra.MaxElapsed + ra.Max + ra.Jitter)
	}
	blocked := false
	probe, err := r.gate.Acquire(ctx, deadline, func() { blocked = true; r.waiting.Add(1) })
	if blocked {
		r.waiting.Add(-1)
	}
	r.probe = probe
	return err
}

// release hands back the probe, if this payload holds it.
func (r *run) release(success bool) {
	if !r.probe {
		return
	}
	r.probe = false
	if r.gate.Release(success) {
		r.observe(context.Background(), Event{Kind: EventWindowEnd})
	}
}

// decide classifies the attempt in e, reports it, and either ends the run
// or schedules the next attempt.
func (r *run) decide(ctx context.Context, e *Event) (Outcome, bool) {
	resp := e.Response
	if resp.Status == 0 {
		e.Action, e.Reason = ClassifyError(resp.Err)
	} else {
		e.Action, e.Reason = ClassifyStatus(resp.Status, r.policy.Overrides), strconv.Itoa(resp.Status)
	}
	switch e.Action {
	case ActionSuccess:
		r.observe(ctx, *e)
		r.release(true)
		return Outcome{Kind: Delivered, Attempts: r.attempt, Last: resp}, true
	case ActionDrop:
		r.observe(ctx, *e)
		r.release(false)
		reason := DropPermanentStatus
		if resp.Status == 0 {
			reason = DropPermanentError
		}
		return dropped(reason, r.attempt, resp, resp.Err), true
	case ActionUnauthorized:
		r.observe(ctx, *e)
		r.release(false)
		if !r.policy.HaltOnUnauthorized {
			return dropped(DropUnauthorized, r.attempt, resp, resp.Err), true
		}
		if r.halted.CompareAndSwap(false, true) {
			r.observe(ctx, Event{Kind: EventHalt, Response: resp})
		}
		return dropped(DropUnauthorizedHalt, r.attempt, resp, resp.Err), true
	}

	if r.stopCtx.Err() != nil {
		// A retryable failure after Stop, in drain or by an attempt that was
		// in flight at Stop, ends the drain for every payload.
		r.drainBad.Store(true)
		r.observe(ctx, *e)
		r.release(false)
		return interrupted(r.attempt, resp, fmt.Errorf("exporter shutting down: %w", resp.Err)), true
	}
	if resp.Status != 0 {
		started := r.clock.Now()
		ra := ParseRetryAfter(resp.Header, started, r.policy.RetryAfter.Max)
		e.RetryAfter, e.ParseDuration = &ra, r.clock.Now().Sub(started)
		if ra.Usable() || resp.Status == http.StatusTooManyRequests {
			return r.rateLimit(ctx, e, ra)
		}
	}
	return r.backoff(ctx, e)
}

// rateLimit closes the gate for what the server asked; the wait itself
// happens at the gate, shared with every sender to the destination. A
// payload whose rate-limit budget is spent is dropped here, after a try,
// never while it waits.
func (r *run) rateLimit(ctx context.Context, e *Event, ra RetryAfter) (Outcome, bool) {
	now := r.clock.Now()
	e.Throttled = true
	delay, source := ra.Delay, SourceHeader
	if !ra.Usable() {
		delay, source = r.policy.RetryAfter.Default, SourceDefault
	} else if ra.Capped {
		source = SourceCapped
	}
	delay += Jitter(r.policy.RetryAfter.Jitter, r.random())
	until := now.Add(delay)
	if r.throttleStart.IsZero() {
		r.throttleStart = now
	}
	spent := now.Sub(r.throttleStart) >= r.policy.RetryAfter.MaxElapsed
	if !spent {
		e.Path, e.Delay, e.DelaySource, e.Until = PathRateLimit, delay, source, until
	}
	r.observe(ctx, *e)
	r.probe = false // Throttle takes the probe back
	if r.gate.Throttle(until) {
		r.observe(ctx, Event{Kind: EventWindowStart, Response: e.Response, Delay: delay, Until: until})
	}
	if spent {
		return dropped(DropThrottleBudgetExhausted, r.attempt, e.Response, e.Response.Err), true
	}
	return Outcome{}, false
}

// backoff waits the next counted exponential interval, or drops the payload
// when its attempts are spent.
func (r *run) backoff(ctx context.Context, e *Event) (Outcome, bool) {
	r.release(false)
	r.backoffFails++
	e.Path = PathBackoff
	if r.backoffFails >= r.policy.Backoff.MaxAttempts {
		e.Path = ""
		r.observe(ctx, *e)
		return dropped(DropRetriesExhausted, r.attempt, e.Response, e.Response.Err), true
	}
	e.Delay = BackoffDelay(r.policy.Backoff, r.backoffFails, r.random())
	e.Until = r.clock.Now().Add(e.Delay)
	r.observe(ctx, *e)
	r.waiting.Add(1)
	err := Sleep(ctx, r.clock, e.Delay)
	r.waiting.Add(-1)
	if err != nil {
		return interrupted(r.attempt, e.Response, err), true
	}
	return Outcome{}, false
}

// drain is Run after Stop: one attempt, no waits, and none at all once the
// destination has failed a drain attempt or is throttling.
func (l *Loop) drain(ctx context.Context, send func(ctx context.Context, attempt int) Response) Outcome {
	if closed, _ := l.gate.State(); closed || l.drainBad.Load() {
		return interrupted(0, Response{}, errors.New("exporter shutting down; the destination is failing or throttling, so no attempt was made"))
	}
	r := run{Loop: l}
	e := r.try(ctx, send)
	out, _ := r.decide(ctx, &e)
	return out
}

var errHalted = errors.New("sending halted after a 401 Unauthorized: fix the credentials (headers or auth) and restart the collector")
