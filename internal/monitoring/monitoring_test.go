// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package monitoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// repo is the repository root, from this package's directory.
const repo = "../.."

func shipped(name string) string { return filepath.Join(repo, "monitoring", name) }

// promtool returns the path of promtool. Without it the test fails on CI
// (.ci/run installs Debian's prometheus package) and is skipped elsewhere.
func promtool(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool is not installed (apt-get install -y --no-install-recommends prometheus)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

func runPromtool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	return string(out), err
}

// The shipped files are what the sources render: change the template or
// the panels, then run `make monitoring`.
func TestShippedFilesAreRendered(t *testing.T) {
	rules, err := Rules(Defaults())
	require.NoError(t, err)
	got, err := os.ReadFile(shipped(RulesFile))
	require.NoError(t, err)
	assert.Equal(t, string(rules), string(got), "monitoring/%s is not the template rendered with the defaults: run `make monitoring`", RulesFile)

	dash, err := Dashboard()
	require.NoError(t, err)
	got, err = os.ReadFile(shipped(DashboardFile))
	require.NoError(t, err)
	assert.Equal(t, string(dash), string(got), "monitoring/%s is not what Dashboard() builds: run `make monitoring`", DashboardFile)
}

// promtool checks the shipped rules and a copy rendered with other
// thresholds, and runs the rules' unit tests (every alert fires on its
// series and stays silent on a healthy one).
func TestRulesWithPromtool(t *testing.T) {
	out, err := runPromtool(t, "check", "rules", shipped(RulesFile))
	require.NoError(t, err, "promtool check rules:\n%s", out)
	assert.Contains(t, out, "SUCCESS: 13 rules found")

	th := Defaults()
	for name, value := range map[string]string{"outage_for": "6s", "rate_window": "10s", "unauthorized_for": "1m", "queue_fill": "0.5", "no_success_window": "1h"} {
		require.NoError(t, th.Set(name, value))
	}
	rules, err := Rules(th)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, rules, 0o600))
	out, err = runPromtool(t, "check", "rules", path)
	require.NoError(t, err, "promtool check rules on a copy with other thresholds:\n%s", out)

	out, err = runPromtool(t, "test", "rules", shipped(RulesTestFile))
	require.NoError(t, err, "promtool test rules:\n%s", out)
	assert.Contains(t, out, "SUCCESS")
}

// rulesFile is the part of a Prometheus rules file the tests read.
type rulesFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t *testing.T, data []byte) rulesFile {
	t.Helper()
	var f rulesFile
	require.NoError(t, yaml.Unmarshal(data, &f))
	return f
}

// The alerts the kit promises (issue 18), each with a severity, a summary,
// a description and a runbook link to its own section of docs/runbook.md.
var wantAlerts = []string{
	"OtlpHttpRetryUnauthorized",
	"OtlpHttpRetryOutage",
	"OtlpHttpRetryThrottled",
	"OtlpHttpRetryItemsDropped",
	"OtlpHttpRetryQueueNearlyFull",
	"OtlpHttpRetryRateLimitHeaderRejected",
	"OtlpHttpRetryNoSuccessfulExport",
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	s := strings.ToLower(strings.TrimSpace(heading))
	s = regexp.MustCompile(`[^\p{L}\p{N} _-]`).ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

func runbookAnchors(t *testing.T) map[string]string {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(repo, "docs", "runbook.md"))
	require.NoError(t, err)
	anchors := map[string]string{}
	for line := range strings.SplitSeq(string(md), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			anchors[githubAnchor(h)] = h
		}
	}
	return anchors
}

