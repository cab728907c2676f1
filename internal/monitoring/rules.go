// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package monitoring is the source of the operator's kit for the
// otlp_http_retry exporter: the Prometheus rules (a template rendered with
// thresholds), the Grafana dashboard (built with the Grafana Foundation
// SDK) and the rendering of the dashboard's panels to a PNG from a stored
// run. The shipped files in monitoring/ are rendered from here by
// cmd/monitoringkit, and tests keep them equal.
package monitoring // import "github.com/otlphttpretry/otlphttpretry/internal/monitoring"

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/prometheus/common/model"
)

// RunbookURL is where the shipped rules' runbook links point.
const RunbookURL = "https://github.com/otlphttpretry/otlphttpretry/blob/main/docs/runbook.md"

//go:embed rules.yaml.tmpl
var rulesTemplate string

// Thresholds are the values the rules template takes. The name tag is the
// threshold's name in the rules file, the docs and -set.
type Thresholds struct {
	// RateWindow is the range of the recording rules' rates.
	RateWindow Duration `name:"rate_window"`
	// UnauthorizedFor is how long a 401 hold lasts before its alert fires.
	UnauthorizedFor Duration `name:"unauthorized_for"`
	// OutageFor is how long an outage hold lasts before its alert fires.
	OutageFor Duration `name:"outage_for"`
	// ThrottleFor is how long a throttle hold lasts without a break
	// before its alert fires.
	ThrottleFor Duration `name:"throttle_for"`
	// DroppedWindow is the range drops are counted over: the drop alert
	// stays up this long after the last drop.
	DroppedWindow Duration `name:"dropped_window"`
	// DroppedItems is how many items may be dropped in DroppedWindow
	// without an alert.
	DroppedItems float64 `name:"dropped_items"`
	// QueueFill is the share of the sending queue's capacity above which
	// the queue alert is pending, and QueueFor how long it must stay there.
	QueueFill float64  `name:"queue_fill"`
	QueueFor  Duration `name:"queue_for"`
	// RateLimitWindow is the range rejected RateLimit values are counted
	// over: the alert stays up this long after the last one.
	RateLimitWindow Duration `name:"ratelimit_window"`
	// NoSuccessWindow is the range without a successful attempt, while
	// data arrives, that makes the no-success alert pending, and
	// NoSuccessFor how long that must last.
	NoSuccessWindow Duration `name:"no_success_window"`
	NoSuccessFor    Duration `name:"no_success_for"`
	// RunbookURL is the runbook the alerts link to (each alert adds its
	// section's anchor).
	RunbookURL string `name:"runbook_url"`
}

// Defaults are the shipped thresholds (docs/monitoring.md says why each).
func Defaults() Thresholds {
	return Thresholds{
		RateWindow:      Duration(5 * time.Minute),
		UnauthorizedFor: 0,
		OutageFor:       Duration(5 * time.Minute),
		ThrottleFor:     Duration(10 * time.Minute),
		DroppedWindow:   Duration(10 * time.Minute),
		DroppedItems:    0,
		QueueFill:       0.8,
		QueueFor:        Duration(2 * time.Minute),
		RateLimitWindow: Duration(30 * time.Minute),
		NoSuccessWindow: Duration(10 * time.Minute),
		NoSuccessFor:    Duration(5 * time.Minute),
		RunbookURL:      RunbookURL,
	}
}

// Duration is a duration written as Prometheus writes one ("5m", "1h30m", "0s").
type Duration time.Duration

func (d Duration) String() string { return model.Duration(d).String() }

// Threshold is one named threshold and its value as the rules file writes it.
type Threshold struct{ Name, Value string }

// List returns every threshold with its value, in the struct's order.
func (th Thresholds) List() []Threshold {
	v := reflect.ValueOf(th)
	out := make([]Threshold, 0, v.NumField())
	for i := range v.NumField() {
		out = append(out, Threshold{Name: v.Type().Field(i).Tag.Get("name"), Value: formatValue(v.Field(i))})
	}
	return out
}

// QueueFillPercent is QueueFill in per cent, for the alert's description.
func (th Thresholds) QueueFillPercent() string {
	return strconv.FormatFloat(th.QueueFill*100, 'f', -1, 64)
}

func formatValue(f reflect.Value) string {
	switch x := f.Interface().(type) {
	case Duration:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	}
	panic(fmt.Sprintf("monitoring: threshold of type %s", f.Type()))
}

// Names lists the thresholds' names.
func Names() []string {
	var names []string
	for _, t := range Defaults().List() {
		names = append(names, t.Name)
	}
	return names
}

// Set parses value into the threshold named name.
func (th *Thresholds) Set(name, value string) error {
	v := reflect.ValueOf(th).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("name") != name {
			continue
		}
		f := v.Field(i)
		switch f.Interface().(type) {
		case Duration:
			d, err := model.ParseDuration(value)
			if err != nil {
				return fmt.Errorf("threshold %s: %q is not a Prometheus duration (write it like 30s, 5m or 1h): %w", name, value, err)
			}
			f.Set(reflect.ValueOf(Duration(d)))
		case float64:
			x, err := strconv.ParseFloat(value, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return fmt.Errorf("threshold %s: %q must be a number at least 0", name, value)
			}
			f.SetFloat(x)
		case string:
			f.SetString(value)
		}
		return nil
	}
	return fmt.Errorf("no threshold named %q; the thresholds are %s", name, strings.Join(Names(), ", "))
}

// Validate reports thresholds that would make a rule never fire or never
// parse.
func (th Thresholds) Validate() error {
	var errs []string
	for name, d := range map[string]Duration{
		"rate_window": th.RateWindow, "dropped_window": th.DroppedWindow,
		"ratelimit_window": th.RateLimitWindow, "no_success_window": th.NoSuccessWindow,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Sprintf("%s must be longer than 0s (a range of at least two scrape intervals)", name))
		}
	}
	if th.QueueFill <= 0 || th.QueueFill >= 1 {
		errs = append(errs, fmt.Sprintf("queue_fill %v must be a share of the capacity between 0 and 1 (0.8 is 80 %%)", th.QueueFill))
	}
	if th.RunbookURL == "" || strings.ContainsAny(th.RunbookURL, "'#") {
		errs = append(errs, fmt.Sprintf("runbook_url %q must be a URL without a fragment or a quote (each alert adds its anchor)", th.RunbookURL))
	}
	slices.Sort(errs)
	if len(errs) > 0 {
		return fmt.Errorf("monitoring thresholds: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Rules renders the rules file with th.
func Rules(th Thresholds) ([]byte, error) {
	if err := th.Validate(); err != nil {
		return nil, err
	}
	tmpl, err := template.New("rules.yaml").Delims("<<", ">>").Option("missingkey=error").Parse(rulesTemplate)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, th); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
