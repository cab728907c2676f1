// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// longCell is the matrix's cell of that name with three times its load
// (scenario.LongCells), time enough to see the pace past the learning:
// over many windows, or many probes past the plateau.
func longCell(t *testing.T, name string) scenario.Cell {
	t.Helper()
	c, ok := scenario.CellByName("long-" + name)
	require.True(t, ok, name)
	return c
}

// TestLongFixedWindowIsNotHammered: behind a fixed window of 50 requests
// per 10 s without hints, offered twice that for 36 s, the pacer keeps
// cutting when a window runs out. (A background share read from one
// streak refusal once stopped every later cut: the pace grew without bound
// through the holds, and 44-60 % of the requests were refused.) Over 40
// seeds the refused share was 7.2-8.4 % and nothing was lost.
func TestLongFixedWindowIsNotHammered(t *testing.T) {
	c := longCell(t, "fixed-window-10s/none/5rps/1000")
	for seed := range uint64(3) {
		f := simulateCell(t, newCellModel(c), seed)
		t.Logf("seed %d: %s", seed, f)
		assert.Zero(t, f.Lost, "seed %d: lost", seed)
		assert.LessOrEqual(t, f.RefusedShare(), 0.10, "seed %d: refused share", seed)
	}
}

// TestAFixedWindowIsHeldUntilItResets: behind a fixed window of 50
// requests per 10 s without hints (long cell: 36 s of load offered at twice
// the limit), a row of refusals that ended just after a multiple of 10 s
// teaches the pacer the window; from then on the first refusal of each
// window holds the destination until the next multiple (source window)
// instead of a row of four or five spaced refusals. Over seeds 0-9, 5
// seeds refused at most 5 % of their requests (3.5-4.5 %), against 1 with
// the ninth step's law (windowHolds off); nothing was lost. (The model of
// this cell gives the same figures on every run; the test asks for 4.)
func TestAFixedWindowIsHeldUntilItResets(t *testing.T) {
	c := longCell(t, "fixed-window-10s/none/5rps/1000")
	within := 0
	for seed := range uint64(10) {
		f := simulateCell(t, newCellModel(c), seed)
		t.Logf("seed %d: %s", seed, f)
		assert.Zero(t, f.Lost, "seed %d: lost", seed)
		if f.RefusedShare() <= scenario.GoalRefused {
			within++
		}
	}
	assert.GreaterOrEqual(t, within, 4, "seeds that refused at most 5 %")
}

// TestACountedWindowIsHeldJustPastTheDefault: behind the matrix's fixed
// window of 50 requests per 10 s without hints, offered twice that, the
// take runs out in half a window, and the next window's first refusal,
// found by the runs' counts (windowCounts), comes about 5 s before its
// reset: retry_after::default, give or take. Held only within the default
// (windowCountedSlack off, the twenty-first step's law), a reset a few
// milliseconds further was not waited for, and the pace sent a row of five
// or six spaced refusals into the closed window: 10 of seeds 0-39 refused
// more than 5 % of their requests (7.0-7.7 %), against 5 with the hold
// allowed windowSlack past the default (those at 5.5 %: a first window
// whose row was a single refusal, nothing counted). Nothing is lost either
// way. The model is deterministic: each seed gives the same figures on
// every run.
func TestACountedWindowIsHeldJustPastTheDefault(t *testing.T) {
	c, ok := scenario.CellByName("fixed-window-10s/none/5rps/1000")
	require.True(t, ok)
	over := func() (n int) {
		for seed := range uint64(40) {
			f := simulateCell(t, newCellModel(c), seed)
			assert.Zero(t, f.Lost, "seed %d: lost", seed)
			if f.RefusedShare() > scenario.GoalRefused {
				n++
			}
		}
		return n
	}
	n := over()
	t.Logf("%d of 40 seeds refused more than 5 %%", n)
	assert.LessOrEqual(t, n, 6, "seeds refusing more than 5 %")
}

// TestSlowBareLimitsAreProbedGently: behind a limit without hints at 4-20
// requests a second, the pace past the rate the backend accepted grows a
// quarter as fast once nothing was refused below that rate (quietProbe),
// and climbs back over 20 requests at it (regainRequests): each probe
// past the limit is a refusal, and these cells miss the 5 % goal by a
// refusal or two. Over seeds 0-9 (docs/benchmarks.md, sixth step), every
// goal was met on 8 seeds of the 1 s window (4 with the probe as fast
// everywhere; 9 since the eighth step's stray refusals), 4 of the 5
// requests/s GCRA and 6 of the 4 requests/s
// bucket (none with a climb back of 10 requests). The thirteenth step
// (a regain of up to 10.19 s, a bare 429 measured after 1.79 requests)
// meets them on 10 of 10 seeds of the GCRA and the bucket, and on 5 of the
// 1 s window (6 before): there the model and the built collectors part
// (docs/benchmarks.md, thirteenth step), and the real runs decide. The
// model of these cells is deterministic: each seed gives the same figures
// on every run.
func TestSlowBareLimitsAreProbedGently(t *testing.T) {
	least := map[string]int{
		"fixed-window-1s/none/20rps/500": 5,
		"x-gcra/none/5rps/1000":          10,
		"x-token-items/none/4rps/500":    10,
	}
	var cells []scenario.Cell
	for _, c := range matrixCells(true) {
		if _, ok := least[c.Name]; ok {
			cells = append(cells, c)
		}
	}
	require.Len(t, cells, len(least))
	for _, sc := range scoreCellsOver(t, cells, 10) {
		t.Logf("%s: every goal met on %d of 10 seeds, worst %s", sc.cell.Name, sc.met, sc.figures)
		assert.GreaterOrEqual(t, sc.met, least[sc.cell.Name], "%s: seeds meeting every goal", sc.cell.Name)
	}
}

