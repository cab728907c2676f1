// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package limiter

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Request is what a limiter may count of one request.
type Request struct {
	// Items is the spans, data points or log records it carries.
	Items int
	// Bytes is its body's size as it came over the wire.
	Bytes int
	// ID, when not zero, names the request for the random refusals of
	// Sporadic and Shed: its draw then comes from the seed and the ID
	// alone, so that the same requests are refused whatever order
	// requests arriving together are decided in (a model in virtual time
	// wakes them in any order). Zero draws the seeded sequence's next
	// number.
	ID uint64
}

// Answer is a limiter's decision on one request.
type Answer struct {
	// Status is 200 (accepted), 429 (refused) or 503 (shed).
	Status int
	// Header holds the Retry-After and RateLimit fields the hint asks for;
	// nil when there are none.
	Header http.Header
}

// Accepted reports whether the request was let through.
func (a Answer) Accepted() bool { return a.Status == http.StatusOK }

// Limiter decides requests as its Spec says. Build it with New.
type Limiter struct {
	spec Spec
	rng  *rand.Rand

	tokens  float64   // token kinds: what the bucket holds (below zero: in debt)
	last    time.Time // token kinds: when tokens was brought up to date
	started bool      // token kinds, GCRA: the first request was seen

	tat time.Time // GCRA: the theoretical arrival time

	window time.Time // FixedWindow: the start of the current window
	count  int       // FixedWindow: requests accepted in it

	log []time.Time // SlidingWindow: arrivals accepted within the last Window, oldest first

	open int // InFlight: accepted requests not yet Done
}

// New returns a limiter following s; its buckets start full and its
// windows empty.
func New(s Spec) (*Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &Limiter{spec: s, rng: rand.New(rand.NewPCG(s.Seed, 0x6c696d6974))}, nil
}

// Spec returns the limiter's spec.
func (l *Limiter) Spec() Spec { return l.spec }

// Open returns how many accepted requests are still open (in-flight only
// counts them; the other kinds report 0).
func (l *Limiter) Open() int { return l.open }

// Admit decides a request arriving at now. An accepted request of an
// in-flight limiter stays open until Done is called for it.
//
// With HintRateLimit every answer carries
//
//	RateLimit-Policy: "<kind>";q=<quota>;w=<window>[;qu=<unit>]
//	RateLimit: "<kind>";r=<left>;t=<seconds>
//
// where, by kind: token buckets announce q=<Rate>;w=1 (qu="content-bytes"
// for bytes), r=<what the bucket holds> and t=<seconds until it is full>;
// GCRA q=<Rate>;w=1, r=<requests it would accept now> and t=<seconds until
// the burst is whole again>; windows q=<Limit>;w=<Window>, r=<Limit minus
// those counted> and t=<seconds until the window ends> (fixed) or until
// the oldest counted request leaves it (sliding); in-flight
// q=<Limit>;qu="concurrent-requests" and r=<Limit minus those open>, no w
// or t. Seconds are whole, rounded up; counts are whole, rounded down.
func (l *Limiter) Admit(now time.Time, r Request) Answer {
	s := l.spec
	var ok bool
	var wait time.Duration // until the request would be accepted
	switch s.Kind {
	case Unlimited:
		ok = true
	case TokenItems, TokenBytes:
		ok, wait = l.token(now, r)
	case GCRA:
		ok, wait = l.gcra(now)
	case FixedWindow:
		ok, wait = l.fixed(now)
	case SlidingWindow:
		ok, wait = l.sliding(now)
	case InFlight:
		if ok = l.open < s.Limit; ok {
			l.open++
		}
	case Sporadic, Shed:
		ok = l.draw(r.ID) >= s.Share
	case Flapping:
		ok, wait = l.flapping(now)
	}
	a := Answer{Status: http.StatusOK}
	if !ok {
		a.Status = http.StatusTooManyRequests
		if s.Kind == Shed {
			a.Status = http.StatusServiceUnavailable
		}
	}
	switch s.Hint {
	case HintRetryAfter:
		if !ok {
			a.Header = http.Header{}
			a.Header.Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(wait))))
		}
	case HintRateLimit:
		a.Header = l.rateLimit(now)
	}
	return a
}

// draw is the random number in [0, 1) that decides a request of id.
func (l *Limiter) draw(id uint64) float64 {
	if id == 0 {
		return l.rng.Float64()
	}
	return rand.New(rand.NewPCG(l.spec.Seed, id)).Float64()
}

// Done closes a request Admit accepted at an in-flight limiter; the other
// kinds ignore it.
func (l *Limiter) Done() {
	if l.spec.Kind == InFlight && l.open > 0 {
		l.open--
	}
}

// refill brings a token bucket up to now; the bucket starts full at its
// first request.
func (l *Limiter) refill(now time.Time) {
	s := l.spec
	if !l.started {
		l.started, l.tokens, l.last = true, s.burst(), now
		return
	}
	if d := now.Sub(l.last); d > 0 {
		l.tokens = math.Min(s.burst(), l.tokens+s.Rate*d.Seconds())
		l.last = now
	}
}

