// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// scenarioTemplate is the collector configuration of the scenarios below:
// otlp receiver → batch (unless NoBatchProcessor) → otlp_http_retry, healthcheckv2, the collector's
// own metrics on a Prometheus endpoint. Unlike demorun's template it takes
// the queue kind, the consumers, the 401 probe interval, headers and the
// log level as parameters.
const scenarioTemplate = `extensions:
{{- if .Storage }}
  file_storage:
    directory: {{ .StorageDir }}
    create_directory: true
{{- end }}
  healthcheckv2:
    use_v2: true
    component_health:
      include_recoverable_errors: true
      recovery_duration: 500ms
    http:
      endpoint: {{ .HealthEndpoint }}
      status:
        enabled: true
        path: /status
      config:
        enabled: false

receivers:
  otlp:
    protocols:
      http:
        endpoint: {{ .ReceiverEndpoint }}
{{- if .IncludeMetadata }}
        include_metadata: true
{{- end }}

{{- if not .NoBatchProcessor }}
processors:
  batch:
    timeout: 200ms
    send_batch_size: 1000
{{- end }}

exporters:
  otlp_http_retry:
    endpoint: {{ .BackendURL }}
    compression: gzip
    idempotency_header: Idempotency-Key
{{- if .Headers }}
    headers:
{{- range $name, $value := .Headers }}
      {{ q $name }}: {{ q $value }}
{{- end }}
{{- end }}
{{- if .ProbeInterval }}
    unauthorized:
      probe_interval: {{ .ProbeInterval }}
{{- end }}
{{- if .MaxInterval }}
    backoff:
      max_interval: {{ .MaxInterval }}
{{- end }}
    sending_queue:
      enabled: true
      num_consumers: {{ .NumConsumers }}
      queue_size: {{ .QueueSize }}
{{- if .Storage }}
      storage: file_storage
{{- end }}
{{- if .WaitForResult }}
      wait_for_result: true
{{- end }}
{{- if .Batch }}
      batch:
{{ .Batch }}
{{- end }}
{{- if .RetryAfterJitter }}
    retry_after:
      jitter: {{ .RetryAfterJitter }}
{{- end }}

service:
  extensions: [{{ if .Storage }}file_storage, {{ end }}healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
{{- if not .NoBatchProcessor }}
      processors: [batch]
{{- end }}
      exporters: [otlp_http_retry]
` + telemetryTemplate

// telemetryTemplate ends scenarioTemplate and hostileTemplate: the
// collector's log level and its metrics on a Prometheus endpoint at
// 127.0.0.1:{{ .MetricsPort }}.
const telemetryTemplate = `  telemetry:
    logs:
      level: {{ .LogLevel }}
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: {{ .MetricsPort }}
`

// scenario is what a test sets in the configuration.
type scenario struct {
	// Storage puts the queue on file_storage; otherwise it is in memory.
	Storage bool
	// NumConsumers is sending_queue::num_consumers (default 4).
	NumConsumers int
	// ProbeInterval is unauthorized::probe_interval; 0 leaves it unset.
	ProbeInterval time.Duration
	// Headers are the exporter's headers.
	Headers map[string]string
	// LogLevel is service::telemetry::logs::level (default info).
	LogLevel string
	// NoBatchProcessor leaves the batch processor out: what the receiver
	// accepted is then in the exporter's queue (the batch processor holds
	// up to its timeout's worth in memory).
	NoBatchProcessor bool
	// QueueSize is sending_queue::queue_size (default 1000).
	QueueSize int
	// MaxInterval is backoff::max_interval (the longest outage probe
	// interval); 0 leaves it unset.
	MaxInterval time.Duration
	// Batch is the YAML of sending_queue::batch, each line indented by 8
	// spaces ("        {}" for its defaults); empty leaves batch out.
	Batch string
	// IncludeMetadata sets the receiver's include_metadata (client
	// metadata, for sending_queue::batch::partition::metadata_keys).
	IncludeMetadata bool
	// FeatureGates is the collector's --feature-gates (empty: none).
	FeatureGates string
	// WaitForResult sets sending_queue::wait_for_result (memory queue).
	WaitForResult bool
	// RetryAfterJitter is retry_after::jitter; empty leaves it unset.
	RetryAfterJitter string
	// Serve, when set, is what the harness serves as the backend, on a
	// port of its own, instead of starting Backend (whose Down and Up then
	// do nothing to the exporter's endpoint): a handler that answers with
	// Backend's Handler, or with another's, as the test's script says.
	Serve func(*demobackend.Backend) http.Handler
}

