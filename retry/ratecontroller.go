// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"time"
)

// How the learned rate moves after a refusal that came with a Retry-After
// (the server said how long to wait), and after one without a hint: a bare
// 429, or a 502, 503 or 504 while the backend accepts other requests. Such
// an answer says less than a Retry-After: it may come from a limit the pace
// crossed, or from a backend that refuses a share of requests whatever the
// pace (a busy shard, load shedding). The tunable values are the fields of
// pacerTuning, whose default (defaultTuning) every pacer runs with; only
// the model tests run variants of it (export_test.go), to measure each
// value against others. The measurements that chose each value are in
// docs/benchmarks.md ("The pacer's constants"), from
// docs/pacer-variants.json.
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

// pacerTuning is the pacer's tuning: the values that set how far the pace
// is cut and how fast it grows again.
type pacerTuning struct {
	// At the first answer:
	//
	// firstBareHold is how long a bare 429 to a destination the pacer
	// knows nothing of yet (nothing accepted, no pace) holds it, when
	// retry_after::default is longer: such a refusal says nothing of a
	// limit (a backend that refuses a few per cent at random refuses the
	// first request now and then). When the hold's first probe is
	// accepted, the pace stays unlimited (rateState.HoldEnded); when it is
	// refused, the destination is held until retry_after::default after
	// the first refusal (Policy), and a slow start follows the hold. Zero
	// (a variant only: the eighth step's law) holds for
	// retry_after::default and slow-starts after it.
	firstBareHold time.Duration

	// After a refusal with a Retry-After:
	//
	// paceCut is how much of the pace of the moment such a refusal leaves
	// at most (a multiplicative decrease).
	paceCut float64
	// paceStepRequests is how many requests a second the pace gains every
	// second since such a refusal (an additive increase, in requests/s per
	// second): the same for every exporter sharing a quota, whatever its
	// pace, so that one with a low pace gains on one with a high pace.
	paceStepRequests float64
	// paceProbe is how fast the rate also grows in proportion to the
	// ceiling: by paceProbe times the square of the seconds since the last
	// refusal (0.5 % after a second, 4.5 % after 3), as TCP CUBIC does
	// with its window. A ceiling learned too low is left behind in
	// seconds, however high it is.
	paceProbe float64
	// paceMargin is how far below the rate the backend accepted since the
	// last cut a later cut sets the pace at most. Between two refusals a
	// token bucket is empty at both, so that rate is its limit; a pace
	// started at the limit crosses it as soon as it grows, and the next
	// refusal comes within seconds.
	paceMargin float64
	// slowStartDoubling is how long the pace takes to double in a slow
	// start.
	slowStartDoubling time.Duration
	// slowStartFromSend: the cut that ends a slow start is what the
	// backend accepted over the time since the slow start's first slot
	// (rateState.FirstSlot), not since it began. A slow start begun at a
	// refusal whose Retry-After holds the destination sends nothing until
	// the hold ends: measured from its beginning, the hold's silence
	// counted as the backend's rate, and the cut fell to half of it
	// (behind a GCRA whose 100 ms wait is sent as Retry-After: 1). False
	// (a variant only: the eleventh step's law): since it began.
	slowStartFromSend bool

	// After a refusal without a hint:
	//
	// firstBareCut is how far below the rate requests went at the first
	// bare refusal (from unlimited) sets the pace.
	firstBareCut float64
	// firstBareSpan (a variant only; zero, off, in the default): the
	// first bare cut's pace is also at most a firstBareCut below what was
	// accepted over the last firstBareSpan (or since the first acceptance,
	// when longer), so that a bucket's burst, spent before the first
	// refusal, does not pass for its rate (as firstRefusalSpan does after
	// a Retry-After); the plateau it climbs back to is still the rate
	// requests went at. Measured and not kept: docs/benchmarks.md ("The
	// worst cell's start").
	firstBareSpan time.Duration
	// cutFromFirstSlot (a variant only; off in the default): a bare cut's
	// measure of what was accepted since the last cut leaves out the
	// silence before the curve's first request past the one interval it
	// was booked for (a row's spaced requests, a hold): behind a fixed
	// window that silence is the window's reset, not its rate. Measured
	// and not kept: docs/benchmarks.md ("Main after the two start
	// fixes").
	cutFromFirstSlot bool
	// bareMargin is how far below the rate the backend accepted a later
	// bare cut sets the pace, so that a bucket the pace emptied fills
	// again.
	bareMargin float64
	// regainRequests, minRegain and maxRegain set how long the pace takes
	// to climb back to the rate the backend accepted after a bare cut (the
	// plateau): the time of regainRequests requests at that rate, at least
	// minRegain and at most maxRegain. It climbs as a cubic (as TCP
	// CUBIC's window does): fast at first, slowly near the plateau. The
	// bound matters to the members of a fleet behind one limit: each
	// sends a share of it, a request a second or less, and would take tens
	// of seconds to climb back.
	regainRequests float64
	minRegain      time.Duration
	maxRegain      time.Duration
	// bareProbe is how fast the pace grows past the plateau: by bareProbe
	// of it times the square of the seconds since Regain ended.
	bareProbe float64
	// quietProbe multiplies bareProbe once a background share was read
	// (minBackgroundAnswers answers below a measured accepted rate) and
	// nothing was refused there: a limit that refuses nothing below it is
	// only crossed by the probe, and each probe past it costs a refusal.
	// A backend that refuses a share at random, or a limit shared with
	// other senders whose load moves, also refuses below it: the probe
	// stays as fast, to find the room they leave. quietShare is the
	// largest background share that reads as nil: the counts of older cuts
	// fade (backgroundMemory), and one stray refusal among them must not
	// keep the probe fast for good.
	quietProbe float64
	quietShare float64
	// measureRequests and minBareMeasure: after a bare cut, a bare refusal
	// cuts again only after the time of measureRequests requests at the
	// ceiling, and minBareMeasure (what the backend takes at the new pace
	// is not measured before). A 502, 503 or 504 waits
	// shedMeasureRequests instead: a shedding backend refuses a share at
	// any pace, so its refusals come sooner after a cut than a limit's do.
	measureRequests     float64
	shedMeasureRequests float64
	minBareMeasure      time.Duration
	// unlearnedTentative: a bare 429 with nothing accepted and no other
	// request out reads the destination as one nothing is known of even
	// when the refusals before it, with others out, set a tentative
	// concurrency limit (which this refusal forgets): it begins the first
	// bare hold (firstBareHold), not retry_after::default. False (a
	// variant only): the thirteenth step's law.
	unlearnedTentative bool
	// firstCrowdedByOthers: a bare 429 with nothing accepted yet, to a
	// request that left alone while the requests that left after it are
	// still out, is crowded first (a tentative limit of those others):
	// they may have reached the backend before it. False (a variant
	// only): the thirteenth step's law, which read it as a lone refusal
	// (a first bare hold and a slow start behind a concurrency limit).
	firstCrowdedByOthers bool
	// measuredRequests and minMeasured: an accepted rate measured over at
	// least measuredRequests accepted requests and minMeasured says where
	// a limit is (refusals below it do not cut; the background share is
	// measured there); over less, a window's start or a bucket's burst
	// passes for the limit. A first refusal with a Retry-After measured
	// over fewer than measuredRequests requests starts a slow start.
	measuredRequests float64
	minMeasured      time.Duration
	// maxBackground bounds the background share, so that a backend that
	// refuses nearly everything still slows the pace; backgroundMemory is
	// how much of its counts each measured cut keeps (older cuts weigh
	// less).
	maxBackground    float64
	backgroundMemory float64
	// minBackgroundAnswers is the fewest answers a background share is
	// read from: one refusal among one answer is no share. (Behind a 10 s
	// fixed window, one refusal of a streak counted over one answer right
	// after a cut read as a share of 100 %, capped at maxBackground; no
	// later refusal then cut the pace, which grew without bound through
	// every hold: over 36 s of load, 44-60 % of the requests refused.)
	minBackgroundAnswers float64
	// backgroundAlpha: at a pace past a measured accepted rate, a bare
	// refusal cuts only when the refusals since the last cut are more than
	// the background share would give but with a chance below
	// backgroundAlpha (a binomial test over the answers since the cut): a
	// backend that refuses a few per cent at random refuses several close
	// together now and then, which a fixed tolerance over the share read
	// as a limit.
	backgroundAlpha float64
	// streakGrowth and maxStreakGrowths: a bare 429 in a row (to a request
	// that left after the previous refusal came back, nothing accepted
	// between) pushes the next request out by streakGrowth^(n-1) intervals
	// at the pace for the n-th in a row, at most
	// streakGrowth^maxStreakGrowths: a window that ran out, or an emptied
	// bucket, refuses everything until it has room, where a backend that
	// refuses at random seldom refuses twice in a row.
	streakGrowth     float64
	maxStreakGrowths int
	// strayShare: while the pace climbs back after a bare cut, below a
	// plateau read over too short a span to say where a limit is
	// (rateState.Measured unset), a bare 429 that is the first in a row,
	// when at most strayShare of the answers since the cut were refused
	// and what was accepted since is itself too short a measure, is a
	// stray refusal and cuts nothing. Cut, a backend that refuses a few
	// per cent at random pulled the pace down at each of them: the rate
	// it accepted, read over a fraction of a second while a backlog waits,
	// is the pace's own, a few per cent less for the refusal, and the
	// next cut starts from there. A limit below such a plateau refuses
	// more than that share, or several in a row, or again once the measure
	// is long enough.
	strayShare float64
	// windowHolds: a bare 429 at a destination seen to reset at a
	// multiple of windowAlign (rateState.Windowed), the first in a row,
	// holds it until just after the next multiple (Policy). False (a
	// variant only: the ninth step's law): never.
	//
	// windowClosed, windowLastRefusal and windowSlack say what shows such
	// a reset (rateState.windowReset): a row of two or more bare 429s
	// that began at least windowClosed before a multiple, whose last
	// refusal came at most windowLastRefusal before it, ended by the
	// acceptance of a request sent at most windowSlack after it. The
	// exporter does not probe at the multiples to find out: the row's own
	// spaced requests end it there, or not. windowProbes (a variant only:
	// the rule's first form) ends every hold of retry_after::default
	// that spans a multiple just after it; a fleet behind one limit then
	// probes together, and stays together.
	windowHolds       bool
	windowProbes      bool
	windowClosed      time.Duration
	windowLastRefusal time.Duration
	windowSlack       time.Duration

	// After a 502, 503 or 504 while nothing succeeds (an outage):
	//
	// answerCap: the outage's probe interval grows along the backoff
	// schedule to retry_after::default at most (Policy.failed): the
	// backend answers, and one that sheds a share of its requests refuses
	// that share of the probes too. False (a variant only: the tenth
	// step's law): to backoff::max_interval, as after a refused
	// connection.
	answerCap bool
	// backgroundStreak: a bare 429 that is the backgroundStreak-th or a
	// later one in a row (rateState.Streak) does not count towards the
	// background share. A window that ran out, or an emptied bucket,
	// refuses several in a row every time; a backend that refuses 5 % at
	// random refuses two in a row after one refusal in 20, three in a row
	// after one in 400.
	backgroundStreak int
}

