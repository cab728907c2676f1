// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"time"
)

// The rate controller: its state (rateState), a plain value that the
// transitions take and return, and the constants that are not tuned. How
// a refusal moves it is in refused.go; the tuning, in pacertuning.go.

// The constants that are not tuned.
const (
	// acceptWindow is how far back the accepted rate and the refused share
	// are measured; firstRefusalSpan is the shortest time the accepted
	// rate is spread over, so that a burst the backend had banked does not
	// pass for its rate.
	acceptWindow     = 2 * time.Second
	firstRefusalSpan = time.Second
	// minCutElapsed is the shortest time a cut spreads what was accepted
	// since the last cut over: a refusal at the very instant a slow start
	// began counts as one a millisecond later.
	minCutElapsed = time.Millisecond
	// maxDoublings bounds a slow start's exponent, so that the pace stays
	// finite however long a slow start lasts unrefused.
	maxDoublings = 60
	// minBareSpan is the shortest time a rate is measured over at a bare
	// cut.
	minBareSpan = 100 * time.Millisecond
	// concurrencyGrowth is how long a learned concurrency limit stays
	// before it grows by one request.
	concurrencyGrowth = 10 * time.Second
)

// A fixed window resets at the multiples of its length on the clock (a
// counter per window, keyed by the time divided by the length), and common
// lengths (10 s, a minute, an hour) are all multiples of windowAlign.
const windowAlign = 10 * time.Second

// windowScheduleSlack is how long after a window's start on the clock the
// first request booked into it leaves.
const windowScheduleSlack = 50 * time.Millisecond

// rateMode is the rate controller's state.
type rateMode uint8

const (
	// rateUnlimited: no pace; requests leave as they come. The controller
	// only counts what is accepted, to learn from at the first refusal.
	rateUnlimited rateMode = iota
	// rateSlowStart: a throttle hold ended before anything was learned;
	// the pace starts at Ceiling (one request a second) and doubles every
	// slowStartDoubling until the next refusal sets a ceiling.
	rateSlowStart
	// ratePaced: a refusal set Ceiling; the pace grows from it.
	ratePaced
)

var rateModeNames = [...]string{"unlimited", "slow_start", "paced"}

func (m rateMode) String() string { return rateModeNames[m] }

