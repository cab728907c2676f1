// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

func ratio(t *testing.T, rows []medianRow, scen, key string) (float64, int) {
	t.Helper()
	for _, r := range rows {
		if r.Scenario == scen && r.Exporter == ratioExporter {
			if v := r.Values[key]; v != nil {
				return *v, r.Runs
			}
			t.Fatalf("%s: no ratio for %s", scen, key)
		}
	}
	t.Fatalf("%s: no row of ratios", scen)
	return 0, 0
}

// TestRatiosAreMediansOfPairs: the ratio row is the median of the ratios
// of the pairs of the same run, not the ratio of the medians. Pairs
// (ours, core): (10, 5), (20, 30), (40, 10) give ratios 2, 0.67 and 4,
// median 2; the medians 20 and 10 would give 2 as well, so the third pair
// is (40, 50): ratios 2, 0.67, 0.8, median 0.8, where the medians 20 and
// 30 give 0.67.
func TestRatiosAreMediansOfPairs(t *testing.T) {
	var runs []scenario.Figures
	for i, v := range [][2]float64{{10, 5}, {20, 30}, {40, 50}} {
		o, c := v[0], v[1]
		runs = append(runs,
			scenario.Figures{Scenario: "s", Exporter: string(scenario.Ours), Run: i + 1, ItemsPerSecond: &o},
			scenario.Figures{Scenario: "s", Exporter: string(scenario.Core), Run: i + 1, ItemsPerSecond: &c})
	}
	got, pairs := ratio(t, medians(runs), "s", "items_per_second")
	if math.Abs(got-0.8) > 1e-9 || pairs != 3 {
		t.Fatalf("ratio %v over %d pairs; want the median of the pairs' ratios, 0.8, over 3", got, pairs)
	}
}

// TestRatiosOfTheStoredRun: the ratio row of the stored default run is
// the median of its pairs' ratios (ours and core of the same run), worked
// out here from the runs themselves, not the ratio of the two medians.
func TestRatiosOfTheStoredRun(t *testing.T) {
	b, err := os.ReadFile("../../docs/scenariobench.json")
	if err != nil {
		t.Skip(err)
	}
	var rep struct {
		Runs []scenario.Figures `json:"runs"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	pairMedian := func(value func(scenario.Figures) float64) float64 {
		ours, core := map[int]float64{}, map[int]float64{}
		for _, f := range rep.Runs {
			if f.Scenario != scenario.Healthy {
				continue
			}
			switch f.Exporter {
			case string(scenario.Ours):
				ours[f.Run] = value(f)
			case string(scenario.Core):
				core[f.Run] = value(f)
			}
		}
		var ratios []float64
		for run, o := range ours {
			if c, ok := core[run]; ok && c != 0 {
				ratios = append(ratios, o/c)
			}
		}
		if len(ratios) < 3 {
			t.Fatalf("healthy: %d pairs in the stored run, want 3 or more", len(ratios))
		}
		slices.Sort(ratios)
		if n := len(ratios); n%2 == 0 {
			return (ratios[n/2-1] + ratios[n/2]) / 2
		}
		return ratios[len(ratios)/2]
	}
	rows := medians(rep.Runs)
	items := pairMedian(func(f scenario.Figures) float64 { return *f.ItemsPerSecond })
	if v, _ := ratio(t, rows, scenario.Healthy, "items_per_second"); math.Abs(v-items) > 0.005 {
		t.Errorf("healthy items/s ratio %.3f, want the median of the pairs' ratios %.3f", v, items)
	}
	cpu := pairMedian(func(f scenario.Figures) float64 { return f.CPUSecondsPer100k })
	if v, _ := ratio(t, rows, scenario.Healthy, "cpu_seconds_per_100k"); math.Abs(v-cpu) > 0.005 {
		t.Errorf("healthy CPU ratio %.3f, want the median of the pairs' ratios %.3f", v, cpu)
	}
}
