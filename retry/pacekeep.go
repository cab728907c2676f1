// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

// A pacer lives in memory: a process restarted while it paced a
// destination (behind a bare-429 limiter, an in-flight limit) would start
// unlimited and send everything queued at once into the limit it had
// learned. KeptPace is what a restart keeps of the learned pace (Pacer.Kept,
// Pacer.WatchKept) and gives back to a fresh pacer (Pacer.Restore).
//
// What is kept is the curve and the limit, not the traffic: the mode, the
// ceiling and when the curve began, a bare cut's plateau, regain and
// whether it was measured, the background share's counts, the items per
// request (which turns the additive step into items), the counts since
// the last cut and when the curve's first request left (so that the next
// cut measures what was accepted since, over the time spent sending), and
// a confirmed concurrency limit. Left
// out: the slots booked, the streak of bare 429s, the tentative
// concurrency limit and its pending answers, and the first acceptance:
// all are about requests of the old process, whose answers never come;
// the accepted-rate meter starts empty with the new process, and so does
// the first acceptance it is measured from. Whether the destination was
// seen to reset at a multiple of 10 s (rateState.Windowed), where its
// windows begin when not at the multiples (WindowPhase), and the runs
// of acceptances a fixed window is found by (Run, PrevRun and the rest),
// are left out too: the next window's ends show them again. The RateLimit headers' quota
// is left out too: it is the server's counter, which refills or resets
// while the process is down, and the next answer announces it again.
type KeptPace struct {
	// At is when the pace was read: what a restart shifts its times by.
	At time.Time
	// Version orders the paces a pacer reports: a watcher told of two
	// keeps the higher.
	Version uint64

	Mode     string
	Ceiling  float64
	Since    time.Time
	Bare     bool
	Plateau  float64
	Regain   time.Duration
	Measured bool
	// BackgroundAnswered and BackgroundRefused are the background share's
	// counts.
	BackgroundAnswered, BackgroundRefused float64
	ItemsPerRequest                       int
	// AcceptedRun, Answered and RefusedRun count what came since Since;
	// FirstSlot is when the curve's first request left (zero: none yet),
	// what a slow start's accepted rate is measured from.
	AcceptedRun, Answered, RefusedRun int
	FirstSlot                         time.Time
	// Concurrency is a confirmed concurrency limit (0: none), set at
	// ConcurrencySince.
	Concurrency      int
	ConcurrencySince time.Time
}

// IsZero reports whether k keeps nothing: no pace, no concurrency limit.
func (k KeptPace) IsZero() bool {
	return (k.Mode == "" || k.Mode == rateUnlimited.String()) && k.Concurrency == 0
}

// keptOf is what a restart keeps of s, read at at (s is the state at at:
// rateState.At applied).
func keptOf(s rateState, at time.Time) KeptPace {
	k := KeptPace{At: at, ItemsPerRequest: s.ItemsPerRequest}
	if s.Mode != rateUnlimited {
		k.Mode, k.Ceiling, k.Since = s.Mode.String(), s.Ceiling, s.Since
		k.Bare, k.Plateau, k.Regain, k.Measured = s.Bare, s.Plateau, s.Regain, s.Measured
		k.AcceptedRun, k.Answered, k.RefusedRun, k.FirstSlot = s.AcceptedRun, s.Answered, s.RefusedRun, s.FirstSlot
	}
	if s.Mode != rateUnlimited || s.Concurrency > 0 {
		k.BackgroundAnswered, k.BackgroundRefused = s.BackgroundAnswered, s.BackgroundRefused
	}
	if s.Concurrency > 0 && !s.Tentative {
		k.Concurrency, k.ConcurrencySince = s.Concurrency, s.ConcurrencySince
	}
	return k
}

// keptCurve is what of a state a change worth keeping changes: the curve
// (its mode, ceiling, beginning and a bare cut's shape) and a confirmed
// concurrency limit. An accepted request only moves counts along the same
// curve: not worth a write. Comparable, so that the check every answer
// makes with a watcher costs a comparison.
type keptCurve struct {
	mode             rateMode
	ceiling, plateau float64
	since            time.Time
	bare             bool
	regain           time.Duration
	concurrency      int
	concurrencySince time.Time
}

// curveOf is s's keptCurve.
func curveOf(s rateState) keptCurve {
	var c keptCurve
	if s.Mode != rateUnlimited {
		c.mode, c.ceiling, c.plateau, c.since, c.bare, c.regain = s.Mode, s.Ceiling, s.Plateau, s.Since, s.Bare, s.Regain
	}
	if s.Concurrency > 0 && !s.Tentative {
		c.concurrency, c.concurrencySince = s.Concurrency, s.ConcurrencySince
	}
	return c
}

