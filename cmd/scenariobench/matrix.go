// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// expandNames turns "matrix" into the name of every cell of the limiter
// matrix, in order, and trims the others.
func expandNames(names []string) []string {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n != scenario.Matrix {
			out = append(out, n)
			continue
		}
		for _, c := range scenario.MatrixCells() {
			out = append(out, c.Name)
		}
	}
	return out
}

// matrixReport is the limiter matrix's part of the JSON: the goals, every
// run of every cell judged, and the worst cell of each exporter.
type matrixReport struct {
	Cells    []scenario.Cell              `json:"cells"`
	Goals    map[string]float64           `json:"goals"`
	Verdicts []scenario.Verdict           `json:"verdicts"`
	Worst    map[string]*scenario.Verdict `json:"worst"`
}

// judgeMatrix judges every run of a cell: each exporter's figures against
// the goals, ours against core's of the same run, the sporadic cell
// against its reference's run by the same exporter (when it ran).
func judgeMatrix(scenarios []scenario.Scenario, runs []scenario.Figures) *matrixReport {
	cells := map[string]*scenario.Cell{}
	for _, s := range scenarios {
		if s.Cell != nil {
			cells[s.Name] = s.Cell
		}
	}
	if len(cells) == 0 {
		return nil
	}
	type key struct {
		cell, exporter string
		run            int
	}
	by := map[key]scenario.CellFigures{}
	for _, f := range runs {
		if cells[f.Scenario] != nil {
			by[key{f.Scenario, f.Exporter, f.Run}] = f.CellFigures()
		}
	}
	rep := &matrixReport{
		Goals: map[string]float64{
			"refused_max": scenario.GoalRefused, "refused_max_ratelimit": scenario.GoalRefusedRateLimit,
			"used_min": scenario.GoalUsed, "delivery_vs_core_max": scenario.GoalVsCore, "sporadic_vs_never_refusing_max": scenario.GoalVsReference,
		},
		Worst: map[string]*scenario.Verdict{},
	}
	for _, s := range scenarios {
		if s.Cell != nil {
			rep.Cells = append(rep.Cells, *s.Cell)
		}
	}
	for _, f := range runs {
		c := cells[f.Scenario]
		if c == nil {
			continue
		}
		var core, ref *scenario.CellFigures
		if cf, ok := by[key{f.Scenario, string(scenario.Core), f.Run}]; ok {
			core = &cf
		}
		if rf, ok := by[key{c.Reference, f.Exporter, f.Run}]; ok && c.Reference != "" {
			ref = &rf
		}
		v := scenario.Judge(*c, f.Exporter, f.CellFigures(), core, ref)
		v.Run = f.Run
		rep.Verdicts = append(rep.Verdicts, v)
		if w := rep.Worst[f.Exporter]; w == nil || scenario.Worse(v, *w) {
			rep.Worst[f.Exporter] = &v
		}
	}
	return rep
}

