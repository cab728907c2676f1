// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// The hostile tests (issue 19) run a collector against small backends that
// misbehave on purpose, and configs that validate accepts. Each records its
// figures with figure(): with HOSTILE_OUT set, they are appended to that
// file as JSON lines (docs/hostile-*.jsonl are such runs).

// hostileTemplate is a collector with the otlp receiver straight into the
// exporter (no batch processor: one exporter request per receiver request,
// so requests offered and requests delivered can be counted), a memory
// queue, healthcheckv2 and the collector's metrics.
const hostileTemplate = `extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: {{ .Health }}
      status:
        enabled: true
        path: /status
      config:
        enabled: false
receivers:
  otlp:
    protocols:
      http:
        endpoint: {{ .Receiver }}
exporters:
  otlp_http_retry:
    endpoint: {{ .Backend }}
    compression: none
{{ .Extra }}
    sending_queue:
      enabled: true
      num_consumers: 4
      queue_size: 1000
service:
  extensions: [healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_http_retry]
` + telemetryTemplate

// hostileBackend answers every request with answer and keeps the time and
// status of each.
type hostileBackend struct {
	*httptest.Server
	answer func(w http.ResponseWriter, r *http.Request, n int) int

	mu       sync.Mutex
	arrivals []time.Time
	statuses []int
}

func newHostileBackend(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, n int) int) *hostileBackend {
	t.Helper()
	b := &hostileBackend{answer: answer}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		b.mu.Lock()
		n := len(b.arrivals)
		b.arrivals = append(b.arrivals, time.Now())
		b.statuses = append(b.statuses, 0)
		b.mu.Unlock()
		status := b.answer(w, r, n)
		b.mu.Lock()
		b.statuses[n] = status
		b.mu.Unlock()
	}))
	t.Cleanup(b.Close)
	return b
}

// count returns how many requests arrived in [from, to) (zero to: no end)
// and how many of them were answered with a 2xx.
func (b *hostileBackend) count(from, to time.Time) (requests, accepted int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, at := range b.arrivals {
		if at.Before(from) || (!to.IsZero() && !at.Before(to)) {
			continue
		}
		requests++
		if b.statuses[i] >= 200 && b.statuses[i] <= 299 {
			accepted++
		}
	}
	return requests, accepted
}

// hostileRun is a collector started on hostileTemplate.
type hostileRun struct {
	t           *testing.T
	c           *demorun.Collector
	receiver    string
	metricsURL  string
	configPath  string
	stopGrace   time.Duration
	stopped     bool
	stopTook    time.Duration
	stopTimeout bool
}

// hostileConfig writes the collector's config with extra exporter lines
// (indented four spaces) and returns its path and the run's addresses.
func hostileConfig(t *testing.T, backendURL, extra, logLevel string) (path, receiver, health, metricsURL string) {
	t.Helper()
	addrs, err := demorun.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	port := addrs[2][strings.LastIndex(addrs[2], ":")+1:]
	if logLevel == "" {
		logLevel = "info"
	}
	path = writeConfig(t, t.TempDir(), hostileTemplate, map[string]string{
		"Health": addrs[1], "Receiver": addrs[0], "Backend": backendURL, "Extra": extra,
		"LogLevel": logLevel, "MetricsPort": port,
	})
	return path, "http://" + addrs[0], "http://" + addrs[1] + "/status", "http://127.0.0.1:" + port + "/metrics"
}

// startHostile starts a collector exporting to backendURL with extra
// exporter lines, and waits until it is healthy.
func startHostile(ctx context.Context, t *testing.T, backendURL, extra, logLevel string) *hostileRun {
	t.Helper()
	path, receiver, health, metricsURL := hostileConfig(t, backendURL, extra, logLevel)
	c, err := demorun.StartCollector(collectorBin(t), path, filepath.Join(filepath.Dir(path), "collector.log"))
	if err != nil {
		t.Fatal(err)
	}
	r := &hostileRun{t: t, c: c, receiver: receiver, metricsURL: metricsURL, configPath: path, stopGrace: 30 * time.Second}
	t.Cleanup(func() {
		if !r.stopped {
			r.stop()
		}
		if t.Failed() {
			t.Logf("collector log, last lines:\n%s", c.LogTail(40))
		}
	})
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := c.WaitHealthy(wctx, health); err != nil {
		t.Fatal(err)
	}
	return r
}

// stop sends SIGTERM and records how long the collector took to exit
// (stopGrace at most, after which it is killed).
func (r *hostileRun) stop() time.Duration {
	r.stopped = true
	d, err := r.c.Stop(r.stopGrace)
	r.stopTook, r.stopTimeout = d, err != nil && strings.Contains(err.Error(), "killed")
	return d
}

func (r *hostileRun) log() string {
	data, err := os.ReadFile(r.c.LogPath)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(data)
}

// figure records one measured figure of a hostile test: in the test's log
// always, and as a JSON line in $HOSTILE_OUT when set. It reports a failure
// to write with t.Error, never t.Fatal: a subtest may record a figure under
// its parent's name, from its own goroutine.
func figure(t *testing.T, name string, value float64, unit string) {
	t.Helper()
	t.Logf("figure %s = %g %s", name, value, unit)
	out := os.Getenv("HOSTILE_OUT")
	if out == "" {
		return
	}
	host, _ := os.Hostname()
	line, err := json.Marshal(map[string]any{
		"test": t.Name(), "figure": name, "value": value, "unit": unit,
		"binary": os.Getenv("OTELCOL_BIN"), "commit": os.Getenv("HOSTILE_COMMIT"),
		"date": time.Now().UTC().Format(time.RFC3339), "machine": fmt.Sprintf("%s, %s/%s, %d CPUs", host, runtime.GOOS, runtime.GOARCH, runtime.NumCPU()),
		"command": "HOSTILE_OUT=" + out + " OTELCOL_BIN=… go test -tags e2e -run " + t.Name() + " ./internal/e2e/",
	})
	if err != nil {
		t.Error(err)
		return
	}
	figureMu.Lock()
	defer figureMu.Unlock()
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Error(err)
	}
}

var figureMu sync.Mutex
