// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlphttpretry provides the otlp_http_retry exporter: OTLP/HTTP with
// a retry loop that honours Retry-After, shares one throttle gate per
// destination, and sends every payload as the same bytes under the same
// idempotency key on every attempt.
package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// NewFactory returns the otlp_http_retry exporter factory.
func NewFactory() exporter.Factory {
	return newFactory(retry.RealClock{})
}

// newFactory lets tests inject a clock.
func newFactory(clock retry.Clock) exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithTraces(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
			e, opts, err := build(set, cfg, tracesSignal, clock)
			if err != nil {
				return nil, err
			}
			exp, err := xexporterhelper.NewTracesRequest(ctx, helperSettings(set, cfg.(*Config)), func(ctx context.Context, td ptrace.Traces) (xexporterhelper.Request, error) {
				if p := formedPayload(ctx); p != nil {
					return p, nil
				}
				return e.newPayload(ctx, td.SpanCount(), ptraceotlp.NewExportRequestFromTraces(td))
			}, markInterrupted(e.push), opts...)
			if err != nil {
				return nil, err
			}
			offer := func(ctx context.Context, p *payload) error {
				return exp.ConsumeTraces(withFormedPayload(ctx, p), ptrace.NewTraces())
			}
			door, lines := e.newBatcher(offer), e.newLines(offer)
			return tracesExporter{Traces: exp, shutdownOnce: newShutdownOnce(e, door, lines, exp.Shutdown), tel: e.tel, door: door, lines: lines}, nil
		}, metadata.TracesStability),
		exporter.WithMetrics(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
			e, opts, err := build(set, cfg, metricsSignal, clock)
			if err != nil {
				return nil, err
			}
			exp, err := xexporterhelper.NewMetricsRequest(ctx, helperSettings(set, cfg.(*Config)), func(ctx context.Context, md pmetric.Metrics) (xexporterhelper.Request, error) {
				if p := formedPayload(ctx); p != nil {
					return p, nil
				}
				return e.newPayload(ctx, md.DataPointCount(), pmetricotlp.NewExportRequestFromMetrics(md))
			}, markInterrupted(e.push), opts...)
			if err != nil {
				return nil, err
			}
			offer := func(ctx context.Context, p *payload) error {
				return exp.ConsumeMetrics(withFormedPayload(ctx, p), pmetric.NewMetrics())
			}
			door, lines := e.newBatcher(offer), e.newLines(offer)
			return metricsExporter{Metrics: exp, shutdownOnce: newShutdownOnce(e, door, lines, exp.Shutdown), tel: e.tel, door: door, lines: lines}, nil
		}, metadata.MetricsStability),
		exporter.WithLogs(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
			e, opts, err := build(set, cfg, logsSignal, clock)
			if err != nil {
				return nil, err
			}
			exp, err := xexporterhelper.NewLogsRequest(ctx, helperSettings(set, cfg.(*Config)), func(ctx context.Context, ld plog.Logs) (xexporterhelper.Request, error) {
				if p := formedPayload(ctx); p != nil {
					return p, nil
				}
				return e.newPayload(ctx, ld.LogRecordCount(), plogotlp.NewExportRequestFromLogs(ld))
			}, markInterrupted(e.push), opts...)
			if err != nil {
				return nil, err
			}
			offer := func(ctx context.Context, p *payload) error {
				return exp.ConsumeLogs(withFormedPayload(ctx, p), plog.NewLogs())
			}
			door, lines := e.newBatcher(offer), e.newLines(offer)
			return logsExporter{Logs: exp, shutdownOnce: newShutdownOnce(e, door, lines, exp.Shutdown), tel: e.tel, door: door, lines: lines}, nil
		}, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 30 * time.Second
	client.Compression = configcompression.TypeGzip
	client.WriteBufferSize = 512 * 1024
	// exporterhelper's defaults: batching on when the feature gate
	// pkg.exporterhelper.queueBatchEnabled is (the collector's standard),
	// off otherwise.
	queue := newDefaultQueueConfig()
	return &Config{
		ClientConfig:      client,
		QueueConfig:       configoptional.Some(queue),
		Encoding:          EncodingProto,
		Backoff:           retry.NewDefaultBackoffConfig(),
		RetryAfter:        retry.NewDefaultRetryAfterConfig(),
		IdempotencyHeader: "Idempotency-Key",
		OnUnauthorized:    UnauthorizedHold,
		Unauthorized:      retry.NewDefaultUnauthorizedConfig(),
		Outage:            retry.NewDefaultOutageConfig(),
		Pacing:            retry.NewDefaultPacingConfig(),
		EncodeAt:          EncodeAtEntry,
	}
}