// printMatrix prints every run of every cell (markdown) and then the
// headline: each exporter's worst cell.
func printMatrix(w io.Writer, scenarios []scenario.Scenario, runs []scenario.Figures, rep *matrixReport) {
	fmt.Fprintln(w, "Limiter matrix: every run of every cell (refused: the limiter's 429s, or 503s when it sheds, over all requests; used: the share of the limit used from the first request to full delivery, and for a fixed window the most any exporter could use at the run's phase; delivered: from the load's first batch; lost: not delivered at the cell's timeout, of which dropped: given up by the exporter)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| cell | exporter | run | requests | refused | limit used | delivered, s | lost | dropped | goals |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	verdict := map[string]scenario.Verdict{}
	for _, v := range rep.Verdicts {
		verdict[fmt.Sprint(v.Cell, v.Exporter, v.Run)] = v
	}
	for _, s := range scenarios {
		if s.Cell == nil {
			continue
		}
		for _, f := range runs {
			if f.Scenario != s.Name {
				continue
			}
			goals := "met"
			if v := verdict[fmt.Sprint(f.Scenario, f.Exporter, f.Run)]; !v.Met() {
				goals = "missed: " + v.Missed()
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s | %d | %s | %s |\n",
				s.Name, shortName(f.Exporter), f.Run, f.Requests, fmtPct(f.RefusedShare), fmtUsed(f),
				fmtF(f.DeliverySeconds, 1), f.Lost, fmtI(f.Dropped), goals)
		}
	}
	fmt.Fprintln(w)
	for _, exp := range []scenario.Exporter{scenario.Ours, scenario.Core} {
		v := rep.Worst[string(exp)]
		if v == nil {
			continue
		}
		head := "WORST CELL"
		if exp == scenario.Core {
			head = "worst cell"
		}
		status := "every goal met"
		if !v.Met() {
			status = v.Missed()
		}
		fmt.Fprintf(w, "%s of %s (run %d): %s: %s\n", head, exp, v.Run, v.Cell, status)
	}
}

// withoutCells leaves the matrix's cells out of runs (their own table has
// them), so that the scenarios' table keeps its shape.
func withoutCells(scenarios []scenario.Scenario, runs []scenario.Figures) (other []scenario.Figures) {
	isCell := map[string]bool{}
	for _, s := range scenarios {
		isCell[s.Name] = s.Cell != nil
	}
	return slices.DeleteFunc(slices.Clone(runs), func(f scenario.Figures) bool { return isCell[f.Scenario] })
}

// printStoredMatrix prints the limiter matrix's table and headline of a
// JSON written by -out, judged again with today's goals: the cells are
// the current ones of the same names (a cell's name says its kind, hint,
// rate and batch).
func printStoredMatrix(w io.Writer, path string) error {
	scenarios, runs, m, err := judgeStoredMatrix(path)
	if err != nil {
		return err
	}
	printMatrix(w, scenarios, runs, m)
	return nil
}

// judgeStoredMatrix reads a stored run and judges its cells of the
// limiter matrix as -matrix-table does.
func judgeStoredMatrix(path string) ([]scenario.Scenario, []scenario.Figures, *matrixReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var scenarios []scenario.Scenario
	seen := map[string]bool{}
	for _, f := range rep.Runs {
		if seen[f.Scenario] {
			continue
		}
		seen[f.Scenario] = true
		if c, ok := scenario.CellByName(f.Scenario); ok {
			scenarios = append(scenarios, c.Scenario())
		}
	}
	m := judgeMatrix(scenarios, rep.Runs)
	if m == nil {
		return nil, nil, nil, fmt.Errorf("%s: no run of a cell of the limiter matrix", path)
	}
	return scenarios, rep.Runs, m, nil
}

// metCells says in how many of an exporter's judged runs of the cells of a
// stored matrix run every goal was met: "10 of 13".
func metCells(path, exporter, cell string) (string, error) {
	_, _, m, err := judgeStoredMatrix(path)
	if err != nil {
		return "", err
	}
	met, all := 0, 0
	for _, v := range m.Verdicts {
		if v.Exporter != exporter || (cell != "" && v.Cell != cell) {
			continue
		}
		all++
		if v.Met() {
			met++
		}
	}
	if all == 0 {
		if cell != "" {
			return "", fmt.Errorf("%s: no run of %s in cell %s", path, exporter, cell)
		}
		return "", fmt.Errorf("%s: no run of %s", path, exporter)
	}
	return fmt.Sprintf("%d of %d", met, all), nil
}

// fmtUsed is a run's share of its limit used, with the most any exporter
// could have used in it when that hangs on the run's phase (a fixed
// window: Figures.LimitBest).
func fmtUsed(f scenario.Figures) string {
	if f.LimitUsed == nil || f.LimitBest == nil {
		return fmtPct(f.LimitUsed)
	}
	return fmtPct(f.LimitUsed) + " (at most " + fmtPct(f.LimitBest) + ")"
}
