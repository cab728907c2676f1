// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// TestResumed: what a fresh pacer resumes from a kept pace, as a pure
// function of the kept pace, the clock and the quiet period. A pace is
// resumed while the pacer would still know it (less than quiet after its
// last cut, by the wall clock), with its curve shifted by the time since
// it was read, and its booked slots void (Next at now, a new epoch).
func TestResumed(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const quiet = time.Minute
	// bareCut is a bare cut at t0 as written at the cut: 950 items a
	// second climbing to 1000 over 2 s, measured, a background share.
	bareCut := retry.KeptPace{At: t0, Version: 3, Mode: "paced", Ceiling: 950, Since: t0, Bare: true, Plateau: 1000,
		Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 10, BackgroundRefused: 1, ItemsPerRequest: 100}
	with := func(k retry.KeptPace, f func(*retry.KeptPace)) retry.KeptPace { f(&k); return k }
	tests := []struct {
		name   string
		kept   retry.KeptPace
		now    time.Time
		want   retry.RateState
		wantOK bool
	}{
		{
			name: "written at a bare cut, restarted 20 s later: the curve starts again at the restart, slots void",
			kept: bareCut, now: sec(20), wantOK: true,
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: sec(20), Next: sec(20), Epoch: 1, ItemsPerRequest: 100,
				Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 10, BackgroundRefused: 1},
		},
		{
			name: "written at shutdown 5 s after the cut, restarted 10 s later: shifted by the 10 s down, counts since the cut kept",
			kept: with(bareCut, func(k *retry.KeptPace) {
				k.At, k.AcceptedRun, k.Answered, k.RefusedRun, k.FirstSlot = sec(5), 4700, 48, 1, sec(0.5)
			}),
			now: sec(15), wantOK: true,
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: sec(10), FirstSlot: sec(10.5), Next: sec(15), Epoch: 1, ItemsPerRequest: 100,
				AcceptedRun: 4700, Answered: 48, RefusedRun: 1,
				Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 10, BackgroundRefused: 1},
		},
		{
			// A slow start's cut is what it accepted since its first
			// request: the old process's count must not be read over the
			// new process's first moments.
			name: "counts without the first request's time (an earlier version's record): measured from the curve's beginning",
			kept: with(bareCut, func(k *retry.KeptPace) { k.At, k.AcceptedRun, k.Answered, k.RefusedRun = sec(5), 4700, 48, 1 }),
			now:  sec(15), wantOK: true,
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: sec(10), FirstSlot: sec(10), Next: sec(15), Epoch: 1, ItemsPerRequest: 100,
				AcceptedRun: 4700, Answered: 48, RefusedRun: 1,
				Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 10, BackgroundRefused: 1},
		},
		{
			name: "a first request's time before the curve began (no pacer books that): measured from the curve's beginning",
			kept: with(bareCut, func(k *retry.KeptPace) {
				k.At, k.AcceptedRun, k.Answered, k.RefusedRun, k.FirstSlot = sec(5), 4700, 48, 1, sec(-3)
			}),
			now: sec(15), wantOK: true,
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: sec(10), FirstSlot: sec(10), Next: sec(15), Epoch: 1, ItemsPerRequest: 100,
				AcceptedRun: 4700, Answered: 48, RefusedRun: 1,
				Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 10, BackgroundRefused: 1},
		},
		{
			name: "a slow start resumes doubling from where it was",
			kept: retry.KeptPace{At: sec(3), Mode: "slow_start", Ceiling: 100, Since: sec(1), ItemsPerRequest: 100},
			now:  sec(30), wantOK: true,
			want: retry.RateState{Mode: retry.RateSlowStart, Ceiling: 100, Since: sec(28), Next: sec(30), Epoch: 1, ItemsPerRequest: 100},
		},
		{
			name: "a quiet period after the cut, by the wall clock: forgotten, as the pacer would have",
			kept: bareCut, now: sec(60),
		},
		{
			name: "just inside the quiet period: resumed",
			kept: bareCut, now: sec(59.999), wantOK: true,
			want: retry.RateState{Mode: retry.RatePaced, Ceiling: 950, Since: sec(59.999), Next: sec(59.999), Epoch: 1, ItemsPerRequest: 100,
				Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 10, BackgroundRefused: 1},
		},
		{
			name: "written at shutdown, but its cut a quiet period ago: forgotten (writing it later made it no fresher)",
			kept: with(bareCut, func(k *retry.KeptPace) { k.At = sec(50) }),
			now:  sec(61),
		},
		{
			name: "a concurrency limit resumes growing as it was; the pace, older, is forgotten",
			kept: with(bareCut, func(k *retry.KeptPace) { k.At, k.Concurrency, k.ConcurrencySince = sec(40), 2, sec(30) }),
			now:  sec(70), wantOK: true,
			want: retry.RateState{Next: sec(70), Epoch: 1, ItemsPerRequest: 100, Concurrency: 2, ConcurrencySince: sec(60),
				BackgroundAnswered: 10, BackgroundRefused: 1},
		},
		{
			name: "a concurrency limit alone (unlimited rate)",
			kept: retry.KeptPace{At: sec(1), Mode: "unlimited", ItemsPerRequest: 500, Concurrency: 2, ConcurrencySince: t0},
			now:  sec(5), wantOK: true,
			want: retry.RateState{Next: sec(5), Epoch: 1, ItemsPerRequest: 500, Concurrency: 2, ConcurrencySince: sec(4)},
		},
		{name: "nothing learned: nothing to resume", kept: retry.KeptPace{At: t0, ItemsPerRequest: 100}, now: sec(1)},
		{name: "a mode this version does not know: ignored", kept: with(bareCut, func(k *retry.KeptPace) { k.Mode = "cubic2" }), now: sec(1)},
		{name: "read after now (the clock went back): ignored", kept: with(bareCut, func(k *retry.KeptPace) { k.At = sec(2) }), now: sec(1)},
		{name: "no ceiling: ignored", kept: with(bareCut, func(k *retry.KeptPace) { k.Ceiling = 0 }), now: sec(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.kept.Resumed(tt.now, quiet)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestKeptRoundTrip: a pace read (keptOf) and resumed d later gives at
// every moment after the restart the pace and the concurrency limit the
// old pacer had at the same moment after the read: the curve resumes as
// it was, shifted by the time down.
func TestKeptRoundTrip(t *testing.T) {
	const quiet = time.Minute
	at := t0.Add(3 * time.Second)
	states := map[string]retry.RateState{
		"additive after a Retry-After": {Mode: retry.RatePaced, Ceiling: 1000, Since: t0, Next: at, Epoch: 4, ItemsPerRequest: 100, AcceptedRun: 2000, Answered: 20},
		"bare curve, in its regain": {Mode: retry.RatePaced, Ceiling: 950, Since: t0.Add(2 * time.Second), Next: at, Epoch: 2, ItemsPerRequest: 100,
			Bare: true, Plateau: 1000, Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 8, BackgroundRefused: 1},
		"slow start": {Mode: retry.RateSlowStart, Ceiling: 100, Since: t0, Next: at, Epoch: 1, ItemsPerRequest: 100},
		"slow start, held, then sending": {Mode: retry.RateSlowStart, Ceiling: 100, Since: t0, FirstSlot: t0.Add(time.Second), Next: at, Epoch: 1,
			ItemsPerRequest: 100, AcceptedRun: 300, Answered: 3},
		"concurrency limit": {Next: at, ItemsPerRequest: 500, Concurrency: 3, ConcurrencySince: t0, FirstAccepted: t0},
	}
	for name, s := range states {
		t.Run(name, func(t *testing.T) {
			k := retry.KeptOf(s, at)
			for _, down := range []time.Duration{0, time.Second, 30 * time.Second} {
				restart := at.Add(down)
				r, ok := k.Resumed(restart, quiet)
				require.True(t, ok, "down %s", down)
				assert.Equal(t, restart, r.Next, "the slots booked before are void")
				for _, after := range []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond, 5 * time.Second, 25 * time.Second} {
					assert.InDelta(t, s.Rate(at.Add(after)), r.Rate(restart.Add(after)), 1e-9, "down %s, %s after", down, after)
					assert.Equal(t, s.ConcurrencyAt(at.Add(after)), r.ConcurrencyAt(restart.Add(after)), "down %s, %s after", down, after)
				}
				assert.Equal(t, s.Background(), r.Background())
				if !s.FirstSlot.IsZero() {
					assert.Equal(t, s.FirstSlot.Add(down), r.FirstSlot, "down %s: the first request's time, shifted", down)
					// The slow start's cut, refused 1 s on, is the same.
					cut := func(s retry.RateState, now time.Time) float64 {
						return s.Refused(retry.Refusal{At: now, Sent: now.Add(-time.Millisecond), Items: 100}).Ceiling
					}
					assert.InDelta(t, cut(s, at.Add(time.Second)), cut(r, restart.Add(time.Second)), 1e-9, "down %s: the cut", down)
				}
			}
		})
	}
}

// TestKeptOf: what a restart keeps of a state. The streak, the booked
// slot, the first acceptance and a tentative concurrency limit are about
// the old process's requests: not kept. An unlimited pace keeps nothing.
func TestKeptOf(t *testing.T) {
	s := retry.RateState{Mode: retry.RatePaced, Ceiling: 1000, Since: t0, Next: t0.Add(time.Second), Epoch: 7, ItemsPerRequest: 100,
		FirstAccepted: t0.Add(-time.Minute), Streak: 2, LastRefusal: t0, Concurrency: 2, ConcurrencySince: t0, Tentative: true, Pending: 1}
	k := retry.KeptOf(s, t0.Add(time.Second))
	assert.Equal(t, retry.KeptPace{At: t0.Add(time.Second), Mode: "paced", Ceiling: 1000, Since: t0, ItemsPerRequest: 100}, k)
	assert.True(t, retry.KeptOf(retry.RateState{ItemsPerRequest: 100, AcceptedRun: 500, BackgroundAnswered: 3}, t0).IsZero())
	assert.False(t, k.IsZero())
}

// TestPacerKeptWatchAndRestore: a watcher hears of the cuts, not of the
// requests accepted along the curve; Kept reads without changing the
// pacer; a fresh pacer restored from what the old one kept paces as it
// did, and a pacer that has seen an answer is not restored.
func TestPacerKeptWatchAndRestore(t *testing.T) {
	clock, p := refusedAfterASecondOf1000(t)
	var mu sync.Mutex
	var told []retry.KeptPace
	stop := p.WatchKept(func(k retry.KeptPace) { mu.Lock(); told = append(told, k); mu.Unlock() })
	defer stop()
	heard := func() int { mu.Lock(); defer mu.Unlock(); return len(told) }

	for i := range 30 {
		p.Accepted(clock.Now().Add(time.Duration(i)*10*time.Millisecond), 100, 0, retry.RateLimit{})
	}
	assert.Equal(t, 0, heard(), "accepted requests move counts along the same curve: nothing to write")

	before := p.State()
	kept := p.Kept()
	assert.Equal(t, before, p.State(), "Kept changes nothing")
	assert.Equal(t, "paced", kept.Mode)
	assert.InDelta(t, 1000, kept.Ceiling, 1e-9)

	clock.Advance(2 * time.Second)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100}, retry.RateLimit{})
	require.Equal(t, 1, heard(), "a cut is worth a write")
	mu.Lock()
	last := told[0]
	mu.Unlock()
	assert.Equal(t, uint64(1), last.Version)
	assert.True(t, last.Since.Equal(clock.Now()), "told of the new curve")
	cutRate := p.Rate()

	// A restart 10 s later: a fresh pacer resumes the pace at the cut.
	clock.Advance(10 * time.Second)
	fresh := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	require.True(t, fresh.Restore(last))
	assert.InDelta(t, cutRate, fresh.Rate(), 1e-9, "the pace at the cut, not grown over the time down")
	assert.Equal(t, clock.Now(), fresh.Reserve(clock.Now(), 100).At, "the first request leaves at once")
	assert.Greater(t, fresh.Reserve(clock.Now(), 100).At, clock.Now(), "the next one at the pace")
	assert.False(t, fresh.Restore(last), "a pacer already restored is left as it is")

	used := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	used.Accepted(clock.Now(), 100, 0, retry.RateLimit{})
	assert.False(t, used.Restore(last), "a pacer that has seen an answer is left as it is")
	assert.Zero(t, used.Rate())

	off := retry.NewPacer(clock, retry.PacingConfig{QuietPeriod: time.Minute}, 5*time.Minute)
	assert.False(t, off.Restore(last), "pacing off: nothing to restore")
}

