// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// pacerVariant is the pacer's default tuning with some values changed
// (retry.SetTuning), under the name docs/benchmarks.md gives it.
type pacerVariant struct {
	name string
	set  map[string]float64
	// bare is set for the default and the variants of the bare 429's law,
	// which also run through the fleet behind the bare limiter.
	bare bool
}

// pacerVariants are the values measured against the default in
// docs/benchmarks.md ("The pacer's constants"), one or two at a time.
var pacerVariants = []pacerVariant{
	{"default", nil, true},
	// The law after a refusal with Retry-After (the fleet model and the
	// quota cell x-token-items/retry-after/4rps/500).
	{"paceCut=0.5", map[string]float64{"paceCut": 0.5}, false},
	{"paceStepRequests=0.3", map[string]float64{"paceStepRequests": 0.3}, false},
	{"paceStepRequests=1", map[string]float64{"paceStepRequests": 1}, false},
	{"paceProbe=0.01", map[string]float64{"paceProbe": 0.01}, false},
	{"slowStartDoubling=1.5", map[string]float64{"slowStartDoubling": 1.5}, false},
	// The bare 429's law (the limiter model).
	{"bareMargin=0.1", map[string]float64{"bareMargin": 0.1}, true},
	{"bareProbe=0.005", map[string]float64{"bareProbe": 0.005}, true},
	{"bareProbe=0.02", map[string]float64{"bareProbe": 0.02}, true},
	{"measureRequests=5", map[string]float64{"measureRequests": 5}, true},
	{"measuredRequests=1,minMeasured=0", map[string]float64{"measuredRequests": 1, "minMeasured": 0}, true},
	{"measuredRequests=10", map[string]float64{"measuredRequests": 10}, true},
	{"maxBackground=0", map[string]float64{"maxBackground": 0}, true},
	{"backgroundMemory=0.5", map[string]float64{"backgroundMemory": 0.5}, true},
	{"backgroundAlpha=0.05", map[string]float64{"backgroundAlpha": 0.05}, true},
	{"backgroundAlpha=0.2", map[string]float64{"backgroundAlpha": 0.2}, true},
	// The fourteenth step's values: a fixed window found by its runs.
	{"windowCounts=0", map[string]float64{"windowCounts": 0}, true},
	{"windowRow=2", map[string]float64{"windowRow": 2}, true},
	{"windowRow=4", map[string]float64{"windowRow": 4}, true},
	// The fifteenth step's: a fixed window seen on the clock is scheduled.
	{"windowSchedule=0", map[string]float64{"windowSchedule": 0}, true},
	{"windowShare=2", map[string]float64{"windowShare": 2}, true},
	{"windowShare=4", map[string]float64{"windowShare": 4}, true},
	{"windowShare=20", map[string]float64{"windowShare": 20}, true},
	{"streakGrowth=1", map[string]float64{"streakGrowth": 1}, true},
	{"maxStreakGrowths=4", map[string]float64{"maxStreakGrowths": 4}, true},
	{"maxStreakGrowths=5", map[string]float64{"maxStreakGrowths": 5}, true},
	{"maxStreakGrowths=6", map[string]float64{"maxStreakGrowths": 6}, true},
	{"streakGrowth=1.5,maxStreakGrowths=3", map[string]float64{"streakGrowth": 1.5}, true},
	{"streakGrowth=1.5,maxStreakGrowths=4", map[string]float64{"streakGrowth": 1.5, "maxStreakGrowths": 4}, true},
	{"streakGrowth=1.5,maxStreakGrowths=5", map[string]float64{"streakGrowth": 1.5, "maxStreakGrowths": 5}, true},
	{"backgroundStreak=3", map[string]float64{"backgroundStreak": 3}, true},
	{"backgroundStreak=1000", map[string]float64{"backgroundStreak": 1000}, true},
	// The fourth step's value: the fewest answers a background share is
	// read from.
	{"minBackgroundAnswers=1", map[string]float64{"minBackgroundAnswers": 1}, true},
	{"minBackgroundAnswers=10", map[string]float64{"minBackgroundAnswers": 10}, true},
	{"minBackgroundAnswers=40", map[string]float64{"minBackgroundAnswers": 40}, true},
	// The sixth step's values: how long a bare cut takes to climb back,
	// and how fast a limit that refuses nothing below it is probed (the
	// first is the fifth step's law).
	{"quietProbe=1,regainRequests=10,maxRegain=3600", map[string]float64{"quietProbe": 1, "regainRequests": 10, "maxRegain": 3600}, true},
	{"regainRequests=10,maxRegain=3600", map[string]float64{"regainRequests": 10, "maxRegain": 3600}, true},
	{"regainRequests=10", map[string]float64{"regainRequests": 10}, true},
	{"maxRegain=3600", map[string]float64{"maxRegain": 3600}, true},
	{"regainRequests=30,maxRegain=8", map[string]float64{"regainRequests": 30, "maxRegain": 8}, true},
	{"quietProbe=1", map[string]float64{"quietProbe": 1}, true},
	{"quietProbe=0.1", map[string]float64{"quietProbe": 0.1}, true},
	{"quietProbe=0.5", map[string]float64{"quietProbe": 0.5}, true},
	{"quietShare=0", map[string]float64{"quietShare": 0}, true},
	// The seventh step's value: how far below the rate a token bucket
	// accepted between two refusals with a Retry-After the pace starts
	// (the first is the sixth step's law).
	{"paceMargin=0", map[string]float64{"paceMargin": 0}, false},
	{"paceMargin=0.05", map[string]float64{"paceMargin": 0.05}, false},
	{"paceMargin=0.15", map[string]float64{"paceMargin": 0.15}, false},
	// The eighth step's value: the largest share of answers refused since
	// a bare cut that still reads as stray refusals (the first is the
	// seventh step's law).
	{"strayShare=0", map[string]float64{"strayShare": 0}, true},
	{"strayShare=0.15", map[string]float64{"strayShare": 0.15}, true},
	{"strayShare=0.35", map[string]float64{"strayShare": 0.35}, true},
	// The ninth step's value: how long a bare 429 holds a destination
	// nothing is known of (0: retry_after::default and a slow start after
	// it, the eighth step's law).
	{"firstBareHold=0", map[string]float64{"firstBareHold": 0}, true},
	{"firstBareHold=0.5", map[string]float64{"firstBareHold": 0.5}, true},
	{"firstBareHold=2", map[string]float64{"firstBareHold": 2}, true},
	{"firstBareHold=5", map[string]float64{"firstBareHold": 5}, true},
	// The tenth step's rule: a fixed window that reset at a multiple of
	// 10 s on the clock is held until the next (0: the ninth step's law),
	// and what shows such a reset.
	{"windowHolds=0", map[string]float64{"windowHolds": 0}, true},
	{"windowProbes=1", map[string]float64{"windowProbes": 1}, true},
	{"windowLastRefusal=1", map[string]float64{"windowLastRefusal": 1}, true},
	{"windowLastRefusal=2.5", map[string]float64{"windowLastRefusal": 2.5}, true},
	{"windowLastRefusal=5", map[string]float64{"windowLastRefusal": 5}, true},
	{"windowClosed=1", map[string]float64{"windowClosed": 1}, true},
	{"windowClosed=3", map[string]float64{"windowClosed": 3}, true},
	{"windowSlack=0.5", map[string]float64{"windowSlack": 0.5}, true},
	{"windowSlack=2", map[string]float64{"windowSlack": 2}, true},
	// The twelfth step's rule: the cut that ends a slow start measures what
	// was accepted since its first request left (0: since it began, the
	// eleventh step's law).
	{"slowStartFromSend=0", map[string]float64{"slowStartFromSend": 0}, false},
	// The other side of two values: a bare cut measured after two requests
	// at the new pace, and a longer climb back with a slower quiet probe
	// (the long 2 requests/s GCRA's probes).
	{"measureRequests=2", map[string]float64{"measureRequests": 2}, true},
	{"maxRegain=12,quietProbe=0.1", map[string]float64{"maxRegain": 12, "quietProbe": 0.1}, true},
	// The thirteenth step's values: the twelfth step's law (four values
	// of the bare law, from a random search: TestPacerSearch), and this
	// law with a 502, 503 or 504 measured after as few requests as a 429.
	{"bareProbe=0.05,maxRegain=6,measureRequests=3,minBareMeasure=0.2",
		map[string]float64{"bareProbe": 0.05, "maxRegain": 6, "measureRequests": 3, "minBareMeasure": 0.2}, true},
	{"shedMeasureRequests=1.79", map[string]float64{"shedMeasureRequests": 1.79}, true},
	// The worst cell's start (after the two start fixes): the first bare
	// cut's pace also at most what was accepted over the last 0.5 s or
	// 1 s, so that a GCRA's burst, spent before the first refusal, does
	// not pass for its rate; and that with a climb back counted over 40
	// requests, up to 20 s (no probe past the limit within the worst
	// cell's run).
	{"firstBareSpan=0.5", map[string]float64{"firstBareSpan": 0.5}, true},
	{"firstBareSpan=1", map[string]float64{"firstBareSpan": 1}, true},
	{"firstBareSpan=0.5,regainRequests=40,maxRegain=20", map[string]float64{"firstBareSpan": 0.5, "regainRequests": 40, "maxRegain": 20}, true},
	// A hold found by the runs' counts alone bound by retry_after::default
	// only (the twenty-first step's law; the default allows windowSlack
	// past it).
	{"windowCountedSlack=0", map[string]float64{"windowCountedSlack": 0}, true},
	// The worst cell's start again (twenty-second step): the first bare
	// cut's pace at most what was accepted after the first acceptance
	// (any limiter takes a first request from rest; a GCRA of 2 requests
	// a second with a burst of 2 refuses the third request at 0.5 s, two
	// accepted: 2 a second after the first, 6 sent), alone and with the
	// climb back to that, not to the rate requests went at.
	{"firstBareAfter=1", map[string]float64{"firstBareAfter": 1}, true},
	{"firstBareAfter=1,firstBarePlateau=1", map[string]float64{"firstBareAfter": 1, "firstBarePlateau": 1}, true},
	// The 1 s window's used share: a bare cut measured from the curve's
	// first request (less one interval), not from the cut.
	{"cutFromFirstSlot=1", map[string]float64{"cutFromFirstSlot": 1}, true},
	// A row of bare 429s that refuses whatever the pace (a flapping
	// backend): both rules on, each alone, the age at which a row reads
	// so at half and twice its value, and the first form (no run, no
	// intervals asked of the row).
	{"rowKeep=1,rowMeasure=1", map[string]float64{"rowKeep": 1, "rowMeasure": 1}, true},
	{"rowKeep=1", map[string]float64{"rowKeep": 1}, true},
	{"rowMeasure=1", map[string]float64{"rowMeasure": 1}, true},
	{"rowKeep=1,rowMeasure=1,rowAge=0.5", map[string]float64{"rowKeep": 1, "rowMeasure": 1, "rowAge": 0.5}, true},
	{"rowKeep=1,rowMeasure=1,rowAge=2", map[string]float64{"rowKeep": 1, "rowMeasure": 1, "rowAge": 2}, true},
	{"rowKeep=1,rowMeasure=1,rowRun=0,rowIntervals=0", map[string]float64{"rowKeep": 1, "rowMeasure": 1, "rowRun": 0, "rowIntervals": 0}, true},
	// A row's plateau from the run before it (runPlateau): off, the
	// nineteenth step's law; and with the rows' rule on as well.
	{"runPlateau=0", map[string]float64{"runPlateau": 0}, true},
	{"rowKeep=1,rowMeasure=1,runPlateau=0", map[string]float64{"rowKeep": 1, "rowMeasure": 1, "runPlateau": 0}, true},
	// The quota tracker's cost before any answer came alone: not read from
	// the spread of the answers in flight together (the twentieth step's
	// law).
	{"answerSpread=0", map[string]float64{"answerSpread": 0}, false},
	// A fixed window of a second learned from the clock's seconds: off
	// (the sixteenth step's law), and the fewest acceptances in a second
	// that show its take.
	{"secondWindows=0", map[string]float64{"secondWindows": 0}, true},
	{"secondTake=5", map[string]float64{"secondTake": 5}, true},
	{"secondTake=8", map[string]float64{"secondTake": 8}, true},
	{"secondTake=15", map[string]float64{"secondTake": 15}, true},
	// A 10 s window's schedule checks itself: off (the seventeenth step's
	// law), the refusals in a row that confirm it, the checks accepted
	// that end it, and how far apart they leave.
	{"windowCheck=0", map[string]float64{"windowCheck": 0}, true},
	// The 10 s windows' starts learned from rows (windowphase.go): off
	// (the eighteenth step's law).
	{"windowPhase=0", map[string]float64{"windowPhase": 0}, true},
	{"windowPhaseHold=0", map[string]float64{"windowPhaseHold": 0}, true},
	{"windowConfirm=1", map[string]float64{"windowConfirm": 1}, true},
	{"windowConfirm=3", map[string]float64{"windowConfirm": 3}, true},
	{"windowChecks=0", map[string]float64{"windowChecks": 0}, true},
	{"windowChecks=4", map[string]float64{"windowChecks": 4}, true},
	{"windowCheckGap=0.02", map[string]float64{"windowCheckGap": 0.02}, true},
	{"windowCheckGap=0.5", map[string]float64{"windowCheckGap": 0.5}, true},
	// The noise floor: values a hair from the default's, which no law
	// tells apart from it; what they move is chance (the order of
	// requests the bubble wakes at one instant, the phase of a window).
	{"firstBareCut=0.049", map[string]float64{"firstBareCut": 0.049}, true},
	{"firstBareCut=0.051", map[string]float64{"firstBareCut": 0.051}, true},
	{"bareMargin=0.051", map[string]float64{"bareMargin": 0.051}, true},
}

