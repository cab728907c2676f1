// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestRenderDefaultTemplate(t *testing.T) {
	cfg, err := NewCollectorConfig("http://127.0.0.1:4000", "/tmp/x/storage")
	if err != nil {
		t.Fatal(err)
	}
	cfg.IncludePermanentErrors = true
	for _, a := range []string{cfg.ReceiverEndpoint, cfg.HealthEndpoint} {
		host, _, splitErr := net.SplitHostPort(a)
		if splitErr != nil || host != "127.0.0.1" {
			t.Fatalf("address %q is not on 127.0.0.1", a)
		}
	}
	path, err := cfg.WriteFile(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("rendered config is not YAML: %v\n%s", err, raw)
	}
	get := func(path ...string) any {
		var cur any = doc
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %q", path, p)
			}
			cur = m[p]
		}
		return cur
	}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"exporters", "otlp_http_retry", "endpoint"}, "http://127.0.0.1:4000"},
		{[]string{"exporters", "otlp_http_retry", "sending_queue", "storage"}, "file_storage"},
		{[]string{"extensions", "file_storage", "directory"}, "/tmp/x/storage"},
		{[]string{"extensions", "healthcheckv2", "use_v2"}, true},
		{[]string{"extensions", "healthcheckv2", "component_health", "include_permanent_errors"}, true},
		{[]string{"extensions", "healthcheckv2", "http", "endpoint"}, cfg.HealthEndpoint},
		{[]string{"receivers", "otlp", "protocols", "http", "endpoint"}, cfg.ReceiverEndpoint},
		{[]string{"exporters", "debug", "verbosity"}, "basic"},
		{[]string{"service", "telemetry", "logs", "level"}, "info"},
		{[]string{"service", "telemetry", "metrics", "level"}, "normal"},
	}
	for _, c := range checks {
		if got := get(c.path...); got != c.want {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "::"), got, c.want)
		}
	}
	readers := get("service", "telemetry", "metrics", "readers").([]any)
	prom := readers[0].(map[string]any)["pull"].(map[string]any)["exporter"].(map[string]any)["prometheus"].(map[string]any)
	if prom["host"] != "127.0.0.1" || prom["port"] != cfg.MetricsPort {
		t.Errorf("prometheus reader = %v, want 127.0.0.1:%d", prom, cfg.MetricsPort)
	}
	if got := cfg.MetricsURL(); !strings.HasPrefix(got, "http://127.0.0.1:") || !strings.HasSuffix(got, "/metrics") {
		t.Errorf("MetricsURL = %q", got)
	}
}

func TestRenderRejectsUnknownField(t *testing.T) {
	if _, err := (CollectorConfig{}).Render("x: {{ .Nope }}"); err == nil {
		t.Fatal("an unknown template field rendered")
	}
}

func TestFreeAddrsDistinct(t *testing.T) {
	addrs, err := FreeAddrs(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("duplicate address %s", a)
		}
		seen[a] = true
	}
}

// Calls in one process never share a port: parallel tests draw theirs at
// once, and each collector must get its own (1 000 ports drawn at random
// from about 20 000 would repeat one almost surely).
func TestFreeAddrsNeverTwiceInAProcess(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		addrs, err := FreeAddrs(50)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			if seen[a] {
				t.Fatalf("%s returned twice", a)
			}
			seen[a] = true
		}
	}
}