// templateData fills scenarioTemplate.
type templateData struct {
	scenario
	ReceiverEndpoint, HealthEndpoint, BackendURL, StorageDir string
	MetricsPort                                              int
}

// harness is a demo backend and a collector exporting to it, which a test
// can stop and start again on the same configuration and storage.
type harness struct {
	t          *testing.T
	sc         scenario
	data       templateData
	dir        string
	configPath string
	Backend    *demobackend.Backend
	Collector  *demorun.Collector
	logs       []string // one log file per start
}

// newHarness starts the backend on a free port and writes the collector's
// configuration; it does not start the collector. Cleanup stops both and,
// when the test failed, logs the tail of the collector's log.
func newHarness(t *testing.T, backend demobackend.Config, sc scenario) *harness {
	t.Helper()
	if sc.NumConsumers == 0 {
		sc.NumConsumers = 4
	}
	if sc.LogLevel == "" {
		sc.LogLevel = "info"
	}
	if sc.QueueSize == 0 {
		sc.QueueSize = 1000
	}
	h := &harness{t: t, sc: sc, dir: t.TempDir(), Backend: demobackend.New(backend)}
	backendURL := ""
	if sc.Serve == nil {
		if err := h.Backend.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		backendURL = h.Backend.URL()
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: sc.Serve(h.Backend), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		backendURL = "http://" + ln.Addr().String()
	}
	addrs, err := demorun.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addrs[2])
	metricsPort, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	h.data = templateData{
		scenario:         sc,
		ReceiverEndpoint: addrs[0],
		HealthEndpoint:   addrs[1],
		MetricsPort:      metricsPort,
		BackendURL:       backendURL,
		StorageDir:       filepath.Join(h.dir, "storage"),
	}
	h.configPath = writeConfig(t, h.dir, scenarioTemplate, h.data)
	t.Cleanup(func() {
		if h.running() {
			if _, err := h.Collector.Stop(30 * time.Second); err != nil {
				t.Errorf("stopping the collector at cleanup: %v", err)
			}
		}
		_ = h.Backend.Close()
		if t.Failed() && h.Collector != nil {
			t.Logf("collector log (%s), last lines:\n%s", h.Collector.LogPath, h.Collector.LogTail(80))
		}
	})
	return h
}

// writeConfig renders a collector configuration template (q quotes a
// string) with data into dir/collector.yaml and returns its path.
func writeConfig(t *testing.T, dir, text string, data any) string {
	t.Helper()
	tmpl := template.Must(template.New("collector.yaml").Option("missingkey=error").
		Funcs(template.FuncMap{"q": strconv.Quote}).Parse(text))
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (h *harness) receiverURL() string { return "http://" + h.data.ReceiverEndpoint }
func (h *harness) healthURL() string   { return "http://" + h.data.HealthEndpoint + "/status" }

// health polls the health endpoint for up to 5 s until it answers, and
// returns its last status code and body.
func (h *harness) health(ctx context.Context) (int, string) {
	var code int
	var body string
	for range 50 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.healthURL(), http.NoBody)
		if err != nil {
			return 0, err.Error()
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			code, body = resp.StatusCode, string(b)
			return code, body
		}
		body = err.Error()
		time.Sleep(100 * time.Millisecond)
	}
	return code, body
}
func (h *harness) metricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", h.data.MetricsPort)
}

func (h *harness) running() bool {
	if h.Collector == nil {
		return false
	}
	select {
	case <-h.Collector.Exited():
		return false
	default:
		return true
	}
}

