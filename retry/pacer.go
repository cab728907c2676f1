// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"sync"
	"time"
)

// Pacer spaces the requests to one destination once it has throttled. It
// joins two mechanisms under one lock:
//
//   - a rate controller (rateState: ratecontroller.go, refused.go) that
//     learns a rate, in items per second, from what the backend accepts
//     and refuses, one attempt at a time (never per retry sequence, so
//     retries do not distort it), in the way TCP shares a link: it grows
//     the same amount every second for every exporter and is cut by a
//     share at each refusal, so that exporters sharing a quota converge on
//     equal shares. reserve books a request's slot at that pace; a
//     refusal voids the slots booked before it (their payloads pass the
//     gate again). After QuietPeriod without a refusal the pace is
//     unlimited again;
//   - a quota tracker (quotatracker.go) that reads RateLimit headers: at
//     depart, a request waits when the remaining quota will not cover it,
//     until enough of a refilling quota has come back, or until a window's
//     reset.
//
// Without throttling the rate is unlimited and reserve and depart cost a
// lock each. Readers (Rate, Ceiling, Quota, snapshot) change nothing.
type Pacer struct {
	clock Clock
	cfg   PacingConfig
	// maxWait bounds any pacing wait (retry_after::max).
	maxWait time.Duration

	mu    sync.Mutex
	rate  rateState
	quota quotaTracker
	// meter counts the answers of the last acceptWindow: the accepted rate.
	meter meter
	// inFlight counts the requests depart let go that have no answer yet;
	// answered, once a request waits for one of them to end, is closed at
	// the next answer.
	inFlight int
	answered chan struct{}

	// watchers are told of the changes of the pace worth keeping across a
	// restart (pacekeep.go): kept is the curve they were last told of, and
	// keptVersion counts them.
	watchers    map[int]func(KeptPace)
	nextWatcher int
	kept        keptCurve
	keptVersion uint64
}

// newPacer returns an unlimited pacer.
func newPacer(clock Clock, cfg PacingConfig, maxWait time.Duration) *Pacer {
	return &Pacer{clock: clock, cfg: cfg, maxWait: maxWait, quota: newQuotaTracker()}
}

// PaceSource says why a request was held back by the pacer.
type PaceSource int

const (
	PaceNone PaceSource = iota
	// PaceRate: the learned rate.
	PaceRate
	// PaceQuota: the RateLimit headers said the quota is spent.
	PaceQuota
	// PaceConcurrency: as many requests as the backend takes at once are
	// in flight.
	PaceConcurrency
)

var paceNames = [...]string{"", "rate", "ratelimit", "concurrency"}

func (s PaceSource) String() string { return paceNames[s] }

// paceSlot is a time booked by reserve.
type paceSlot struct {
	// At is when the request may leave.
	At time.Time
	// Source says why At is later than the time of the booking.
	Source PaceSource
	// Answered, when not nil, is closed at the next answer: a request
	// waiting for one in flight to end may ask again then.
	Answered <-chan struct{}
	// InFlight is how many requests are in flight with the one depart let
	// go, itself included.
	InFlight int
	epoch    uint64
}

