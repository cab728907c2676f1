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

package metadatatest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"go.opentelemetry.io/collector/component/componenttest"
)

func AssertEqualOtlpHTTPRetryAttemptDurationSeconds(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.HistogramDataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_attempt_duration_seconds",
		Description: "Duration of one HTTP attempt, from sending the request to reading the response. [Alpha]",
		Unit:        "s",
		Data: metricdata.Histogram[float64]{
			Temporality: metricdata.CumulativeTemporality,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_attempt_duration_seconds")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryAttempts(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_attempts",
		Description: "Number of HTTP attempts made, by outcome and status code. [Alpha]",
		Unit:        "{attempt}",
		Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality,
			IsMonotonic: true,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_attempts")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryDroppedItems(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_dropped_items",
		Description: "Items (spans, data points, log records) dropped, by reason. [Alpha]",
		Unit:        "{item}",
		Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality,
			IsMonotonic: true,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_dropped_items")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryExportDurationSeconds(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.HistogramDataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_export_duration_seconds",
		Description: "Time from a payload's first attempt to its final outcome, waits included; not recorded for a payload never sent. [Alpha]",
		Unit:        "s",
		Data: metricdata.Histogram[float64]{
			Temporality: metricdata.CumulativeTemporality,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_export_duration_seconds")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryExportLatencySeconds(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.HistogramDataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_export_latency_seconds",
		Description: "Time from a payload entering the exporter (before the queue) to its final outcome, queue time included. [Alpha]",
		Unit:        "s",
		Data: metricdata.Histogram[float64]{
			Temporality: metricdata.CumulativeTemporality,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_export_latency_seconds")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryHeld(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_held",
		Description: "1 for the reason the destination's gate holds every payload right now, 0 for the others; all 0 while the gate is open. [Alpha]",
		Unit:        "1",
		Data: metricdata.Gauge[int64]{
			DataPoints: dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_held")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryPacingCeiling(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_pacing_ceiling",
		Description: "The pace the destination's pacer set at its last cut, in items per second: after a refusal with Retry-After, 10 % below what the backend accepted between its last two refusals (at most 60 % of the pace of the moment); after a refusal without a hint, 5 % below the rate the backend accepted (grossed up by the share it refuses whatever the pace); after a window that taught nothing, the slow start's first pace; 0 while the destination is unlimited. [Alpha]",
		Unit:        "{item}/s",
		Data: metricdata.Gauge[float64]{
			DataPoints: dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_pacing_ceiling")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryPacingRate(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_pacing_rate",
		Description: "The pace requests to the destination leave at now, in items per second: the ceiling at a cut, then growing (after a refusal without a hint, back to the rate the backend accepted within a few seconds, then past it); while a fixed window seen on the clock is scheduled, its take per window; 0 while the destination is unlimited. [Alpha]",
		Unit:        "{item}/s",
		Data: metricdata.Gauge[float64]{
			DataPoints: dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_pacing_rate")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryPacingWaitSeconds(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.HistogramDataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_pacing_wait_seconds",
		Description: "Waits the pacer imposed on a request before it left, by why. [Alpha]",
		Unit:        "s",
		Data: metricdata.Histogram[float64]{
			Temporality: metricdata.CumulativeTemporality,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_pacing_wait_seconds")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryRatelimitRejected(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_ratelimit_rejected",
		Description: "RateLimit header values the exporter ignored, by reason. [Alpha]",
		Unit:        "{value}",
		Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality,
			IsMonotonic: true,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_ratelimit_rejected")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryRatelimitRemaining(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_ratelimit_remaining",
		Description: "The remaining quota in the destination's last RateLimit header, in the quota's own unit; not reported until a RateLimit header was seen. [Alpha]",
		Unit:        "1",
		Data: metricdata.Gauge[int64]{
			DataPoints: dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_ratelimit_remaining")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryRetries(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_retries",
		Description: "Number of retries scheduled, by path and reason. [Alpha]",
		Unit:        "{retry}",
		Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality,
			IsMonotonic: true,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_retries")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryRetryAfterParseDurationSeconds(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.HistogramDataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_retry_after_parse_duration_seconds",
		Description: "Time spent parsing one Retry-After header. Only recorded when the exporter's telemetry::detailed is true. [Development]",
		Unit:        "s",
		Data: metricdata.Histogram[float64]{
			Temporality: metricdata.CumulativeTemporality,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_retry_after_parse_duration_seconds")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryRetryAfterParsed(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_retry_after_parsed",
		Description: "Retry-After headers examined on retryable responses, by parse result. [Alpha]",
		Unit:        "{header}",
		Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality,
			IsMonotonic: true,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_retry_after_parsed")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryRetryAfterWaitSeconds(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.HistogramDataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_retry_after_wait_seconds",
		Description: "Retry-After waits actually applied, by where the value came from. [Alpha]",
		Unit:        "s",
		Data: metricdata.Histogram[float64]{
			Temporality: metricdata.CumulativeTemporality,
			DataPoints:  dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_retry_after_wait_seconds")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryThrottleRemainingSeconds(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[float64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_throttle_remaining_seconds",
		Description: "Seconds until the destination's gate lets the next request (the probe) through, whatever it holds for; 0 when it is open. [Alpha]",
		Unit:        "s",
		Data: metricdata.Gauge[float64]{
			DataPoints: dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_throttle_remaining_seconds")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryThrottled(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_throttled",
		Description: "1 while the exporter's destination is held because the backend asked to wait (Retry-After, 429), 0 otherwise. [Alpha]",
		Unit:        "1",
		Data: metricdata.Gauge[int64]{
			DataPoints: dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_throttled")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}

func AssertEqualOtlpHTTPRetryWaitingPayloads(t *testing.T, tt *componenttest.Telemetry, dps []metricdata.DataPoint[int64], opts ...metricdatatest.Option) {
	want := metricdata.Metrics{
		Name:        "otelcol_otlp_http_retry_waiting_payloads",
		Description: "Payloads waiting for a retry right now (at the destination's gate while it holds, or in a backoff wait). [Alpha]",
		Unit:        "{payload}",
		Data: metricdata.Gauge[int64]{
			DataPoints: dps,
		},
	}
	got, err := tt.GetMetric("otelcol_otlp_http_retry_waiting_payloads")
	require.NoError(t, err)
	metricdatatest.AssertEqual(t, want, got, opts...)
}