// defaultTuning is the tuning every pacer runs with. maxRegain, bareProbe,
// measureRequests and minBareMeasure are the thirteenth step's, from a
// random search of the bare law (TestPacerSearch, docs/pacer-search-1.json;
// the twelfth step's were 6 s, 0.05, 3 and 200 ms); shedMeasureRequests
// keeps the twelfth step's 3 for a 502, 503 or 504.
var defaultTuning = pacerTuning{
	firstBareHold:        time.Second,
	paceCut:              0.6,
	paceStepRequests:     0.15,
	paceProbe:            0.005,
	paceMargin:           0.1,
	slowStartDoubling:    time.Second,
	slowStartFromSend:    true,
	firstBareCut:         0.05,
	bareMargin:           0.05,
	regainRequests:       20,
	minRegain:            2 * time.Second,
	maxRegain:            10190 * time.Millisecond,
	bareProbe:            0.041,
	quietProbe:           0.25,
	quietShare:           0.01,
	measureRequests:      1.79,
	shedMeasureRequests:  3,
	minBareMeasure:       126 * time.Millisecond,
	measuredRequests:     5,
	minMeasured:          time.Second,
	maxBackground:        0.6,
	backgroundMemory:     0.8,
	minBackgroundAnswers: 20,
	backgroundAlpha:      0.1,
	streakGrowth:         2,
	maxStreakGrowths:     3,
	backgroundStreak:     2,
	strayShare:           0.25,
	windowHolds:          true,
	windowClosed:         2 * time.Second,
	windowLastRefusal:    3 * time.Second / 2,
	windowSlack:          time.Second,
	answerCap:            true,
	unlearnedTentative:   true,
	firstCrowdedByOthers: true,
}