// reserve books the next slot at the learned pace for a request of items
// items: when it may leave (never later than now + maxWait).
func (p *Pacer) reserve(now time.Time, items int) paceSlot {
	if p == nil || !p.cfg.Enabled {
		return paceSlot{At: now}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = p.rate.At(now, p.cfg.QuietPeriod)
	slot := paceSlot{epoch: p.rate.Epoch}
	p.rate, slot.At, slot.Source = p.rate.Reserve(now, items)
	slot.At = minTime(slot.At, now.Add(p.maxWait))
	return slot
}

// depart is asked when a request is about to leave, after its slot. When
// as many requests are in flight as the backend was seen to take at once,
// it returns a slot whose Answered channel closes at the next answer. When
// the RateLimit headers seen say the remaining quota will not cover it, it
// returns when the quota will (never later than the quota's reset, nor
// than now + maxWait), or, when it waits for an answer to a request in
// flight first, a slot whose Answered channel closes at the next answer.
// The request waits until then and asks again, since answers that come in
// meanwhile may change that. Otherwise it returns now
// and counts the request as gone, so that requests leaving together do not
// all count on the same remainder.
func (p *Pacer) depart(now time.Time) paceSlot {
	if p == nil || !p.cfg.Enabled {
		return paceSlot{At: now}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = p.rate.At(now, p.cfg.QuietPeriod)
	slot := paceSlot{At: now, epoch: p.rate.Epoch}
	if c := p.rate.ConcurrencyAt(now); c > 0 && p.inFlight >= c {
		slot.At, slot.Source, slot.Answered = now.Add(p.maxWait), PaceConcurrency, p.nextAnswerLocked()
		return slot
	}
	if p.cfg.RateLimitHeaders {
		if at, untilAnswer, ok := p.quota.depart(now, p.maxWait); !ok {
			slot.At, slot.Source = at, PaceQuota
			if untilAnswer {
				slot.Answered = p.nextAnswerLocked()
			}
			return slot
		}
	}
	p.inFlight++
	slot.InFlight = p.inFlight
	return slot
}

// nextAnswerLocked is the channel closed at the next answer.
func (p *Pacer) nextAnswerLocked() <-chan struct{} {
	if p.answered == nil {
		p.answered = make(chan struct{})
	}
	return p.answered
}

// answerLocked counts an answer to a request depart let go, and wakes the
// requests waiting for one.
func (p *Pacer) answerLocked() {
	p.inFlight = max(0, p.inFlight-1)
	if p.answered != nil {
		close(p.answered)
		p.answered = nil
	}
}

// unanswered records that a request depart let go got no answer (its
// connection failed).
func (p *Pacer) unanswered() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.unlock()
	p.quota.unanswered()
	p.answerLocked()
	p.rate = p.rate.answeredPending()
}

// current reports whether no refusal has changed the pace since slot was
// booked. A payload whose slot is no longer current passes the gate again.
func (p *Pacer) current(slot paceSlot) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slot.epoch == p.rate.Epoch
}

// accepted records a request of items items, sent at sent, that the
// backend accepted at now, with the answer's headers; inFlight is the
// requests in flight when it left (paceSlot.InFlight; 0 when unknown). It
// reports whether this answer showed the RateLimit headers wrong, so that
// they are ignored from now on (see QuotaHoldBound).
func (p *Pacer) accepted(now, sent time.Time, items, inFlight int, rl RateLimit) (distrusted bool) {
	if p == nil || !p.cfg.Enabled {
		return false
	}
	p.mu.Lock()
	defer p.unlock()
	p.answerLocked()
	distrusted = p.quota.observe(now, rl, p.cfg.RateLimitHeaders, answerAccepted)
	p.rate = p.rate.At(now, p.cfg.QuietPeriod).Accepted(now, sent, items)
	p.meter.add(now, items, items, false, inFlight)
	return distrusted
}

// refused records a request that the backend refused: sent is when it
// left, and r.Bare says whether the answer had no hint (a 429 without a
// usable Retry-After, a 502, 503 or 504); rl is the answer's headers. The
// Pacer fills in what it measured (refusedAnswer's Recent…, MaxAcceptedInFlight).
func (p *Pacer) refused(r refusedAnswer, rl RateLimit) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.unlock()
	r = p.measureLocked(r)
	r.Quota = rl.Present && p.cfg.RateLimitHeaders
	p.answerLocked()
	kind := answerThrottled
	if r.Shed {
		kind = answerOther
	}
	p.quota.observe(r.At, rl, p.cfg.RateLimitHeaders, kind)
	if r.Bare {
		p.meter.add(r.At, 0, r.Items, true, r.InFlight)
	}
	p.rate = p.rate.At(r.At, p.cfg.QuietPeriod).Refused(r)
}

// measureLocked fills in what the pacer measured of a refusal not yet
// counted: the items accepted and sent within acceptWindow, the most
// requests in flight with which an accepted one left, and the other
// requests still in flight.
func (p *Pacer) measureLocked(r refusedAnswer) refusedAnswer {
	recent := p.meter.sum(r.At)
	r.Recent, r.RecentSent, r.MaxAcceptedInFlight = recent.accepted, recent.sent, recent.maxAcceptedInFlight
	if r.Bare {
		r.RecentSent += r.Items
	}
	r.Others = max(p.inFlight-1, 0)
	return r
}