// BenchmarkPacerAccepted is what an accepted answer costs the pacer, with
// no watcher (a memory queue) and with one (a persistent queue keeps the
// pace: every answer checks whether the pace changed in a way worth
// writing).
func BenchmarkPacerAccepted(b *testing.B) {
	for _, watched := range []bool{false, true} {
		b.Run(fmt.Sprintf("watched=%t", watched), func(b *testing.B) {
			clock := retrytest.NewClock(t0)
			p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
			for i := range 10 {
				p.Accepted(t0.Add(time.Duration(i)*100*time.Millisecond), 100, 0, retry.RateLimit{})
			}
			clock.Advance(time.Second)
			p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100}, retry.RateLimit{})
			if watched {
				defer p.WatchKept(func(retry.KeptPace) {})()
			}
			now := clock.Now()
			for b.Loop() {
				p.Accepted(now, 100, 1, retry.RateLimit{})
			}
		})
	}
}

// TestWorthKeeping: the changes a watcher is told of (a write each, at
// most one a second) are the cuts and the concurrency limits, not the
// counts an accepted request moves.
func TestWorthKeeping(t *testing.T) {
	paced := retry.RateState{Mode: retry.RatePaced, Ceiling: 1000, Since: t0, Next: t0, Epoch: 1, ItemsPerRequest: 100}
	with := func(f func(*retry.RateState)) retry.RateState { s := paced; f(&s); return s }
	for _, tt := range []struct {
		name string
		to   retry.RateState
		want bool
	}{
		{"an accepted request", paced.Accepted(t0.Add(time.Second), t0.Add(time.Second), 100), false},
		{"a slot booked", with(func(s *retry.RateState) { s.Next, s.Epoch = t0.Add(time.Second), 2 }), false},
		{"a streak of bare 429s", with(func(s *retry.RateState) { s.Streak, s.LastRefusal = 2, t0 }), false},
		{"a tentative concurrency limit", with(func(s *retry.RateState) { s.Concurrency, s.Tentative, s.Pending = 2, true, 1 }), false},
		{"a cut to the same ceiling, later", with(func(s *retry.RateState) { s.Since = t0.Add(time.Second) }), true},
		{"a cut to another ceiling", with(func(s *retry.RateState) { s.Ceiling = 600 }), true},
		{"a bare cut's curve", with(func(s *retry.RateState) { s.Bare, s.Plateau, s.Regain = true, 1050, 2*time.Second }), true},
		{"a regain of another length", with(func(s *retry.RateState) { s.Regain = time.Second }), true},
		{"the pace forgotten", retry.RateState{ItemsPerRequest: 100}, true},
		{"a concurrency limit", with(func(s *retry.RateState) { s.Concurrency, s.ConcurrencySince = 2, t0 }), true},
	} {
		assert.Equal(t, tt.want, retry.WorthKeeping(paced, tt.to), tt.name)
	}
}