// TestStrayRefusalsDoNotPullThePaceDown: a backend that refuses 5 % of
// requests at random, without a limit, delivers the load about as soon as
// one that never refuses. Early refusals, while the pace climbs back to a
// rate read over a fraction of a second, are stray ones (strayShare): cut
// at each, the pace fell by a few per cent every time, the backlog grew,
// and the load came seconds late. Over seeds 0-19 every goal of the
// sporadic cell was met on 14 seeds with every such refusal cutting
// (strayShare 0, the seventh step's law) and on 20 with strayShare 0.25
// (docs/benchmarks.md, eighth step).
func TestStrayRefusalsDoNotPullThePaceDown(t *testing.T) {
	// The sporadic cell and its never-refusing twin, which it is judged
	// against.
	cells := filterCells(matrixCells(false), "sporadic-5%/none/20rps/100")
	require.Len(t, cells, 2)
	for _, sc := range scoreCellsOver(t, cells, 20) {
		if sc.cell.Reference == "" {
			continue
		}
		t.Logf("%s: every goal met on %d of 20 seeds, worst %s", sc.cell.Name, sc.met, sc.figures)
		assert.GreaterOrEqual(t, sc.met, 18, "%s: seeds meeting every goal", sc.cell.Name)
	}
}

// TestAFirstStrayRefusalDoesNotStallTheStart: behind a backend that
// refuses 5 % of requests at random, one start in twenty meets a refusal
// of its very first request. Held retry_after::default (5 s) and released
// into a slow start from one request a second, such a start met another
// stray refusal at a few requests a second and stayed near there: over
// seeds 0-199 of the sporadic cell, the eleven whose first request is
// refused were delivered 3 to 5 times later than the never-refusing
// twin, four of them not within the cell's timeout, and none met every
// goal. Held 1 s (firstBareHold) and left unlimited once the probe is
// accepted, they meet every goal. When the probe is refused too, the slow
// start still follows the second hold, and still stalls: which payload is
// the probe varies from run to run in the model: over 200 runs of the
// eleven seeds (commit d3b21b6's rule), 180 of the 2 200 starts were
// refused again and delivered late, at most 4 of the 11 in one run. The
// test asks for 4 of the 11 to meet every goal, which no run came near
// missing and no start meets with the eighth step's law.
func TestAFirstStrayRefusalDoesNotStallTheStart(t *testing.T) {
	starts := firstRefusedStarts(t)
	require.Len(t, starts, 11, "seeds 0-199 whose first request the sporadic cell refuses")
	met := 0
	for _, st := range starts {
		t.Logf("seed %d: %s (never refusing: %s)", st.seed, st.ours, st.twin)
		if st.verdict.Met() {
			met++
		}
	}
	assert.GreaterOrEqual(t, met, 4, "starts whose first request was refused that met every goal")
}

// firstStart is a run of the sporadic cell whose first request is refused.
type firstStart struct {
	seed       uint64
	ours, twin cellFigures
	verdict    scenario.Verdict
}

// firstRefusedStarts runs the sporadic cell on each of seeds 0-199 whose
// first request its limiter refuses, with the core model and the
// never-refusing twin on the same seed, and judges each run.
func firstRefusedStarts(t *testing.T) []firstStart {
	t.Helper()
	cells := filterCells(matrixCells(false), "sporadic-5%/none/20rps/100")
	require.Len(t, cells, 2)
	var sporadic, twin scenario.Cell
	for _, c := range cells {
		if c.Reference == "" {
			twin = c
		} else {
			sporadic = c
		}
	}
	var out []firstStart
	for seed := range uint64(200) {
		if !firstRequestRefused(t, sporadic, seed) {
			continue
		}
		st := firstStart{seed: seed}
		var core cellFigures
		synctest.Test(t, func(*testing.T) { st.ours = runScore(newCellModel(sporadic), seed, false) })
		synctest.Test(t, func(*testing.T) { core = runScore(newCellModel(sporadic), seed, true) })
		synctest.Test(t, func(*testing.T) { st.twin = runScore(newCellModel(twin), seed, false) })
		st.verdict = scenario.Judge(sporadic, "ours", st.ours.CellFigures, &core.CellFigures, &st.twin.CellFigures)
		out = append(out, st)
	}
	return out
}