// holdEnded is told that a throttle hold ended: the probe, a request of
// items items, was accepted after failures refusals in a row (counting the
// one that began the hold). When no pace was learned before the hold (the
// backend refused from its first answer on, as a scripted window does),
// the pace starts a slow start (rateState.HoldEnded): a fleet of exporters
// released together by the same window then meets the backend's limit
// gradually instead of all at once. A hold a bare 429 began while nothing
// was known, ended by its first probe, leaves the pace unlimited.
func (p *Pacer) holdEnded(now time.Time, items, failures int) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.unlock()
	p.rate = p.rate.At(now, p.cfg.QuietPeriod).HoldEnded(now, items, failures)
}

// observed records the headers of an answer that was neither accepted nor
// throttled.
func (p *Pacer) observed(now time.Time, rl RateLimit) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.unlock()
	p.answerLocked()
	p.quota.observe(now, rl, p.cfg.RateLimitHeaders, answerOther)
	p.rate = p.rate.answeredPending()
}

// snapshot returns the rate controller's state as of now (a pace older than
// the quiet period reads as unlimited). It changes nothing.
func (p *Pacer) snapshot() rateState {
	if p == nil {
		return rateState{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate.At(p.clock.Now(), p.cfg.QuietPeriod)
}

// Rate returns the pace requests leave at in items per second, 0 when
// unlimited: the learned rate, or a scheduled fixed window's take each
// window (rateState.PaceAt).
func (p *Pacer) Rate() float64 {
	if p == nil {
		return 0
	}
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate.At(now, p.cfg.QuietPeriod).PaceAt(now)
}

// Ceiling returns the ceiling learned at the last refusal (or the slow
// start's first pace) in items per second, 0 when unlimited.
func (p *Pacer) Ceiling() float64 {
	return p.snapshot().Ceiling
}

// Quota returns the last RateLimit answer seen (Present is false when
// none was).
func (p *Pacer) Quota() RateLimit {
	if p == nil {
		return RateLimit{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.quota.quota
}

// lateFacts is what the pacer tells the policy of a refused answer
// (Pacer.lately).
type lateFacts struct {
	// Accepted: the backend accepted a request within acceptWindow before
	// the answer (a bare refusal then has a pace to slow, and a 502, 503
	// or 504 speaks about a backend that takes others).
	Accepted bool
	// Crowding: whether the answer came from crossing a concurrency limit
	// (rateState.Crowding).
	Crowding crowding
	// Unlearned: nothing is known of the destination yet
	// (rateState.Unlearned); BareStart: when a bare 429 came while
	// nothing was (zero when none did).
	Unlearned bool
	BareStart time.Time
	// WindowHold: the destination resets at multiples of windowAlign and
	// this is the first refusal in a row (rateState.WindowHold), not a
	// schedule's check (rateState.checkAnswer).
	WindowHold bool
	// WindowSeen: the destination was seen to reset at a multiple of
	// windowAlign on the clock (rateState.Windowed), not only counted; or
	// the last row that looked like a window's end moved the windows'
	// phase (rateState.PhaseMoved, windowPhaseHold).
	WindowSeen bool
	// RowStart: when the row of bare 429s this refusal belongs to began,
	// when it followed a run of acceptances (rateState.windowRowStart);
	// zero otherwise.
	RowStart time.Time
	// WindowPhase: how far past the clock's multiples of windowAlign the
	// destination's windows begin (rateState.WindowPhase).
	WindowPhase time.Duration
}

// lately is asked of a refused answer r before it is recorded (Refused).
func (p *Pacer) lately(r refusedAnswer) lateFacts {
	if p == nil || !p.cfg.Enabled {
		return lateFacts{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r = p.measureLocked(r)
	s := p.rate.At(r.At, p.cfg.QuietPeriod)
	c, _ := s.Crowding(r)
	if tuning.unlearnedTentative && c == notCrowded {
		s = s.uncrowdedRefusal(r) // as Refused will leave it
	}
	return lateFacts{Accepted: r.Recent > 0, Crowding: c, Unlearned: s.Unlearned(), BareStart: s.BareStart, WindowHold: s.WindowHold() && !s.checkAnswer(r), WindowSeen: s.Windowed || tuning.windowPhaseHold && s.PhaseMoved, RowStart: s.windowRowStart(r), WindowPhase: s.WindowPhase}
}
