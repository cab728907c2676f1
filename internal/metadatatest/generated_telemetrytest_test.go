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
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
)

func TestSetupTelemetry(t *testing.T) {
	testTel := componenttest.NewTelemetry()
	tb, err := metadata.NewTelemetryBuilder(testTel.NewTelemetrySettings())
	require.NoError(t, err)
	defer tb.Shutdown()
	require.NoError(t, tb.RegisterOtlpHTTPRetryHeldCallback(func(_ context.Context, observer metric.Int64Observer) error {
		observer.Observe(1)
		return nil
	}))
	require.NoError(t, tb.RegisterOtlpHTTPRetryPacingCeilingCallback(func(_ context.Context, observer metric.Float64Observer) error {
		observer.Observe(1)
		return nil
	}))
	require.NoError(t, tb.RegisterOtlpHTTPRetryPacingRateCallback(func(_ context.Context, observer metric.Float64Observer) error {
		observer.Observe(1)
		return nil
	}))
	require.NoError(t, tb.RegisterOtlpHTTPRetryRatelimitRemainingCallback(func(_ context.Context, observer metric.Int64Observer) error {
		observer.Observe(1)
		return nil
	}))
	require.NoError(t, tb.RegisterOtlpHTTPRetryThrottleRemainingSecondsCallback(func(_ context.Context, observer metric.Float64Observer) error {
		observer.Observe(1)
		return nil
	}))
	require.NoError(t, tb.RegisterOtlpHTTPRetryThrottledCallback(func(_ context.Context, observer metric.Int64Observer) error {
		observer.Observe(1)
		return nil
	}))
	require.NoError(t, tb.RegisterOtlpHTTPRetryWaitingPayloadsCallback(func(_ context.Context, observer metric.Int64Observer) error {
		observer.Observe(1)
		return nil
	}))
	tb.OtlpHTTPRetryAttemptDurationSeconds.Record(context.Background(), 1)
	tb.OtlpHTTPRetryAttempts.Add(context.Background(), 1)
	tb.OtlpHTTPRetryDroppedItems.Add(context.Background(), 1)
	tb.OtlpHTTPRetryExportDurationSeconds.Record(context.Background(), 1)
	tb.OtlpHTTPRetryExportLatencySeconds.Record(context.Background(), 1)
	tb.OtlpHTTPRetryPacingWaitSeconds.Record(context.Background(), 1)
	tb.OtlpHTTPRetryRatelimitRejected.Add(context.Background(), 1)
	tb.OtlpHTTPRetryRetries.Add(context.Background(), 1)
	tb.OtlpHTTPRetryRetryAfterParseDurationSeconds.Record(context.Background(), 1)
	tb.OtlpHTTPRetryRetryAfterParsed.Add(context.Background(), 1)
	tb.OtlpHTTPRetryRetryAfterWaitSeconds.Record(context.Background(), 1)
	AssertEqualOtlpHTTPRetryAttemptDurationSeconds(t, testTel,
		[]metricdata.HistogramDataPoint[float64]{{}}, metricdatatest.IgnoreValue(),
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryAttempts(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryDroppedItems(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryExportDurationSeconds(t, testTel,
		[]metricdata.HistogramDataPoint[float64]{{}}, metricdatatest.IgnoreValue(),
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryExportLatencySeconds(t, testTel,
		[]metricdata.HistogramDataPoint[float64]{{}}, metricdatatest.IgnoreValue(),
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryHeld(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryPacingCeiling(t, testTel,
		[]metricdata.DataPoint[float64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryPacingRate(t, testTel,
		[]metricdata.DataPoint[float64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryPacingWaitSeconds(t, testTel,
		[]metricdata.HistogramDataPoint[float64]{{}}, metricdatatest.IgnoreValue(),
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryRatelimitRejected(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryRatelimitRemaining(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryRetries(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryRetryAfterParseDurationSeconds(t, testTel,
		[]metricdata.HistogramDataPoint[float64]{{}}, metricdatatest.IgnoreValue(),
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryRetryAfterParsed(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryRetryAfterWaitSeconds(t, testTel,
		[]metricdata.HistogramDataPoint[float64]{{}}, metricdatatest.IgnoreValue(),
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryThrottleRemainingSeconds(t, testTel,
		[]metricdata.DataPoint[float64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryThrottled(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
	AssertEqualOtlpHTTPRetryWaitingPayloads(t, testTel,
		[]metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())

	require.NoError(t, testTel.Shutdown(context.Background()))
}