// rateState is the rate controller's whole state: a plain value, which
// the transitions below take and return, and which can be copied, compared
// and stored. Rates are in items per second; ItemsPerRequest converts the
// additive step, counted in requests, into items.
type rateState struct {
	Mode rateMode
	// Ceiling is the pace at Since: learned at the last refusal
	// (ratePaced), or a slow start's first pace.
	Ceiling float64
	// Since is when the pace's curve began: the last cut, or the slow
	// start's beginning.
	Since time.Time
	// FirstSlot is the first slot booked since Since (zero until one
	// is): when the first request of the curve left.
	FirstSlot time.Time
	// Next is when the next request may leave at the pace.
	Next time.Time
	// Epoch counts the cuts: a slot booked in another epoch is void.
	Epoch uint64
	// AcceptedRun is how many items were accepted since Since.
	AcceptedRun int
	// Answered and RefusedRun count the answers since Since, and the bare
	// refusals among them.
	Answered, RefusedRun int
	// ItemsPerRequest is the size of the last request answered.
	ItemsPerRequest int
	// FirstAccepted is the first acceptance since the pace was last
	// unlimited.
	FirstAccepted time.Time

	// Bare is set when the last cut came from a refusal without a hint.
	// The pace then climbs from Ceiling back to Plateau, the rate the
	// backend was seen to accept, over Regain, and past it after.
	Bare    bool
	Plateau float64
	Regain  time.Duration
	// Measured is set when Plateau was measured between two refusals
	// (a bucket is empty at both): then a limit refuses nothing at a pace
	// below it, and what is refused there is refused whatever the pace.
	// BackgroundAnswered and BackgroundRefused count those answers, and the
	// bare refusals among them (older cuts' counts weigh less).
	Measured                              bool
	BackgroundAnswered, BackgroundRefused float64

	// Concurrency is the most requests the backend was seen to take at
	// once, learned from refusals that came only with more in flight; 0
	// when no such limit was seen. ConcurrencySince is when it was set.
	Concurrency      int
	ConcurrencySince time.Time
	// Tentative is set while Concurrency comes from a refusal that came
	// before anything was accepted, with other requests still in flight
	// (crowdedFirst): it holds requests back as a learned limit
	// does. Pending counts the answers still due to the requests in flight
	// then: an acceptance among them confirms the limit; when none is
	// accepted, the backend refuses everything and the limit is forgotten
	// (as it is when a hold ends while it is tentative).
	Tentative bool
	Pending   int

	// BareStart is when a bare 429 (not a 502, 503 or 504) came while
	// nothing was known of the destination (rateState.Unlearned), zero
	// when none did: the hold it starts is short (firstBareHold), when
	// that hold's first probe is accepted the pace stays unlimited, and
	// when it is refused the destination is held until
	// retry_after::default after BareStart.
	BareStart time.Time

	// Streak counts the bare 429s in a row: each to a request that left
	// after the previous one came back (at LastRefusal), nothing accepted
	// since (rateState.spaced).
	Streak      int
	LastRefusal time.Time
	// StreakStart is when the first of them came, once there are two.
	StreakStart time.Time
	// Windowed is set when the last row of two or more bare 429s that an
	// acceptance ended was a fixed window that reset at a multiple of
	// windowAlign on the clock (Accepted). WindowProbed is set when only a
	// probe the exporter timed to the multiple (a window hold's, a row's)
	// showed it, which any limiter with room accepts: a schedule started
	// from it checks itself (windowcheck.go); cleared once one confirms it.
	Windowed, WindowProbed bool
	// Run counts the requests accepted since the last row of bare 429s
	// ended; RowStartRun is what Run was when the current (or last) row
	// began, RowWindow whether that row's first refusal held the
	// destination for a window, and PrevRun how many requests were
	// accepted before the last row that showed a window's end (windowRow
	// or more in a row, or a window hold, ending at least windowClosed
	// after that run began), zero when the last row did not.
	// A fixed window takes as many requests in each of its windows: a
	// run as long as the one before it ends where that one did
	// (windowCounted).
	Run, RowStartRun, PrevRun int
	RowWindow                 bool
	// RunStart is when the current run's first request was accepted,
	// RowRunStart when the run before the current (or last) row's was.
	RunStart, RowRunStart time.Time
	// WindowTake is how many requests a fixed window seen on the clock
	// (Windowed) takes, zero when none is known: set when an acceptance
	// shows the window reset, to the run before the row it ended; zero at
	// any refusal. While it is set, Reserve books each request in the
	// first window with room (WindowAt is the window WindowSent requests
	// were booked in), without waiting for the pace.
	WindowTake, WindowSent int
	WindowAt               time.Time
	// WindowLen is the scheduled window's length: windowAlign, or
	// secondWindow for a window learned from the clock's seconds
	// (secondwindow.go).
	WindowLen time.Duration
	// WindowPhase is how far past the clock's multiples of windowAlign
	// the destination's 10 s windows begin, in [0, windowAlign): 0 until
	// a row of bare 429s that looks like a window's end shows the
	// multiples wrong (windowphase.go).
	WindowPhase time.Duration
	// PhaseMoved is set when the last row that looked like a window's end
	// moved WindowPhase, cleared when one ended across a start at the
	// phase: a window hold the runs' counts begin may then last until the
	// next start past retry_after::default (windowPhaseHold).
	PhaseMoved bool

	// Seconds counts requests per clock second, to learn a fixed window
	// of a second (secondwindow.go).
	Seconds secondCounts
	// Check is what a schedule's checks in its first window showed, while
	// it is unconfirmed (windowcheck.go).
	Check windowCheck
}