// tuning is the tuning the pacers run with: defaultTuning, but for the
// model tests that measure a variant (SetTuning, export_test.go).
var tuning = defaultTuning

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
	// windowAlign on the clock (Accepted).
	Windowed bool
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
	if s.Mode == rateUnlimited {
		return s, at, source
	}
	if s.Next.After(at) {
		at, source = s.Next, PaceRate
	}
	if s.FirstSlot.IsZero() {
		s.FirstSlot = at
	}
	s.Next = at.Add(interval(items, s.Rate(at)))
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
	if s.Streak >= 2 {
		s.Windowed = s.windowReset(sent)
	}
	s.Streak = 0
	if s.Tentative && s.Pending > 0 {
		// A request in flight with the refused one was accepted: the
		// backend takes several at once.
		s.Tentative, s.Pending = false, 0
	}
	return s.background(now, false)
}

// windowReset says whether the row of bare 429s (Streak) that a request
// sent at sent, and accepted, ended was a fixed window that reset at the
// last multiple of windowAlign before sent: the row began at least
// windowClosed before it, its last refusal came at most windowLastRefusal
// before it, and the request left at most windowSlack after it. (A bucket
// refills at any time: it seldom refuses everything for seconds and takes
// requests again just after such a multiple, and a row it ends elsewhere
// clears Windowed.)
func (s rateState) windowReset(sent time.Time) bool {
	b := sent.Truncate(windowAlign)
	return s.LastRefusal.Before(b) && sent.Sub(b) <= tuning.windowSlack &&
		b.Sub(s.LastRefusal) <= tuning.windowLastRefusal && b.Sub(s.StreakStart) >= tuning.windowClosed
}

