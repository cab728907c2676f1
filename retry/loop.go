// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
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

// SendFunc makes one attempt; attempt is 1-based.
type SendFunc func(ctx context.Context, attempt int) Response

// Loop sends payloads until each is delivered, dropped or interrupted. It
// only carries out what Policy.decide says: pass the gate, send, decide,
// tell the gate, report, wait. One Loop serves every payload of an
// exporter, concurrently.
type Loop struct {
	policy   Policy
	clock    Clock
	gate     *Gate
	pacer    *Pacer
	observe  Observer
	random   func() float64
	waiting  atomic.Int64
	stopCtx  context.Context
	stop     context.CancelFunc
	drainBad atomic.Bool // an attempt after Stop failed retryably
	// drainAtPace: after Stop, a payload is attempted only when the pacer
	// lets it leave at once (KeepInterrupted).
	drainAtPace bool
}

// NewLoop builds a loop that waits on clock, shares gate with every sender
// to the same destination and reports to observe (which may be nil).
func NewLoop(policy Policy, clock Clock, gate *Gate, observe Observer) *Loop {
	if observe == nil {
		observe = func(context.Context, Event) {}
	}
	stopCtx, stop := context.WithCancel(context.Background())
	l := &Loop{policy: policy, clock: clock, gate: gate, observe: observe, random: rand.Float64, stopCtx: stopCtx, stop: stop}
	if policy.Pacing.Enabled {
		l.pacer = gate.Pacer(func() *Pacer { return newPacer(clock, policy.Pacing, policy.RetryAfter.Max) })
	}
	return l
}

// KeepInterrupted tells the loop that a payload it returns Interrupted is
// kept (a persistent queue) and sent by the next process. After Stop, a
// payload then gets its one attempt only when the pacer lets it leave at
// once: at the pace, within a concurrency limit and the RateLimit quota.
// Attempted at once, the payloads the queue's consumers take up between
// Stop and the queue's own shutdown met the limit the pacer had learned
// together (a restart behind a bare-429 GCRA: three refused at once), and
// a refused one is kept anyway. With a queue in memory an interrupted
// payload is lost, and its attempt is its last chance: it is not held back.
// Call it before the loop runs.
func (l *Loop) KeepInterrupted() { l.drainAtPace = true }

// Pacer returns the destination's pacer (nil when pacing is off).
func (l *Loop) Pacer() *Pacer { return l.pacer }

// Stop ends every wait at once; payloads waiting come back Interrupted.
// After Stop, each payload gets at most one attempt, and none once an
// attempt has failed retryably, while the gate holds, or (KeepInterrupted)
// when the pacer would not let it leave at once.
func (l *Loop) Stop() { l.stop() }

// Waiting returns how many payloads are waiting for a retry right now.
func (l *Loop) Waiting() int64 { return l.waiting.Load() }

// Gate returns the destination's gate.
func (l *Loop) Gate() *Gate { return l.gate }

// RunItems sends a payload of items items through send until it is
// delivered, dropped or interrupted. send gets ctx (never cancelled by
// Stop, so an attempt in flight completes).
func (l *Loop) RunItems(ctx context.Context, items int, send SendFunc) Outcome {
	if l.stopCtx.Err() != nil {
		return l.drain(ctx, items, send)
	}
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.stopCtx, cancel)()

	var s payloadState
	var last Response
	for {
		pass, inFlight, err := l.acquire(waitCtx, &s, items)
		if errors.Is(err, errRepass) {
			continue
		}
		if err != nil {
			if errors.Is(err, ErrGateDeadline) {
				reason, _ := l.gate.State()
				_, drop := l.policy.gateDeadline(&s, reason, l.clock.Now())
				if last.Err != nil {
					err = fmt.Errorf("%w; last answer: %w", err, last.Err)
				}
				return Outcome{Kind: Dropped, Reason: drop, Attempts: s.Attempts, Last: last, Err: err}
			}
			return l.interrupted(ctx, s.Attempts, last, err)
		}
		var d Decision
		s, d = l.attempt(ctx, s, pass, inFlight, items, send)
		last = d.response
		switch d.Next {
		case NextDeliver:
			return Outcome{Kind: Delivered, Attempts: s.Attempts, Last: last}
		case NextDrop:
			return Outcome{Kind: Dropped, Reason: d.Drop, Attempts: s.Attempts, Last: last, Err: last.Err}
		case nextInterrupted:
			return l.afterStop(ctx, s.Attempts, last)
		case NextBackoff:
			l.waiting.Add(1)
			err := sleepOn(waitCtx, l.clock, d.Delay)
			l.waiting.Add(-1)
			if err != nil {
				return l.interrupted(ctx, s.Attempts, last, err)
			}
		}
	}
}