// refusedAnswer is a refused answer, as the rate controller learns from it.
type refusedAnswer struct {
	// At is when the answer came, Sent when its request left.
	At, Sent time.Time
	// Items is the request's size.
	Items int
	// Probe is set when the request was the probe of a throttle hold.
	Probe bool
	// Bare is set for an answer without a hint (a 429 without a usable
	// Retry-After, a 502, 503 or 504); Shed for a 502, 503 or 504.
	Bare, Shed bool
	// Recent is how many items were accepted within acceptWindow before
	// At, and RecentSent how many were sent, as far as their answers tell
	// (accepted, or refused without a hint).
	Recent, RecentSent int
	// InFlight is how many requests were in flight when this one left
	// (itself included), and MaxAcceptedInFlight the most with which a
	// request accepted within acceptWindow left. Others is how many other
	// requests were still in flight when its answer came.
	InFlight, MaxAcceptedInFlight, Others int
	// Quota is set when the answer carried RateLimit headers the quota
	// tracker reads: they, not a streak of refusals, say when the backend
	// has room again.
	Quota bool
}

// Crowding says whether a refusal came from crossing a limit on the
// requests in flight (a concurrency limit) rather than a rate.
type crowding uint8

const (
	// notCrowded: nothing says so.
	notCrowded crowding = iota
	// crowdedFirst: a 429 with nothing accepted lately, to a request
	// that left with others in flight whose answers are not all in: they
	// may be accepted (the backend takes only so many at once) or refused
	// too (it refuses everything); the requests in flight still tell.
	crowdedFirst
	// crowdedLearned: the request left with more requests in flight than
	// any the backend accepted lately (and more than one).
	crowdedLearned
)

// Crowding is whether r came from crossing a concurrency limit, and the
// limit it shows (0 for none).
func (s rateState) Crowding(r refusedAnswer) (crowding, int) {
	first := r.MaxAcceptedInFlight == 0 && r.Recent == 0 && r.Others > 0 && !r.Shed
	switch {
	case first && r.InFlight <= 1 && tuning.firstCrowdedByOthers:
		// Nothing accepted yet, and it left alone, but the requests that
		// left after it are still out: they may have reached the backend
		// before it (requests that leave together arrive in any order).
		return crowdedFirst, r.Others
	case r.InFlight <= 1:
		return notCrowded, 0
	case s.Concurrency > 0 && !s.Tentative && max(r.InFlight, r.Others+1) > s.Concurrency:
		// Past the limit learned, as it grows (ConcurrencyAt): it has not.
		// (A request that left after this one may have reached the backend
		// before it: those in flight at the answer count too.)
		return crowdedLearned, s.Concurrency
	case r.MaxAcceptedInFlight > 0 && r.InFlight > r.MaxAcceptedInFlight:
		return crowdedLearned, r.MaxAcceptedInFlight
	case first:
		return crowdedFirst, r.InFlight - 1
	}
	return notCrowded, 0
}

// At is the state at now: a pace QuietPeriod after its last cut is
// forgotten and the destination is unlimited again; so is a concurrency
// limit QuietPeriod after it was set.
func (s rateState) At(now time.Time, quiet time.Duration) rateState {
	if s.Concurrency > 0 && now.Sub(s.ConcurrencySince) >= quiet {
		s.Concurrency, s.ConcurrencySince = 0, time.Time{}
	}
	if s.Mode == rateUnlimited || now.Sub(s.Since) < quiet {
		return s
	}
	return rateState{Epoch: s.Epoch, ItemsPerRequest: s.ItemsPerRequest,
		BackgroundAnswered: s.BackgroundAnswered, BackgroundRefused: s.BackgroundRefused,
		Concurrency: s.Concurrency, ConcurrencySince: s.ConcurrencySince, Tentative: s.Tentative, Pending: s.Pending}
}

// Unlearned says whether nothing is known of the destination: the pace is
// unlimited, nothing was accepted since it last was, and no concurrency
// limit is learned.
func (s rateState) Unlearned() bool {
	return s.Mode == rateUnlimited && s.FirstAccepted.IsZero() && s.Concurrency == 0
}