func TestAlertsHaveSeveritySummaryAndRunbook(t *testing.T) {
	data, err := os.ReadFile(shipped(RulesFile))
	require.NoError(t, err)
	anchors := runbookAnchors(t)
	var alerts []string
	for _, g := range readRules(t, data).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				assert.True(t, strings.HasPrefix(r.Record, "otlphttpretry:"), "recording rule %q: name it otlphttpretry:<what>:<how>", r.Record)
				continue
			}
			alerts = append(alerts, r.Alert)
			assert.Contains(t, []string{"critical", "warning", "info"}, r.Labels["severity"], "%s: severity", r.Alert)
			assert.NotEmpty(t, r.Annotations["summary"], "%s: summary", r.Alert)
			assert.NotEmpty(t, r.Annotations["description"], "%s: description", r.Alert)
			link := r.Annotations["runbook_url"]
			base, anchor, ok := strings.Cut(link, "#")
			assert.True(t, ok && base == RunbookURL, "%s: runbook_url %q must be %s#<section>", r.Alert, link, RunbookURL)
			assert.Equal(t, strings.ToLower(r.Alert), anchor, "%s: the runbook link's anchor", r.Alert)
			assert.Equal(t, r.Alert, anchors[anchor], "%s: docs/runbook.md needs the section \"## %s\" its link points to", r.Alert, r.Alert)
		}
	}
	assert.ElementsMatch(t, wantAlerts, alerts)
	for anchor, heading := range anchors {
		if strings.HasPrefix(heading, "OtlpHttpRetry") {
			assert.Contains(t, wantAlerts, heading, "docs/runbook.md has section %q (#%s) for an alert the rules do not have", heading, anchor)
		}
	}
}

// Each runbook section says what the alert means, the first query, the
// likely causes and what to change; the drop and RateLimit sections cover
// every reason metadata.yaml lists for their metrics.
func TestRunbookSections(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(repo, "docs", "runbook.md"))
	require.NoError(t, err)
	sections := map[string]string{}
	var cur string
	for line := range strings.SplitSeq(string(md), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = h
			continue
		}
		if cur != "" {
			sections[cur] += line + "\n"
		}
	}
	for _, a := range wantAlerts {
		body := sections[a]
		for _, part := range []string{"**What it means.**", "**First query.**", "**Likely causes.**", "**What to change.**", "```promql"} {
			assert.Contains(t, body, part, "docs/runbook.md, section %s", a)
		}
	}
	meta, err := os.ReadFile(filepath.Join(repo, "metadata.yaml"))
	require.NoError(t, err)
	var m struct {
		Attributes map[string]struct {
			Enum []string `yaml:"enum"`
		} `yaml:"attributes"`
	}
	require.NoError(t, yaml.Unmarshal(meta, &m))
	for attr, alert := range map[string]string{"drop_reason": "OtlpHttpRetryItemsDropped", "ratelimit_reason": "OtlpHttpRetryRateLimitHeaderRejected"} {
		values := m.Attributes[attr].Enum
		require.NotEmpty(t, values, "metadata.yaml: attribute %s has no enum", attr)
		for _, v := range values {
			assert.Contains(t, sections[alert], "`"+v+"`",
				"docs/runbook.md, %s: say what %s %q means and what to change (metadata.yaml lists it)", alert, attr, v)
		}
	}
}

// docs/monitoring.md's threshold table lists every threshold with its default.
func TestThresholdsDocumented(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(repo, "docs", "monitoring.md"))
	require.NoError(t, err)
	for _, th := range Defaults().List() {
		if th.Name == "runbook_url" {
			continue
		}
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(th.Name) + "` \\| `([^`]*)` \\|")
		m := row.FindSubmatch(md)
		if assert.NotNil(t, m, "docs/monitoring.md: no threshold row | `%s` | `<default>` |", th.Name) {
			assert.Equal(t, th.Value, string(m[1]), "docs/monitoring.md: default of %s", th.Name)
		}
	}
}

