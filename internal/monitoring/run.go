// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package monitoring

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Run is a stored run of the kit against a real Prometheus (the e2e test
// TestMonitoringKit with MONITORING_RECORD set): how it was made, each
// alert's timing per scenario, and the dashboard's panels over one
// scenario, which PlotRun draws.
type Run struct {
	Command string `json:"command"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	Machine string `json:"machine"`
	// Prometheus is the server's version; ScrapeInterval and
	// EvaluationInterval its settings; Thresholds the test copy's.
	Prometheus         string            `json:"prometheus"`
	ScrapeInterval     string            `json:"scrape_interval"`
	EvaluationInterval string            `json:"evaluation_interval"`
	Thresholds         map[string]string `json:"thresholds"`
	// Alerts lists every alert that fired, per scenario.
	Alerts []AlertTiming `json:"alerts"`
	// PanelData names, per panel target, the scenarios where it returned data.
	PanelData []PanelCoverage `json:"panel_data"`
	// Plotted is the scenario whose panels follow.
	Plotted string `json:"plotted"`
	// Events are moments of the plotted scenario, in seconds from its start.
	Events []Event       `json:"events"`
	Panels []PanelSeries `json:"panels"`
}

// AlertTiming is one alert's course in one scenario. Times are seconds.
type AlertTiming struct {
	Scenario string `json:"scenario"`
	Alert    string `json:"alert"`
	// Labels tell apart alerts of one name (reason, for drops).
	Labels map[string]string `json:"labels,omitempty"`
	// Onset is when the condition first showed on the collector's own
	// endpoint, as seconds from the scenario's start.
	Onset float64 `json:"onset_s"`
	// Fired is from the onset to the first poll that saw the alert firing;
	// Bound is the most the test allows for it (for plus two scrape
	// intervals, plus the window for an alert on a window's absence).
	Fired float64 `json:"fired_after_s"`
	Bound float64 `json:"bound_s"`
	// Resolved is from the scenario's end (the backend back to normal) to
	// the first poll that saw the alert gone; negative when it never went.
	Resolved float64 `json:"resolved_after_s"`
}

// PanelCoverage says where one panel target returned data.
type PanelCoverage struct {
	Panel     string   `json:"panel"`
	Expr      string   `json:"expr"`
	Scenarios []string `json:"scenarios"`
}

// Event is a marked moment on the plots.
type Event struct {
	Name string  `json:"name"`
	At   float64 `json:"at_s"`
}

// PanelSeries is one panel's data over the plotted scenario.
type PanelSeries struct {
	Title  string   `json:"title"`
	Unit   string   `json:"unit"`
	Series []Series `json:"series"`
}

// Series is one line: its legend and [seconds from the start, value] points.
type Series struct {
	Legend string       `json:"legend"`
	Points [][2]float64 `json:"points"`
}

// ReadRun reads a stored run.
func ReadRun(path string) (Run, error) {
	var r Run
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteRun stores a run as indented JSON.
func WriteRun(path string, r Run) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644) //nolint:gosec // a stored run is a public document
}

var legendVar = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// Legend renders a Grafana legend format with a series' labels; a label the
// series lacks renders empty, as in Grafana.
func Legend(format string, labels map[string]string) string {
	out := legendVar.ReplaceAllStringFunc(format, func(m string) string {
		return labels[legendVar.FindStringSubmatch(m)[1]]
	})
	out = strings.Join(strings.Fields(out), " ")
	if out == "" {
		keys := slices.Sorted(maps.Keys(labels))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+"="+labels[k])
		}
		out = "{" + strings.Join(parts, ", ") + "}"
	}
	return out
}

// AlertTable is the stored run's alerts as the Markdown table
// docs/monitoring.md shows (a test keeps the two equal).
func AlertTable(r Run) string {
	var b strings.Builder
	b.WriteString("| Alert | Scenario | Condition showed (s into the run) | Fired after it (s) | Bound (s) | Resolved after the trouble ended (s) |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, a := range r.Alerts {
		name := "`" + a.Alert + "`"
		if reason, ok := a.Labels["reason"]; ok {
			name += " (`" + reason + "`)"
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %.0f | %.1f |\n", name, a.Scenario, a.Onset, a.Fired, a.Bound, a.Resolved)
	}
	return b.String()
}

// Stamp is how the stored run was made, as docs/monitoring.md cites it.
func (r Run) Stamp() string {
	return fmt.Sprintf("%#q; commit %s, %s, %s, %s", r.Command, r.Commit, r.Date, r.Machine, r.Prometheus)
}

// CoverageLine says, from the stored run, that every dashboard query
// returned data, and names the queries that did so in one scenario only.
func CoverageLine(r Run) string {
	var single []string
	for _, c := range r.PanelData {
		if len(c.Scenarios) == 0 {
			return fmt.Sprintf("The panel %q returned no data in any scenario.\n", c.Panel)
		}
		if len(c.Scenarios) == 1 {
			item := fmt.Sprintf("%q (%s)", c.Panel, c.Scenarios[0])
			if !slices.Contains(single, item) {
				single = append(single, item)
			}
		}
	}
	return fmt.Sprintf("Every dashboard query returned data in at least one scenario; these in one only: %s.\n", strings.Join(single, ", "))
}
