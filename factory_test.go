// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, "otlp_http_retry", f.Type().String())
	assert.Equal(t, component.StabilityLevelAlpha, f.TracesStability())
	assert.Equal(t, component.StabilityLevelAlpha, f.MetricsStability())
	assert.Equal(t, component.StabilityLevelAlpha, f.LogsStability())
}

func TestFactoryDefaultConfig(t *testing.T) {
	cfg, ok := NewFactory().CreateDefaultConfig().(*Config)
	require.True(t, ok)
	require.NoError(t, componenttest.CheckConfigStruct(cfg))

	assert.Empty(t, cfg.ClientConfig.Endpoint)
	assert.Equal(t, configcompression.TypeGzip, cfg.ClientConfig.Compression)
	assert.Equal(t, 30*time.Second, cfg.ClientConfig.Timeout)
	assert.Equal(t, EncodingProto, cfg.Encoding)
	assert.Equal(t, "Idempotency-Key", cfg.IdempotencyHeader)
	assert.Empty(t, cfg.AttemptHeader)
	assert.Empty(t, cfg.StatusOverrides)
	assert.Equal(t, UnauthorizedHold, cfg.OnUnauthorized)
	assert.False(t, cfg.Telemetry.Detailed)

	assert.Equal(t, retry.BackoffConfig{
		MaxAttempts:     5,
		InitialInterval: time.Second,
		Multiplier:      2,
		MaxInterval:     30 * time.Second,
		Jitter:          500 * time.Millisecond,
	}, cfg.Backoff)
	assert.Equal(t, 5*time.Second, cfg.RetryAfter.Default)
	assert.Equal(t, 300*time.Second, cfg.RetryAfter.Max)
	assert.Equal(t, 30*time.Minute, cfg.RetryAfter.MaxElapsed)
	assert.Equal(t, 250*time.Millisecond, cfg.RetryAfter.Jitter)

	// The queue is on, in memory, without batching (batching would change
	// payload identity).
	require.True(t, cfg.QueueConfig.HasValue(), "sending_queue must be enabled by default")
	q := cfg.QueueConfig.Get()
	assert.False(t, q.Batch.HasValue(), "sending_queue::batch must be off by default")
	assert.Nil(t, q.StorageID)
	assert.Equal(t, exporterhelper.NewDefaultQueueConfig().QueueSize, q.QueueSize)
	assert.Equal(t, 10, q.NumConsumers)
	assert.False(t, q.BlockOnOverflow)

	// The defaults only lack an endpoint.
	cfg.ClientConfig.Endpoint = "http://localhost:4318"
	assert.NoError(t, cfg.Validate())
}

// factoryTestConfig is the default config pointed at endpoint.
func factoryTestConfig(endpoint string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.ClientConfig.Endpoint = endpoint
	return cfg
}

// signalExporter is what the three exporter kinds have in common for
// these tests: lifecycle, plus one way to send a one-item batch.
type signalExporter struct {
	component.Component
	consumeOne func(context.Context) error
}

func createSignalExporter(t *testing.T, f exporter.Factory, sig string, cfg *Config) signalExporter {
	t.Helper()
	ctx := context.Background()
	set := exportertest.NewNopSettings(metadata.Type)
	switch sig {
	case "traces":
		exp, err := f.CreateTraces(ctx, set, cfg)
		require.NoError(t, err)
		return signalExporter{exp, func(ctx context.Context) error {
			td := ptrace.NewTraces()
			td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("s")
			return exp.ConsumeTraces(ctx, td)
		}}
	case "metrics":
		exp, err := f.CreateMetrics(ctx, set, cfg)
		require.NoError(t, err)
		return signalExporter{exp, func(ctx context.Context) error {
			md := pmetric.NewMetrics()
			m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			m.SetName("m")
			m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
			return exp.ConsumeMetrics(ctx, md)
		}}
	case "logs":
		exp, err := f.CreateLogs(ctx, set, cfg)
		require.NoError(t, err)
		return signalExporter{exp, func(ctx context.Context) error {
			ld := plog.NewLogs()
			ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("l")
			return exp.ConsumeLogs(ctx, ld)
		}}
	}
	t.Fatalf("unknown signal %q", sig)
	return signalExporter{}
}