// Rate is the pace at now in items per second, 0 when unlimited: in a
// slow start, Ceiling doubled every slowStartDoubling; after a bare cut,
// a cubic from Ceiling through Plateau at Regain, then Plateau grown by
// bareProbe (times quietProbe when Quiet) times the square of the seconds
// since; otherwise, Ceiling plus paceStepRequests requests a second for
// every second since Since, plus paceProbe of Ceiling times the square of
// those seconds.
func (s rateState) Rate(now time.Time) float64 {
	// (Callers may read the clock before the state was last changed: now
	// may be a little before Since.)
	sec := max(now.Sub(s.Since).Seconds(), 0)
	switch {
	case s.Mode == rateSlowStart:
		return s.Ceiling * math.Exp2(min(sec/tuning.slowStartDoubling.Seconds(), maxDoublings))
	case s.Mode == ratePaced && s.Bare:
		k := max(s.Regain.Seconds(), 1e-3)
		if sec <= k {
			x := 1 - sec/k
			return s.Plateau - (s.Plateau-s.Ceiling)*x*x*x
		}
		probe := tuning.bareProbe
		if s.Quiet() {
			probe *= tuning.quietProbe
		}
		return s.Plateau * (1 + probe*(sec-k)*(sec-k))
	case s.Mode == ratePaced:
		return s.Ceiling*(1+tuning.paceProbe*sec*sec) + requestsToItems(tuning.paceStepRequests, s.ItemsPerRequest)*sec
	}
	return 0
}

// PaceAt is the pace requests leave at, at now, in items per second, 0
// when unlimited: while a fixed window seen on the clock is scheduled, its
// take each window (WindowTake requests per windowAlign); otherwise Rate.
// It is what the pacing rate gauge shows.
func (s rateState) PaceAt(now time.Time) float64 {
	if s.WindowTake > 0 {
		return s.windowRate()
	}
	return s.Rate(now)
}

// windowRate is a scheduled window's take per windowAlign, in items per
// second.
func (s rateState) windowRate() float64 {
	return requestsToItems(float64(s.WindowTake)/s.windowLen().Seconds(), s.ItemsPerRequest)
}

// startSchedule starts the schedule of a fixed window of length whose
// current window began at window and takes take requests, at now: the
// request accepted then counts as the window's first (Accepted counts it
// for the checks too), and the slots booked before are void. Checked, the
// schedule is unconfirmed until its first window's checks tell
// (windowcheck.go).
func (s rateState) startSchedule(now, window time.Time, length time.Duration, take int, checked bool) rateState {
	s.WindowTake, s.WindowSent, s.WindowAt, s.WindowLen = take, 1, window, length
	s.Check = windowCheck{On: checked, At: window}
	s.Epoch++
	s.Next = now
	return s
}

// endSchedule ends a window's schedule (and its checks); the window's
// take learned from the clock's seconds is forgotten with it.
func (s rateState) endSchedule() rateState {
	s.WindowTake, s.WindowSent, s.Seconds.Take, s.Check = 0, 0, 0, windowCheck{}
	return s
}

// windowLen is the scheduled window's length.
func (s rateState) windowLen() time.Duration {
	if s.WindowLen > 0 {
		return s.WindowLen
	}
	return windowAlign
}

// ConcurrencyAt is the most requests that may be in flight at now, 0 for
// no limit: the learned limit, one more for every concurrencyGrowth since
// it was set.
func (s rateState) ConcurrencyAt(now time.Time) int {
	if s.Concurrency == 0 {
		return 0
	}
	return s.Concurrency + int(max(now.Sub(s.ConcurrencySince), 0)/concurrencyGrowth)
}

// Background is the share of requests the backend refuses whatever the
// pace: of those answered at a pace below a measured accepted rate.
func (s rateState) Background() float64 {
	if !s.backgroundRead() {
		return 0
	}
	return min(s.BackgroundRefused/s.BackgroundAnswered, tuning.maxBackground)
}

// Quiet says whether a background share was read and is nil (at most
// quietShare): next to nothing refused at a pace below a measured accepted
// rate (see quietProbe).
func (s rateState) Quiet() bool {
	return s.backgroundRead() && s.BackgroundRefused <= tuning.quietShare*s.BackgroundAnswered
}

// backgroundRead says whether enough answers were counted to read a
// background share from (minBackgroundAnswers).
func (s rateState) backgroundRead() bool {
	return s.BackgroundAnswered >= max(tuning.minBackgroundAnswers, 1)
}