// TestPacerVariants runs every variant of the pacer's tuning (pacerVariants)
// through the limiter model's 27 cells (TestScore with SCORE_EXTRA, over
// VARIANTS_SCORE_SEEDS seeds, 20 unless set) and the fleet model
// (TestFleetDistribution, over VARIANTS_FLEET_SEEDS seeds, 20 unless set),
// the variants of the bare 429's law also through the fleet behind the bare
// request-rate limiter (TestFleetBareDistribution, over
// VARIANTS_BARE_FLEET_SEEDS seeds, 20 unless set) and the sporadic cell's
// starts whose first request is refused (firstRefusedStarts), and stores each
// variant's figures with their provenance in the file VARIANTS_JSON names,
// for the tables of docs/benchmarks.md. The cells
// whose limiter answers with RateLimit fields, and the shedding cell, do
// not give the same figures on every run of the same seed (goroutines
// waking at the same virtual instant), so one stored run is one draw
// there. The stored run, from the repository's root:
//
//	VARIANTS_SCORE_SEEDS=20 VARIANTS_FLEET_SEEDS=20 VARIANTS_BARE_FLEET_SEEDS=20 VARIANTS_JSON=docs/pacer-variants.json go test -run TestPacerVariants ./retry/
//
// With VARIANTS_NAMES set (names separated by spaces), only those
// variants run; with VARIANTS_OFFERED set, the cells with a limit offered
// at other multiples of it (scenario.OfferedCells) are scored too.
//
// It asserts nothing, and runs only when VARIANTS_JSON is set.
func TestPacerVariants(t *testing.T) {
	path := os.Getenv("VARIANTS_JSON")
	if path == "" {
		t.Skip("set VARIANTS_JSON to run")
	}
	only := strings.Fields(os.Getenv("VARIANTS_NAMES"))
	seeds := func(env string) int {
		if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
			return n
		}
		return 20
	}
	scoreSeeds, fleetSeeds, bareSeeds := seeds("VARIANTS_SCORE_SEEDS"), seeds("VARIANTS_FLEET_SEEDS"), seeds("VARIANTS_BARE_FLEET_SEEDS")
	var args []string
	if len(only) > 0 {
		// One argument: the names, as the shell takes them quoted.
		args = append(args, "VARIANTS_NAMES='"+strings.Join(only, " ")+"'")
	}
	cells := matrixCells(true)
	if os.Getenv("VARIANTS_OFFERED") != "" {
		cells = slices.Concat(cells, scenario.OfferedCells())
		args = append(args, "VARIANTS_OFFERED=1")
	}
	args = append(args, fmt.Sprintf("VARIANTS_SCORE_SEEDS=%d", scoreSeeds), fmt.Sprintf("VARIANTS_FLEET_SEEDS=%d", fleetSeeds),
		fmt.Sprintf("VARIANTS_BARE_FLEET_SEEDS=%d", bareSeeds), "VARIANTS_JSON="+path, "go", "test", "-run", "TestPacerVariants", "./retry/")
	args = modelCommand(args...)
	stored := struct {
		scenario.Provenance
		ScoreSeeds     int              `json:"score_seeds"`
		FleetSeeds     int              `json:"fleet_seeds"`
		BareFleetSeeds int              `json:"bare_fleet_seeds"`
		Runs           []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance(args), ScoreSeeds: scoreSeeds, FleetSeeds: fleetSeeds, BareFleetSeeds: bareSeeds}
	ours := string(scenario.Ours)
	for _, v := range pacerVariants {
		if len(only) > 0 && !slices.Contains(only, v.name) {
			continue
		}
		restore, err := retry.SetTuning(v.set)
		require.NoError(t, err, v.name)
		// The limiter model: each cell's worst seed, and per variant
		// their totals (scoreTotal).
		// The cells offered at other multiples of their limit
		// (VARIANTS_OFFERED) are summed apart, a row for each multiple
		// ("score/offered4x"), so that "score" stays the cells at twice
		// the limit, as in the runs stored before them.
		totals := map[string]*scoreTotal{}
		var groups []string
		for _, sc := range scoreCellsOver(t, cells, scoreSeeds) {
			run := sc.row(v.name)
			run["met"] = boolFigure(sc.worst.Met())
			run["delivered"] = boolFigure(!math.IsInf(float64(sc.worst.Worst), 0))
			stored.Runs = append(stored.Runs, run)
			group := "score"
			if i := strings.LastIndex(sc.cell.Name, "/offered"); i >= 0 {
				group += sc.cell.Name[i:]
			}
			if totals[group] == nil {
				totals[group] = &scoreTotal{}
				groups = append(groups, group)
			}
			totals[group].add(sc)
		}
		for _, g := range groups {
			row := totals[g].row()
			row["scenario"], row["exporter"], row["variant"] = g, ours, v.name
			stored.Runs = append(stored.Runs, row)
		}
		// The fleet model: every seed.
		var fair []float64
		for seed := range uint64(fleetSeeds) { //nolint:gosec // G115: seeds are small and never negative
			f := simulateFleet(t, defaultFleetSim(), seed)
			stored.Runs = append(stored.Runs, map[string]any{
				"scenario": "fleet-model", "exporter": ours, "variant": v.name, "run": seed,
				"fairness": f.Fairness, "after_window_rps": f.AfterWindow, "peak_rps_after_window": f.Peak,
				"refused_share": share(f.Refused, f.Requests), "lost": f.Lost,
			})
			fair = append(fair, f.Fairness)
		}
		// The fleet behind the bare request-rate limiter: every seed, for
		// the default and the bare law's variants.
		for seed := range uint64(bareSeeds) { //nolint:gosec // G115: seeds are small and never negative
			if !v.bare {
				break
			}
			f := simulateFleet(t, bareFleetSim(), seed)
			stored.Runs = append(stored.Runs, map[string]any{
				"scenario": "fleet-bare-model", "exporter": ours, "variant": v.name, "run": seed,
				"fairness": f.Fairness, "after_window_rps": f.AfterWindow, "refused_share": share(f.Refused, f.Requests),
				"lost": f.Lost, "delivery_seconds": f.Delivery.Seconds(),
			})
		}
		// The sporadic cell's starts whose first request is refused
		// (TestAFirstStrayRefusalDoesNotStallTheStart), for the default and
		// the bare law's variants.
		if v.bare {
			for _, st := range firstRefusedStarts(t) {
				run := map[string]any{
					"scenario": "first-refused-model", "exporter": ours, "variant": v.name, "run": st.seed,
					"met": boolFigure(st.verdict.Met()), "worst": st.verdict.Worst, "refused_share": share(st.ours.Refused, st.ours.Requests),
					"lost": st.ours.Lost,
				}
				if st.ours.DeliverySeconds != nil {
					run["delivery_seconds"] = *st.ours.DeliverySeconds
				}
				stored.Runs = append(stored.Runs, run)
			}
		}
		restore()
		slices.Sort(fair)
		for _, g := range groups {
			s := totals[g]
			t.Logf("%-38s %-16s failing %2d (%d not delivered), worst %-36s %5.2f, excess %5.1f, seeds met %d",
				v.name, g, s.failing, s.undelivered, s.worstCell, s.worst, s.excess, s.seedsMet)
		}
		t.Logf("%-38s fleet fairness median %.3f", v.name, scenario.Median(fair))
	}
	stored.Finish()
	writeStoredRun(t, path, stored)
}

