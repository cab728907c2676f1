// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// bareFleetSim is the fleet of 50 (defaultFleetSim) against a request-rate
// limiter without hints, as a reverse proxy runs one: bare 429s for the 5 s
// window from the first request (the limiter closed), then a GCRA of 100
// requests a second (the quota's rate; a burst of 10, a tenth of a
// second's) answering a bare 429 (scenario.BareFleet is the same against
// real collectors).
func bareFleetSim() fleetSim {
	s := defaultFleetSim()
	s.Limiter = &limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintNone, Rate: s.QuotaRPS, Burst: s.QuotaRPS / 10}
	return s
}

// newFleetLimiter builds the fleet's limiter with the run's seed.
func newFleetLimiter(s limiter.Spec, seed uint64) *limiter.Limiter {
	s.Seed = seed
	l, err := limiter.New(s)
	if err != nil {
		panic(err)
	}
	return l
}

// TestFleetBehindABareRequestLimiter: the fleet of 50 behind a limiter
// that never says how long to wait, over ten seeds: nothing lost and every
// batch accepted once. It logs the figures issue 15 asks for (the first
// second after the limiter recovers, fairness, refused share); their goals
// are the pacer's to meet.
func TestFleetBehindABareRequestLimiter(t *testing.T) {
	s := bareFleetSim()
	for seed := range uint64(10) {
		f := simulateFleet(t, s, seed)
		t.Logf("seed %d: %s", seed, f)
		assert.Zero(t, f.Lost, "seed %d: batches lost", seed)
		assert.Equal(t, s.Size*int(s.Rate*s.LoadFor.Seconds()), f.Requests-f.Refused, "seed %d: every batch accepted once", seed)
	}
}

// TestFleetBareDistribution logs the fleet's figures behind the bare
// request-rate limiter over many seeds (set FLEET_BARE_SEEDS to how many)
// and their spread, with the tuning SCORE_TUNING names (as TestScore); it
// asserts nothing. With FLEET_BARE_JSON set to a
// file, it also stores every seed's figures there with their provenance,
// for the figures of docs/benchmarks.md:
//
//	FLEET_BARE_SEEDS=20 FLEET_BARE_JSON=docs/fleet-bare-model.json go test -run TestFleetBareDistribution ./retry/
func TestFleetBareDistribution(t *testing.T) {
	n, _ := strconv.ParseUint(os.Getenv("FLEET_BARE_SEEDS"), 10, 16)
	if n == 0 {
		t.Skip("set FLEET_BARE_SEEDS to run")
	}
	path := tunedStore(t, "FLEET_BARE_JSON")
	stored := struct {
		scenario.Provenance
		Runs []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance([]string{"FLEET_BARE_SEEDS=" + strconv.FormatUint(n, 10), "FLEET_BARE_JSON=" + path, "go", "test", "-run", "TestFleetBareDistribution", "./retry/"})}
	var after, fair, refused, delivery []float64
	for seed := range n {
		f := simulateFleet(t, bareFleetSim(), seed)
		t.Logf("seed %2d: %s", seed, f)
		stored.Runs = append(stored.Runs, map[string]any{
			"scenario": "fleet-bare-model", "exporter": string(scenario.Ours), "run": seed,
			"fairness": f.Fairness, "after_window_rps": f.AfterWindow, "peak_rps_after_window": f.Peak,
			"requests": f.Requests, "refused": f.Refused, "refused_share": share(f.Refused, f.Requests),
			"lost": f.Lost, "delivery_seconds": f.Delivery.Seconds(),
		})
		after = append(after, float64(f.AfterWindow))
		fair = append(fair, f.Fairness)
		refused = append(refused, 100*float64(f.Refused)/float64(f.Requests))
		delivery = append(delivery, f.Delivery.Seconds())
	}
	spread := func(xs []float64) string {
		slices.Sort(xs)
		return strconv.FormatFloat(xs[0], 'f', 3, 64) + " / " + strconv.FormatFloat(xs[len(xs)/2], 'f', 3, 64) + " / " + strconv.FormatFloat(xs[len(xs)-1], 'f', 3, 64)
	}
	t.Logf("min / median / max over %d seeds: first second after the window %s requests; fairness %s; refused %s %%; delivered in %s s",
		n, spread(after), spread(fair), spread(refused), spread(delivery))
	if path != "" {
		stored.Finish()
		writeStoredRun(t, path, stored)
	}
}

// TestBareFleetStartBurst: the fleet behind the bare limiter, each
// collector's first three batches arriving at once (StartBurst, as the
// built collectors' first batches do). Each collector's first refusals
// then come with others of its requests out: they set a tentative
// concurrency limit, and the last of them forgets it. Read as a first
// refusal (unlearnedTentative), it holds the collector 1 s and the
// collector slow-starts after the window, so the first second after the
// window stays near the limiter's rate; held retry_after::default
// instead, and left unlimited by its accepted probe, each such collector
// sent its whole backlog at once, about three times the rate in that
// second (the built collectors: docs/benchmarks.md, "two misreadings at
// a destination's start"). Medians over seeds 0-9.
func TestBareFleetStartBurst(t *testing.T) {
	afterWindow := func() float64 {
		var after []float64
		for seed := range uint64(10) {
			s := bareFleetSim()
			s.StartBurst = 3
			f := simulateFleet(t, s, seed)
			assert.Zero(t, f.Lost, "seed %d: batches lost", seed)
			after = append(after, float64(f.AfterWindow))
		}
		return scenario.Median(after)
	}
	s := bareFleetSim()
	got := afterWindow()
	t.Logf("first second after the window, median: %.0f requests (limit %.0f/s)", got, s.QuotaRPS)
	assert.LessOrEqual(t, got, 1.1*s.QuotaRPS, "the first second after the window, at most a tenth past the limiter's rate")

	restore, err := retry.SetTuning(map[string]float64{"unlearnedTentative": 0})
	require.NoError(t, err)
	defer restore()
	without := afterWindow()
	t.Logf("without unlearnedTentative: %.0f requests", without)
	assert.Greater(t, without, 2*s.QuotaRPS, "the rule is what keeps the first second near the limit")
}