// requestsToItems converts a rate in requests a second into items a second
// at itemsPerRequest (at least one).
func requestsToItems(requests float64, itemsPerRequest int) float64 {
	return requests * float64(max(itemsPerRequest, 1))
}

// Reserve books the next slot at the pace for a request of items items:
// the state with the slot booked, and when the request may leave (now
// when unlimited or ahead of the pace) and why.
func (s rateState) Reserve(now time.Time, items int) (rateState, time.Time, PaceSource) {
	at, source := now, PaceNone
	scheduled := s.WindowTake > 0
	if !scheduled && s.Mode == rateUnlimited {
		return s, at, source
	}
	length := s.windowLen()
	if w := s.scheduledStart(at); scheduled && w.After(s.WindowAt) {
		s.WindowAt, s.WindowSent = w, 0
	}
	if s.Next.After(at) {
		at, source = s.Next, PaceRate
	}
	var gap time.Duration
	if scheduled {
		// A window's take, windowShare times its rate (and while the
		// schedule is unconfirmed its checks, windowCheckGap apart); the
		// next window's start once they are booked.
		if s.WindowSent >= s.windowLimit() {
			s.WindowAt, s.WindowSent = s.WindowAt.Add(length), 0
			at, source = s.WindowAt.Add(windowScheduleSlack), PaceRate
		}
		s.WindowSent++
		gap = time.Duration(float64(length) / (tuning.windowShare * float64(s.WindowTake)))
		if s.WindowSent > s.WindowTake {
			gap = max(gap, tuning.windowCheckGap)
		}
	} else {
		gap = interval(items, s.Rate(at))
	}
	if s.FirstSlot.IsZero() {
		s.FirstSlot = at
	}
	s.Next = at.Add(gap)
	return s, at, source
}

// interval is how long items take at rate items a second.
func interval(items int, rate float64) time.Duration {
	return time.Duration(float64(items) / rate * float64(time.Second))
}

// Accepted counts a request of items items, sent at sent, that the
// backend accepted at now. AcceptedRun counts only the requests sent since
// the pace's curve began: one that left before the last cut and is
// accepted after it says nothing of the new pace. (Counted, a sliding
// window's last acceptance, in flight when the window's exhaustion made a
// cut, measured one request over the cut's first 200 ms as the backend's
// rate: a tenth of it.)
func (s rateState) Accepted(now, sent time.Time, items int) rateState {
	if s.FirstAccepted.IsZero() {
		s.FirstAccepted = now
	} else {
		// Only the destination's first acceptance may be the probe that
		// ends a first bare hold (HoldEnded); after another, BareStart
		// would outlive what it says.
		s.BareStart = time.Time{}
	}
	if s.Mode == rateUnlimited || !sent.Before(s.Since) {
		s.AcceptedRun += items
	}
	s.ItemsPerRequest = items
	moved := false
	if tuning.windowPhase {
		s, moved = s.phaseFromRow(sent)
	}
	switch {
	case moved:
		// The row showed the multiples wrong: this acceptance, which set
		// the new ones, shows no reset at them.
		s.Windowed, s.WindowProbed = false, false
	case s.Streak >= 2:
		s.Windowed, s.WindowProbed = s.windowReset(sent)
	case s.Streak == 1 && s.RowWindow && !s.Windowed:
		// A window hold its runs began, ended by a request accepted just
		// after the multiple it waited for: the window resets there. (When
		// the multiple was too far for a hold, the pace went on, and a
		// request accepted before the next multiple shows no reset.)
		b := s.windowStart(sent)
		s.Windowed = s.LastRefusal.Before(b) && sent.Sub(b) <= tuning.windowSlack
		s.WindowProbed = s.Windowed
	}
	if tuning.windowSchedule && s.Windowed && s.Streak > 0 && s.LastRefusal.Before(s.windowStart(sent)) &&
		float64(s.RowStartRun) >= tuning.measuredRequests {
		// The first request of a window that reset since the row began:
		// the window takes as many as the run before the row. Seen only
		// by a probe timed to the multiple, the schedule checks itself
		// (windowCheck).
		s = s.startSchedule(now, s.windowStart(sent), windowAlign, s.RowStartRun, tuning.windowCheck && s.WindowProbed)
	}
	if tuning.rowMeasure && s.refusedWhatever(now) {
		// The row refused whatever the pace: what the backend accepts is
		// measured from here, at the pace of the moment.
		s = s.bare(now, s.Rate(now), s.Plateau, s.Measured)
	}
	if s.Streak > 0 {
		s.PrevRun = 0
		if (s.Streak >= tuning.windowRow || s.RowWindow) && now.Sub(s.RowRunStart) >= tuning.windowClosed {
			s.PrevRun = s.RowStartRun
		}
		s.Run = 0
	}
	if s.Run == 0 {
		s.RunStart = now
	}
	s.Run++
	s.Streak = 0
	if s.Tentative && s.Pending > 0 {
		// A request in flight with the refused one was accepted: the
		// backend takes several at once.
		s.Tentative, s.Pending = false, 0
	}
	if tuning.secondWindows {
		s = s.secondAccepted(now, sent)
	}
	return s.checkAccepted(now, sent).background(now, false)
}