// shutdownRetry is an exporterhelper retry sender that never retries on its
// own: the loop returns a retryable error only when it was interrupted by
// shutdown, and this sender's only job is to turn that into exporterhelper's
// shutdown error, so that a persistent queue keeps the payload on disk.
var shutdownRetry = configretry.BackOffConfig{
	Enabled:         true,
	InitialInterval: time.Hour,
	Multiplier:      1,
	MaxInterval:     time.Hour,
	MaxElapsedTime:  0,
}

func build(set exporter.Settings, cfg component.Config, sig signal, clock retry.Clock) (*baseExporter, []exporterhelper.Option, error) {
	oCfg := cfg.(*Config)
	e, err := newExporter(oCfg, set, sig, clock)
	if err != nil {
		return nil, nil, err
	}
	return e, []exporterhelper.Option{
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// The per-attempt timeout is confighttp's; the loop owns the total.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(shutdownRetry),
		xexporterhelper.WithQueueBatch(oCfg.helperQueueConfig(), xexporterhelper.QueueBatchSettings{Encoding: payloadEncoding{}}),
	}, nil
}

// shutdownOnce stops the loop's waits before exporterhelper shuts down,
// forms and queues what the batcher still holds, and makes a second
// Shutdown a no-op (exporterhelper's would panic).
type shutdownOnce struct {
	once  sync.Once
	stop  func()
	flush func()
	next  func(context.Context) error
	err   error
}

func newShutdownOnce(e *baseExporter, door *batcher, l *lines, next func(context.Context) error) *shutdownOnce {
	s := &shutdownOnce{stop: e.stop, next: next, flush: func() {}}
	s.flush = func() {
		l.close()
		if door != nil {
			door.shutdown()
		}
	}
	return s
}

func (s *shutdownOnce) shutdown(ctx context.Context) error {
	s.once.Do(func() {
		// Waits end first, so that formed batches offered to a full queue
		// find room as the consumers finish; then the batcher's open
		// batches go into the queue (stored, with a persistent one; sent
		// once each while the destination answers, with a memory one).
		s.stop()
		s.flush()
		s.err = s.next(ctx)
	})
	return s.err
}

type tracesExporter struct {
	exporter.Traces
	*shutdownOnce
	tel   *telemetry // counts batches the full queue refuses (queuefull.go)
	door  *batcher   // forms batches as data enters (sending_queue::batch); nil without
	lines *lines     // held partitions' batches off the consumers; nil without
}

func (x tracesExporter) Shutdown(ctx context.Context) error { return x.shutdown(ctx) }

// Start starts exporterhelper, then puts back into the queue the lines a
// previous process kept on disk.
func (x tracesExporter) Start(ctx context.Context, host component.Host) error {
	if err := x.Traces.Start(ctx, host); err != nil {
		return err
	}
	x.lines.restore()
	return nil
}

type metricsExporter struct {
	exporter.Metrics
	*shutdownOnce
	tel   *telemetry // counts batches the full queue refuses (queuefull.go)
	door  *batcher   // forms batches as data enters (sending_queue::batch); nil without
	lines *lines     // held partitions' batches off the consumers; nil without
}

func (x metricsExporter) Shutdown(ctx context.Context) error { return x.shutdown(ctx) }

// Start starts exporterhelper, then puts back into the queue the lines a
// previous process kept on disk.
func (x metricsExporter) Start(ctx context.Context, host component.Host) error {
	if err := x.Metrics.Start(ctx, host); err != nil {
		return err
	}
	x.lines.restore()
	return nil
}

type logsExporter struct {
	exporter.Logs
	*shutdownOnce
	tel   *telemetry // counts batches the full queue refuses (queuefull.go)
	door  *batcher   // forms batches as data enters (sending_queue::batch); nil without
	lines *lines     // held partitions' batches off the consumers; nil without
}

func (x logsExporter) Shutdown(ctx context.Context) error { return x.shutdown(ctx) }

// Start starts exporterhelper, then puts back into the queue the lines a
// previous process kept on disk.
func (x logsExporter) Start(ctx context.Context, host component.Host) error {
	if err := x.Logs.Start(ctx, host); err != nil {
		return err
	}
	x.lines.restore()
	return nil
}