// afterStop ends a run whose attempt was cut short by the caller, or failed
// retryably after Stop: such a failure ends the drain for every payload.
func (l *Loop) afterStop(ctx context.Context, attempts int, last Response) Outcome {
	if err := ctx.Err(); err != nil {
		return l.interrupted(ctx, attempts, last, err)
	}
	l.drainBad.Store(true)
	return l.interrupted(ctx, attempts, last, fmt.Errorf("exporter shutting down: %w", last.Err))
}

// ErrYielded is the error of a run that left the loop instead of waiting
// at a held gate, because its caller's yield function said so (WithYield).
var ErrYielded = errors.New("left to wait for the held destination off its consumer")

type yieldKey struct{}

// WithYield returns ctx for a run that, about to wait at a held gate, asks
// yield whether to leave the loop instead: on true the run ends at once,
// Interrupted with ErrYielded, having waited for nothing. A caller with a
// bounded pool of senders (a queue's consumers shared by many
// destinations) uses it to wait for a held destination elsewhere.
func WithYield(ctx context.Context, yield func() bool) context.Context {
	return context.WithValue(ctx, yieldKey{}, yield)
}

// errRepass: the gate began to hold, or a refusal voided the slot, while
// the payload waited for its paced slot; it goes back to the gate.
var errRepass = errors.New("the gate holds again or the pace changed: pass it again")

// acquire waits at the gate within the payload's deadline for the hold,
// then for the slot the pacer gives it. It returns how many requests are
// in flight with this one, itself included (0 without a pacer).
func (l *Loop) acquire(ctx context.Context, s *payloadState, items int) (Pass, int, error) {
	if yield, ok := ctx.Value(yieldKey{}).(func() bool); ok {
		if reason, _ := l.gate.State(); reason != HoldNone && yield() {
			return Pass{}, 0, ErrYielded
		}
	}
	blocked := false
	pass, err := l.gate.Acquire(ctx, func(reason HoldReason, now time.Time) time.Time {
		dl, _ := l.policy.gateDeadline(s, reason, now)
		return dl
	}, func() { blocked = true; l.waiting.Add(1) })
	if blocked {
		l.waiting.Add(-1)
	}
	if err != nil || l.pacer == nil {
		return pass, 0, err
	}
	if err := l.paceWait(ctx, pass, l.pacer.reserve(l.clock.Now(), items)); err != nil {
		return Pass{}, 0, err
	}
	for {
		now := l.clock.Now()
		slot := l.pacer.depart(now)
		if !slot.At.After(now) {
			return pass, slot.InFlight, nil
		}
		if err := l.paceWait(ctx, pass, slot); err != nil {
			return Pass{}, 0, err
		}
	}
}