func TestThresholdsSetAndValidate(t *testing.T) {
	th := Defaults()
	require.NoError(t, th.Set("outage_for", "90s"))
	require.NoError(t, th.Set("queue_fill", "0.5"))
	require.NoError(t, th.Set("runbook_url", "https://wiki.example.com/otlp-runbook"))
	rules, err := Rules(th)
	require.NoError(t, err)
	assert.Contains(t, string(rules), "for: 1m30s  # threshold: outage_for")
	assert.Contains(t, string(rules), "> 0.5\n")
	assert.Contains(t, string(rules), "'https://wiki.example.com/otlp-runbook#otlphttpretryoutage'")

	for _, tc := range []struct{ name, value, want string }{
		{"outage_for", "5", "not a Prometheus duration"},
		{"outage_for", "5 minutes", "not a Prometheus duration"},
		{"queue_fill", "NaN", "at least 0"},
		{"queue_fill", "-1", "at least 0"},
		{"queue", "0.5", `no threshold named "queue"`},
	} {
		th := Defaults()
		err := th.Set(tc.name, tc.value)
		require.Error(t, err, "%s=%s", tc.name, tc.value)
		assert.Contains(t, err.Error(), tc.want)
	}
	for _, tc := range []struct{ name, value, want string }{
		{"queue_fill", "1.5", "between 0 and 1"},
		{"rate_window", "0s", "rate_window must be longer than 0s"},
		{"runbook_url", "https://x.example/rb#top", "without a fragment"},
	} {
		th := Defaults()
		require.NoError(t, th.Set(tc.name, tc.value))
		_, err := Rules(th)
		require.Error(t, err, "%s=%s", tc.name, tc.value)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// dashboardTargets reads the shipped dashboard back with the Grafana
// Foundation SDK and returns each panel's queries.
func dashboardTargets(t *testing.T) map[string][]string {
	t.Helper()
	plugins.RegisterDefaultPlugins()
	data, err := os.ReadFile(shipped(DashboardFile))
	require.NoError(t, err)
	var d dashboard.Dashboard //nolint:staticcheck // the classic model the dashboard is built in (dashboard.go)
	require.NoError(t, json.Unmarshal(data, &d))
	out := map[string][]string{}
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue
		}
		title := *p.Panel.Title
		for _, q := range p.Panel.Targets {
			pq, ok := q.(*prometheus.Dataquery)
			require.True(t, ok, "panel %q: a target that is not a Prometheus query (%T)", title, q)
			out[title] = append(out[title], pq.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == dashboard.VariableTypeQuery && v.Query != nil && v.Query.String != nil {
			out["variable $"+v.Name] = []string{*v.Query.String}
		}
	}
	return out
}

var labelValues = regexp.MustCompile(`^label_values\((.+), (\w+)\)$`)

// Every query of the shipped dashboard (variables replaced as Grafana
// would), and the selector of each label_values() variable, is parsed by
// Prometheus's PromQL parser: promtool checks them as recording rules.
func TestDashboardQueriesParse(t *testing.T) {
	targets := dashboardTargets(t)
	assert.Len(t, targets, len(Panels())+3, "panels with queries, and the three query variables")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	var names []string
	for _, title := range sortedKeys(targets) {
		for i, expr := range targets[title] {
			if m := labelValues.FindStringSubmatch(expr); m != nil {
				expr = m[1]
			}
			expanded, err := ExpandVariables(expr, map[string]string{"job": ".+", "instance": ".+", "exporter": "otlp_http_retry", "__rate_interval": "1m"})
			require.NoError(t, err, "panel %q", title)
			names = append(names, fmt.Sprintf("%s, query %d", title, i+1))
			fmt.Fprintf(&b, "      - record: dashboard_query_%d\n        expr: %q\n", len(names), expanded)
		}
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	out, err := runPromtool(t, "check", "rules", path)
	if err != nil {
		// promtool names the failing rule; say which panel each one is.
		for i, n := range names {
			out += fmt.Sprintf("\ndashboard_query_%d: %s", i+1, n)
		}
	}
	require.NoError(t, err, "promtool check rules on the dashboard's queries:\n%s", out)
	assert.Contains(t, out, fmt.Sprintf("SUCCESS: %d rules found", len(names)))
}

func TestExpandVariables(t *testing.T) {
	got, err := ExpandVariables(`rate(x{job=~"$job", instance=~"$instance"}[$__rate_interval])`, map[string]string{"job": "a", "instance": "b", "__rate_interval": "5m"})
	require.NoError(t, err)
	assert.Equal(t, `rate(x{job=~"a", instance=~"b"}[5m])`, got)
	_, err = ExpandVariables(`x{exporter=~"$exporter"}`, map[string]string{"job": "a"})
	assert.ErrorContains(t, err, `keeps a variable at "$exporter`)
}

func TestLegend(t *testing.T) {
	assert.Equal(t, "otlp_http_retry traces throttle", Legend("{{exporter}} {{data_type}} {{ reason }}", map[string]string{"exporter": "otlp_http_retry", "data_type": "traces", "reason": "throttle"}))
	assert.Equal(t, "p99 traces", Legend("p99 {{exporter}} {{data_type}}", map[string]string{"data_type": "traces"}))
	assert.Equal(t, "{a=1, b=2}", Legend("{{missing}}", map[string]string{"b": "2", "a": "1"}))
}

// The stored run (docs/monitoring-run.json) covers every alert and every
// dashboard query, and its PNG (docs/monitoring-dashboard.png) is what
// PlotRun draws from it.
func TestStoredRun(t *testing.T) {
	rec, err := ReadRun(filepath.Join(repo, "docs", "monitoring-run.json"))
	require.NoError(t, err)
	for _, field := range []string{rec.Command, rec.Commit, rec.Date, rec.Machine, rec.Prometheus} {
		assert.NotEmpty(t, field, "the stored run says how it was made")
	}
	var fired []string
	for _, a := range rec.Alerts {
		assert.NotEqual(t, "healthy", a.Scenario, "a false positive in the stored healthy run: %+v", a)
		assert.LessOrEqual(t, a.Fired, a.Bound, "%+v fired late", a)
		assert.GreaterOrEqual(t, a.Resolved, 0.0, "%+v never resolved", a)
		fired = append(fired, a.Alert)
	}
	for _, a := range wantAlerts {
		assert.Contains(t, fired, a, "the stored run has no firing of %s", a)
	}
	var exprs []string
	for _, p := range Panels() {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	var covered []string
	for _, c := range rec.PanelData {
		assert.NotEmpty(t, c.Scenarios, "panel %q returned data in no scenario of the stored run", c.Panel)
		covered = append(covered, c.Expr)
	}
	assert.ElementsMatch(t, exprs, covered, "the stored run's queries are not the dashboard's: record the run again")
	require.Len(t, rec.Panels, len(Panels()))
	for i, p := range Panels() {
		assert.Equal(t, p.Title, rec.Panels[i].Title)
	}

	md, err := os.ReadFile(filepath.Join(repo, "docs", "monitoring.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "From the stored run [`docs/monitoring-run.json`](monitoring-run.json) ("+rec.Stamp()+"):\n\n"+AlertTable(rec)+"\n"+CoverageLine(rec),
		"docs/monitoring.md's alert table is not the stored run's: paste `go run ./cmd/monitoringkit table -in docs/monitoring-run.json`")

	// The kit's share of make test, as measured and stored.
	var cost struct {
		Commit string `json:"commit"`
		Pairs  []struct {
			With    float64 `json:"with_kit_s"`
			Without float64 `json:"without_kit_s"`
		} `json:"e2e_pairs"`
		Unit    float64 `json:"unit_s"`
		Install struct {
			Seconds  float64 `json:"seconds"`
			Packages int     `json:"packages"`
		} `json:"prometheus_install"`
	}
	data, err := os.ReadFile(filepath.Join(repo, "docs", "monitoring-cost.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &cost))
	require.Len(t, cost.Pairs, 2)
	lo, hi := cost.Pairs[0].With-cost.Pairs[0].Without, cost.Pairs[1].With-cost.Pairs[1].Without
	if lo > hi {
		lo, hi = hi, lo
	}
	assert.Less(t, hi+cost.Unit, 120.0, "the kit adds at most 2 minutes to make test")
	text := strings.Join(strings.Fields(string(md)), " ")
	for _, want := range []string{
		"commit " + cost.Commit,
		fmt.Sprintf("took %.1f s and %.1f s with `TestMonitoringKit` and %.1f s and %.1f s without it", cost.Pairs[0].With, cost.Pairs[1].With, cost.Pairs[0].Without, cost.Pairs[1].Without),
		fmt.Sprintf("adds %.0f to %.0f s", lo, hi),
		fmt.Sprintf("take %.1f s", cost.Unit),
		fmt.Sprintf("took %.1f s (%d packages)", cost.Install.Seconds, cost.Install.Packages),
	} {
		assert.Contains(t, text, want, "docs/monitoring.md, the kit's share of make test: not docs/monitoring-cost.json's figure")
	}

	png := filepath.Join(t.TempDir(), "dashboard.png")
	require.NoError(t, PlotRun(rec, png))
	got, err := os.ReadFile(png)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(repo, "docs", "monitoring-dashboard.png"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(got, want), "docs/monitoring-dashboard.png is not PlotRun of docs/monitoring-run.json: run `make monitoring`")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
