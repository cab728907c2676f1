// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

func TestExpandNames(t *testing.T) {
	got := expandNames([]string{"quota", " matrix ", "healthy"})
	cells := scenario.MatrixCells()
	require.Len(t, got, len(cells)+2)
	assert.Equal(t, "quota", got[0])
	assert.Equal(t, cells[0].Name, got[1])
	assert.Equal(t, "healthy", got[len(got)-1])
}

// TestJudgeMatrix: ours is judged against core's run of the same number,
// the sporadic cell against its reference's run by the same exporter; the
// worst cell of each exporter is its worst run, a loss before any rate;
// the other scenarios are left to their own table.
func TestJudgeMatrix(t *testing.T) {
	p := scenario.DefaultParams()
	build := func(name string) scenario.Scenario {
		s, err := p.Build(name)
		require.NoError(t, err)
		return s
	}
	gcra, ref, sporadic, quota := build("gcra/none/50rps/50"), build("unlimited/none/20rps/100"), build("sporadic-5%/none/20rps/100"), build("quota")
	window := build("fixed-window-10s/none/5rps/1000")
	f64 := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	runs := []scenario.Figures{
		{Scenario: "quota", Exporter: string(scenario.Ours), Run: 1, Spans: 10},
		{Scenario: gcra.Name, Exporter: string(scenario.Ours), Run: 1, Requests: 100, Limited: i(1), LimitUsed: f64(0.95), DeliverySeconds: f64(30), Spans: 1000},
		{Scenario: gcra.Name, Exporter: string(scenario.Core), Run: 1, Requests: 100, Limited: i(20), LimitUsed: f64(0.5), DeliverySeconds: f64(20), Spans: 1000},
		{Scenario: gcra.Name, Exporter: string(scenario.Ours), Run: 2, Requests: 100, Limited: i(1), LimitUsed: f64(0.95), DeliverySeconds: f64(20), Spans: 1000},
		{Scenario: gcra.Name, Exporter: string(scenario.Core), Run: 2, Requests: 100, Limited: i(20), LimitUsed: f64(0.5), DeliverySeconds: f64(20), Spans: 1000},
		{Scenario: ref.Name, Exporter: string(scenario.Ours), Run: 1, Requests: 100, Limited: i(0), DeliverySeconds: f64(10), Spans: 1000},
		{Scenario: sporadic.Name, Exporter: string(scenario.Ours), Run: 1, Requests: 100, Limited: i(5), DeliverySeconds: f64(10.5), Spans: 1000},
		{Scenario: ref.Name, Exporter: string(scenario.Core), Run: 1, Requests: 100, Limited: i(0), DeliverySeconds: f64(10), Spans: 1000},
		{Scenario: sporadic.Name, Exporter: string(scenario.Core), Run: 1, Requests: 100, Limited: i(5), Spans: 1000, Lost: 50},
		{Scenario: window.Name, Exporter: string(scenario.Ours), Run: 1, Requests: 100, Limited: i(3), LimitUsed: f64(0.799), LimitBest: f64(0.828), DeliverySeconds: f64(20), Spans: 1000},
		{Scenario: window.Name, Exporter: string(scenario.Core), Run: 1, Requests: 100, Limited: i(30), LimitUsed: f64(0.6), LimitBest: f64(0.8), DeliverySeconds: f64(20), Spans: 1000},
	}
	rep := judgeMatrix([]scenario.Scenario{quota, gcra, ref, sporadic, window}, runs)
	require.NotNil(t, rep)
	assert.Len(t, rep.Verdicts, len(runs)-1, "every run of a cell, not the quota scenario")
	byKey := map[string]scenario.Verdict{}
	for _, v := range rep.Verdicts {
		byKey[fmt.Sprintf("%s/%s/%d", v.Cell, v.Exporter, v.Run)] = v
	}
	assert.Equal(t, "delivered in 30.0 s, 1.50 × core's 20.0 s (goal delivered ≤ 1.05 × core's time)", byKey[gcra.Name+"/otlp_http_retry/1"].Missed())
	assert.True(t, byKey[gcra.Name+"/otlp_http_retry/2"].Met())
	assert.True(t, byKey[sporadic.Name+"/otlp_http_retry/1"].Met(), "10.5 s against 10 s never refused")
	require.NotNil(t, rep.Worst[string(scenario.Ours)])
	assert.Equal(t, gcra.Name, rep.Worst[string(scenario.Ours)].Cell)
	assert.Equal(t, 1, rep.Worst[string(scenario.Ours)].Run)
	assert.Equal(t, sporadic.Name, rep.Worst[string(scenario.Core)].Cell, "core's loss outranks its refusals")

	var b strings.Builder
	printMatrix(&b, []scenario.Scenario{quota, gcra, ref, sporadic, window}, runs, rep)
	out := b.String()
	// A fixed window's run shows the most it could have used next to what
	// it used; the goal is judged on what it used.
	assert.Contains(t, out, "| fixed-window-10s/none/5rps/1000 | ours | 1 | 100 | – | 79.9% (at most 82.8%) | 20.0 |")
	assert.Contains(t, out, "| gcra/none/50rps/50 | ours | 1 | 100 | – | 95.0% | 30.0 |")
	assert.Contains(t, byKey[window.Name+"/otlp_http_retry/1"].Missed(), "79.9 % of the limit used (goal used ≥ 90 %)")
	assert.Contains(t, out, "WORST CELL of otlp_http_retry (run 1): gcra/none/50rps/50: delivered in 30.0 s")
	assert.Contains(t, out, "worst cell of otlp_http (run 1): sporadic-5%/none/20rps/100: 50 of 1000 spans dropped")
	assert.NotContains(t, out, "| quota |")

	assert.Len(t, withoutCells([]scenario.Scenario{quota, gcra, ref, sporadic, window}, runs), 1)
	assert.Nil(t, judgeMatrix([]scenario.Scenario{quota}, runs[:1]))
}