func (l *Limiter) token(now time.Time, r Request) (bool, time.Duration) {
	l.refill(now)
	units := float64(r.Items)
	if l.spec.Kind == TokenBytes {
		units = float64(r.Bytes)
	}
	need := math.Min(units, l.spec.burst())
	if l.tokens >= need {
		l.tokens -= units
		return true, 0
	}
	return false, seconds((need - l.tokens) / l.spec.Rate)
}

// interval is GCRA's emission interval, and tolerance how far ahead of now
// the theoretical arrival time may be.
func (l *Limiter) interval() time.Duration { return seconds(1 / l.spec.Rate) }

func (l *Limiter) tolerance() time.Duration {
	return time.Duration((l.spec.burst() - 1) * float64(l.interval()))
}

func (l *Limiter) gcra(now time.Time) (bool, time.Duration) {
	if !l.started {
		l.started, l.tat = true, now
	}
	if earliest := l.tat.Add(-l.tolerance()); now.Before(earliest) {
		return false, earliest.Sub(now)
	}
	l.tat = maxTime(l.tat, now).Add(l.interval())
	return true, 0
}

func (l *Limiter) fixed(now time.Time) (bool, time.Duration) {
	if start := l.spec.WindowStart(now); !start.Equal(l.window) {
		l.window, l.count = start, 0
	}
	if l.count < l.spec.Limit {
		l.count++
		return true, 0
	}
	return false, l.window.Add(l.spec.Window).Sub(now)
}

// flapping refuses for the first Down of each period (a window at
// WindowStart), and says how long until it accepts again.
func (l *Limiter) flapping(now time.Time) (bool, time.Duration) {
	up := l.spec.WindowStart(now).Add(l.spec.Down)
	if now.Before(up) {
		return false, up.Sub(now)
	}
	return true, 0
}

// trim drops from the sliding log what left the window by now.
func (l *Limiter) trim(now time.Time) {
	i := 0
	for i < len(l.log) && !l.log[i].Add(l.spec.Window).After(now) {
		i++
	}
	l.log = l.log[i:]
}

func (l *Limiter) sliding(now time.Time) (bool, time.Duration) {
	l.trim(now)
	if len(l.log) < l.spec.Limit {
		l.log = append(l.log, now)
		return true, 0
	}
	// The request fits once enough of the oldest have left the window.
	return false, l.log[len(l.log)-l.spec.Limit].Add(l.spec.Window).Sub(now)
}

// rateLimit is the RateLimit-Policy and RateLimit pair after a decision at now.
func (l *Limiter) rateLimit(now time.Time) http.Header {
	s := l.spec
	var quota, left float64
	var window, reset time.Duration
	unit := ""
	switch s.Kind {
	case TokenItems, TokenBytes:
		l.refill(now)
		quota, window, left = s.Rate, time.Second, l.tokens
		reset = seconds((s.burst() - l.tokens) / s.Rate)
		if s.Kind == TokenBytes {
			unit = "content-bytes"
		}
	case GCRA:
		quota, window = s.Rate, time.Second
		if l.started {
			// Requests it would accept now, one interval apart in
			// theoretical time, within the tolerance.
			ahead := l.tat.Sub(now)
			left = math.Min(s.burst(), math.Floor(float64(l.tolerance()-ahead)/float64(l.interval()))+1)
			reset = max(0, ahead)
		} else {
			left = s.burst()
		}
	case FixedWindow:
		quota, window = float64(s.Limit), s.Window
		left = float64(s.Limit)
		if s.WindowStart(now).Equal(l.window) {
			left -= float64(l.count)
		}
		reset = s.WindowStart(now).Add(s.Window).Sub(now)
	case SlidingWindow:
		l.trim(now)
		quota, window, left = float64(s.Limit), s.Window, float64(s.Limit-len(l.log))
		if len(l.log) > 0 {
			reset = l.log[0].Add(s.Window).Sub(now)
		}
	case InFlight:
		quota, left, unit = float64(s.Limit), float64(s.Limit-l.open), "concurrent-requests"
	}
	name := `"` + string(s.Kind) + `"`
	policy := name + ";q=" + strconv.FormatInt(int64(math.Round(quota)), 10)
	if window > 0 {
		policy += ";w=" + strconv.Itoa(ceilSeconds(window))
	}
	if unit != "" {
		policy += `;qu="` + unit + `"`
	}
	limit := name + ";r=" + strconv.FormatInt(int64(math.Max(0, math.Floor(left))), 10)
	if s.Kind != InFlight {
		limit += ";t=" + strconv.Itoa(ceilSeconds(reset))
	}
	h := http.Header{}
	h.Set("RateLimit-Policy", policy)
	h.Set("RateLimit", limit)
	return h
}

// seconds turns seconds into a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ceilSeconds rounds d up to whole seconds, forgiving a nanosecond of
// float error in a value that is whole already.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d - time.Nanosecond + time.Second - 1) / time.Second)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
