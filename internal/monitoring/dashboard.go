// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package monitoring

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// DashboardUID is the shipped dashboard's uid.
const DashboardUID = "otlphttpretry-exporter"

// Target is one query of a panel.
type Target struct {
	// Expr is the PromQL, with the dashboard's variables ($job, $instance,
	// $exporter, $__rate_interval) in it.
	Expr string
	// Legend is Grafana's legend format ("{{reason}}").
	Legend string
}

// Panel is one time-series panel.
type Panel struct {
	Title, Description string
	// Unit is Grafana's unit id (short, percentunit, s, reqps, ...).
	Unit    string
	Targets []Target
}

// Row is a titled row of panels.
type Row struct {
	Title  string
	Panels []Panel
}

// Variables of the dashboard's queries.
const (
	// sel selects one exporter's own series and exporterhelper's.
	sel = `job=~"$job", instance=~"$instance", exporter=~"$exporter"`
	// selTarget selects the collector's series that carry no exporter label.
	selTarget = `job=~"$job", instance=~"$instance"`
	// ident is how an exporter's series are told apart in a legend.
	ident = `{{instance}} {{exporter}} {{data_type}}`
)

// Rows are the dashboard's panels, top to bottom.
func Rows() []Row {
	r := func(metric string) string {
		return fmt.Sprintf(`rate(otelcol_otlp_http_retry_%s{%s}[$__rate_interval])`, metric, sel)
	}
	return []Row{
		{Title: "State", Panels: []Panel{
			{
				Title:       "Destination held, by reason",
				Description: "1 while the destination's gate holds for that reason (throttle: the backend asked to wait; outage: requests fail and none succeeds; unauthorized: 401). Nothing but the probe is sent while held.",
				Unit:        "short",
				Targets: []Target{{
					Expr:   `max by (instance, exporter, data_type, reason) (otelcol_otlp_http_retry_held{` + sel + `})`,
					Legend: ident + ` {{reason}}`,
				}},
			},
			{
				Title:       "Time until the next probe",
				Description: "Seconds until the gate lets the next request (the probe) through; 0 while it is open.",
				Unit:        "s",
				Targets: []Target{{
					Expr:   `max by (instance, exporter, data_type) (otelcol_otlp_http_retry_throttle_remaining_seconds{` + sel + `})`,
					Legend: ident,
				}},
			},
			{
				Title:       "Payloads waiting",
				Description: "Payloads at the holding gate or in a backoff wait right now, and batches in the sending queue.",
				Unit:        "short",
				Targets: []Target{
					{Expr: `sum by (instance, exporter, data_type) (otelcol_otlp_http_retry_waiting_payloads{` + sel + `})`, Legend: `waiting ` + ident},
					{Expr: `sum by (instance, exporter, data_type) (otelcol_exporter_queue_size{` + sel + `})`, Legend: `queued ` + ident},
				},
			},
			{
				Title:       "Firing alerts",
				Description: "The kit's alerts firing now (docs/runbook.md).",
				Unit:        "short",
				Targets: []Target{{
					Expr:   `sum by (alertname, severity) (ALERTS{alertstate="firing", alertname=~"OtlpHttpRetry.+", ` + selTarget + `})`,
					Legend: `{{alertname}} ({{severity}})`,
				}},
			},
		}},
		{Title: "Traffic", Panels: []Panel{
			{
				Title:       "Attempts, by outcome",
				Description: "HTTP attempts per second: success, throttled (429), retryable, network_error, unauthorized, permanent.",
				Unit:        "reqps",
				Targets: []Target{{
					Expr:   `sum by (exporter, data_type, outcome) (` + r("attempts") + `)`,
					Legend: `{{exporter}} {{data_type}} {{outcome}}`,
				}},
			},
			{
				Title:       "Refused share",
				Description: "Share of attempts the backend refused with 429 (recording rule otlphttpretry:refused_share:ratio_rate).",
				Unit:        "percentunit",
				Targets: []Target{{
					Expr:   `otlphttpretry:refused_share:ratio_rate{` + sel + `}`,
					Legend: ident,
				}},
			},
			{
				Title:       "Items received and sent",
				Description: "Items the collector's receivers accepted, by signal, and items the exporter delivered, per second.",
				Unit:        "short",
				Targets: []Target{
					{Expr: `sum by (data_type) (otlphttpretry:receiver_accepted_items:rate{` + selTarget + `})`, Legend: `received {{data_type}}`},
					{Expr: `sum by (exporter, data_type) (rate({__name__=~"otelcol_exporter_sent_(spans|metric_points|log_records)", ` + sel + `}[$__rate_interval]))`, Legend: `sent {{exporter}} {{data_type}}`},
				},
			},
			{
				Title:       "Export latency of delivered payloads",
				Description: "From entering the exporter (queue time included) to delivery: median and 99th percentile.",
				Unit:        "s",
				Targets: []Target{
					{Expr: `histogram_quantile(0.5, sum by (le, exporter, data_type) (rate(otelcol_otlp_http_retry_export_latency_seconds_bucket{final_outcome="success", ` + sel + `}[$__rate_interval])))`, Legend: `p50 {{exporter}} {{data_type}}`},
					{Expr: `histogram_quantile(0.99, sum by (le, exporter, data_type) (rate(otelcol_otlp_http_retry_export_latency_seconds_bucket{final_outcome="success", ` + sel + `}[$__rate_interval])))`, Legend: `p99 {{exporter}} {{data_type}}`},
				},
			},
		}},
		{Title: "Retries and waits", Panels: []Panel{
			{
				Title:       "Retries, by path and reason",
				Description: "Retries scheduled per second: rate_limit (429, Retry-After), backoff, outage, unauthorized; reason is the status code or the network error.",
				Unit:        "short",
				Targets: []Target{{
					Expr:   `sum by (exporter, data_type, path, reason) (` + r("retries") + `)`,
					Legend: `{{exporter}} {{data_type}} {{path}} {{reason}}`,
				}},
			},
			{
				Title:       "Retry-After waits applied",
				Description: "Mean rate-limit wait applied, by where it came from (header, default, capped, floor, first, window).",
				Unit:        "s",
				Targets: []Target{{
					Expr:   `sum by (exporter, data_type, source) (` + r("retry_after_wait_seconds_sum") + `) / sum by (exporter, data_type, source) (` + r("retry_after_wait_seconds_count") + `)`,
					Legend: `{{exporter}} {{data_type}} {{source}}`,
				}},
			},
			{
				Title:       "Share of time held",
				Description: "Share of the recent time the destination was held, by reason (recording rule otlphttpretry:held_share:avg).",
				Unit:        "percentunit",
				Targets: []Target{{
					Expr:   `otlphttpretry:held_share:avg{` + sel + `}`,
					Legend: ident + ` {{reason}}`,
				}},
			},
		}},
		{Title: "Pacing", Panels: []Panel{
			{
				Title:       "Pace and learned ceiling",
				Description: "The pace requests leave at and the ceiling the pacer learned from the backend's refusals, items per second; 0 while unlimited.",
				Unit:        "short",
				Targets: []Target{
					{Expr: `max by (instance, exporter, data_type) (otelcol_otlp_http_retry_pacing_rate{` + sel + `})`, Legend: `pace ` + ident},
					{Expr: `max by (instance, exporter, data_type) (otelcol_otlp_http_retry_pacing_ceiling{` + sel + `})`, Legend: `ceiling ` + ident},
				},
			},
			{
				Title:       "Pacer waits per attempt",
				Description: "How many times the pacer held a request back, per attempt (recording rule otlphttpretry:pacer_waits_per_attempt:ratio_rate): near 1 when nearly every request waits for the pace; above 1 when refusals void booked slots and requests are paced again.",
				Unit:        "short",
				Targets: []Target{{
					Expr:   `otlphttpretry:pacer_waits_per_attempt:ratio_rate{` + sel + `}`,
					Legend: ident,
				}},
			},
			{
				Title:       "RateLimit: quota remaining",
				Description: "The remaining quota in the backend's last RateLimit header, in the quota's unit.",
				Unit:        "short",
				Targets: []Target{{
					Expr:   `min by (instance, exporter, data_type) (otelcol_otlp_http_retry_ratelimit_remaining{` + sel + `})`,
					Legend: ident,
				}},
			},
			{
				Title:       "RateLimit values rejected",
				Description: "RateLimit header values the exporter could not use, per second, by reason (malformed, negative, huge).",
				Unit:        "short",
				Targets: []Target{{
					Expr:   `sum by (exporter, data_type, reason) (` + r("ratelimit_rejected") + `)`,
					Legend: `{{exporter}} {{data_type}} {{reason}}`,
				}},
			},
		}},
		{Title: "Loss and queue", Panels: []Panel{
			{
				Title:       "Items dropped, by reason",
				Description: "Items this exporter will never deliver, per second (recording rule otlphttpretry:dropped_items:rate). queue_full: refused at the door.",
				Unit:        "short",
				Targets: []Target{{
					Expr:   `sum by (exporter, data_type, reason) (otlphttpretry:dropped_items:rate{` + sel + `})`,
					Legend: `{{exporter}} {{data_type}} {{reason}}`,
				}},
			},
			{
				Title:       "Sending queue fill",
				Description: "Sending queue size over its capacity (recording rule otlphttpretry:queue_fill:ratio); at 1 new data is refused.",
				Unit:        "percentunit",
				Targets: []Target{{
					Expr:   `otlphttpretry:queue_fill:ratio{` + sel + `}`,
					Legend: ident,
				}},
			},
		}},
	}
}

