package retry

import (
	"math"
	"sync"
	"time"
)

// Pacing constants: how the learned rate moves.
const (
	// paceDecrease scales the accepted rate at a refusal.
	paceDecrease = 0.9
	// paceIncrease is the additive increase per second without a refusal,
	// as a share of the rate set at the last refusal.
	paceIncrease = 0.02
	// acceptWindow is how far back the accepted rate is measured.
	acceptWindow = 2 * time.Second
)

// Pacer spaces the requests to one destination once it has throttled. It
// learns a rate, in items per second, from what the backend accepts and
// refuses, one attempt at a time (never per retry sequence, so retries do
// not distort it): at a refusal the rate becomes a little less than what
// was accepted over the last two seconds (multiplicative decrease); every
// second without a refusal it grows by a small fixed step (additive
// increase); after QuietPeriod without a refusal it is unlimited again.
// It also reads RateLimit headers: when the remaining quota will not cover
// the next request, the next request waits for the reset.
//
// Without throttling the rate is unlimited and Reserve costs a lock.
type Pacer struct {
	clock Clock
	cfg   PacingConfig
	// maxWait bounds any pacing wait (retry_after::max).
	maxWait time.Duration

	mu           sync.Mutex
	rate         float64   // items per second; 0 = unlimited
	step         float64   // additive increase per second
	next         time.Time // when the next request may leave at rate
	lastRefusal  time.Time
	lastIncrease time.Time
	accepted     []acceptance // within acceptWindow

	// From RateLimit headers.
	quota     RateLimit
	remaining float64   // local estimate, in the quota's unit
	resetAt   time.Time // when the quota is whole again
	cost      CostEstimator
	lastQuota float64 // remaining in the previous answer, -1 if none
	sent      int     // requests reserved since the previous answer
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

// Reserve books the next slot for a request of items items and returns
// when it may leave (never later than now + maxWait) and why it waits.
func (p *Pacer) Reserve(now time.Time, items int) (time.Time, PaceSource) {
	if p == nil || !p.cfg.Enabled {
		return now, PaceNone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decayLocked(now)
	at, source := now, PaceNone
	if p.rate > 0 {
		if p.next.After(at) {
			at, source = p.next, PaceRate
		}
		p.next = at.Add(time.Duration(float64(items) / p.rate * float64(time.Second)))
	}
	if p.cfg.RateLimitHeaders && p.quota.Present {
		p.sent++
		cost := 1.0 // until learned: the quota's unit may be requests
		if c, ok := p.cost.PerRequest(); ok {
			cost = c
		}
		if p.remaining < cost && p.resetAt.After(at) {
			at, source = p.resetAt, PaceQuota
			// After the reset the quota is whole again, as far as we know.
			p.remaining = p.quotaSizeLocked()
		}
		p.remaining -= cost
	}
	if limit := now.Add(p.maxWait); at.After(limit) {
		at = limit
	}
	return at, source
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
	p.accepted = append(p.accepted, acceptance{at: now, items: items})
	p.trimLocked(now)
	p.decayLocked(now)
	if p.rate > 0 && now.Sub(p.lastIncrease) >= time.Second {
		p.rate += p.step * math.Floor(now.Sub(p.lastIncrease).Seconds())
		p.lastIncrease = now
	}
}

// Refused records a request of items items that the backend refused with a
// throttle (429, or a usable Retry-After), with the answer's headers.
func (p *Pacer) Refused(now time.Time, items int, rl RateLimit) {
	if p == nil || !p.cfg.Enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observeLocked(now, rl)
	p.trimLocked(now)
	// Requests in flight together are refused together: one decrease per
	// window, not per refusal.
	if !p.lastRefusal.IsZero() && now.Sub(p.lastRefusal) < acceptWindow && p.rate > 0 {
		p.lastRefusal = now
		return
	}
	accepted := 0
	for _, a := range p.accepted {
		accepted += a.items
	}
	if accepted == 0 && p.rate == 0 {
		// Nothing accepted to learn a rate from: the hold and its probe
		// are all there is to go by until something is.
		p.lastRefusal = now
		return
	}
	measured := float64(accepted) / acceptWindow.Seconds()
	rate := math.Max(measured*paceDecrease, float64(items)) // at least one request a second
	if p.rate > 0 {
		rate = math.Min(rate, p.rate*paceDecrease)
	}
	p.rate = math.Max(rate, float64(items))
	p.step = p.rate * paceIncrease
	p.lastRefusal, p.lastIncrease = now, now
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
	p.decayLocked(p.clock.Now())
	return p.rate
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
	if p.rate > 0 && now.Sub(p.lastRefusal) >= p.cfg.QuietPeriod {
		p.rate, p.step, p.next = 0, 0, time.Time{}
	}
}

func (p *Pacer) trimLocked(now time.Time) {
	keep := p.accepted[:0]
	for _, a := range p.accepted {
		if now.Sub(a.at) < acceptWindow {
			keep = append(keep, a)
		}
	}
	p.accepted = keep
}

// observeLocked takes the quota an answer reports, and learns from how its
// remaining count fell how much one request costs in the quota's unit.
func (p *Pacer) observeLocked(now time.Time, rl RateLimit) {
	if !p.cfg.RateLimitHeaders || !rl.Present {
		return
	}
	pol, ok := rl.Binding(1)
	if !ok || !pol.HasRemaining {
		return
	}
	remaining := float64(pol.Remaining)
	if p.lastQuota >= 0 && remaining < p.lastQuota {
		p.cost.Observe(int64(p.lastQuota), pol.Remaining, max(p.sent, 1))
	}
	p.lastQuota, p.sent = remaining, 0
	p.quota, p.remaining = rl, remaining
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