// start runs the collector (again) on the same configuration and waits
// until it is healthy.
func (h *harness) start(ctx context.Context) {
	h.t.Helper()
	logPath := filepath.Join(h.dir, fmt.Sprintf("collector-%d.log", len(h.logs)+1))
	var extra []string
	if h.sc.FeatureGates != "" {
		extra = append(extra, "--feature-gates="+h.sc.FeatureGates)
	}
	c, err := demorun.StartCollector(collectorBin(h.t), h.configPath, logPath, extra...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.Collector, h.logs = c, append(h.logs, logPath)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := c.WaitHealthy(wctx, h.healthURL()); err != nil {
		h.t.Fatal(err)
	}
}

// stop sends SIGTERM and waits for the collector to exit.
func (h *harness) stop() time.Duration {
	h.t.Helper()
	d, err := h.Collector.Stop(30 * time.Second)
	if err != nil {
		h.t.Errorf("stopping the collector: %v (after %s)", err, d)
	}
	return d
}

// logText is every log the collector wrote, all starts included.
func (h *harness) logText() string {
	var b strings.Builder
	for _, p := range h.logs {
		data, err := os.ReadFile(p)
		if err != nil {
			h.t.Errorf("reading %s: %v", p, err)
		}
		b.Write(data)
	}
	return b.String()
}

func (h *harness) scrape(ctx context.Context) demorun.Metrics {
	h.t.Helper()
	m, err := demorun.Scrape(ctx, h.metricsURL())
	if err != nil {
		h.t.Fatalf("scraping %s: %v", h.metricsURL(), err)
	}
	return m
}

// scrapeUntil scrapes until cond holds or timeout passes; it returns the
// last scrape and whether cond held.
func (h *harness) scrapeUntil(ctx context.Context, timeout time.Duration, cond func(demorun.Metrics) bool) (demorun.Metrics, bool) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m, err := demorun.Scrape(ctx, h.metricsURL())
		if err == nil && cond(m) {
			return m, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				h.t.Fatalf("scraping %s: %v", h.metricsURL(), err)
			}
			return m, false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitRecords waits until cond holds for the backend's records, timeout
// passes, or the collector exits; it returns the records it last saw and
// whether cond held.
func (h *harness) waitRecords(ctx context.Context, timeout time.Duration, cond func([]demobackend.Record) bool) ([]demobackend.Record, bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		changed := h.Backend.Changed()
		recs := h.Backend.Records()
		if cond(recs) {
			return recs, true
		}
		select {
		case <-ctx.Done():
			return recs, false
		case <-h.Collector.Exited():
			h.t.Fatalf("the collector exited; its log:\n%s", h.Collector.LogTail(40))
		case <-changed:
		case <-tick.C:
		}
	}
}

// sendAsync sends load in the background; wait returns what it sent.
func sendAsync(ctx context.Context, l demorun.Load, receiverURL string) (wait func() (demorun.LoadResult, error)) {
	type result struct {
		res demorun.LoadResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := l.Send(ctx, receiverURL)
		done <- result{res, err}
	}()
	return func() (demorun.LoadResult, error) {
		r := <-done
		return r.res, r.err
	}
}

// delivery compares the spans sent with those the backend accepted.
type delivery struct {
	Sent, Missing, Duplicated, Unexpected int
	MissingIDs                            []string
}

func checkDelivery(sent []string, recs []demobackend.Record) delivery {
	accepted := demobackend.AcceptedSpans(recs)
	d := delivery{Sent: len(sent)}
	want := make(map[string]bool, len(sent))
	for _, id := range sent {
		want[id] = true
		switch n := accepted[id]; {
		case n == 0:
			d.Missing++
			if len(d.MissingIDs) < 5 {
				d.MissingIDs = append(d.MissingIDs, id)
			}
		case n > 1:
			d.Duplicated += n - 1
		}
	}
	for id := range accepted {
		if !want[id] {
			d.Unexpected++
		}
	}
	return d
}

// allAccepted is a waitRecords condition: every span in sent was accepted.
func allAccepted(sent []string) func([]demobackend.Record) bool {
	return func(recs []demobackend.Record) bool { return checkDelivery(sent, recs).Missing == 0 }
}

// countStatus counts the records answered status.
func countStatus(recs []demobackend.Record, status int) int {
	n := 0
	for _, r := range recs {
		if r.Status == status {
			n++
		}
	}
	return n
}

// statusLine renders records compactly for a failure message: offset from
// the first request, status, masked key.
func statusLine(recs []demobackend.Record) string {
	if len(recs) == 0 {
		return "(no requests)"
	}
	parts := make([]string, 0, len(recs))
	for _, r := range recs {
		key := r.Key
		if len(key) > 4 {
			key = "…" + key[len(key)-4:]
		}
		parts = append(parts, fmt.Sprintf("+%.2fs %d %s", r.Arrival.Sub(recs[0].Arrival).Seconds(), r.Status, key))
	}
	return strings.Join(parts, ", ")
}

// between returns the records that arrived in [from, to) (to zero: no end).
func between(recs []demobackend.Record, from, to time.Time) []demobackend.Record {
	return slices.DeleteFunc(slices.Clone(recs), func(r demobackend.Record) bool {
		return r.Arrival.Before(from) || !to.IsZero() && !r.Arrival.Before(to)
	})
}

var ident = map[string]string{"exporter": "otlp_http_retry", "data_type": "traces"}

// with adds labels to the exporter's identity labels.
func with(kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range ident {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// droppedLines lists the dropped_items series of a scrape, for messages.
func droppedLines(m demorun.Metrics) string {
	var lines []string
	for _, s := range m.WithPrefix(prefix + "dropped_items") {
		lines = append(lines, s.Line)
	}
	if len(lines) == 0 {
		return "(no dropped_items series)"
	}
	return strings.Join(lines, "; ")
}
