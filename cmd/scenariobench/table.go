// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// genericColumn is one figure of a table of F (a scenario's or the
// fleet's figures of one run).
type genericColumn[F any] struct {
	key, head string
	prec      int
	pct       bool
	get       func(F) (float64, bool)
}

// column is one figure of the scenario table.
type column = genericColumn[scenario.Figures]

func fp(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

func ip(v *int) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return float64(*v), true
}

var columns = []column{
	{"items_per_second", "items/s", 0, false, func(f scenario.Figures) (float64, bool) { return fp(f.ItemsPerSecond) }},
	{"cpu_seconds_per_100k", "CPU s /100k", 2, false, func(f scenario.Figures) (float64, bool) { return f.CPUSecondsPer100k, f.Delivered > 0 }},
	{"receiver_p50_ms", "receiver p50 ms", 1, false, func(f scenario.Figures) (float64, bool) { return fp(f.ReceiverP50Ms) }},
	{"receiver_p99_ms", "receiver p99 ms", 1, false, func(f scenario.Figures) (float64, bool) { return fp(f.ReceiverP99Ms) }},
	{"peak_rss_mib", "peak RSS MiB", 0, false, func(f scenario.Figures) (float64, bool) { return float64(f.PeakRSSBytes) / (1 << 20), true }},
	{"into_window", "req. into window", 0, false, func(f scenario.Figures) (float64, bool) { return ip(f.IntoWindow) }},
	{"after_window_rps", "req. in 1st s after", 0, false, func(f scenario.Figures) (float64, bool) { return ip(f.AfterWindowRPS) }},
	{"peak_rps_after_window", "peak req/s after", 0, false, func(f scenario.Figures) (float64, bool) { return ip(f.PeakRPSAfterWindow) }},
	{"recovery_seconds", "window end → all delivered, s", 1, false, func(f scenario.Figures) (float64, bool) { return fp(f.RecoverySeconds) }},
	{"quota_used", "quota used", 1, true, func(f scenario.Figures) (float64, bool) { return fp(f.QuotaUsed) }},
	{"refused_share", "req. refused", 1, true, func(f scenario.Figures) (float64, bool) { return fp(f.RefusedShare) }},
	{"lost", "lost", 0, false, func(f scenario.Figures) (float64, bool) { return float64(f.Lost), true }},
	{"uncovered_duplicates", "dups w/o key", 0, false, func(f scenario.Figures) (float64, bool) { return float64(f.UncoveredDuplicates), true }},
	{"held_heap_bytes_per_10k", "heap B /10k queued", 0, false, func(f scenario.Figures) (float64, bool) { return fp(f.HeldHeapPer10k) }},
	{"held_rss_bytes_per_10k", "RSS B /10k queued", 0, false, func(f scenario.Figures) (float64, bool) { return fp(f.HeldRSSPer10k) }},
}

// medianRow is the medians of one exporter in one scenario, or (Exporter
// "ours/core") their ratios.
type medianRow struct {
	Scenario string              `json:"scenario"`
	Exporter string              `json:"exporter"`
	Runs     int                 `json:"runs"`
	Values   map[string]*float64 `json:"values"`
}

func medians(runs []scenario.Figures) []medianRow {
	var order []string
	by := map[string][]scenario.Figures{}
	for _, f := range runs {
		if _, ok := by[f.Scenario]; !ok {
			order = append(order, f.Scenario)
		}
		by[f.Scenario] = append(by[f.Scenario], f)
	}
	var out []medianRow
	for _, s := range order {
		rows := map[string]medianRow{}
		for _, exp := range exportersOf(by[s]) {
			m := medianRow{Scenario: s, Exporter: exp, Values: map[string]*float64{}}
			for _, c := range columns {
				var xs []float64
				for _, f := range by[s] {
					if f.Exporter != exp {
						continue
					}
					if c.key == columns[0].key {
						m.Runs++
					}
					if v, ok := c.get(f); ok {
						xs = append(xs, v)
					}
				}
				if v := scenario.Median(xs); !math.IsNaN(v) {
					m.Values[c.key] = &v
				}
			}
			rows[exp] = m
			out = append(out, m)
		}
		_, okO := rows[string(scenario.Ours)]
		_, okC := rows[string(scenario.Core)]
		if okO && okC {
			out = append(out, pairRatios(s, by[s], func(f scenario.Figures) (string, int) { return f.Exporter, f.Run }, columns))
		}
	}
	return out
}

// pairRatios is the row of ratios ours ÷ core: for each figure, the median
// of the ratios of the pairs (ours and core in the same run number, one
// after the other), not the ratio of the two medians, which may come from
// different runs. Runs counts the pairs.
func pairRatios[F any](s string, runs []F, pairKey func(F) (exporter string, run int), cols []genericColumn[F]) medianRow {
	r := medianRow{Scenario: s, Exporter: ratioExporter, Values: map[string]*float64{}}
	byRun := map[int]map[string]F{}
	for _, f := range runs {
		exp, run := pairKey(f)
		if byRun[run] == nil {
			byRun[run] = map[string]F{}
		}
		byRun[run][exp] = f
	}
	for _, pair := range byRun {
		if _, ok := pair[string(scenario.Ours)]; ok {
			if _, ok := pair[string(scenario.Core)]; ok {
				r.Runs++
			}
		}
	}
	for _, c := range cols {
		var xs []float64
		for _, pair := range byRun {
			o, okO := pair[string(scenario.Ours)]
			k, okC := pair[string(scenario.Core)]
			if !okO || !okC {
				continue
			}
			vo, ok1 := c.get(o)
			vc, ok2 := c.get(k)
			if ok1 && ok2 && vc != 0 {
				xs = append(xs, vo/vc)
			}
		}
		if v := scenario.Median(xs); !math.IsNaN(v) {
			r.Values[c.key] = &v
		}
	}
	return r
}