// Panels lists every panel, row by row.
func Panels() []Panel {
	var out []Panel
	for _, row := range Rows() {
		out = append(out, row.Panels...)
	}
	return out
}

// ExpandVariables replaces the dashboard's variables in expr with vars
// (keys without the $: "job", "instance", "exporter", "__rate_interval").
// It fails when expr keeps a variable vars does not give.
func ExpandVariables(expr string, vars map[string]string) (string, error) {
	// Longest names first, so that $__rate_interval is not read as $__rate.
	for _, name := range []string{"__rate_interval", "instance", "exporter", "job"} {
		if v, ok := vars[name]; ok {
			expr = strings.ReplaceAll(expr, "$"+name, v)
		}
	}
	if i := strings.Index(expr, "$"); i >= 0 {
		return "", fmt.Errorf("query keeps a variable at %q: %s", expr[i:], expr)
	}
	return expr, nil
}

// panelWidth and panelHeight are each panel's size on Grafana's 24-column grid.
const (
	panelWidth  = 8
	panelHeight = 8
)

// Dashboard builds the Grafana dashboard with the Grafana Foundation SDK
// and returns its JSON, as the shipped file holds it.
func Dashboard() ([]byte, error) {
	ds := common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
	labelVar := func(name, label, query string) *dashboard.QueryVariableBuilder {
		return dashboard.NewQueryVariableBuilder(name).
			Label(label).
			Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
			Definition(query).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).
			IncludeAll(true).
			AllValue(".*").
			Current(dashboard.VariableOption{
				Selected: cog.ToPtr(true),
				Text:     dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
				Value:    dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}},
			})
	}
	// The classic dashboard JSON model, which Grafana's Import takes in
	// every version; the SDK prefers dashboardv2, the schema of Grafana
	// 12's new dashboard API.
	//nolint:staticcheck // see above
	b := dashboard.NewDashboardBuilder("otlp_http_retry exporter").
		Uid(DashboardUID).
		Description("The otlp_http_retry exporter's self-metrics: is the destination held and why, what the backend refuses, pacing, retries, loss and the sending queue. Needs monitoring/otlphttpretry.rules.yaml loaded in Prometheus (recording rules and ALERTS).").
		Tags([]string{"opentelemetry-collector", "otlp_http_retry"}).
		Refresh("30s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")).
		WithVariable(labelVar("job", "Job", `label_values(otelcol_otlp_http_retry_attempts, job)`)).
		WithVariable(labelVar("instance", "Collector", `label_values(otelcol_otlp_http_retry_attempts{job=~"$job"}, instance)`)).
		WithVariable(labelVar("exporter", "Exporter", `label_values(otelcol_otlp_http_retry_attempts{job=~"$job", instance=~"$instance"}, exporter)`))
	id := uint32(0)
	for _, row := range Rows() {
		id++
		b = b.WithRow(dashboard.NewRowBuilder(row.Title).Id(id))
		for _, p := range row.Panels {
			id++
			tp := timeseries.NewPanelBuilder().
				Id(id).
				Title(p.Title).
				Description(p.Description).
				Unit(p.Unit).
				Datasource(ds).
				Height(panelHeight).
				Span(panelWidth).
				FillOpacity(10).
				LineWidth(1).
				ShowPoints(common.VisibilityModeNever).
				Legend(common.NewVizLegendOptionsBuilder().
					DisplayMode(common.LegendDisplayModeList).
					Placement(common.LegendPlacementBottom).
					ShowLegend(true))
			if p.Unit == "percentunit" {
				tp = tp.Min(0).Max(1)
			} else {
				tp = tp.Min(0)
			}
			for j, t := range p.Targets {
				tp = tp.WithTarget(prometheus.NewDataqueryBuilder().
					Datasource(ds).
					Expr(t.Expr).
					LegendFormat(t.Legend).
					Range().
					RefId(string(rune('A' + j))))
			}
			b = b.WithPanel(tp)
		}
	}
	d, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("building the dashboard: %w", err)
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
