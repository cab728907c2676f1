// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

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
//
// The constants that are not tuned (how far back a rate is measured, and
// the like) are in ratecontroller.go; what a refusal does with these
// values, in refused.go.

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
	// firstBareAfter (a variant only; zero, off, in the default): the
	// first bare cut's pace is also at most a firstBareCut below what was
	// accepted after the first acceptance (less firstBareAfter requests
	// when the span begins at it; any limiter takes a first request from
	// rest). firstBarePlateau (a variant only): the first bare cut's
	// climb back goes to its own pace, not to the rate requests were sent
	// at. Measured and not kept (docs/benchmarks.md, "Tried after the
	// twenty-first step, not kept"): with both, the worst cell met its
	// goals on 19 of 40 seeds, and a backend refusing 5 % at random whose
	// second request was refused got a request a second.
	firstBareAfter   float64
	firstBarePlateau float64
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
	// rowKeep and rowMeasure (variants only; off in the default) read a
	// row of bare 429s that refuses whatever the pace (a backend that
	// flaps, a window that ran out; rateState.refusedWhatever): two or
	// more in a row, nothing accepted since its first, after a run of at
	// least rowRun acceptances, lasting at least rowAge and rowIntervals
	// intervals at the pace of the moment. With rowKeep, a bare 429 deep
	// in such a row cuts nothing (its first refusal made the cut; a
	// measure over the last acceptWindow reads the row's silence as the
	// backend's rate); with rowMeasure, the acceptance that ends it
	// measures what the backend accepts afresh from there, the pace and
	// its plateau kept. In the limiter model both lifted the flapping
	// cells and the sliding window without a hint; against built
	// collectors the sliding window gained as much, but the 15 s flap was
	// delivered later, and without rowRun and rowIntervals (a fleet
	// member's rows after short runs, a second long at a request or two a
	// second) the bare fleet was refused more. Measured and not kept:
	// docs/benchmarks.md ("Tried after the nineteenth step").
	rowKeep, rowMeasure bool
	rowAge              time.Duration
	rowIntervals        float64
	rowRun              float64
	// runPlateau: a bare 429 deep in a row (nothing accepted since the
	// last cut, the row not a window's end by the runs' counts) cuts the
	// pace as before, but the plateau it climbs back to is at least the
	// rate the backend accepted over the run before the row
	// (rateState.runRate), when that run is a long measure: measured over
	// the last acceptWindow, the row's own silence passed for the
	// backend's rate, and behind a backend that flaps (refuses everything
	// for seconds, then takes the load again) the pace fell to a request
	// a second and stayed there. False (a variant only): the nineteenth
	// step's law. Measured in the model and against built collectors
	// (docs/benchmarks.md, twentieth step): both flapping cells gain, the
	// 10 s window off the clock's multiples is refused a request more.
	runPlateau bool
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
	// exporter probes at a multiple only for a row that looks like a
	// window's end (windowRowProbes, below); other rows' own spaced
	// requests end them there, or not. windowProbes (a variant only:
	// the rule's first form) ends every hold of retry_after::default
	// that spans a multiple just after it; a fleet behind one limit then
	// probes together, and stays together.
	//
	// windowRowProbes: a row that looks like a window's end is probed
	// just after the multiple: a hold of retry_after::default (nothing
	// accepted within acceptWindow) ends just after the next multiple it
	// spans when its row of bare 429s followed a run of at least
	// measuredRequests acceptances and began at least windowClosed before
	// that multiple (rateState.windowRowStart, Policy); and such a row,
	// ended by a request sent at most windowSlack after a multiple, shows
	// the window's reset however long before the multiple its last
	// refusal came (the hold chose the time of the probe). A load that
	// began late in a window ran into a row seconds before the reset and
	// held past it for retry_after::default, then paced from the learned
	// rate instead of the window's take: behind the matrix's 10 s window,
	// the seeds whose load began more than halfway into a window used
	// 75-85 % of the limit where 96-110 % could be used. A fleet behind a
	// request-rate limiter has no run before its first rows (the
	// windowProbes form held it together there). False (a variant only):
	// the fifteenth step's law. Measured in the limiter model
	// (docs/benchmarks.md, sixteenth step).
	//
	// windowPastDefault: a window hold (windowHolds, windowCounts) lasts
	// until the next multiple even when that is further than
	// retry_after::default (at most retry_after::max): the window refuses
	// everything until then, and paced requests into it were refused in
	// spaced rows (a 10 s window whose take ran out 9 s before its reset
	// refused five or six more). False (a variant only): held only when
	// the window resets within retry_after::default.
	//
	// windowPastSeen: only a window seen to reset on the clock
	// (rateState.Windowed) is held past retry_after::default; one found
	// by its runs' counts alone (windowCounted) is held only within it.
	// Counted only, a fleet member behind a shared GCRA (its runs of
	// equal length by chance) was held 8 s to a multiple, its probe
	// there was accepted and showed a window, and the schedule sent it
	// five requests per 10 s to the end of the load (docs/benchmarks.md,
	// "Found after the seventeenth step"). False (a variant only): the
	// sixteenth step's law.
	//
	// windowCounts: a fixed window takes as many requests in each of its
	// windows, so a run of acceptances as long as the one before the last
	// row that showed a window's end (give or take one) is the window's
	// limit reached again, and its first bare 429 holds the destination
	// as at a window seen to reset at a multiple (rateState.windowCounted;
	// that hold's probe, accepted just after the multiple, then shows the
	// window on the clock, Windowed):
	// the second window's end is found where the clock's multiples often
	// miss it (the first run's probe came seconds after the reset, behind
	// a hold of retry_after::default). A row shows a window's end when it
	// has windowRow or more bare 429s (or was a window hold) and ended at
	// least windowClosed after its run began (a 1 s window's cycle is
	// shorter). Measured in the limiter model (docs/benchmarks.md,
	// fourteenth step): windowRow 2 let a backend refusing 5 % at random
	// (two in a row now and then) hold for a window; 4 missed rows of
	// three at the 10 s window's first end. False (a variant only: the
	// law before): never.
	//
	// windowSchedule: once an acceptance shows such a window reset (a
	// row of bare 429s ended just after a multiple, at a destination
	// Windowed), the window is known: it takes as many requests as the
	// run before the row (rateState.WindowTake). Requests then leave
	// without waiting for the learned pace, windowShare times the
	// window's rate (the window's take within 1/windowShare of it), and
	// once the window's take is booked the next wait for the next
	// window's start; any refusal ends the schedule, and the pace goes
	// on at the window's rate. At the window's rate alone (the law
	// before, false: a variant only) the requests a window could take at
	// once waited seconds into the next window, and a load that ends
	// within a window took seconds longer. Measured in the limiter model
	// (docs/benchmarks.md, fifteenth step): windowShare 2, 4, 8, 20.
	// windowCountedSlack (with windowPastDefault): a hold found by the runs' counts alone
	// (windowPastSeen) may last windowSlack past retry_after::default. A
	// load offered at twice a 10 s window's take spends it in half the
	// window, and the count rule's first refusal of the next window comes
	// about 5 s before its reset: retry_after::default, give or take the
	// time a request takes. Bound by the default alone, one whose reset
	// was a few milliseconds further went on at the pace, into a row of
	// five or six spaced refusals (the matrix's 10 s window in the
	// limiter model: 10 of 40 seeds refused more than 5 %, 5 with it;
	// docs/benchmarks.md, twenty-second step). A member of a fleet held
	// so by a count met by chance probes at the multiple, and a schedule
	// a probe began checks itself (windowCheck). False (a variant only):
	// the twenty-first step's law.
	windowCountedSlack bool
	windowHolds        bool
	windowCounts       bool
	// secondWindows: a fixed window of a second is learned from the
	// clock's seconds (secondwindow.go): a bare 429 after at least
	// secondTake acceptances of requests sent in its second, with the next
	// acceptance in a later second, shows the window's take; two such in a
	// row that show the same take (give or take one) schedule it as a
	// window seen on the clock is (windowSchedule), a second long. The
	// bare cut's measure since the last cut held the silence after the
	// refusal and the part of a second the pace left unused: behind the
	// matrix's window of 20 a second the pace settled at 15-19 a second,
	// and 12 of 40 seeds used less than 90 % of it. secondTake 5 scheduled
	// a GCRA of 5 a second (a probe's refusals came at a second's end
	// with the same count), and refused it once more; 8, 10 and 15 met
	// the same seeds in every cell. False (a variant only): the sixteenth
	// step's law. Measured in the limiter model (docs/benchmarks.md,
	// seventeenth step).
	secondWindows bool
	secondTake    float64
	// windowCheck: a 10 s window's schedule (windowSchedule) whose reset
	// only a probe timed to the multiple showed (rateState.WindowProbed)
	// checks itself in its first window (windowcheck.go): requests past
	// its take, windowCheckGap apart; windowConfirm refused in a row confirm
	// it, windowChecks+1 accepted end it (a fleet member behind a shared
	// GCRA was scheduled as a 10 s window and kept its take of five or
	// six per 10 s to the end of the load). windowConfirm 2: confirmed by
	// one refusal, such a member kept its schedule when the GCRA, which
	// refused a tenth of the fleet's requests, refused one of its checks
	// (the real fleet, docs/benchmarks.md, eighteenth step); a window
	// refuses every check, and costs two refusals. windowChecks 2: a take
	// learned one or two below the window's (a run counted with a request
	// in flight) is corrected, not ended; windowCheckGap 100 ms: longer
	// than an answer takes on the matrix's backends, so that the checks
	// stop at the confirming refusal. A window of a second is not
	// checked: two ends showing the same take started its schedule, and
	// a check cost the matrix's 1 s window a refusal per run (one seed of
	// 40 past 5 % refused); nor one the backend's own refusals up to the
	// multiple showed: checked too, 9 of the model's 40 seeds of the
	// matrix's 10 s window went past 5 % refused (5 checking only the
	// probed, 1 unchecked), and one run of three in the real matrix
	// (docs/benchmarks.md, eighteenth step). False (a variant only): the
	// seventeenth step's law.
	// windowPhase: the 10 s windows' starts are learned from the rows that
	// show the clock's multiples wrong (windowphase.go). False (a variant
	// only): the eighteenth step's law, always at the multiples.
	//
	// windowPhaseHold: after a row that moved the phase
	// (rateState.PhaseMoved), a window hold that the runs' counts began
	// (windowCounts) lasts until the next start at the phase even past
	// retry_after::default (at most retry_after::max), as at a window seen
	// on the clock (windowPastSeen): the counts found the window, the
	// moved phase says when it resets. Without it, a counted hold more
	// than retry_after::default from the next start went at the pace, and
	// its spaced refusals ended the row before the start (a real run of
	// the 10 s window off the multiples refused 7.0 %).
	//
	// Measured in the limiter model on the matrix's 10 s window 2.5 s off
	// the multiples (docs/benchmarks.md, nineteenth step): seeds at most
	// 5 % refused 17 of 40 with the eighteenth step's law, 20 with
	// windowPhase, 32 with both; every other cell and both fleets gave the
	// same figures with them and without.
	windowPhase       bool
	windowPhaseHold   bool
	windowCheck       bool
	windowChecks      int
	windowConfirm     int
	windowCheckGap    time.Duration
	windowSchedule    bool
	windowShare       float64
	windowRow         int
	windowProbes      bool
	windowPastDefault bool
	windowPastSeen    bool
	windowRowProbes   bool
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
	// answerSpread: before any answer came alone, the quota tracker reads
	// a request's cost from the spread of the answers to the requests in
	// flight together (answerSpread), so that a bucket's first fall after
	// its reset, capped by its burst, is not taken for one request's cost.
	// False (a variant only): the twentieth step's law, under which a GCRA
	// of 20 requests a second with a burst of 4, announced in RateLimit
	// fields and offered four times its limit, got a request a second
	// (docs/benchmarks.md, "Loads other than twice the limit").
	answerSpread bool
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
	rowAge:               time.Second,
	rowIntervals:         8,
	rowRun:               10,
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
	windowCounts:         true,
	secondWindows:        true,
	secondTake:           10,
	windowSchedule:       true,
	windowPhase:          true,
	windowPhaseHold:      true,
	windowRowProbes:      true,
	windowPastDefault:    true,
	windowPastSeen:       true,
	windowCountedSlack:   true,
	windowCheck:          true,
	windowChecks:         2,
	windowConfirm:        2,
	windowCheckGap:       100 * time.Millisecond,
	windowShare:          8,
	windowRow:            3,
	windowClosed:         2 * time.Second,
	windowLastRefusal:    3 * time.Second / 2,
	windowSlack:          time.Second,
	answerCap:            true,
	unlearnedTentative:   true,
	firstCrowdedByOthers: true,
	runPlateau:           true,
	answerSpread:         true,
}

// tuning is the tuning the pacers run with: defaultTuning, but for the
// model tests that measure a variant (SetTuning, export_test.go).
var tuning = defaultTuning
