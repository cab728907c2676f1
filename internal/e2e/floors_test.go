// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

// This file has no build tag: TestRetryAfterGCRAFloorStoredRuns, which
// holds a floor of the end-to-end tests against the stored runs that chose
// it, runs with the unit tests.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const (
	// retryAfterGCRAFloor is the least share of a GCRA's limit used, or
	// held by the Retry-After it sends in whole seconds, in
	// TestRetryAfterRequestRateLimiter: the GCRA's 100 ms wait is sent as
	// "Retry-After: 1" (retryAfterGCRAHold), and each refusal holds the
	// destination that second, as the server asked; the time held is the
	// server's to ask, so it counts with the time used. How many refusals
	// a run meets is chance: of the limiter model's 200 seeds
	// (docs/limiter-model-retry-after-gcra.json) 131 meet three (68.6-73.7 %
	// used) and 69 four (62.9-68.5 %), and a floor on the share used alone
	// (64 % until this one) failed 6 of them. Used or held, the seeds give
	// 84.1 % at the least. The four stored runs of the eleventh step's
	// build (docs/scenariobench-slowstart-ab.json, variant 53a48e7: its slow
	// start counted the held second's silence as the backend's rate; three
	// refusals each, 61.9-63.8 % used) give 77.5-79.9 %, and the twelfth
	// step's four (ec66a8c) 87.5-88.6 %: the floor sits between the two, and
	// TestRetryAfterGCRAFloorStoredRuns holds it there.
	retryAfterGCRAFloor = 0.82
	retryAfterGCRAHold  = time.Second
)

// usedOrHeld is the share of a limit used, plus the share of the time to
// delivery that refused requests held the destination, hold each.
func usedOrHeld(used float64, refused int, deliverySeconds float64, hold time.Duration) float64 {
	return used + float64(refused)*hold.Seconds()/deliverySeconds
}

// TestRetryAfterGCRAFloorStoredRuns holds retryAfterGCRAFloor between the
// stored runs that chose it: every seed of the limiter model's run of the
// cell at or above it, every run of the eleventh step's build (the
// regression the floor guards) below it, every run of the twelfth step's
// build at or above it.
func TestRetryAfterGCRAFloorStoredRuns(t *testing.T) {
	const cell = "x-gcra/retry-after/10rps/500"
	type run struct {
		Scenario        string   `json:"scenario"`
		Exporter        string   `json:"exporter"`
		Variant         string   `json:"variant"`
		Used            *float64 `json:"used"`       // the model's
		LimitUsed       *float64 `json:"limit_used"` // a built collector's
		Refused         *int     `json:"refused"`
		DeliverySeconds float64  `json:"delivery_seconds"`
	}
	load := func(name string) []run {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Runs []run `json:"runs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return doc.Runs
	}
	check := func(name, variant string, r run, used *float64, above bool) {
		t.Helper()
		if used == nil || r.Refused == nil || r.DeliverySeconds <= 0 {
			t.Errorf("%s %s: a figure is missing: %+v", name, variant, r)
			return
		}
		v := usedOrHeld(*used, *r.Refused, r.DeliverySeconds, retryAfterGCRAHold)
		if above != (v >= retryAfterGCRAFloor) {
			t.Errorf("%s %s: %.1f %% used or held (%d refused, %.1f %% used, %.1f s), want it %s the floor of %.0f %%",
				name, variant, 100*v, *r.Refused, 100**used, r.DeliverySeconds, map[bool]string{true: "at or above", false: "below"}[above], 100*retryAfterGCRAFloor)
		}
	}
	n := 0
	for _, r := range load("limiter-model-retry-after-gcra.json") {
		if r.Scenario == cell {
			check("model", "", r, r.Used, true)
			n++
		}
	}
	if n != 200 {
		t.Errorf("the model's run has %d seeds of %s, want 200", n, cell)
	}
	builds := map[string]int{}
	for _, r := range load("scenariobench-slowstart-ab.json") {
		if r.Scenario != cell || r.Exporter != "otlp_http_retry" {
			continue
		}
		switch r.Variant {
		case "53a48e7": // the eleventh step's build
			check("built collector", r.Variant, r, r.LimitUsed, false)
		case "ec66a8c": // the twelfth step's
			check("built collector", r.Variant, r, r.LimitUsed, true)
		default:
			continue
		}
		builds[r.Variant]++
	}
	if builds["53a48e7"] != 4 || builds["ec66a8c"] != 4 {
		t.Errorf("runs of the two builds: %v, want 4 of each", builds)
	}
}