// TestASlowStartIsMeasuredFromItsFirstRequest: behind a GCRA of 10
// requests a second that answers Retry-After in whole seconds (its 100 ms
// wait is sent as "Retry-After: 1"; x-gcra/retry-after/10rps/500), the
// first refusal starts a slow start and holds the destination for that
// second. The cut that ends the slow start is what the backend accepted
// since the slow start's first request left: measured from the slow
// start's beginning (slowStartFromSend off, the eleventh step's law), the
// hold's second of silence counted as the backend's, and the pace fell to
// half of the limit. Over seeds 0-9, the limit used was 64.2-70.6 %
// (median 69.9 %) with the rule and 62.2-64.3 % (median 63.0 %) without,
// each seed using more and delivering sooner with it; nothing was lost. A
// fleet's slow starts, begun when its hold ended, are not moved.
func TestASlowStartIsMeasuredFromItsFirstRequest(t *testing.T) {
	c, ok := scenario.CellByName("x-gcra/retry-after/10rps/500")
	require.True(t, ok)
	var with, without []float64
	for seed := range uint64(10) {
		f := simulateCell(t, newCellModel(c), seed)
		restore, err := retry.SetTuning(map[string]float64{"slowStartFromSend": 0})
		require.NoError(t, err)
		g := simulateCell(t, newCellModel(c), seed)
		restore()
		t.Logf("seed %d: %s | from its beginning: %s", seed, f, g)
		require.NotNil(t, f.Used)
		require.NotNil(t, g.Used)
		require.NotNil(t, f.DeliverySeconds)
		require.NotNil(t, g.DeliverySeconds)
		assert.Zero(t, f.Lost, "seed %d: lost", seed)
		assert.Greater(t, *f.Used, *g.Used, "seed %d: limit used", seed)
		assert.Less(t, *f.DeliverySeconds, *g.DeliverySeconds, "seed %d: delivered, s", seed)
		with, without = append(with, *f.Used), append(without, *g.Used)
	}
	slices.Sort(with)
	slices.Sort(without)
	assert.GreaterOrEqual(t, with[5]-without[5], 0.05, "median limit used: %.3f against %.3f", with[5], without[5])

	for seed := range uint64(3) {
		f := simulateFleet(t, defaultFleetSim(), seed)
		restore, err := retry.SetTuning(map[string]float64{"slowStartFromSend": 0})
		require.NoError(t, err)
		g := simulateFleet(t, defaultFleetSim(), seed)
		restore()
		assert.InDelta(t, g.Fairness, f.Fairness, 0.01, "fleet seed %d: fairness", seed)
		assert.InDelta(t, float64(g.Refused)/float64(g.Requests), float64(f.Refused)/float64(f.Requests), 0.005, "fleet seed %d: refused share", seed)
	}
}

// TestShedStarts runs the shedding cell (half of the requests answered 503,
// no Retry-After) over SHED_SEEDS seeds (200 unless set) with the default
// tuning and with answerCap off (the tenth step's law: the outage's probe
// interval growing to backoff::max_interval, 30 s, after 502, 503 and 504
// answers too), and stores every seed's figures in the file SHED_JSON
// names, for docs/benchmarks.md:
//
//	SHED_SEEDS=200 SHED_JSON=docs/shed-starts-model.json go test -run TestShedStarts ./retry/
//
// A start whose first request is refused, before anything was accepted,
// takes the outage path; one probe speaks for the destination, and half of
// the probes are refused. It asserts nothing, and runs only when SHED_JSON
// is set.
func TestShedStarts(t *testing.T) {
	path := os.Getenv("SHED_JSON")
	if path == "" {
		t.Skip("set SHED_JSON to run")
	}
	n := 200
	if v, err := strconv.Atoi(os.Getenv("SHED_SEEDS")); err == nil && v > 0 {
		n = v
	}
	c, ok := scenario.CellByName("shed-50%/none/10rps/200")
	require.True(t, ok)
	stored := struct {
		scenario.Provenance
		Runs []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance([]string{"SHED_SEEDS=" + strconv.Itoa(n), "SHED_JSON=" + path, "go", "test", "-run", "TestShedStarts", "./retry/"})}
	for _, v := range []pacerVariant{{"default", nil, false}, {"answerCap=0", map[string]float64{"answerCap": 0}, false}} {
		restore, err := retry.SetTuning(v.set)
		require.NoError(t, err)
		for seed := range uint64(n) {
			f := simulateCell(t, newCellModel(c), seed)
			run := map[string]any{
				"scenario": c.Name, "exporter": string(scenario.Ours), "variant": v.name, "run": seed,
				"requests": f.Requests, "refused_share": share(f.Refused, f.Requests), "lost": f.Lost, "late": f.Late,
			}
			if f.DeliverySeconds != nil {
				run["delivery_seconds"] = *f.DeliverySeconds
			}
			stored.Runs = append(stored.Runs, run)
		}
		restore()
	}
	stored.Finish()
	writeStoredRun(t, path, stored)
}
