// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// received is one request as it reached the test backend.
type received struct {
	Header http.Header
	Body   []byte // as sent on the wire (compressed)
	URL    string
}

// backend is an httptest server that answers from a script and records
// every request that reached it.
type backend struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	script   []func(w http.ResponseWriter) // one per request; the last repeats
}

// newBackend starts a backend answering request i with script[i] (the last
// entry answers every request after it).
func newBackend(t *testing.T, script ...func(w http.ResponseWriter)) *backend {
	t.Helper()
	b := &backend{script: script}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.requests = append(b.requests, received{Header: r.Header.Clone(), Body: body, URL: r.URL.String()})
		n := len(b.requests)
		b.mu.Unlock()
		if len(b.script) == 0 {
			w.WriteHeader(http.StatusOK)
			return
		}
		b.script[min(n, len(b.script))-1](w)
	}))
	t.Cleanup(b.Close)
	return b
}

// switchedBackend starts a backend answering before until switched is set,
// after when it is.
func switchedBackend(t *testing.T, before, after int) (*backend, *atomic.Bool) {
	t.Helper()
	switched := new(atomic.Bool)
	b := newBackend(t, func(w http.ResponseWriter) {
		if switched.Load() {
			w.WriteHeader(after)
			return
		}
		w.WriteHeader(before)
	})
	return b, switched
}

func (b *backend) got() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.requests...)
}

// reply answers code with the given headers (name, value pairs).
func reply(code int, headers ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header()[headers[i]] = []string{headers[i+1]} // keep the name's case as given
		}
		w.WriteHeader(code)
	}
}

// testConfig is the default config pointed at endpoint, with no queue (so
// ConsumeTraces returns the outcome) and no jitter.
func testConfig(endpoint string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.ClientConfig.Endpoint = endpoint
	cfg.QueueConfig = configoptional.None[QueueConfig]()
	cfg.Backoff.Jitter = 0
	cfg.RetryAfter.Jitter = 0
	return cfg
}

// withMemoryQueue gives cfg the default memory sending_queue with
// consumers consumers, so ConsumeTraces returns once a batch is queued.
func withMemoryQueue(cfg *Config, consumers int) {
	queue := newDefaultQueueConfig()
	queue.Batch = configoptional.None[BatchConfig]()
	queue.NumConsumers = consumers
	cfg.QueueConfig = configoptional.Some(queue)
}

// harness is one started traces exporter with a fake clock, captured
// telemetry and captured logs.
type harness struct {
	exp   exporter.Traces
	clock *retrytest.Clock
	tel   *componenttest.Telemetry
	logs  *observer.ObservedLogs
	host  *statusHost
	id    string // the component ID exportertest gave it ("otlp_http_retry/<uuid>")
}

// startTraces builds and starts a traces exporter for cfg on clock.
func startTraces(t *testing.T, cfg *Config, clock *retrytest.Clock) *harness {
	t.Helper()
	require.NoError(t, cfg.Validate())
	return startTracesUnvalidated(t, cfg, clock)
}

// startTracesUnvalidated is startTraces for a config Validate refuses: for
// the exporter's second line of defence behind Validate.
func startTracesUnvalidated(t *testing.T, cfg *Config, clock *retrytest.Clock) *harness {
	t.Helper()
	return startTracesOn(t, cfg, clock, clock)
}

// startTracesOn starts a traces exporter that reads time from clock, a
// wrapper around fake.
func startTracesOn(t *testing.T, cfg *Config, fake *retrytest.Clock, clock retry.Clock) *harness {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	h := &harness{clock: fake, tel: componenttest.NewTelemetry(), logs: logs, host: &statusHost{Host: componenttest.NewNopHost()}}
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	exp, err := newFactory(clock).CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), h.host))
	h.exp, h.id = exp, set.ID.String()
	t.Cleanup(func() {
		assertEmittedAttributesDocumented(t, h.tel)
		_ = exp.Shutdown(context.Background())
		_ = h.tel.Shutdown(context.Background())
	})
	return h
}

// spans returns a batch of n spans named name.
func spans(name string, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range n {
		s := ss.Spans().AppendEmpty()
		s.SetName(name)
		s.SetTraceID([16]byte{byte(i + 1)})
		s.SetSpanID([8]byte{byte(i + 1)})
	}
	return td
}

// gunzip decodes a gzip body.
func gunzip(t *testing.T, body []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return out
}

// statusHost records the component status events reported to it.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []string
	errs   []error // each event's error, nil for OK
}

// Report implements componentstatus.Reporter.
func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev.Status().String())
	h.errs = append(h.errs, ev.Err())
}

// errors returns each reported event's error in order.
func (h *statusHost) errors() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

// statuses returns the reported statuses in order.
func (h *statusHost) statuses() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

var start = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// hookClock is a fake clock that calls onWait before the n-th wait (1-based)
// is taken: a test's way to change the world between two waits.
type hookClock struct {
	*retrytest.Clock
	mu     sync.Mutex
	n      int
	onWait func(n int)
}

func (c *hookClock) After(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	c.onWait(n)
	return c.Clock.After(d)
}