// WindowHold says whether a bare 429 at now, the first in a row, is a
// fixed window's limit reached (Windowed): the destination is held until
// the window resets (Policy).
func (s rateState) WindowHold() bool {
	return tuning.windowHolds && s.Windowed && s.Streak == 0
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

// Refused learns from a refused answer.
//
// A refusal that came with more requests in flight than any the backend
// accepted lately (and more than one) says the backend takes only so many
// at once: the concurrency limit becomes the most it accepted, and the
// pace is not cut.
//
// A refusal with a Retry-After: at the first (from unlimited) the ceiling
// is what was accepted over the last acceptWindow, or since the first
// acceptance if that is more recent (over at least firstRefusalSpan); with
// nothing accepted there is nothing to learn yet, and with fewer than
// measuredRequests requests accepted the ceiling only starts a slow start.
// Later, a refusal of a request sent after the last cut cuts the pace to a
// paceMargin below what was accepted since that cut over the time since (a
// token bucket is empty at both refusals, so that is its rate), and to at
// most paceCut of the pace of the moment, which was too much; a slow
// start's pace doubled away from what it had accepted since its first
// request left (slowStartFromSend), which is all there is to go by, and
// is not cut further. A
// request in flight with the one whose refusal made the last cut, and a
// hold's probe (its refusal only says the hold goes on), cut nothing. The
// ceiling is never below one request a second.
//
// A bare refusal: see bareCut.
func (s rateState) Refused(r refusedAnswer) rateState {
	s.ItemsPerRequest = r.Items
	if r.Bare && !r.Shed {
		if r.Sent.After(s.LastRefusal) && !r.Quota {
			s.Streak++
			if s.Streak == 2 {
				s.StreakStart = s.LastRefusal
			}
		}
		s.LastRefusal = r.At
		s = s.background(r.At, true)
	}
	switch kind, limit := s.Crowding(r); kind {
	case crowdedLearned:
		// More in flight than the backend was seen to accept at once.
		s = s.answeredPending()
		if c := s.ConcurrencyAt(r.At); c == 0 || limit < c {
			s.Concurrency, s.ConcurrencySince, s.Tentative, s.Pending = limit, r.At, false, 0
		}
		return s
	case crowdedFirst:
		// Nothing accepted yet, others in flight: at most those ahead of
		// it at once, until their answers tell.
		s = s.answeredPending()
		if c := s.ConcurrencyAt(r.At); c == 0 || limit < c {
			s.Concurrency, s.ConcurrencySince, s.Tentative, s.Pending = limit, r.At, true, r.Others
		}
		return s
	}
	s = s.answeredPending().uncrowdedRefusal(r)
	if s.Unlearned() {
		switch {
		case !r.Bare || r.Shed:
			s.BareStart = time.Time{}
		case s.BareStart.IsZero():
			s.BareStart = r.At
		}
	}
	if s.Mode == ratePaced && (r.Probe || !r.Sent.After(s.Since)) {
		return s
	}
	floor := float64(max(r.Items, 1))
	if r.Bare && s.Mode != rateSlowStart {
		return s.bareCut(r, floor).spaced(r)
	}
	elapsed := max(r.At.Sub(s.Since), minCutElapsed)
	var ceiling float64
	switch s.Mode {
	case rateUnlimited:
		if r.Recent == 0 {
			return s
		}
		span := min(acceptWindow, max(firstRefusalSpan, r.At.Sub(s.FirstAccepted)))
		ceiling = float64(r.Recent) / span.Seconds()
		if float64(r.Recent) < tuning.measuredRequests*floor {
			// Fewer than measuredRequests accepted: a guess from a burst,
			// not the backend's rate. A slow start from it (doubling
			// every slowStartDoubling until the next refusal) finds the
			// rate in seconds, where the additive climb takes tens.
			return s.restart(r.At, max(ceiling, floor), rateSlowStart)
		}
	case rateSlowStart:
		if tuning.slowStartFromSend && !s.FirstSlot.IsZero() {
			elapsed = max(r.At.Sub(s.FirstSlot), minCutElapsed)
		}
		ceiling = min(float64(s.AcceptedRun)/elapsed.Seconds(), s.Rate(r.At))
	default:
		ceiling = min((1-tuning.paceMargin)*float64(s.AcceptedRun)/elapsed.Seconds(), tuning.paceCut*s.Rate(r.At))
	}
	return s.restart(r.At, max(ceiling, floor), ratePaced)
}

// bareCut is Refused for a bare refusal of a request sent after the last
// cut (a 429 without a usable Retry-After, or a 502, 503 or 504 while the
// backend takes others). With nothing accepted lately there is nothing to
// learn. Within measureRequests requests of a bare cut, it is too soon to
// tell what the backend takes at the new pace: no cut; nor does a stray
// refusal while the pace climbs back to a plateau not measured (stray,
// strayShare). The first refusal (from unlimited), and any 502, 503 or
// 504, hold the pace a firstBareCut below the rate requests were going at
// and climb back to it: that slows a
// shedding backend without halving the pace at every cut. A 429 at a pace
// below a measured accepted rate cuts nothing: no limit refuses there, so
// the backend refuses a share whatever the pace (its background share is
// measured there); nor does one past it when the refusals since the last
// cut are not improbable for that share (backgroundAlpha).
// Otherwise the pace drops a bareMargin below the rate the backend
// accepted since the last cut (over the last acceptWindow when it accepted
// nothing since), grossed up by the background share, and climbs back to
// it over Regain. With nothing accepted since the last cut nor within
// acceptWindow (a 10 s window that ran out seconds ago), nothing is cut:
// measured over the last acceptWindow the pace would fall to the floor,
// one request a second, and take tens of seconds to climb back once the
// backend takes requests again; the refusal holds the destination
// instead (Policy), and spaced slows the requests that still go.
func (s rateState) bareCut(r refusedAnswer, floor float64) rateState {
	if s.Mode == rateUnlimited && r.Recent == 0 {
		return s
	}
	elapsed := r.At.Sub(s.Since)
	measure := tuning.measureRequests
	if r.Shed {
		measure = tuning.shedMeasureRequests
	}
	if s.Mode != rateUnlimited && s.Bare && elapsed < max(tuning.minBareMeasure, time.Duration(measure*float64(interval(s.ItemsPerRequest, s.Ceiling)))) {
		// Too soon to tell what the backend takes at this pace.
		return s
	}
	if s.stray(r) {
		return s
	}
	if s.Mode == rateUnlimited || r.Shed {
		// The first, and a 502, 503 or 504 (shedding is no limit to
		// learn): the pace holds a firstBareCut below the rate requests
		// were going at, and climbs back to it.
		//
		// The requests answered in the span count the first too, which
		// overstates the rate by one request when the span begins at the
		// first acceptance (three answers 0.25 s apart: 6 a second, not
		// 4). Counted from after the first, the limiter model met fewer
		// goals (the 1 s window, the sporadic cell and the 4 requests/s
		// bucket lost seeds, with firstBareCut 0.05 or 0): firstBareCut
		// was chosen with the overstatement.
		span := s.span(r.At, minBareSpan, acceptWindow).Seconds()
		sent := max((1-tuning.firstBareCut)*float64(r.RecentSent)/span, floor)
		ceiling := sent
		if s.Mode == rateUnlimited && !r.Shed && tuning.firstBareSpan > 0 {
			accepted := float64(r.Recent) / s.span(r.At, tuning.firstBareSpan, acceptWindow).Seconds()
			ceiling = max(min(ceiling, (1-tuning.firstBareCut)*accepted), floor)
		}
		return s.bare(r.At, ceiling, sent/(1-tuning.firstBareCut), false)
	}
	if s.AcceptedRun == 0 && r.Recent == 0 {
		// Nothing accepted since the last cut, nor within acceptWindow:
		// the refusal holds the destination (Policy), and says nothing of
		// the rate the backend takes once it takes requests again.
		return s
	}
	bg := s.Background()
	if s.Measured && (s.Rate(r.At) <= s.Plateau || binomialTail(s.Answered, s.RefusedRun, bg) >= tuning.backgroundAlpha) {
		// Below the rate the backend took, or refused as often as the
		// background share may well give: not a limit.
		return s
	}
	// What the backend took since the last cut (between two refusals,
	// where a bucket is empty at both); when it took nothing since (a
	// window that ran out), over the last acceptWindow. Only a run of at
	// least measuredRequests requests over at least minMeasured says
	// where a limit is: a window's start, or a bucket's burst, lets more
	// through for a moment.
	accepted := float64(r.Recent) / s.span(r.At, minBareSpan, acceptWindow).Seconds()
	if s.AcceptedRun > 0 {
		span := elapsed
		if tuning.cutFromFirstSlot && !s.FirstSlot.IsZero() {
			// Silence before the curve's first request, past the one
			// interval at its ceiling it was booked for, is not the
			// backend's rate.
			span = min(span, max(r.At.Sub(s.FirstSlot.Add(-interval(s.ItemsPerRequest, s.Ceiling))), minCutElapsed))
		}
		accepted = float64(s.AcceptedRun) / span.Seconds()
	}
	measured := s.longMeasure(r.At)
	accepted = max(accepted/(1-bg), floor)
	s.BackgroundAnswered *= tuning.backgroundMemory
	s.BackgroundRefused *= tuning.backgroundMemory
	return s.bare(r.At, min((1-tuning.bareMargin)*accepted, s.Rate(r.At)), accepted, measured)
}

// longMeasure says whether what was accepted since the last cut, at at,
// is long enough a measure to say where a limit is: at least
// measuredRequests requests over at least minMeasured.
func (s rateState) longMeasure(at time.Time) bool {
	return float64(s.AcceptedRun) >= tuning.measuredRequests*float64(max(s.ItemsPerRequest, 1)) && at.Sub(s.Since) >= tuning.minMeasured
}

// stray says whether a bare refusal is a stray one (strayShare): the pace
// climbs back below a plateau that was not measured, the refusal is the
// first in a row, at most strayShare of the answers since the cut were
// refused, and what was accepted since is too short a measure.
func (s rateState) stray(r refusedAnswer) bool {
	if s.Mode != ratePaced || !s.Bare || s.Measured || r.Shed || s.Streak > 1 || s.Rate(r.At) > s.Plateau {
		return false
	}
	return float64(s.RefusedRun) <= tuning.strayShare*float64(s.Answered) && !s.longMeasure(r.At)
}

// span is how long before at a measure over window reaches: window, or
// since the first acceptance when that is more recent, and at least least.
func (s rateState) span(at time.Time, least, window time.Duration) time.Duration {
	return min(window, max(least, at.Sub(s.FirstAccepted)))
}

// bare starts the curve of a bare cut at now: from ceiling back to plateau
// over Regain, and past it after.
func (s rateState) bare(now time.Time, ceiling, plateau float64, measured bool) rateState {
	s = s.restart(now, ceiling, ratePaced)
	s.Bare, s.Plateau, s.Measured = true, max(plateau, ceiling), measured
	s.Regain = min(max(tuning.minRegain, time.Duration(tuning.regainRequests*float64(interval(s.ItemsPerRequest, s.Plateau)))), tuning.maxRegain)
	// The refusal shows the backend at its limit now: the next request
	// leaves one interval later.
	s.Next = now.Add(interval(s.ItemsPerRequest, ceiling))
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

// spaced pushes the next slot out after a bare 429 that follows another
// in a row (Streak): to streakGrowth^(Streak-1) intervals at the pace
// after it (at most streakGrowth^maxStreakGrowths), voiding the slots
// booked before, so that a backend that refuses everything for now is
// asked less and less often until it accepts again. The next slot is that
// one even when slots were booked past it: a backlog books them one
// interval apart, and left booked they would leave one interval apart
// into the backend that refuses them (their payloads pass the gate again
// and book from the new slot on).
func (s rateState) spaced(r refusedAnswer) rateState {
	if s.Streak < 2 || s.Mode != ratePaced || r.Shed {
		return s
	}
	k := float64(min(s.Streak-1, tuning.maxStreakGrowths))
	s.Next = r.At.Add(time.Duration(float64(interval(s.ItemsPerRequest, s.Rate(r.At))) * math.Pow(tuning.streakGrowth, k)))
	s.Epoch++
	return s
}