var factorySignals = []string{"traces", "metrics", "logs"}

func TestFactoryCreateStartShutdownLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := NewFactory()
	for _, sig := range factorySignals {
		t.Run(sig, func(t *testing.T) {
			exp := createSignalExporter(t, f, sig, factoryTestConfig("http://127.0.0.1:4318"))
			require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, exp.Shutdown(context.Background()))
		})
	}
}

func TestFactoryShutdownWithoutStart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, sig := range factorySignals {
		exp := createSignalExporter(t, NewFactory(), sig, factoryTestConfig("http://127.0.0.1:4318"))
		assert.NoError(t, exp.Shutdown(context.Background()), sig)
	}
}

// After real exports, Shutdown must leave neither queue consumers nor the
// HTTP client's connection goroutines behind.
func TestFactoryExportThenShutdownLeavesNoGoroutine(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	// Taken after the server started: its goroutines are not the exporter's.
	before := goleak.IgnoreCurrent()

	f := NewFactory()
	for i, sig := range factorySignals {
		exp := createSignalExporter(t, f, sig, factoryTestConfig(srv.URL))
		require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, exp.consumeOne(context.Background()))
		require.Eventually(t, func() bool { return got.Load() == int64(i+1) }, 5*time.Second, 5*time.Millisecond)
		require.NoError(t, exp.Shutdown(context.Background()))
	}

	// Queue consumers, timers, telemetry: nothing but the keep-alive
	// connections (client and server side) may remain.
	require.NoError(t, goleak.Find(before,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
	))
	// Idle keep-alive connections are closed at Shutdown too (confighttp's
	// otelhttp wrapper does not pass CloseIdleConnections on; see transport.go).
	assert.NoError(t, goleak.Find(before, goleak.IgnoreAnyFunction("net/http.(*conn).serve")))
}

func TestFactoryRejectsConfigItCannotBuild(t *testing.T) {
	cfg := factoryTestConfig("http://127.0.0.1:4318")
	cfg.StatusOverrides = map[string]string{"abc": "drop"}
	_, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "status_overrides")
}

// A config that sets only traces_endpoint validates (one endpoint is
// enough), so a metrics or logs pipeline using it must fail at creation,
// not send every batch to the relative URL "/v1/<signal>".
func TestFactoryRejectsSignalWithoutEndpoint(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.TracesEndpoint = "http://127.0.0.1:4318/v1/traces"
	require.NoError(t, confmap.Validate(cfg))

	tr, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Shutdown(context.Background()))

	_, err = NewFactory().CreateMetrics(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.Error(t, err, "a metrics exporter without a URL fails at creation, not on every batch")
	assert.Contains(t, err.Error(), "metrics_endpoint")
}

func TestFactorySignalURLs(t *testing.T) {
	cfg := factoryTestConfig("https://backend.example.com:4318")
	assert.Equal(t, "https://backend.example.com:4318/v1/traces", tracesSignal.url(cfg))
	assert.Equal(t, "https://backend.example.com:4318/v1/metrics", metricsSignal.url(cfg))
	assert.Equal(t, "https://backend.example.com:4318/v1/logs", logsSignal.url(cfg))
	cfg.LogsEndpoint = "https://logs.example.com/ingest"
	assert.Equal(t, "https://logs.example.com/ingest", logsSignal.url(cfg))
	assert.Equal(t, "https://backend.example.com:4318/v1/traces", tracesSignal.url(cfg))
}

// A second Shutdown returns the first's result and panics nowhere
// (exporterhelper's own would: shutdownOnce guards it).
func TestFactoryShutdownTwice(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, sig := range factorySignals {
		exp := createSignalExporter(t, NewFactory(), sig, factoryTestConfig("http://127.0.0.1:4318"))
		require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, exp.Shutdown(context.Background()), sig)
		require.NoError(t, exp.Shutdown(context.Background()), sig)
	}
}
