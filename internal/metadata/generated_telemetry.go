// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Hand-written, not generated: this file has the shape mdatagen would give
// it from metadata.yaml (module root), but mdatagen
// (go.opentelemetry.io/collector/cmd/mdatagen) is not available to this
// module. Edit it by hand whenever metadata.yaml changes.
// internal/metadata/metadata_yaml_test.go holds this package,
// internal/metadatatest and documentation.md to metadata.yaml:
// TestMetadataYAMLStatus, TestMetadataYAMLTelemetryMatchesBuilder,
// TestDocumentationMatchesMetadataYAML and TestMetadataYAMLMatchesMetadatatest
// fail until they agree.

// Unlike mdatagen's output, which linters skip as generated, the Register
// functions return the callback's error to the SDK, and Shutdown discards
// Unregister's error explicitly: this file is linted as ordinary code.

package metadata

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/trace"

	"go.opentelemetry.io/collector/component"
)

func Meter(settings component.TelemetrySettings) metric.Meter {
	return settings.MeterProvider.Meter("github.com/otlphttpretry/otlphttpretry")
}

func Tracer(settings component.TelemetrySettings) trace.Tracer {
	return settings.TracerProvider.Tracer("github.com/otlphttpretry/otlphttpretry")
}

// TelemetryBuilder provides an interface for components to report telemetry
// as defined in metadata and user config.
type TelemetryBuilder struct {
	meter                                       metric.Meter
	mu                                          sync.Mutex
	registrations                               []metric.Registration
	OtlpHTTPRetryAttemptDurationSeconds         metric.Float64Histogram
	OtlpHTTPRetryAttempts                       metric.Int64Counter
	OtlpHTTPRetryDroppedItems                   metric.Int64Counter
	OtlpHTTPRetryExportDurationSeconds          metric.Float64Histogram
	OtlpHTTPRetryExportLatencySeconds           metric.Float64Histogram
	OtlpHTTPRetryHeld                           metric.Int64ObservableGauge
	OtlpHTTPRetryPacingCeiling                  metric.Float64ObservableGauge
	OtlpHTTPRetryPacingRate                     metric.Float64ObservableGauge
	OtlpHTTPRetryPacingWaitSeconds              metric.Float64Histogram
	OtlpHTTPRetryRatelimitRejected              metric.Int64Counter
	OtlpHTTPRetryRatelimitRemaining             metric.Int64ObservableGauge
	OtlpHTTPRetryRetries                        metric.Int64Counter
	OtlpHTTPRetryRetryAfterParseDurationSeconds metric.Float64Histogram
	OtlpHTTPRetryRetryAfterParsed               metric.Int64Counter
	OtlpHTTPRetryRetryAfterWaitSeconds          metric.Float64Histogram
	OtlpHTTPRetryThrottleRemainingSeconds       metric.Float64ObservableGauge
	OtlpHTTPRetryThrottled                      metric.Int64ObservableGauge
	OtlpHTTPRetryWaitingPayloads                metric.Int64ObservableGauge
}

// TelemetryBuilderOption applies changes to default builder.
type TelemetryBuilderOption interface {
	apply(*TelemetryBuilder)
}

type telemetryBuilderOptionFunc func(mb *TelemetryBuilder)

func (tbof telemetryBuilderOptionFunc) apply(mb *TelemetryBuilder) {
	tbof(mb)
}

// RegisterOtlpHTTPRetryHeldCallback sets callback for observable OtlpHTTPRetryHeld metric.
func (builder *TelemetryBuilder) RegisterOtlpHTTPRetryHeldCallback(cb metric.Int64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerInt64{inst: builder.OtlpHTTPRetryHeld, obs: o})
	}, builder.OtlpHTTPRetryHeld)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

// RegisterOtlpHTTPRetryPacingCeilingCallback sets callback for observable OtlpHTTPRetryPacingCeiling metric.
func (builder *TelemetryBuilder) RegisterOtlpHTTPRetryPacingCeilingCallback(cb metric.Float64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerFloat64{inst: builder.OtlpHTTPRetryPacingCeiling, obs: o})
	}, builder.OtlpHTTPRetryPacingCeiling)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

// RegisterOtlpHTTPRetryPacingRateCallback sets callback for observable OtlpHTTPRetryPacingRate metric.
func (builder *TelemetryBuilder) RegisterOtlpHTTPRetryPacingRateCallback(cb metric.Float64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerFloat64{inst: builder.OtlpHTTPRetryPacingRate, obs: o})
	}, builder.OtlpHTTPRetryPacingRate)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

