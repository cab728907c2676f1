// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// searchKnob is a value of the bare 429's law a random search draws from
// [lo, hi] (on a log scale when log is set), rounded to precision
// decimals (0: a whole number).
// Every range holds the default, and reaches about as far on each side as
// the variants of docs/benchmarks.md that moved a cell.
type searchKnob struct {
	name      string
	lo, hi    float64
	log       bool
	precision int
}

// searchKnobs are the values of the bare 429's law (pacerTuning) the
// search draws; the law after a Retry-After (paceCut, paceStepRequests,
// paceProbe, paceMargin, slowStartDoubling) is the fleet's and stays
// at its default, and so do the window rule's values.
var searchKnobs = []searchKnob{
	{"firstBareHold", 0.5, 2, false, 2},
	{"firstBareCut", 0.02, 0.1, true, 3},
	{"bareMargin", 0.02, 0.1, true, 3},
	{"regainRequests", 10, 40, true, 1},
	{"minRegain", 1, 3, false, 2},
	{"maxRegain", 4, 12, false, 2},
	{"bareProbe", 0.02, 0.1, true, 3},
	{"quietProbe", 0.1, 0.5, true, 3},
	{"measureRequests", 1.5, 5, false, 2},
	{"minBareMeasure", 0.1, 0.4, false, 3},
	{"strayShare", 0.15, 0.4, false, 3},
	{"streakGrowth", 1.5, 3, false, 2},
	{"maxStreakGrowths", 2, 4, false, 0},
	{"backgroundAlpha", 0.03, 0.3, true, 3},
	{"backgroundMemory", 0.6, 0.95, false, 3},
}

// searchVariants are the first n variants of a search seeded with seed
// around base (the default when base is empty), with the defaults that
// under changes (the law of an earlier step: see searchDefaults): the
// default first, then
// base; then, drawn in turn from one stream, base with one to six of
// searchKnobs (one to three around a base that is not the default) at
// values drawn at random from their ranges (none at the value it had),
// and none drawn twice. Each has the name SCORE_TUNING takes.
func searchVariants(seed uint64, n int, base, under map[string]float64) []pacerVariant {
	defaults := retry.BareTuningDefaults()
	maps.Copy(defaults, under)
	rng := rand.New(rand.NewPCG(seed, 0))
	out := []pacerVariant{{name: "default", bare: true}}
	seen := map[string]bool{"default": true}
	most := 6
	if len(base) > 0 {
		out = append(out, pacerVariant{name: tuningName(base), set: base, bare: true})
		seen[out[1].name] = true
		most = 3
	}
	for len(out) < n {
		set := maps.Clone(base)
		if set == nil {
			set = map[string]float64{}
		}
		for _, k := range rng.Perm(len(searchKnobs))[:1+rng.IntN(most)] {
			knob := searchKnobs[k]
			x := knob.lo + rng.Float64()*(knob.hi-knob.lo)
			if knob.log {
				x = math.Exp(math.Log(knob.lo) + rng.Float64()*(math.Log(knob.hi)-math.Log(knob.lo)))
			}
			p := math.Pow(10, float64(knob.precision))
			was, ok := set[knob.name]
			if !ok {
				was = defaults[knob.name]
			}
			switch x = math.Round(x*p) / p; x {
			case was:
			case defaults[knob.name]:
				delete(set, knob.name)
			default:
				set[knob.name] = x
			}
		}
		name := tuningName(set)
		if len(set) == 0 || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, pacerVariant{name: name, set: set, bare: true})
	}
	return out[:n]
}

