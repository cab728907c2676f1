// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"sync"
	"time"
)

// Pacing constants: how the learned rate moves.
const (
	// paceCut is how much of the pace of the moment a refusal leaves at
	// most (a multiplicative decrease).
	paceCut = 0.6
	// paceStep is how many requests a second the pace gains every second
	// since the last refusal (an additive increase): the same for every
	// exporter sharing a quota, whatever its pace, so that one with a low
	// pace gains on one with a high pace. It is small, so that a single
	// exporter with a small quota is not refused more often for it.
	paceStep = 0.15
	// paceProbe is how fast the rate also grows in proportion to the
	// ceiling: by paceProbe times the square of the seconds since the last
	// refusal (0.5 % after a second, 4.5 % after 3, twice the ceiling after
	// 14), as TCP CUBIC does with its window. A ceiling learned too low is
	// left behind in seconds, however high it is.
	paceProbe = 0.005
	// quotaSlack is how much more of the quota than a request's cost a
	// request waits for when the quota comes back as it goes.
	quotaSlack = 0.05
	// resetAnswerWait is how often requests waiting for the answer to the
	// first request after a quota's reset look again; after
	// resetAnswerLimit without that answer they stop waiting for it.
	resetAnswerWait  = 50 * time.Millisecond
	resetAnswerLimit = time.Second
	// slowStartDoubling is how long the pace takes to double in a slow
	// start.
	slowStartDoubling = time.Second
	// acceptWindow is how far back the accepted rate is measured.
	acceptWindow = 2 * time.Second
)

// Pacer spaces the requests to one destination once it has throttled. It
// learns a rate, in items per second, from what the backend accepts and
// refuses, one attempt at a time (never per retry sequence, so retries do
// not distort it), in the way TCP shares a link: it grows the same amount
// every second for every exporter and is cut by a share at each refusal,
// so that exporters sharing a quota converge on equal shares.
//
// At a refusal, the pace becomes the ceiling: what the backend accepted
// since the previous refusal, over the time since (a token bucket is empty
// at both refusals, so that is its rate), and never more than paceCut of
// the pace of the moment. Requests in flight together with a refused one
// are refused together and cut once; the refused probe of a hold only
// says that the hold goes on. From the ceiling the pace grows by paceStep
// requests a second every second, and in proportion to the ceiling faster
// the longer no refusal comes (paceProbe). A refusal also voids the slots
// booked before it: the payloads that held them pass the gate again. A
// throttle hold that ends before anything was learned starts a slow start
// (see HoldEnded). After QuietPeriod without a refusal the pace is
// unlimited again.
//
// It also reads RateLimit headers (see Depart): a request about to leave
// waits when the remaining quota will not cover it, until enough of a
// refilling quota has come back, or until a window's reset.
//
// Without throttling the rate is unlimited and Reserve and Depart cost a
// lock each.
type Pacer struct {
	clock Clock
	cfg   PacingConfig
	// maxWait bounds any pacing wait (retry_after::max).
	maxWait time.Duration

	mu          sync.Mutex
	ceiling     float64   // items per second accepted before the last refusal; 0 = unlimited
	slowStart   bool      // the pace doubles every slowStartDoubling from ceiling, since lastRefusal
	next        time.Time // when the next request may leave at the pace
	lastRefusal time.Time
	epoch       uint64       // refusals that set the ceiling
	accepted    []acceptance // within acceptWindow
	since       time.Time    // the first acceptance since the pace was last unlimited
	acceptedRun int          // items accepted since the last refusal that set the ceiling
	perRequest  int          // items of the last request answered: paceStep's unit

	// From RateLimit headers.
	quota       RateLimit
	remaining   float64 // local estimate at remainingAt, in the quota's unit
	remainingAt time.Time
	resetAt     time.Time // when the quota is whole again
	cost        CostEstimator
	lastQuota   float64   // remaining in the previous answer, -1 if none
	lastAnswer  time.Time // when the previous answer came
	refill      float64   // units per second the quota comes back at, once seen to (0: at its reset)
	outstanding int       // requests that left and have no answer yet
	afterReset  time.Time // when the first request after a reset went out; the others wait for its answer
}

type acceptance struct {
	at    time.Time
	items int
}

// NewPacer returns an unlimited pacer.
func NewPacer(clock Clock, cfg PacingConfig, maxWait time.Duration) *Pacer {
	return &Pacer{clock: clock, cfg: cfg, maxWait: maxWait, lastQuota: -1}
}