func boolFigure(b bool) int {
	if b {
		return 1
	}
	return 0
}

func share(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// TestSetTuningChangesThePacer: a variant set with retry.SetTuning reaches
// the pacers (without the spacing of bare 429s in a row, the 10 s window
// is refused more), and restoring it gives the default's figures again.
func TestSetTuningChangesThePacer(t *testing.T) {
	var c scenario.Cell
	for _, m := range matrixCells(false) {
		if m.Name == "fixed-window-10s/none/5rps/1000" {
			c = m
		}
	}
	require.NotEmpty(t, c.Name)
	run := func() (f cellFigures) {
		synctest.Test(t, func(*testing.T) { f = runScore(newCellModel(c), 0, false) })
		return f
	}
	before := run()
	restore, err := retry.SetTuning(map[string]float64{"streakGrowth": 1})
	require.NoError(t, err)
	without := run()
	restore()
	after := run()
	assert.Greater(t, without.Refused, before.Refused, "refusals without the spacing")
	assert.Equal(t, before.Refused, after.Refused, "refusals after restoring the default")
	assert.Equal(t, before.Requests, after.Requests, "requests after restoring the default")

	_, err = retry.SetTuning(map[string]float64{"paceCutt": 0.5})
	require.ErrorContains(t, err, `no tuning value "paceCutt"`)
}

// scoreTotal sums a variant's cells: the cells missing a goal, those not
// delivered, the worst of them and the sum of how far each missing cell is
// past its goals (its worst ratio − 1), and the seeds that meet every goal.
// A cell not delivered (the shedding cell on some runs: the model is not
// deterministic there) is counted apart, so that excess stays finite.
type scoreTotal struct {
	failing, undelivered, seedsMet int
	excess                         float64
	worst                          scenario.Ratio
	worstCell                      string
}

func (s *scoreTotal) add(sc cellScore) {
	s.seedsMet += sc.met
	switch {
	case math.IsInf(float64(sc.worst.Worst), 0):
		s.failing++
		s.undelivered++
	case !sc.worst.Met():
		s.failing++
		s.excess += float64(sc.worst.Worst) - 1
	}
	if sc.worst.Worst > s.worst {
		s.worst, s.worstCell = sc.worst.Worst, sc.cell.Name
	}
}

func (s *scoreTotal) row() map[string]any {
	return map[string]any{
		"failing": s.failing, "not_delivered": s.undelivered, "worst": s.worst, "worst_cell": s.worstCell, "excess": s.excess,
		"seeds_met": s.seedsMet,
	}
}