// The collectors' ports come from below the ephemeral range: a port the
// kernel hands out could be taken by an outgoing connection before the
// collector binds it (CI failed on exactly that: "bind: address already in
// use" on a port FreeAddrs had returned).
func TestFreeAddrsAvoidTheEphemeralRange(t *testing.T) {
	low, high := unassignedPorts()
	if high == 0 {
		t.Skip("no ephemeral range to avoid on this machine")
	}
	addrs, err := FreeAddrs(20)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		_, p, _ := net.SplitHostPort(a)
		port, _ := strconv.Atoi(p)
		if port < low || port >= high {
			t.Errorf("%s: port outside [%d, %d)", a, low, high)
		}
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP otelcol_otlp_http_retry_attempts Number of HTTP attempts made [Alpha]
# TYPE otelcol_otlp_http_retry_attempts counter
otelcol_otlp_http_retry_attempts{data_type="traces",exporter="otlp_http_retry",outcome="throttled",status_code="429"} 3
otelcol_otlp_http_retry_attempts{data_type="traces",exporter="otlp_http_retry",outcome="success",status_code="200"} 20
otelcol_otlp_http_retry_retry_after_wait_seconds_bucket{data_type="traces",exporter="otlp_http_retry",source="header",le="+Inf"} 3
weird{a="x\"y\\z",b="line\nbreak"} 1.5e3 1700000000000
plain 7
nan_metric NaN
`
	m, err := ParseMetrics(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 6 {
		t.Fatalf("%d samples, want 6", len(m))
	}
	if got := m.Sum("otelcol_otlp_http_retry_attempts", nil); got != 23 {
		t.Errorf("sum = %v", got)
	}
	if got := m.Sum("otelcol_otlp_http_retry_attempts", map[string]string{"outcome": "throttled", "status_code": "429"}); got != 3 {
		t.Errorf("throttled = %v", got)
	}
	if got := m.LabelNames("otelcol_otlp_http_retry_attempts"); strings.Join(got, ",") != "data_type,exporter,outcome,status_code" {
		t.Errorf("label names %v", got)
	}
	w := m.Find("weird", nil)[0]
	if w.Labels["a"] != `x"y\z` || w.Labels["b"] != "line\nbreak" || w.Value != 1500 {
		t.Errorf("weird = %+v", w)
	}
	if b := m.Find("otelcol_otlp_http_retry_retry_after_wait_seconds_bucket", map[string]string{"le": "+Inf"}); len(b) != 1 {
		t.Errorf("bucket not found")
	}
	if !math.IsNaN(m.Find("nan_metric", nil)[0].Value) {
		t.Errorf("NaN not parsed")
	}
	if got := len(m.WithPrefix(MetricPrefix)); got != 3 {
		t.Errorf("WithPrefix: %d", got)
	}
	if got, want := w.Line, `weird{a="x\"y\\z",b="line\nbreak"} 1500`; got != want {
		t.Errorf("Line = %s, want %s", got, want)
	}
	for _, bad := range []string{`x{a="b} 1`, `x{a=b} 1`, `x`, `x{a="b"}`, `x notanumber`} {
		if _, err := ParseMetrics(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A histogram, as the collector's Prometheus endpoint writes one, comes out
// as its _bucket (with le), _sum and _count series.
func TestParseMetricsHistogram(t *testing.T) {
	text := `# HELP otelcol_otlp_http_retry_retry_after_wait_seconds Retry-After waits actually applied [Alpha]
# TYPE otelcol_otlp_http_retry_retry_after_wait_seconds histogram
otelcol_otlp_http_retry_retry_after_wait_seconds_bucket{data_type="traces",source="header",le="1"} 0
otelcol_otlp_http_retry_retry_after_wait_seconds_bucket{data_type="traces",source="header",le="5"} 2
otelcol_otlp_http_retry_retry_after_wait_seconds_bucket{data_type="traces",source="header",le="+Inf"} 3
otelcol_otlp_http_retry_retry_after_wait_seconds_sum{data_type="traces",source="header"} 12.5
otelcol_otlp_http_retry_retry_after_wait_seconds_count{data_type="traces",source="header"} 3
# TYPE otelcol_otlp_http_retry_throttled gauge
otelcol_otlp_http_retry_throttled{data_type="traces"} 0
`
	m, err := ParseMetrics(text)
	if err != nil {
		t.Fatal(err)
	}
	const name = "otelcol_otlp_http_retry_retry_after_wait_seconds"
	want := []string{
		name + `_bucket{data_type="traces",le="1",source="header"} 0`,
		name + `_bucket{data_type="traces",le="5",source="header"} 2`,
		name + `_bucket{data_type="traces",le="+Inf",source="header"} 3`,
		name + `_count{data_type="traces",source="header"} 3`,
		name + `_sum{data_type="traces",source="header"} 12.5`,
		`otelcol_otlp_http_retry_throttled{data_type="traces"} 0`,
	}
	var got []string
	for _, s := range m {
		got = append(got, s.Line)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := m.Sum(name+"_bucket", map[string]string{"le": "+Inf", "source": "header"}); got != 3 {
		t.Errorf("+Inf bucket = %v, want 3", got)
	}
	if got := m.Sum(name+"_sum", nil); got != 12.5 {
		t.Errorf("sum = %v, want 12.5", got)
	}
}

func TestCompactLogLine(t *testing.T) {
	line := "2026-11-29T14:59:53.553Z\tinfo\totlphttpretry@v0.0.0/telemetry.go:143\tThrottle window started\t" +
		`{"resource": {"service.name": "otelcol-retry"}, "otelcol.component.id": "otlp_http_retry", "status": 429, "wait": 4.14}`
	if got, want := CompactLogLine(line), "14:59:53.553 info Throttle window started status=429 wait=4.14"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := CompactLogLine("plain line"); got != "plain line" {
		t.Errorf("plain line changed: %q", got)
	}
}