// PaceSource says why a request was held back by the pacer.
type PaceSource int

const (
	PaceNone PaceSource = iota
	// PaceRate: the learned rate.
	PaceRate
	// PaceQuota: the RateLimit headers said the quota is spent.
	PaceQuota
)

var paceNames = [...]string{"", "rate", "ratelimit"}

func (s PaceSource) String() string { return paceNames[s] }

// Slot is a time booked by Reserve.
type Slot struct {
	// At is when the request may leave.
	At time.Time
	// Source says why At is later than the time of the booking.
	Source PaceSource
	epoch  uint64
}

// Reserve books the next slot at the learned pace for a request of items
// items: when it may leave (never later than now + maxWait).
func (p *Pacer) Reserve(now time.Time, items int) Slot {
	if p == nil || !p.cfg.Enabled {
		return Slot{At: now}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decayLocked(now)
	slot := Slot{At: now, epoch: p.epoch}
	if p.ceiling > 0 {
		if p.next.After(slot.At) {
			slot.At, slot.Source = p.next, PaceRate
		}
		p.next = slot.At.Add(time.Duration(float64(items) / p.rateLocked(slot.At) * float64(time.Second)))
	}
	if limit := now.Add(p.maxWait); slot.At.After(limit) {
		slot.At = limit
	}
	return slot
}

// Depart is asked when a request is about to leave, after its slot. When
// the RateLimit headers seen say the remaining quota will not cover it, it
// returns when the quota will (never later than the quota's reset, nor
// than now + maxWait): the request waits until then and asks again, since
// answers that come in meanwhile may change that. Otherwise it returns now
// and counts the request as gone, so that requests leaving together do not
// all count on the same remainder.
func (p *Pacer) Depart(now time.Time) Slot {
	if p == nil || !p.cfg.Enabled || !p.cfg.RateLimitHeaders {
		return Slot{At: now}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	slot := Slot{At: now, epoch: p.epoch}
	if !p.quota.Present || p.lastQuota < 0 {
		return slot
	}
	cost := 1.0 // until learned: the quota's unit may be requests
	if c, ok := p.cost.PerRequest(); ok {
		cost = c
	}
	if limit := now.Add(p.maxWait); p.resetAt.After(limit) {
		// No pacing is longer than retry_after::max: a reset announced
		// further away is taken to come then.
		p.resetAt = limit
	}
	if p.refill == 0 && !p.resetAt.IsZero() && !p.resetAt.After(now) {
		// A window was reset: whole again, as far as we know. One request
		// goes first; its answer tells what is left and what a request
		// costs before the others follow.
		p.remaining, p.remainingAt, p.resetAt = p.quotaSizeLocked(), now, time.Time{}
		p.remaining -= cost
		p.outstanding++
		p.afterReset = now
		return slot
	}
	if !p.afterReset.IsZero() && p.outstanding > 0 && now.Sub(p.afterReset) < resetAnswerLimit {
		slot.At, slot.Source = now.Add(resetAnswerWait), PaceQuota
		return slot
	}
	avail := p.availableLocked(now)
	if avail >= cost || !p.resetAt.After(now) {
		p.remaining, p.remainingAt = avail-cost, now
		p.outstanding++
		return slot
	}
	slot.At, slot.Source = p.resetAt, PaceQuota
	if p.refill > 0 {
		// It comes back as it goes: until enough has, and a little more
		// for the clocks' and the network's slack.
		wait := time.Duration((cost*(1+quotaSlack) - avail) / p.refill * float64(time.Second))
		slot.At = minTime(now.Add(wait), p.resetAt)
	}
	if limit := now.Add(p.maxWait); slot.At.After(limit) {
		slot.At = limit
	}
	return slot
}

// availableLocked is the quota left at t, as far as the answers and the
// requests that left since tell.
func (p *Pacer) availableLocked(t time.Time) float64 {
	avail := p.remaining
	if d := t.Sub(p.remainingAt); d > 0 && p.refill > 0 {
		avail = min(p.quotaSizeLocked(), avail+p.refill*d.Seconds())
	}
	return avail
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Unanswered records that a request Depart let go got no answer (its
// connection failed).
func (p *Pacer) Unanswered() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outstanding = max(0, p.outstanding-1)
	p.afterReset = time.Time{}
}

// Current reports whether no refusal has changed the pace since slot was
// booked. A payload whose slot is no longer current passes the gate again.
func (p *Pacer) Current(slot Slot) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slot.epoch == p.epoch
}

// Accepted records a request of items items that the backend accepted,
// with the answer's headers.
func (p *Pacer) Accepted(now time.Time, items int, rl RateLimit) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observeLocked(now, rl)
	p.decayLocked(now)
	if p.since.IsZero() {
		p.since = now
	}
	p.accepted = append(p.accepted, acceptance{at: now, items: items})
	p.acceptedRun += items
	p.perRequest = items
	p.trimLocked(now)
}

// Refused records a request of items items, sent at sent, that the
// backend refused with a throttle (429, or a usable Retry-After), with the
// answer's headers; probe says whether it was the probe of a throttle
// hold.
func (p *Pacer) Refused(now, sent time.Time, items int, probe bool, rl RateLimit) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observeLocked(now, rl)
	p.decayLocked(now)
	p.trimLocked(now)
	p.perRequest = items
	if p.ceiling > 0 && !p.slowStart && (probe || !sent.After(p.lastRefusal)) {
		// A request that left before the last cut was in flight together
		// with the refused one that made it: one cut for both. A hold's
		// probe went out after the wait the server asked for, not at the
		// pace: its refusal says the hold goes on. (The first refusal in a
		// slow start ends it, however soon.)
		return
	}
	accepted := 0
	for _, a := range p.accepted {
		accepted += a.items
	}
	if accepted == 0 && p.ceiling == 0 {
		// Nothing accepted to learn a rate from: the hold and its probe
		// are all there is to go by until something is.
		p.lastRefusal, p.acceptedRun = now, 0
		return
	}
	var ceiling float64
	if p.ceiling > 0 {
		// A token bucket is empty at both refusals: what it accepted in
		// between, over the time between, is its rate (a little less when
		// it filled up during the hold). Never more than paceCut of the
		// pace of the moment, which was too much.
		// (A refusal at the very instant a slow start began counts as one
		// a millisecond later.)
		// A slow start's pace doubled away from what it had accepted, which
		// is all there is to go by: it is not cut further.
		elapsed := max(now.Sub(p.lastRefusal).Seconds(), 1e-3)
		cut := paceCut
		if p.slowStart {
			cut = 1
		}
		ceiling = min(float64(p.acceptedRun)/elapsed, cut*p.rateLocked(now))
	} else {
		// The first refusal: what was accepted over the last two seconds,
		// or since the first acceptance if that is more recent (over at
		// least a second, so that a burst the backend had banked does not
		// pass for its rate).
		span := min(acceptWindow, max(time.Second, now.Sub(p.since)))
		ceiling = float64(accepted) / span.Seconds()
	}
	p.restartLocked(now, max(ceiling, float64(items)), false) // at least one request a second
}