// refusedWhatever says whether the row of bare 429s (Streak) that an
// answer at now ends or goes on, at a bare pace with nothing scheduled,
// refused whatever the pace: two or more in a row after a run of at least
// rowRun acceptances, the first at least rowAge and rowIntervals intervals
// at the pace of the moment before now.
func (s rateState) refusedWhatever(now time.Time) bool {
	if s.Streak < 2 || s.StreakStart.IsZero() || s.Mode != ratePaced || !s.Bare || s.WindowTake > 0 || float64(s.RowStartRun) < tuning.rowRun {
		return false
	}
	age := max(tuning.rowAge, time.Duration(tuning.rowIntervals*float64(interval(max(s.ItemsPerRequest, 1), s.Rate(now)))))
	return now.Sub(s.StreakStart) >= age
}

// windowReset says whether the row of bare 429s (Streak) that a request
// sent at sent, and accepted, ended was a fixed window that reset at the
// last multiple of windowAlign before sent: the row began at least
// windowClosed before it, its last refusal came at most windowLastRefusal
// before it (or, windowRowProbes, the row followed a run of at least
// measuredRequests acceptances: its hold ended at the multiple to probe
// it), and the request left at most windowSlack after it. (A bucket
// refills at any time: it seldom refuses everything for seconds and takes
// requests again just after such a multiple, and a row it ends elsewhere
// clears Windowed.) probed says the reset was seen only by such a probe:
// the last refusal came earlier, and any limiter with room accepts a
// probe when it comes (rateState.WindowProbed).
func (s rateState) windowReset(sent time.Time) (reset, probed bool) {
	b := s.windowStart(sent)
	refusedClose := b.Sub(s.LastRefusal) <= tuning.windowLastRefusal
	rowProbed := tuning.windowRowProbes && float64(s.RowStartRun) >= tuning.measuredRequests
	reset = s.LastRefusal.Before(b) && sent.Sub(b) <= tuning.windowSlack &&
		(refusedClose || rowProbed) && b.Sub(s.StreakStart) >= tuning.windowClosed
	return reset, reset && !refusedClose
}

// windowRowStart is when the row of bare 429s that r, a bare refusal not
// yet recorded, belongs to (or begins) began, when it followed a run of
// at least measuredRequests acceptances (windowRowProbes); zero
// otherwise.
func (s rateState) windowRowStart(r refusedAnswer) time.Time {
	if !tuning.windowRowProbes || !r.Bare || r.Shed {
		return time.Time{}
	}
	start, run := r.At, s.Run
	switch {
	case s.Streak >= 2:
		start, run = s.StreakStart, s.RowStartRun
	case s.Streak == 1:
		start, run = s.LastRefusal, s.RowStartRun
	}
	if float64(run) < tuning.measuredRequests {
		return time.Time{}
	}
	return start
}