// paceWait waits for slot (or, for a slot with an Answered channel, for
// the next answer). A payload that is not the gate's probe goes back to
// the gate (errRepass) when, meanwhile, the gate began to hold or a
// refusal voided the slot.
func (l *Loop) paceWait(ctx context.Context, pass Pass, slot paceSlot) error {
	now := l.clock.Now()
	if !slot.At.After(now) {
		return nil
	}
	if slot.Answered == nil {
		l.observe(ctx, Event{Kind: EventPaced, Paced: slot.Source, Decision: Decision{Delay: slot.At.Sub(now), Until: slot.At}})
	}
	l.waiting.Add(1)
	err := sleepOrAnswer(ctx, l.clock, slot.At.Sub(now), slot.Answered)
	l.waiting.Add(-1)
	if slot.Answered != nil {
		l.observe(ctx, Event{Kind: EventPaced, Paced: slot.Source, Decision: Decision{Delay: l.clock.Now().Sub(now), Until: slot.At}})
	}
	if err != nil {
		l.gate.Report(pass, false, HoldNone, time.Time{})
		return err
	}
	if pass.Probe {
		return nil
	}
	if reason, _ := l.gate.State(); reason != HoldNone || !l.pacer.current(slot) {
		return errRepass
	}
	return nil
}

// sleepOrAnswer is sleepOn that also ends when answered (if not nil) is
// closed.
func sleepOrAnswer(ctx context.Context, clock Clock, d time.Duration, answered <-chan struct{}) error {
	if answered == nil {
		return sleepOn(ctx, clock, d)
	}
	ch, stop := clock.After(d)
	defer stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
	case <-answered:
	}
	return nil
}

// attempt sends once, decides, tells the gate and reports. After Stop, or
// when the caller cancelled the attempt, no retry is scheduled and the gate
// is told nothing but a success: the Decision's Next is nextInterrupted.
func (l *Loop) attempt(ctx context.Context, s payloadState, pass Pass, inFlight, items int, send SendFunc) (payloadState, Decision) {
	started := l.clock.Now()
	resp := send(ctx, s.Attempts+1)
	now := l.clock.Now()
	e := Event{Kind: EventAttempt, MaxAttempts: l.policy.Backoff.MaxAttempts, Response: resp, Duration: now.Sub(started), Probe: pass.Probe}
	a := attemptFacts{Response: resp, Now: now, SuccessesAtStart: pass.Successes, Held: pass.Held, HoldFailures: pass.HoldFailures, Random: l.random()}
	if resp.Status != 0 && (resp.Status < 200 || resp.Status > 299) {
		// Read only where a decision may use it: never on the success path.
		a.RetryAfter = parseRetryAfter(resp.Header, now, l.policy.RetryAfter.Max)
		e.ParseDuration = l.clock.Now().Sub(now)
	}
	a.Successes = l.gate.successCount()
	refusal := refusedAnswer{At: now, Sent: started, Items: items, Probe: pass.Probe, Bare: !a.RetryAfter.Usable(),
		Shed: resp.Status != http.StatusTooManyRequests, InFlight: inFlight}
	if resp.Status == http.StatusTooManyRequests || backendAnswer(resp.Status) {
		f := l.pacer.lately(refusal)
		a.AcceptedLately, a.Crowding, a.Unlearned, a.FirstBare, a.WindowHold = f.Accepted, f.Crowding, f.Unlearned, f.BareStart, f.WindowHold
		a.RowStart, a.WindowSeen, a.WindowPhase = f.RowStart, f.WindowSeen, f.WindowPhase
	}
	s, d := l.policy.decide(s, a)
	if l.pacer != nil {
		var rl RateLimit
		if l.policy.Pacing.RateLimitHeaders && hasRateLimitHeader(resp.Header) {
			rl = ParseRateLimit(resp.Header, now)
			if rl.Present || len(rl.Rejected) > 0 {
				e.RateLimit = &rl
			}
		}
		switch {
		case resp.Status == 0:
			l.pacer.unanswered()
		case d.Action == ActionSuccess:
			e.QuotaDistrusted = l.pacer.accepted(now, started, items, inFlight, rl)
		case d.Throttled || d.Path == PathPace:
			l.pacer.refused(refusal, rl)
		default:
			l.pacer.observed(now, rl)
		}
	}
	cancelled := resp.Status == 0 && ctx.Err() != nil
	if cancelled || (l.stopCtx.Err() != nil && (d.Next == NextGate || d.Next == NextBackoff)) {
		d = Decision{Action: d.Action, Reason: d.Reason, Throttled: d.Throttled, RetryAfterUsed: d.RetryAfterUsed, Next: nextInterrupted}
	}
	d.response = resp
	e.Attempt, e.Decision = s.Attempts, d
	if d.RetryAfterUsed {
		ra := a.RetryAfter
		e.RetryAfter = &ra
	}
	if cancelled {
		ctx = context.WithoutCancel(ctx)
	}
	l.observe(ctx, e)
	// A success, or a permanent answer to one payload, shows the
	// destination up: it answers and is neither throttling nor failing.
	up := d.Action == ActionSuccess || (resp.Status != 0 && d.Drop == DropPermanentStatus)
	// A probe accepted after a throttle hold starts the pace before the
	// gate opens: the senders it wakes then find the slow start, not an
	// unlimited pace.
	if up && pass.Probe {
		if reason, _ := l.gate.State(); reason == HoldThrottle {
			l.pacer.holdEnded(now, items, pass.HoldFailures)
		}
	}
	t := l.gate.Report(pass, up, d.Hold, d.Until)
	l.transition(ctx, t, e)
	return s, d
}