// ratioExporter names the row of ratios in the JSON's medians.
const ratioExporter = "ours/core"

func printTable(w io.Writer, rows []medianRow, runs int) {
	fmt.Fprintf(w, "Medians of %d run(s) per exporter; ours ÷ core: the median of the ratios of the pairs (ours and core of the same run)\n\n", runs)
	writeTable(w, rows)
}

// writeTable writes the table of medians and ratios as Markdown.
func writeTable(w io.Writer, rows []medianRow) {
	heads := []string{"scenario", "exporter", "runs"}
	for _, c := range columns {
		heads = append(heads, c.head)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	for _, r := range rows {
		cells := []string{r.Scenario, shortName(r.Exporter), strconv.Itoa(r.Runs)}
		for _, c := range columns {
			cells = append(cells, cell(r, c.key, c.prec, c.pct))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

func shortName(exp string) string {
	switch exp {
	case string(scenario.Ours):
		return "ours"
	case string(scenario.Core):
		return "core"
	case ratioExporter:
		return "**ours ÷ core, median of pairs**"
	}
	return exp
}

func cell(r medianRow, key string, prec int, pct bool) string {
	v := r.Values[key]
	switch {
	case v == nil:
		return "–"
	case r.Exporter == ratioExporter:
		return fmt.Sprintf("%.2f", *v)
	case pct:
		return fmt.Sprintf("%.*f %%", prec, 100**v)
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

// fleetColumns are the fleet's figures.
var fleetColumns = []genericColumn[scenario.FleetFigures]{
	{"after_window_rps", "req. in 1st s after window", 0, false, func(f scenario.FleetFigures) (float64, bool) { return float64(f.AfterWindowRPS), true }},
	{"peak_rps_after_window", "peak req/s after", 0, false, func(f scenario.FleetFigures) (float64, bool) { return float64(f.PeakRPSAfterWindow), true }},
	{"quota_rps", "quota req/s", 0, false, func(f scenario.FleetFigures) (float64, bool) { return f.QuotaRPS, true }},
	{"into_window", "req. into window", 0, false, func(f scenario.FleetFigures) (float64, bool) { return float64(f.IntoWindow), true }},
	{"fairness", "Jain fairness", 3, false, func(f scenario.FleetFigures) (float64, bool) { return fp(f.Fairness) }},
	{"requests", "requests", 0, false, func(f scenario.FleetFigures) (float64, bool) { return float64(f.Requests), true }},
	{"refused", "refused (429)", 0, false, func(f scenario.FleetFigures) (float64, bool) { return float64(f.Refused), true }},
	{"refused_share", "refused share", 1, true, func(f scenario.FleetFigures) (float64, bool) { return f.RefusedShare, true }},
	{"quota_used", "quota used", 1, true, func(f scenario.FleetFigures) (float64, bool) { return fp(f.QuotaUsed) }},
	{"lost", "lost", 0, false, func(f scenario.FleetFigures) (float64, bool) { return float64(f.Lost), true }},
	{"delivery_seconds", "all delivered after, s", 1, false, func(f scenario.FleetFigures) (float64, bool) { return fp(f.DeliverySeconds) }},
	{"cpu_seconds", "fleet CPU s", 1, false, func(f scenario.FleetFigures) (float64, bool) { return f.CPUSeconds, true }},
	{"rss_mib", "fleet peak RSS MiB", 0, false, func(f scenario.FleetFigures) (float64, bool) { return float64(f.RSSBytes) / (1 << 20), true }},
}

func fleetMedians(runs []scenario.FleetFigures) []medianRow {
	if len(runs) == 0 {
		return nil
	}
	rows := map[string]medianRow{}
	var out []medianRow
	for _, exp := range []scenario.Exporter{scenario.Ours, scenario.Core} {
		m := medianRow{Scenario: "fleet", Exporter: string(exp), Values: map[string]*float64{}}
		for _, c := range fleetColumns {
			var xs []float64
			m.Runs = 0
			for _, f := range runs {
				if f.Exporter != string(exp) {
					continue
				}
				m.Runs++
				if v, ok := c.get(f); ok {
					xs = append(xs, v)
				}
			}
			if v := scenario.Median(xs); !math.IsNaN(v) {
				m.Values[c.key] = &v
			}
		}
		if m.Runs > 0 {
			rows[string(exp)] = m
			out = append(out, m)
		}
	}
	_, okO := rows[string(scenario.Ours)]
	_, okC := rows[string(scenario.Core)]
	if okO && okC {
		out = append(out, pairRatios("fleet", runs, func(f scenario.FleetFigures) (string, int) { return f.Exporter, f.Run }, fleetColumns))
	}
	return out
}

func printFleetTable(w io.Writer, rows []medianRow) {
	fmt.Fprintf(w, "Fleet: medians of %d run(s) per exporter; ours ÷ core: the median of the ratios of the pairs\n\n", rows[0].Runs)
	writeFleetTable(w, rows)
}

// writeFleetTable writes the fleet's medians and ratios as Markdown.
func writeFleetTable(w io.Writer, rows []medianRow) {
	heads := []string{"exporter", "runs"}
	for _, c := range fleetColumns {
		heads = append(heads, c.head)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	for _, r := range rows {
		cells := []string{shortName(r.Exporter), strconv.Itoa(r.Runs)}
		for _, c := range fleetColumns {
			cells = append(cells, cell(r, c.key, c.prec, c.pct))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}