// RegisterOtlpHTTPRetryRatelimitRemainingCallback sets callback for observable OtlpHTTPRetryRatelimitRemaining metric.
func (builder *TelemetryBuilder) RegisterOtlpHTTPRetryRatelimitRemainingCallback(cb metric.Int64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerInt64{inst: builder.OtlpHTTPRetryRatelimitRemaining, obs: o})
	}, builder.OtlpHTTPRetryRatelimitRemaining)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

// RegisterOtlpHTTPRetryThrottleRemainingSecondsCallback sets callback for observable OtlpHTTPRetryThrottleRemainingSeconds metric.
func (builder *TelemetryBuilder) RegisterOtlpHTTPRetryThrottleRemainingSecondsCallback(cb metric.Float64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerFloat64{inst: builder.OtlpHTTPRetryThrottleRemainingSeconds, obs: o})
	}, builder.OtlpHTTPRetryThrottleRemainingSeconds)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

// RegisterOtlpHTTPRetryThrottledCallback sets callback for observable OtlpHTTPRetryThrottled metric.
func (builder *TelemetryBuilder) RegisterOtlpHTTPRetryThrottledCallback(cb metric.Int64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerInt64{inst: builder.OtlpHTTPRetryThrottled, obs: o})
	}, builder.OtlpHTTPRetryThrottled)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

// RegisterOtlpHTTPRetryWaitingPayloadsCallback sets callback for observable OtlpHTTPRetryWaitingPayloads metric.
func (builder *TelemetryBuilder) RegisterOtlpHTTPRetryWaitingPayloadsCallback(cb metric.Int64Callback) error {
	reg, err := builder.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return cb(ctx, &observerInt64{inst: builder.OtlpHTTPRetryWaitingPayloads, obs: o})
	}, builder.OtlpHTTPRetryWaitingPayloads)
	if err != nil {
		return err
	}
	builder.mu.Lock()
	defer builder.mu.Unlock()
	builder.registrations = append(builder.registrations, reg)
	return nil
}

type observerInt64 struct {
	embedded.Int64Observer
	inst metric.Int64Observable
	obs  metric.Observer
}

func (oi *observerInt64) Observe(value int64, opts ...metric.ObserveOption) {
	oi.obs.ObserveInt64(oi.inst, value, opts...)
}

type observerFloat64 struct {
	embedded.Float64Observer
	inst metric.Float64Observable
	obs  metric.Observer
}

func (oi *observerFloat64) Observe(value float64, opts ...metric.ObserveOption) {
	oi.obs.ObserveFloat64(oi.inst, value, opts...)
}

// Shutdown unregister all registered callbacks for async instruments.
func (builder *TelemetryBuilder) Shutdown() {
	builder.mu.Lock()
	defer builder.mu.Unlock()
	for _, reg := range builder.registrations {
		// Unregister fails only for a registration that is not the
		// meter's or is already gone; Shutdown has nobody to tell.
		_ = reg.Unregister()
	}
}