// TestStoredMatricesInDocs: every row of the limiter matrix's table and
// the worst cells of each stored matrix run (judged again as -matrix-table
// does) are in docs/benchmarks.md, so that the figures there are the
// stored run's.
func TestStoredMatricesInDocs(t *testing.T) {
	docs, err := os.ReadFile("../../docs/benchmarks.md")
	require.NoError(t, err)
	checked := 0
	for _, name := range []string{"scenariobench-matrix-before.json", "scenariobench-matrix-first-pacer.json", "scenariobench-matrix-second-step.json", "scenariobench-matrix-quota-fixes.json", "scenariobench-matrix-window-counts.json", "scenariobench-matrix-window-schedule.json", "scenariobench-matrix-quota-answers.json", "scenariobench-matrix-row-probes.json", "scenariobench-matrix-second-windows.json", "scenariobench-matrix-confirm-twice.json", "scenariobench-matrix.json", "scenariobench-matrix-twentieth-step.json", "scenariobench-matrix-twenty-second-step.json"} {
		path := filepath.Join("..", "..", "docs", name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		checked++
		var b strings.Builder
		require.NoError(t, printStoredMatrix(&b, path))
		for line := range strings.Lines(b.String()) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "| cell ") || strings.HasPrefix(line, "|---") {
				continue
			}
			if strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "WORST CELL") || strings.HasPrefix(line, "worst cell") {
				assert.Contains(t, string(docs), line, "%s: a line of its table missing from docs/benchmarks.md", name)
			}
		}
	}
	if checked == 0 {
		t.Skip("no stored matrix run in docs/")
	}
}

// TestStoredBareFleetInDocs: the rows of the bare-limiter fleet's tables
// in docs/benchmarks.md (before the pacer learned any limiter, its first
// version, and now) are the stored runs' figures.
func TestStoredBareFleetInDocs(t *testing.T) {
	for _, name := range []string{"scenariobench-fleet-bare-before.json", "scenariobench-fleet-bare-first-pacer.json", "scenariobench-fleet-bare-second-step.json", "scenariobench-fleet-bare-third-step.json", "scenariobench-fleet-bare-fourth-step.json", "scenariobench-fleet-bare.json"} {
		t.Run(name, func(t *testing.T) { checkStoredBareFleet(t, name) })
	}
}

func checkStoredBareFleet(t *testing.T, name string) {
	b, err := os.ReadFile("../../docs/" + name)
	if err != nil {
		t.Skip(err)
	}
	docs, err := os.ReadFile("../../docs/benchmarks.md")
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(b, &rep))
	for _, exp := range []scenario.Exporter{scenario.Ours, scenario.Core} {
		var after, fair, refused, used, into, delivered []string
		lost := 0
		for _, f := range rep.FleetRuns {
			if f.Exporter != string(exp) {
				continue
			}
			after = append(after, fmt.Sprint(f.AfterWindowRPS))
			fair = append(fair, fmt.Sprintf("%.3f", *f.Fairness))
			refused = append(refused, fmt.Sprintf("%.1f", 100*f.RefusedShare))
			used = append(used, fmt.Sprintf("%.1f", 100**f.QuotaUsed))
			into = append(into, fmt.Sprint(f.IntoWindow))
			delivered = append(delivered, fmt.Sprintf("%.1f", *f.DeliverySeconds))
			lost = max(lost, f.Lost)
		}
		require.Len(t, after, 3, exp)
		j := func(xs []string) string { return strings.Join(xs, ", ") }
		row := fmt.Sprintf("| %s, runs 1–3 | %s | %s | %s %% | %s %% | %s | %s | %d |",
			exp.Short(), j(after), j(fair), j(refused), j(used), j(into), j(delivered), lost)
		assert.Contains(t, string(docs), row)
	}
}