// transition reports a hold that began or ended.
func (l *Loop) transition(ctx context.Context, t Transition, cause Event) {
	if t.Ended != HoldNone {
		l.observe(ctx, Event{Kind: EventHoldEnd, Held: t.Ended, Response: cause.Response})
	}
	if t.Began != HoldNone {
		l.observe(ctx, Event{Kind: EventHoldStart, Held: t.Began, Response: cause.Response, Decision: cause.Decision})
	}
}

func (l *Loop) interrupted(ctx context.Context, attempts int, last Response, err error) Outcome {
	return Outcome{Kind: Interrupted, Attempts: attempts, Last: last, Err: err, Shutdown: l.stopCtx.Err() != nil && ctx.Err() == nil}
}

// drain is Run after Stop: one attempt, no waits, and none at all once the
// destination has failed a drain attempt or its gate holds.
func (l *Loop) drain(ctx context.Context, items int, send SendFunc) Outcome {
	if reason, _ := l.gate.State(); reason != HoldNone || l.drainBad.Load() {
		return l.interrupted(ctx, 0, Response{}, errors.New("exporter shutting down; the destination is failing or held, so no attempt was made"))
	}
	inFlight, now := l.drainSlot(items)
	if !now {
		return l.interrupted(ctx, 0, Response{}, errors.New("exporter shutting down; the destination is paced and this payload's turn is not now, so no attempt was made"))
	}
	s, d := l.attempt(ctx, payloadState{}, Pass{Successes: l.gate.successCount()}, inFlight, items, send)
	switch d.Next {
	case NextDeliver:
		return Outcome{Kind: Delivered, Attempts: s.Attempts, Last: d.response}
	case NextDrop:
		return Outcome{Kind: Dropped, Reason: d.Drop, Attempts: s.Attempts, Last: d.response, Err: d.response.Err}
	}
	return l.afterStop(ctx, s.Attempts, d.response)
}

// drainSlot is the pacer's slot for a payload of items items drained after
// Stop, which never waits: whether it may leave now (always, unless
// KeepInterrupted), and the requests in flight as it leaves, as acquire
// returns them.
func (l *Loop) drainSlot(items int) (inFlight int, now bool) {
	if l.pacer == nil || !l.drainAtPace {
		return 0, true
	}
	at := l.clock.Now()
	if slot := l.pacer.reserve(at, items); slot.At.After(at) {
		return 0, false
	}
	slot := l.pacer.depart(at)
	if slot.At.After(at) {
		return 0, false
	}
	return slot.InFlight, true
}

// hasRateLimitHeader reports whether h has any header ParseRateLimit reads,
// so that answers without one cost no parsing.
func hasRateLimitHeader(h http.Header) bool {
	for k := range h {
		if len(k) >= 9 && (strings.EqualFold(k[:9], "RateLimit") || (len(k) >= 11 && strings.EqualFold(k[:11], "X-RateLimit"))) {
			return true
		}
	}
	return false
}