// NewTelemetryBuilder provides a struct with methods to update all internal telemetry
// for a component
func NewTelemetryBuilder(settings component.TelemetrySettings, options ...TelemetryBuilderOption) (*TelemetryBuilder, error) {
	builder := TelemetryBuilder{}
	for _, op := range options {
		op.apply(&builder)
	}
	builder.meter = Meter(settings)
	var err, errs error
	builder.OtlpHTTPRetryAttemptDurationSeconds, err = builder.meter.Float64Histogram(
		"otelcol_otlp_http_retry_attempt_duration_seconds",
		metric.WithDescription("Duration of one HTTP attempt, from sending the request to reading the response. [Alpha]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries([]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}...),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryAttempts, err = builder.meter.Int64Counter(
		"otelcol_otlp_http_retry_attempts",
		metric.WithDescription("Number of HTTP attempts made, by outcome and status code. [Alpha]"),
		metric.WithUnit("{attempt}"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryDroppedItems, err = builder.meter.Int64Counter(
		"otelcol_otlp_http_retry_dropped_items",
		metric.WithDescription("Items (spans, data points, log records) dropped, by reason. [Alpha]"),
		metric.WithUnit("{item}"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryExportDurationSeconds, err = builder.meter.Float64Histogram(
		"otelcol_otlp_http_retry_export_duration_seconds",
		metric.WithDescription("Time from a payload's first attempt to its final outcome, waits included; not recorded for a payload never sent. [Alpha]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries([]float64{0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}...),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryExportLatencySeconds, err = builder.meter.Float64Histogram(
		"otelcol_otlp_http_retry_export_latency_seconds",
		metric.WithDescription("Time from a payload entering the exporter (before the queue) to its final outcome, queue time included. [Alpha]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries([]float64{0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}...),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryHeld, err = builder.meter.Int64ObservableGauge(
		"otelcol_otlp_http_retry_held",
		metric.WithDescription("1 for the reason the destination's gate holds every payload right now, 0 for the others; all 0 while the gate is open. [Alpha]"),
		metric.WithUnit("1"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryPacingCeiling, err = builder.meter.Float64ObservableGauge(
		"otelcol_otlp_http_retry_pacing_ceiling",
		metric.WithDescription("The pace the destination's pacer set at its last cut, in items per second: after a refusal with Retry-After, 10 % below what the backend accepted between its last two refusals (at most 60 % of the pace of the moment); after a refusal without a hint, 5 % below the rate the backend accepted (grossed up by the share it refuses whatever the pace); after a window that taught nothing, the slow start's first pace; 0 while the destination is unlimited. [Alpha]"),
		metric.WithUnit("{item}/s"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryPacingRate, err = builder.meter.Float64ObservableGauge(
		"otelcol_otlp_http_retry_pacing_rate",
		metric.WithDescription("The pace requests to the destination leave at now, in items per second: the ceiling at a cut, then growing (after a refusal without a hint, back to the rate the backend accepted within a few seconds, then past it); while a fixed window seen on the clock is scheduled, its take per window; 0 while the destination is unlimited. [Alpha]"),
		metric.WithUnit("{item}/s"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryPacingWaitSeconds, err = builder.meter.Float64Histogram(
		"otelcol_otlp_http_retry_pacing_wait_seconds",
		metric.WithDescription("Waits the pacer imposed on a request before it left, by why. [Alpha]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries([]float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}...),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryRatelimitRejected, err = builder.meter.Int64Counter(
		"otelcol_otlp_http_retry_ratelimit_rejected",
		metric.WithDescription("RateLimit header values the exporter ignored, by reason. [Alpha]"),
		metric.WithUnit("{value}"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryRatelimitRemaining, err = builder.meter.Int64ObservableGauge(
		"otelcol_otlp_http_retry_ratelimit_remaining",
		metric.WithDescription("The remaining quota in the destination's last RateLimit header, in the quota's own unit; not reported until a RateLimit header was seen. [Alpha]"),
		metric.WithUnit("1"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryRetries, err = builder.meter.Int64Counter(
		"otelcol_otlp_http_retry_retries",
		metric.WithDescription("Number of retries scheduled, by path and reason. [Alpha]"),
		metric.WithUnit("{retry}"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryRetryAfterParseDurationSeconds, err = builder.meter.Float64Histogram(
		"otelcol_otlp_http_retry_retry_after_parse_duration_seconds",
		metric.WithDescription("Time spent parsing one Retry-After header. Only recorded when the exporter's telemetry::detailed is true. [Development]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries([]float64{1e-06, 2.5e-06, 5e-06, 1e-05, 2.5e-05, 5e-05, 0.0001, 0.001}...),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryRetryAfterParsed, err = builder.meter.Int64Counter(
		"otelcol_otlp_http_retry_retry_after_parsed",
		metric.WithDescription("Retry-After headers examined on retryable responses, by parse result. [Alpha]"),
		metric.WithUnit("{header}"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryRetryAfterWaitSeconds, err = builder.meter.Float64Histogram(
		"otelcol_otlp_http_retry_retry_after_wait_seconds",
		metric.WithDescription("Retry-After waits actually applied, by where the value came from. [Alpha]"),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries([]float64{0, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}...),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryThrottleRemainingSeconds, err = builder.meter.Float64ObservableGauge(
		"otelcol_otlp_http_retry_throttle_remaining_seconds",
		metric.WithDescription("Seconds until the destination's gate lets the next request (the probe) through, whatever it holds for; 0 when it is open. [Alpha]"),
		metric.WithUnit("s"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryThrottled, err = builder.meter.Int64ObservableGauge(
		"otelcol_otlp_http_retry_throttled",
		metric.WithDescription("1 while the exporter's destination is held because the backend asked to wait (Retry-After, 429), 0 otherwise. [Alpha]"),
		metric.WithUnit("1"),
	)
	errs = errors.Join(errs, err)
	builder.OtlpHTTPRetryWaitingPayloads, err = builder.meter.Int64ObservableGauge(
		"otelcol_otlp_http_retry_waiting_payloads",
		metric.WithDescription("Payloads waiting for a retry right now (at the destination's gate while it holds, or in a backoff wait). [Alpha]"),
		metric.WithUnit("{payload}"),
	)
	errs = errors.Join(errs, err)
	return &builder, errs
}