// restartLocked starts the pace's curve afresh at now from ceiling (a
// slow start's first pace when slowStart), and voids the slots booked so
// far.
func (p *Pacer) restartLocked(now time.Time, ceiling float64, slowStart bool) {
	p.ceiling, p.slowStart = ceiling, slowStart
	p.lastRefusal, p.next, p.acceptedRun = now, now, 0
	p.epoch++
}

// HoldEnded is told that a throttle hold ended: the probe, a request of
// items items, was accepted. When no pace was learned before the hold (the
// backend refused from its first answer on, as a scripted window does),
// what waited is not released all at once, since nothing says what the
// backend will take: the pace starts at one such request a second and
// doubles every second (a slow start) until the next refusal sets a
// ceiling. A fleet of exporters released together by the same window then
// meets the backend's limit gradually instead of all at once.
func (p *Pacer) HoldEnded(now time.Time, items int) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decayLocked(now)
	p.perRequest = items
	if p.ceiling > 0 {
		return
	}
	p.restartLocked(now, float64(max(items, 1)), true)
}

// Observed records the headers of an answer that was neither accepted nor
// throttled.
func (p *Pacer) Observed(now time.Time, rl RateLimit) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observeLocked(now, rl)
}

// Rate returns the learned rate in items per second, 0 when unlimited.
func (p *Pacer) Rate() float64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	p.decayLocked(now)
	if p.ceiling == 0 {
		return 0
	}
	return p.rateLocked(now)
}