// resumed is the state a fresh pacer resumes from k at now, and false when
// nothing of it is worth resuming.
//
// A kept pace is resumed only while the pacer, had the process lived on,
// would still know it: less than quiet after the cut that began its curve
// (Since), by the wall clock; a concurrency limit, less than quiet after
// it was set. Older, the pacer would have forgotten it too, and the
// destination is unlimited, as at any start. (Only Since counts, not when
// the pace was written: a pace written at shutdown long after its last
// cut is no fresher for it.)
//
// The curve resumes as it was when it was read: every time in it is
// shifted by the time since (now - At). Nothing was sent meanwhile, so
// nothing was learned and the pace did not grow: growth is the pacer
// probing the backend, which it did not do while down. From then on the
// kept pace is a learned pace like any other: it grows, is cut, and is
// forgotten quiet after its last cut, counted from the restart's shifted
// Since (the time down does not count as quiet: nothing was sent to
// show the limit gone). The slots the old process booked are void: the
// next request may leave at now, the next after it one interval at the
// pace later.
func (k KeptPace) resumed(now time.Time, quiet time.Duration) (rateState, bool) {
	mode, known := rateModeOf(k.Mode)
	if !known || k.At.IsZero() || k.At.After(now) {
		// Another version's mode, or a clock that went back: nothing to
		// trust.
		return rateState{}, false
	}
	shift := now.Sub(k.At)
	s := rateState{Next: now, Epoch: 1, ItemsPerRequest: k.ItemsPerRequest}
	if mode != rateUnlimited && k.Ceiling > 0 && now.Sub(k.Since) < quiet {
		s.Mode, s.Ceiling, s.Since = mode, k.Ceiling, k.Since.Add(shift)
		s.Bare, s.Plateau, s.Regain, s.Measured = k.Bare, k.Plateau, k.Regain, k.Measured
		s.AcceptedRun, s.Answered, s.RefusedRun = k.AcceptedRun, k.Answered, k.RefusedRun
		switch {
		case !k.FirstSlot.IsZero() && !k.FirstSlot.Before(k.Since):
			s.FirstSlot = k.FirstSlot.Add(shift)
		case k.AcceptedRun > 0:
			// Counts without the first request's time (a record of an
			// earlier version), or with one before the curve began (no
			// pacer books that: nothing to trust): measured from the
			// curve's beginning, so that what the old process accepted is
			// not read as the new one's first moments.
			s.FirstSlot = s.Since
		}
	}
	if k.Concurrency > 0 && now.Sub(k.ConcurrencySince) < quiet {
		s.Concurrency, s.ConcurrencySince = k.Concurrency, k.ConcurrencySince.Add(shift)
	}
	if s.Mode == rateUnlimited && s.Concurrency == 0 {
		return rateState{}, false
	}
	s.BackgroundAnswered, s.BackgroundRefused = k.BackgroundAnswered, k.BackgroundRefused
	return s, true
}

// rateModeOf is the mode named name ("" is unlimited); false for a name
// this version does not know.
func rateModeOf(name string) (rateMode, bool) {
	if name == "" {
		return rateUnlimited, true
	}
	for i, n := range rateModeNames {
		if n == name {
			return rateMode(i), true
		}
	}
	return rateUnlimited, false
}

// Kept returns what a restart keeps of the pace as of now (Pacer.Restore
// gives it back). It changes nothing.
func (p *Pacer) Kept() KeptPace {
	if p == nil {
		return KeptPace{}
	}
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	k := keptOf(p.rate.At(now, p.cfg.QuietPeriod), now)
	k.Version = p.keptVersion
	return k
}

// Restore makes a pacer that has learned nothing yet resume the pace k
// (KeptPace.resumed): a pace a previous process learned. A pacer that has
// seen an answer, or a pace too old to resume, is left as it is.
func (p *Pacer) Restore(k KeptPace) bool {
	if p == nil || !p.cfg.Enabled {
		return false
	}
	now := p.clock.Now()
	p.mu.Lock()
	if p.rate != (rateState{}) || p.inFlight > 0 {
		p.mu.Unlock()
		return false
	}
	s, ok := k.resumed(now, p.cfg.QuietPeriod)
	if !ok {
		p.mu.Unlock()
		return false
	}
	p.rate = s
	p.unlock()
	return true
}

// WatchKept calls f with what a restart keeps of the pace (Kept) after
// every change worth keeping (keptCurve: cuts, not acceptances), not
// under the pacer's lock; two calls may overlap, Version orders them. The
// returned function stops it.
func (p *Pacer) WatchKept(f func(KeptPace)) (stop func()) {
	if p == nil {
		return func() {}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.watchers) == 0 {
		p.watchers = map[int]func(KeptPace){}
		p.kept = curveOf(p.rate.At(p.clock.Now(), p.cfg.QuietPeriod))
	}
	id := p.nextWatcher
	p.nextWatcher++
	p.watchers[id] = f
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.watchers, id)
	}
}

// unlock releases the pacer's lock after a change of the rate, and tells
// the watchers when the pace changed in a way worth keeping (a cut, a
// slow start, the pace forgotten, a concurrency limit set, confirmed or
// forgotten: keptCurve).
func (p *Pacer) unlock() {
	if len(p.watchers) == 0 {
		p.mu.Unlock()
		return
	}
	c := curveOf(p.rate)
	if c == p.kept {
		p.mu.Unlock()
		return
	}
	p.kept = c
	p.keptVersion++
	k := keptOf(p.rate, p.clock.Now())
	k.Version = p.keptVersion
	fs := make([]func(KeptPace), 0, len(p.watchers))
	for _, f := range p.watchers {
		fs = append(fs, f)
	}
	p.mu.Unlock()
	for _, f := range fs {
		f(k)
	}
}
