// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// column is one figure of the table.
type column struct {
	key, head string
	prec      int
	pct       bool
	get       func(scenario.Figures) (float64, bool)
}

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
		ours, okO := rows[string(scenario.Ours)]
		core, okC := rows[string(scenario.Core)]
		if okO && okC {
			out = append(out, ratioRow(s, ours.Values, core.Values))
		}
	}
	return out
}

func ratioRow(s string, ours, core map[string]*float64) medianRow {
	r := medianRow{Scenario: s, Exporter: "ours/core", Values: map[string]*float64{}}
	for k, o := range ours {
		if c := core[k]; o != nil && c != nil && *c != 0 {
			v := *o / *c
			r.Values[k] = &v
		}
	}
	return r
}

func printTable(w io.Writer, rows []medianRow, runs int) {
	fmt.Fprintf(w, "Medians of %d run(s) per exporter; ratio = ours ÷ core (medians of the same runs)\n\n", runs)
	heads := []string{"scenario", "exporter"}
	for _, c := range columns {
		heads = append(heads, c.head)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	for _, r := range rows {
		cells := []string{r.Scenario, shortName(r.Exporter)}
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
	case "ours/core":
		return "**ours ÷ core**"
	}
	return exp
}

func cell(r medianRow, key string, prec int, pct bool) string {
	v := r.Values[key]
	switch {
	case v == nil:
		return "–"
	case r.Exporter == "ours/core":
		return fmt.Sprintf("%.2f", *v)
	case pct:
		return fmt.Sprintf("%.*f %%", prec, 100**v)
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

// fleetColumns are the fleet's figures.
var fleetColumns = []struct {
	key, head string
	prec      int
	pct       bool
	get       func(scenario.FleetFigures) (float64, bool)
}{
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
	if o, ok := rows[string(scenario.Ours)]; ok {
		if c, ok := rows[string(scenario.Core)]; ok {
			out = append(out, ratioRow("fleet", o.Values, c.Values))
		}
	}
	return out
}

func printFleetTable(w io.Writer, rows []medianRow) {
	fmt.Fprintf(w, "Fleet: medians of %d run(s) per exporter; ratio = ours ÷ core\n\n", rows[0].Runs)
	heads := []string{"exporter"}
	for _, c := range fleetColumns {
		heads = append(heads, c.head)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	for _, r := range rows {
		cells := []string{shortName(r.Exporter)}
		for _, c := range fleetColumns {
			cells = append(cells, cell(r, c.key, c.prec, c.pct))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}