// tuningName is the name of the variant set is, as SCORE_TUNING takes it:
// its values in the order of their names.
func tuningName(set map[string]float64) string {
	names := make([]string, 0, len(set))
	for name, v := range set {
		names = append(names, name+"="+strconv.FormatFloat(v, 'f', -1, 64))
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// TestPacerSearch is a random search of the bare 429's law: the variants
// SEARCH_FROM to SEARCH_TO (0 to 100 unless set) of the search seeded with
// SEARCH_SEED (1 unless set; searchVariants) around the variant
// SEARCH_BASE names (as SCORE_TUNING; the default unless set), with the
// defaults SEARCH_DEFAULTS changes (as SCORE_TUNING: the law of an earlier
// step, to draw and run a stored search's variants again; the searches
// docs/pacer-search-1..4.json drew around the twelfth step's, whose
// values are in their "defaults"), each through the limiter
// model's 27 cells (TestScore with SCORE_EXTRA, over SEARCH_SCORE_SEEDS
// seeds, 40 unless set) and the fleet behind the bare request-rate limiter
// (over SEARCH_BARE_FLEET_SEEDS seeds, 20 unless set). It stores each
// variant's figures with their provenance in the file SEARCH_JSON names:
// per cell the seeds that met every goal and how far past its goals the
// seeds were in all (excess), and its worst seed's figures; per variant
// the sums over the cells; and the bare fleet's medians. The tuning is the
// process's, so a search runs in parts, one process each:
//
//	SEARCH_FROM=0 SEARCH_TO=200 SEARCH_JSON=docs/pacer-search-1.json go test -run TestPacerSearch -timeout 2h ./retry/
//
// It asserts nothing, and runs only when SEARCH_JSON is set.
func TestPacerSearch(t *testing.T) {
	path := os.Getenv("SEARCH_JSON")
	if path == "" {
		t.Skip("set SEARCH_JSON to run")
	}
	env := func(name string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
			return n
		}
		return def
	}
	seed, from, to := env("SEARCH_SEED", 1), env("SEARCH_FROM", 0), env("SEARCH_TO", 100)
	scoreSeeds, bareSeeds := env("SEARCH_SCORE_SEEDS", 40), env("SEARCH_BARE_FLEET_SEEDS", 20)
	base, err := parseTuning(os.Getenv("SEARCH_BASE"))
	require.NoError(t, err, "SEARCH_BASE")
	under, err := parseTuning(os.Getenv("SEARCH_DEFAULTS"))
	require.NoError(t, err, "SEARCH_DEFAULTS")
	var args []string
	if len(under) > 0 {
		args = append(args, "SEARCH_DEFAULTS="+tuningName(under))
	}
	if len(base) > 0 {
		args = append(args, "SEARCH_BASE="+tuningName(base))
	}
	args = append(args, fmt.Sprintf("SEARCH_SEED=%d", seed), fmt.Sprintf("SEARCH_FROM=%d", from), fmt.Sprintf("SEARCH_TO=%d", to),
		fmt.Sprintf("SEARCH_SCORE_SEEDS=%d", scoreSeeds), fmt.Sprintf("SEARCH_BARE_FLEET_SEEDS=%d", bareSeeds),
		"SEARCH_JSON="+path, "go", "test", "-run", "TestPacerSearch", "-timeout", "2h", "./retry/")
	args = modelCommand(args...)
	stored := struct {
		scenario.Provenance
		Seed           int              `json:"seed"`
		Defaults       string           `json:"defaults,omitempty"`
		Base           string           `json:"base,omitempty"`
		ScoreSeeds     int              `json:"score_seeds"`
		BareFleetSeeds int              `json:"bare_fleet_seeds"`
		Runs           []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance(args), Seed: seed, Defaults: tuningName(under), Base: tuningName(base), ScoreSeeds: scoreSeeds, BareFleetSeeds: bareSeeds}
	ours := string(scenario.Ours)
	variants := searchVariants(uint64(seed), to, base, under) //nolint:gosec // G115: the seed is never negative
	for i := from; i < to; i++ {
		name := variants[i].name
		set := maps.Clone(under)
		if set == nil {
			set = map[string]float64{}
		}
		maps.Copy(set, variants[i].set)
		restore, err := retry.SetTuning(set)
		require.NoError(t, err, name)
		// One row per cell (its seeds meeting every goal, its excess, its
		// worst seed's figures), one for the variant (the sums over the
		// cells), one for the bare fleet (medians over its seeds).
		met, excess, undelivered := 0, 0.0, 0
		for _, sc := range scoreCellsOver(t, matrixCells(true), scoreSeeds) {
			row := sc.row(name)
			row["index"], row["excess"], row["undelivered"] = i, sc.excess, sc.undelivered
			stored.Runs = append(stored.Runs, row)
			met += sc.met
			excess += sc.excess
			undelivered += sc.undelivered
		}
		stored.Runs = append(stored.Runs, map[string]any{"scenario": "score", "exporter": ours, "variant": name, "index": i,
			"seeds_met": met, "excess": excess, "undelivered": undelivered})
		var fair, refused, delivery []float64
		for s := range uint64(bareSeeds) { //nolint:gosec // G115: seeds are small and never negative
			f := simulateFleet(t, bareFleetSim(), s)
			fair = append(fair, f.Fairness)
			refused = append(refused, share(f.Refused, f.Requests))
			delivery = append(delivery, f.Delivery.Seconds())
		}
		restore()
		if bareSeeds > 0 {
			stored.Runs = append(stored.Runs, map[string]any{"scenario": "fleet-bare-model-median", "exporter": ours,
				"variant": name, "index": i, "fairness": scenario.Median(fair), "refused_share": scenario.Median(refused),
				"delivery_seconds": scenario.Median(delivery), "delivery_seconds_max": slices.Max(delivery)})
		}
		t.Logf("%3d %-100s met %4d excess %7.2f undelivered %d", i, name, met, excess, undelivered)
	}
	stored.Finish()
	writeStoredRun(t, path, stored)
}

// TestSearchVariants: a search's variants are the default first, then
// the same for the same seed (and others for another), each changing one
// to six of the bare 429's values, none to its default's, each within its
// range; none is drawn twice, and their names are what SetTuning and
// SCORE_TUNING take. Every range holds the default.
func TestSearchVariants(t *testing.T) {
	defaults := retry.BareTuningDefaults()
	require.Len(t, searchKnobs, len(defaults), "a knob per value of the bare law")
	ranges := map[string]searchKnob{}
	for _, k := range searchKnobs {
		d, ok := defaults[k.name]
		require.True(t, ok, "%s is a value of the bare law", k.name)
		assert.True(t, k.lo <= d && d <= k.hi, "%s: the default %g within [%g, %g]", k.name, d, k.lo, k.hi)
		ranges[k.name] = k
	}
	vs := searchVariants(1, 300, nil, nil)
	require.Len(t, vs, 300)
	assert.Equal(t, "default", vs[0].name)
	assert.Empty(t, vs[0].set)
	assert.Equal(t, vs[:100], searchVariants(1, 100, nil, nil), "the first of a longer search")
	assert.NotEqual(t, vs[1].name, searchVariants(2, 2, nil, nil)[1].name, "another seed draws other variants")
	base := map[string]float64{"measureRequests": 1.79, "maxRegain": 10.19}
	around := searchVariants(3, 100, base, nil)
	assert.Equal(t, []string{"default", "maxRegain=10.19,measureRequests=1.79"}, []string{around[0].name, around[1].name})
	seen := map[string]bool{}
	for i, v := range around[2:] {
		require.NotContains(t, seen, v.name, "variant %d around the base repeats an earlier one", i+2)
		seen[v.name] = true
		changed := 0
		for k := range defaults {
			b, inBase := base[k]
			x, inVariant := v.set[k]
			if inBase != inVariant || b != x {
				changed++
			}
		}
		assert.True(t, changed >= 1 && changed <= 3, "variant %d around the base changes %d values: %s", i+2, changed, v.name)
	}
	names := map[string]bool{}
	for i, v := range vs[1:] {
		require.NotContains(t, names, v.name, "variant %d repeats an earlier one", i+1)
		names[v.name] = true
		require.True(t, len(v.set) >= 1 && len(v.set) <= 6, "variant %d changes %d values", i+1, len(v.set))
		parsed := map[string]float64{}
		for kv := range strings.SplitSeq(v.name, ",") {
			k, x, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(x, 64)
			require.NoError(t, err, kv)
			parsed[k] = f
			r := ranges[k]
			assert.True(t, r.lo-1e-9 <= f && f <= r.hi+1e-9, "variant %d: %s outside [%g, %g]", i+1, kv, r.lo, r.hi)
			assert.NotEqual(t, defaults[k], f, "variant %d: %s is the default", i+1, kv)
		}
		require.Equal(t, v.set, parsed, "variant %d's name", i+1)
		restore, err := retry.SetTuning(v.set)
		require.NoError(t, err, v.name)
		restore()
	}
}

// TestStoredSearchesAreDrawnAgain: every stored search
// (docs/pacer-search-*.json) names the variants searchVariants draws for
// its seed and base at each index, so that each can be run again by its
// command.
func TestStoredSearchesAreDrawnAgain(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "pacer-search-*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var stored struct {
			Seed     uint64 `json:"seed"`
			Defaults string `json:"defaults"`
			Base     string `json:"base"`
			Runs     []struct {
				Scenario, Variant string
				Index             int
			} `json:"runs"`
		}
		require.NoError(t, json.Unmarshal(b, &stored), file)
		base, err := parseTuning(stored.Base)
		require.NoError(t, err, file)
		under, err := parseTuning(stored.Defaults)
		require.NoError(t, err, file)
		n := 0
		for _, r := range stored.Runs {
			n = max(n, r.Index+1)
		}
		variants := searchVariants(stored.Seed, n, base, under)
		for _, r := range stored.Runs {
			if r.Scenario == "score" {
				assert.Equal(t, variants[r.Index].name, r.Variant, "%s: variant %d", file, r.Index)
			}
		}
	}
}