// rateLocked is the pace at now: in a slow start, the ceiling doubled
// every slowStartDoubling; otherwise the ceiling at the last refusal, plus
// paceStep requests a second for every second since, plus paceProbe of the
// ceiling times the square of those seconds.
func (p *Pacer) rateLocked(now time.Time) float64 {
	// (Callers read the clock before they lock: now may be a little
	// before the last refusal.)
	s := max(now.Sub(p.lastRefusal).Seconds(), 0)
	if p.slowStart {
		return p.ceiling * math.Exp2(min(s/slowStartDoubling.Seconds(), 60))
	}
	return p.ceiling*(1+paceProbe*s*s) + paceStep*float64(max(p.perRequest, 1))*s
}

// Ceiling returns the ceiling learned at the last refusal (or the slow
// start's first pace) in items per second, 0 when unlimited.
func (p *Pacer) Ceiling() float64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decayLocked(p.clock.Now())
	return p.ceiling
}

// Quota returns the last RateLimit answer seen (Present is false when
// none was).
func (p *Pacer) Quota() RateLimit {
	if p == nil {
		return RateLimit{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.quota
}

func (p *Pacer) decayLocked(now time.Time) {
	if p.ceiling > 0 && now.Sub(p.lastRefusal) >= p.cfg.QuietPeriod {
		p.ceiling, p.next, p.since, p.acceptedRun, p.slowStart = 0, time.Time{}, time.Time{}, 0, false
	}
}

func (p *Pacer) trimLocked(now time.Time) {
	// Acceptances are kept in the order they came: the old ones are a
	// prefix, dropped without looking at the rest (Accepted runs per
	// request).
	i := 0
	for i < len(p.accepted) && now.Sub(p.accepted[i].at) >= acceptWindow {
		i++
	}
	p.accepted = p.accepted[i:]
}

// observeLocked takes the quota an answer reports. It learns how much one
// request costs in the quota's unit from how the remaining count fell since
// the previous answer, and whether the quota comes back as it goes (a token
// bucket: the count rose before the announced reset) or only at its reset
// (a window). Of a bucket it credits the refill, at the policy's q/w, both
// to what a request cost and to what is left as time passes.
func (p *Pacer) observeLocked(now time.Time, rl RateLimit) {
	alone := p.outstanding <= 1              // no other request was in flight with this one
	first := !p.afterReset.IsZero() && alone // the answer to the first request after a reset
	p.outstanding = max(0, p.outstanding-1)
	p.afterReset = time.Time{}
	if !p.cfg.RateLimitHeaders || !rl.Present {
		return
	}
	pol, ok := rl.Binding(1)
	if !ok || !pol.HasRemaining {
		return
	}
	remaining := float64(pol.Remaining)
	size := math.Inf(1)
	if pol.HasQuota {
		size = float64(pol.Quota)
	}
	switch {
	case first && pol.HasQuota:
		// The quota was whole at the reset, and one request was counted.
		p.cost.Observe(pol.Quota, pol.Remaining, 1)
	case p.lastQuota >= 0:
		if remaining > p.lastQuota && now.Before(p.resetAt) && pol.HasQuota && pol.Window > 0 {
			p.refill = size / pol.Window.Seconds()
		}
		credit := 0.0
		if d := now.Sub(p.lastAnswer); d > 0 && p.refill > 0 {
			credit = min(p.refill*d.Seconds(), math.Max(0, size-p.lastQuota))
		}
		// Between two answers to requests that were not in flight
		// together, one request was counted. (Answers to requests in
		// flight together may come in another order than the backend
		// counted them.)
		if alone {
			p.cost.Observe(int64(p.lastQuota+credit), pol.Remaining, 1)
		}
	}
	p.quota, p.lastQuota, p.lastAnswer = rl, remaining, now
	// Requests that left after this one, or are booked to, are not
	// counted in its answer.
	cost, _ := p.cost.PerRequest()
	p.remaining, p.remainingAt = remaining-cost*float64(p.outstanding), now
	switch {
	case pol.HasReset:
		p.resetAt = now.Add(pol.Reset)
	case pol.Window > 0:
		p.resetAt = now.Add(pol.Window)
	default:
		p.resetAt = time.Time{}
	}
}

func (p *Pacer) quotaSizeLocked() float64 {
	if pol, ok := p.quota.Binding(1); ok && pol.HasQuota {
		return float64(pol.Quota)
	}
	return math.Inf(1)
}