// WindowHold says whether a bare 429 at now, the first in a row, is a
// fixed window's limit reached (Windowed): the destination is held until
// the window resets (Policy); not when it is a schedule's check
// (rateState.checkAnswer): the checks after a refused one decide.
func (s rateState) WindowHold() bool {
	return tuning.windowHolds && (s.Windowed || s.windowCounted()) && s.Streak == 0
}

// windowCounted says whether the requests accepted since the last row of
// bare 429s that showed a window's end are as many as were accepted
// before it, give or take one (an answer in flight across the row's
// start), and at least measuredRequests: a fixed window's limit reached
// again.
func (s rateState) windowCounted() bool {
	return tuning.windowCounts && float64(s.PrevRun) >= tuning.measuredRequests && abs(s.Run-s.PrevRun) <= 1
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// answeredPending counts a refused answer against a tentative concurrency
// limit: when none of the requests in flight with the refusal that set it
// was accepted, it is forgotten.
func (s rateState) answeredPending() rateState {
	if !s.Tentative {
		return s
	}
	s.Pending--
	if s.Pending <= 0 {
		s = s.forgetTentative()
	}
	return s
}

// uncrowdedRefusal is what a refusal r that crossed no concurrency limit
// does to a tentative one: with nothing accepted lately, it is a refusal
// that holds the destination, and the tentative limit is forgotten.
func (s rateState) uncrowdedRefusal(r refusedAnswer) rateState {
	if r.Recent == 0 {
		return s.forgetTentative()
	}
	return s
}

// forgetTentative drops a tentative concurrency limit.
func (s rateState) forgetTentative() rateState {
	if s.Tentative {
		s.Concurrency, s.ConcurrencySince, s.Tentative, s.Pending = 0, time.Time{}, false, 0
	}
	return s
}

// background counts an answer towards the background share when the pace
// is below a measured accepted rate, but for a bare 429 backgroundStreak or
// more in a row: a limit that refuses everything for now, not a share
// refused whatever the pace.
func (s rateState) background(now time.Time, refused bool) rateState {
	s.Answered++
	if refused {
		s.RefusedRun++
	}
	if s.Measured && s.Rate(now) <= s.Plateau && (!refused || s.Streak < tuning.backgroundStreak) {
		s.BackgroundAnswered++
		if refused {
			s.BackgroundRefused++
		}
	}
	return s
}

// HoldEnded starts a slow start at one request of items items a second
// when a throttle hold ended (its probe was accepted after failures
// refusals in a row, counting the one that began the hold) with nothing
// learned: what waited is not released all at once, since nothing says
// what the backend will take. A learned pace is kept, and so is a learned
// concurrency limit, which releases what waited no faster than the
// backend answers (a tentative one is forgotten: the hold came from
// refusals it did not explain). A hold that a bare 429 began while
// nothing was known (BareStart), and whose first probe was accepted,
// leaves the pace unlimited: one refusal says nothing of a limit, and a
// slow start from one request a second, behind a backend that refuses a
// few per cent at random, met a stray refusal at a few requests a second
// and stayed there (a pace learned from it was left below the load for
// tens of seconds).
func (s rateState) HoldEnded(now time.Time, items, failures int) rateState {
	s.ItemsPerRequest = items
	s = s.forgetTentative()
	bareStart := !s.BareStart.IsZero()
	s.BareStart = time.Time{}
	if s.Mode != rateUnlimited || s.Concurrency > 0 {
		// A learned concurrency limit releases what waited no faster
		// than the backend answers.
		return s
	}
	if bareStart && failures <= 1 && tuning.firstBareHold > 0 {
		return s
	}
	return s.restart(now, float64(max(items, 1)), rateSlowStart)
}

// restart starts the pace's curve afresh at now from ceiling, in mode, and
// voids the slots booked so far.
func (s rateState) restart(now time.Time, ceiling float64, mode rateMode) rateState {
	s.Mode, s.Ceiling = mode, ceiling
	s.Since, s.Next, s.AcceptedRun, s.Answered, s.RefusedRun = now, now, 0, 0, 0
	s.FirstSlot = time.Time{}
	s.Bare, s.Plateau, s.Regain, s.Measured = false, 0, 0, false
	s.Epoch++
	return s
}
