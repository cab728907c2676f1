// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap/zapcore"

	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// Metric names, as the collector exposes them.
const (
	mAttempts        = "otelcol_otlp_http_retry_attempts"
	mRetries         = "otelcol_otlp_http_retry_retries"
	mAttemptDuration = "otelcol_otlp_http_retry_attempt_duration_seconds"
	mExportDuration  = "otelcol_otlp_http_retry_export_duration_seconds"
	mExportLatency   = "otelcol_otlp_http_retry_export_latency_seconds"
	mWait            = "otelcol_otlp_http_retry_retry_after_wait_seconds"
	mParsed          = "otelcol_otlp_http_retry_retry_after_parsed"
	mParseDuration   = "otelcol_otlp_http_retry_retry_after_parse_duration_seconds"
	mDropped         = "otelcol_otlp_http_retry_dropped_items"
	mThrottled       = "otelcol_otlp_http_retry_throttled"
	mRemaining       = "otelcol_otlp_http_retry_throttle_remaining_seconds"
	mWaiting         = "otelcol_otlp_http_retry_waiting_payloads"
)

// Bucket boundaries from metadata.yaml.
var (
	attemptBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	exportBounds  = []float64{0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
	waitBounds    = []float64{0, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}
	parseBounds   = []float64{0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.001}
)

// telHarness is the harness of startTraces, with metric helpers.
type telHarness struct {
	*harness
}

// startTracesWithID is startTraces with the metric helpers below.
func startTracesWithID(t *testing.T, cfg *Config, clock *retrytest.Clock) *telHarness {
	t.Helper()
	return &telHarness{harness: startTraces(t, cfg, clock)}
}

// attrs is the exporter's identity plus kv.
func (h *telHarness) attrs(kv ...attribute.KeyValue) attribute.Set {
	return attribute.NewSet(append([]attribute.KeyValue{
		attribute.String("exporter", h.id), attribute.String("data_type", "traces"),
	}, kv...)...)
}

func (h *telHarness) sum(v int64, kv ...attribute.KeyValue) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Attributes: h.attrs(kv...), Value: v}
}

func (h *telHarness) gaugeF(v float64) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Attributes: h.attrs(), Value: v}
}

// hist is the data point a histogram with bounds holds after recording values.
func (h *telHarness) hist(bounds []float64, values []float64, kv ...attribute.KeyValue) metricdata.HistogramDataPoint[float64] {
	dp := metricdata.HistogramDataPoint[float64]{
		Attributes:   h.attrs(kv...),
		Count:        uint64(len(values)),
		Bounds:       bounds,
		BucketCounts: make([]uint64, len(bounds)+1),
	}
	for i, v := range values {
		dp.Sum += v
		dp.BucketCounts[sort.SearchFloat64s(bounds, v)]++ // upper-inclusive buckets, as the SDK counts
		if i == 0 || v < extremum(dp.Min) {
			dp.Min = metricdata.NewExtrema(v)
		}
		if i == 0 || v > extremum(dp.Max) {
			dp.Max = metricdata.NewExtrema(v)
		}
	}
	return dp
}

func extremum(e metricdata.Extrema[float64]) float64 {
	v, _ := e.Value()
	return v
}

// repeatSecs repeats the value v n times.
func repeatSecs(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// telOpts ignores what the fake clock does not control: the SDK's
// timestamps, and the exemplars it attaches from the payload's span.
var telOpts = []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}

// requireNoMetric asserts that nothing was recorded under name.
func requireNoMetric(t *testing.T, h *telHarness, name string) {
	t.Helper()
	m, err := h.tel.GetMetric(name)
	assert.Error(t, err, "%s should have no data, got %+v", name, m.Data)
}

// allOwnMetrics returns every otlp_http_retry metric collected now.
func allOwnMetrics(t *testing.T, h *telHarness) []metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.tel.Reader.Collect(context.Background(), &rm))
	var out []metricdata.Metrics
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if strings.HasPrefix(m.Name, "otelcol_otlp_http_retry_") {
				out = append(out, m)
			}
		}
	}
	return out
}

// assertIdentityOnEveryPoint checks that every data point of every metric of
// the exporter carries exporter=<component ID> and data_type=traces.
func assertIdentityOnEveryPoint(t *testing.T, h *telHarness) {
	t.Helper()
	check := func(name string, set attribute.Set) {
		exp, ok := set.Value("exporter")
		assert.True(t, ok, "%s: no exporter attribute in %v", name, set.ToSlice())
		assert.Equal(t, h.id, exp.AsString(), "%s: exporter attribute", name)
		dt, ok := set.Value("data_type")
		assert.True(t, ok, "%s: no data_type attribute in %v", name, set.ToSlice())
		assert.Equal(t, "traces", dt.AsString(), "%s: data_type attribute", name)
	}
	ms := allOwnMetrics(t, h)
	require.NotEmpty(t, ms)
	for _, m := range ms {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, dp := range d.DataPoints {
				check(m.Name, dp.Attributes)
			}
		case metricdata.Gauge[int64]:
			for _, dp := range d.DataPoints {
				check(m.Name, dp.Attributes)
			}
		case metricdata.Gauge[float64]:
			for _, dp := range d.DataPoints {
				check(m.Name, dp.Attributes)
			}
		case metricdata.Histogram[float64]:
			for _, dp := range d.DataPoints {
				check(m.Name, dp.Attributes)
			}
		default:
			t.Errorf("%s: unexpected data type %T", m.Name, m.Data)
		}
	}
}

// assertGauges checks the three async gauges.
// assertHeld checks the held gauge: 1 for reason, 0 for the others (all 0
// for "").
func assertHeld(t *testing.T, h *telHarness, reason string) {
	t.Helper()
	var dps []metricdata.DataPoint[int64]
	for _, r := range []string{"throttle", "outage", "unauthorized"} {
		var v int64
		if r == reason {
			v = 1
		}
		dps = append(dps, h.sum(v, attrReason(r)))
	}
	metadatatest.AssertEqualOtlpHTTPRetryHeld(t, h.tel, dps, telOpts...)
}

func assertGauges(t *testing.T, h *telHarness, throttled int64, remaining float64, waiting int64) {
	t.Helper()
	metadatatest.AssertEqualOtlpHTTPRetryThrottled(t, h.tel, []metricdata.DataPoint[int64]{h.sum(throttled)}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryThrottleRemainingSeconds(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(remaining)}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryWaitingPayloads(t, h.tel, []metricdata.DataPoint[int64]{h.sum(waiting)}, telOpts...)
}

func attrOutcome(o string) attribute.KeyValue { return attribute.String("outcome", o) }
func attrStatus(c string) attribute.KeyValue  { return attribute.String("status_code", c) }
func attrFinal(o string) attribute.KeyValue   { return attribute.String("final_outcome", o) }
func attrReason(r string) attribute.KeyValue  { return attribute.String("reason", r) }
func attrPath(p string) attribute.KeyValue    { return attribute.String("path", p) }
func attrSource(s string) attribute.KeyValue  { return attribute.String("source", s) }
func attrResult(r string) attribute.KeyValue  { return attribute.String("result", r) }

// consume sends a batch of n spans and returns what ConsumeTraces returned.
func (h *telHarness) consume(n int) error {
	return h.exp.ConsumeTraces(context.Background(), spans("telemetry", n))
}

// assertExport checks export duration and latency (equal without a queue
// when the fake clock does not move between entry and first attempt).
func assertExport(t *testing.T, h *telHarness, finalOutcome string, seconds ...float64) {
	t.Helper()
	dps := []metricdata.HistogramDataPoint[float64]{h.hist(exportBounds, seconds, attrFinal(finalOutcome))}
	metadatatest.AssertEqualOtlpHTTPRetryExportDurationSeconds(t, h.tel, dps, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryExportLatencySeconds(t, h.tel, dps, telOpts...)
}

// waitExports waits until n exports have ended with their figures recorded:
// the latency histogram is the last of the two an ending records (its export
// duration first), so a test that waited on the duration alone could read the
// latency one short.
func waitExports(t *testing.T, h *telHarness, n uint64, msgAndArgs ...any) {
	t.Helper()
	require.Eventually(t, func() bool {
		m, err := h.tel.GetMetric(mExportLatency)
		if err != nil {
			return false
		}
		var count uint64
		for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			count += dp.Count
		}
		return count == n
	}, 10*time.Second, time.Millisecond, msgAndArgs...)
}

func TestTelemetryExporterAttributeIsTheComponentID(t *testing.T) {
	srv := newBackend(t)
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	m, err := h.tel.GetMetric(mAttempts)
	require.NoError(t, err)
	dps := m.Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, dps, 1)
	exp, ok := dps[0].Attributes.Value("exporter")
	require.True(t, ok)
	// exportertest.NewNopSettings names the component otlp_http_retry/<uuid>.
	assert.Regexp(t, regexp.MustCompile(`^otlp_http_retry/[0-9a-f-]{36}$`), exp.AsString())
}

func TestTelemetrySuccessFirstTry(t *testing.T) {
	srv := newBackend(t, reply(200))
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.consume(3))

	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrOutcome("success"), attrStatus("200")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryAttemptDurationSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
		h.hist(attemptBounds, []float64{0}, attrOutcome("success")),
	}, telOpts...)
	assertExport(t, h, "success", 0)
	requireNoMetric(t, h, mRetries)
	requireNoMetric(t, h, mDropped)
	requireNoMetric(t, h, mParsed)
	requireNoMetric(t, h, mWait)
	requireNoMetric(t, h, mParseDuration)
	assertGauges(t, h, 0, 0, 0)
	assertIdentityOnEveryPoint(t, h)
	assert.Empty(t, h.host.statuses(), "a first success reports no status change")
}

func TestTelemetryRateLimitRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string // name, value
		parsed string
		source string
		wait   float64
	}{
		{name: "seconds", header: []string{"Retry-After", "7"}, parsed: "seconds", source: "header", wait: 7},
		// The date is read against the answer's Date header (the server's
		// clock), here the fake clock's start.
		{name: "date", header: []string{"Retry-After", start.Add(10 * time.Second).Format(http.TimeFormat), "Date", start.Format(http.TimeFormat)}, parsed: "date", source: "header", wait: 10},
		// Without a usable Retry-After, to the destination's first request
		// (nothing known of it yet): the pacer's first hold, 1 s
		// (TestTelemetryBare429WaitsTheDefaultAfterTheFirst has the
		// default).
		{name: "missing", parsed: "missing", source: "first", wait: 1},
		{name: "invalid", header: []string{"Retry-After", "soon"}, parsed: "invalid", source: "first", wait: 1},
		{name: "negative", header: []string{"Retry-After", "-3"}, parsed: "negative", source: "first", wait: 1},
		{name: "capped", header: []string{"Retry-After", "100000"}, parsed: "capped", source: "capped", wait: 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t, reply(429, tc.header...), reply(200))
			h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
			require.NoError(t, h.consume(2))
			require.Len(t, srv.got(), 2)
			assert.Equal(t, []time.Duration{time.Duration(tc.wait) * time.Second}, h.clock.Waits())

			metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
				h.sum(1, attrOutcome("throttled"), attrStatus("429")),
				h.sum(1, attrOutcome("success"), attrStatus("200")),
			}, telOpts...)
			metadatatest.AssertEqualOtlpHTTPRetryAttemptDurationSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
				h.hist(attemptBounds, []float64{0}, attrOutcome("throttled")),
				h.hist(attemptBounds, []float64{0}, attrOutcome("success")),
			}, telOpts...)
			metadatatest.AssertEqualOtlpHTTPRetryRetries(t, h.tel, []metricdata.DataPoint[int64]{
				h.sum(1, attrPath("rate_limit"), attrReason("429")),
			}, telOpts...)
			metadatatest.AssertEqualOtlpHTTPRetryRetryAfterParsed(t, h.tel, []metricdata.DataPoint[int64]{
				h.sum(1, attrResult(tc.parsed)),
			}, telOpts...)
			metadatatest.AssertEqualOtlpHTTPRetryRetryAfterWaitSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
				h.hist(waitBounds, []float64{tc.wait}, attrSource(tc.source)),
			}, telOpts...)
			assertExport(t, h, "success", tc.wait)
			requireNoMetric(t, h, mDropped)
			requireNoMetric(t, h, mParseDuration)
			assertGauges(t, h, 0, 0, 0)
			assertIdentityOnEveryPoint(t, h)
		})
	}
}

// TestTelemetryBare429WaitsTheDefaultAfterTheFirst: a 429 without
// Retry-After to the destination's first request holds it 1 s (source
// first); refused again, the probe holds it for the rest of
// retry_after::default (source default), then each further one for the
// default.
func TestTelemetryBare429WaitsTheDefaultAfterTheFirst(t *testing.T) {
	srv := newBackend(t, reply(429), reply(429), reply(429), reply(200))
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.consume(2))
	require.Len(t, srv.got(), 4)
	assert.Equal(t, []time.Duration{time.Second, 4 * time.Second, 5 * time.Second}, h.clock.Waits())
	metadatatest.AssertEqualOtlpHTTPRetryRetryAfterWaitSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
		h.hist(waitBounds, []float64{1}, attrSource("first")),
		h.hist(waitBounds, []float64{4, 5}, attrSource("default")),
	}, telOpts...)
	assertExport(t, h, "success", 10)
}

func TestTelemetryOutageThenSuccess(t *testing.T) {
	srv := newBackend(t, reply(503), reply(200))
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.consume(1))
	assert.Equal(t, []time.Duration{time.Second}, h.clock.Waits())

	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrOutcome("retryable"), attrStatus("503")),
		h.sum(1, attrOutcome("success"), attrStatus("200")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryRetries(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrPath("outage"), attrReason("503")),
	}, telOpts...)
	// a 503 without Retry-After is examined, and found missing
	metadatatest.AssertEqualOtlpHTTPRetryRetryAfterParsed(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrResult("missing")),
	}, telOpts...)
	requireNoMetric(t, h, mWait)
	requireNoMetric(t, h, mDropped)
	assertExport(t, h, "success", 1)
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryOutageExhausted(t *testing.T) {
	srv := newBackend(t, reply(503))
	cfg := testConfig(srv.URL)
	cfg.Outage.MaxDuration = 10 * time.Second
	h := startTracesWithID(t, cfg, retrytest.NewAutoClock(start))
	require.Error(t, h.consume(4))
	require.Len(t, srv.got(), 4, "attempts at 0, 1, 3 and 7 s; the 10 s bound comes before the next probe")

	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(4, attrOutcome("retryable"), attrStatus("503")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryAttemptDurationSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
		h.hist(attemptBounds, repeatSecs(0, 4), attrOutcome("retryable")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryRetries(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(4, attrPath("outage"), attrReason("503")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(4, attrReason("outage_exhausted")),
	}, telOpts...)
	assertExport(t, h, "dropped", 10)
	requireNoMetric(t, h, mWait)
	assert.Equal(t, []string{"StatusRecoverableError", "StatusRecoverableError"}, h.host.statuses(), "the outage when it began, the drop when the bound passed")
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryThrottleBudgetExhausted(t *testing.T) {
	// Every answer is 429 Retry-After 300; the budget allows 900 s: requests
	// at 0, 300, 600 and 900 s, and the fourth 429 ends the payload.
	srv := newBackend(t, reply(429, "Retry-After", "300"))
	cfg := testConfig(srv.URL)
	cfg.RetryAfter.MaxElapsed = 900 * time.Second
	h := startTracesWithID(t, cfg, retrytest.NewAutoClock(start))
	require.Error(t, h.consume(2))
	require.Len(t, srv.got(), 4)

	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(4, attrOutcome("throttled"), attrStatus("429")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryRetryAfterParsed(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(4, attrResult("seconds")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(2, attrReason("throttle_budget_exhausted")),
	}, telOpts...)
	assertExport(t, h, "dropped", 900)
	assert.Equal(t, []string{"StatusRecoverableError"}, h.host.statuses())
	// Only three retries were scheduled and three waits applied: the fourth
	// 429 dropped the payload, nothing waited after it.
	metadatatest.AssertEqualOtlpHTTPRetryRetries(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(3, attrPath("rate_limit"), attrReason("429")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryRetryAfterWaitSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
		h.hist(waitBounds, repeatSecs(300, 3), attrSource("header")),
	}, telOpts...)
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryPermanentStatus(t *testing.T) {
	srv := newBackend(t, reply(400))
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.Error(t, h.consume(2))

	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrOutcome("permanent"), attrStatus("400")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(2, attrReason("permanent_status")),
	}, telOpts...)
	assertExport(t, h, "dropped", 0)
	requireNoMetric(t, h, mRetries)
	requireNoMetric(t, h, mParsed)
	requireNoMetric(t, h, mWait)
	assert.Empty(t, h.host.statuses(), "a permanent status is the batch's fault, not the exporter's health")
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryUnauthorizedHold(t *testing.T) {
	srv := newBackend(t, reply(401), reply(401), reply(200))
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	for _, n := range []int{1, 2, 3} {
		require.NoError(t, h.consume(n))
	}
	require.Len(t, srv.got(), 5, "the first request, one probe a minute until accepted, then one per batch")

	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(2, attrOutcome("unauthorized"), attrStatus("401")),
		h.sum(3, attrOutcome("success"), attrStatus("200")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryRetries(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(2, attrPath("unauthorized"), attrReason("401")),
	}, telOpts...)
	requireNoMetric(t, h, mDropped)
	requireNoMetric(t, h, mParsed)
	assertExport(t, h, "success", 120, 0, 0)
	assertHeld(t, h, "")
	assert.Equal(t, []string{"StatusRecoverableError", "StatusOK"}, h.host.statuses())
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryPartialSuccess(t *testing.T) {
	resp := ptraceotlp.NewExportResponse()
	resp.PartialSuccess().SetRejectedSpans(2)
	resp.PartialSuccess().SetErrorMessage("2 spans are too old")
	body, err := resp.MarshalProto()
	require.NoError(t, err)
	srv := newBackend(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(200)
		_, _ = w.Write(body)
	})
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.consume(5))

	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrOutcome("success"), attrStatus("200")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(2, attrReason("partial_success")),
	}, telOpts...)
	assertExport(t, h, "success", 0)
	requireNoMetric(t, h, mRetries)

	lines := h.logs.FilterMessageSnippet("Partial success").All()
	require.Len(t, lines, 1)
	assert.Equal(t, zapcore.WarnLevel, lines[0].Level)
	fields := lines[0].ContextMap()
	assert.Equal(t, int64(2), fields["rejected_items"])
	assert.Equal(t, "2 spans are too old", fields["message"])
	key := srv.got()[0].Header.Get("Idempotency-Key")
	assert.Equal(t, maskedKeyOf(t, key), fields["key"])
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryShutdownDuringWait(t *testing.T) {
	srv := newBackend(t, reply(429, "Retry-After", "300"))
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, 10)
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, cfg, clock)

	require.NoError(t, h.consume(3))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the payload is waiting out its Retry-After")

	// while waiting
	assertGauges(t, h, 1, 300, 1)
	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrOutcome("throttled"), attrStatus("429")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryRetryAfterWaitSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
		h.hist(waitBounds, []float64{300}, attrSource("header")),
	}, telOpts...)
	requireNoMetric(t, h, mExportDuration)
	requireNoMetric(t, h, mDropped)

	require.NoError(t, h.exp.Shutdown(context.Background()))

	assertExport(t, h, "interrupted", 0)
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(3, attrReason("shutdown")),
	}, telOpts...)
	assert.Len(t, srv.got(), 1)
	lost := h.logs.FilterMessageSnippet("lost with the memory queue").All()
	require.Len(t, lost, 1, "one line for everything lost at shutdown, not one per payload")
	assert.Equal(t, zapcore.WarnLevel, lost[0].Level)
	assert.Equal(t, int64(1), lost[0].ContextMap()["payloads"])
	assert.Equal(t, int64(3), lost[0].ContextMap()["items"])
	assert.Contains(t, lost[0].Message, "file_storage", "the line says how to keep them")
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryDetailedParseDuration(t *testing.T) {
	for _, detailed := range []bool{true, false} {
		t.Run(map[bool]string{true: "detailed", false: "normal"}[detailed], func(t *testing.T) {
			srv := newBackend(t, reply(429, "Retry-After", "1"), reply(503), reply(200))
			cfg := testConfig(srv.URL)
			cfg.Telemetry.Detailed = detailed
			h := startTracesWithID(t, cfg, retrytest.NewAutoClock(start))
			require.NoError(t, h.consume(1))
			metadatatest.AssertEqualOtlpHTTPRetryRetryAfterParsed(t, h.tel, []metricdata.DataPoint[int64]{
				h.sum(1, attrResult("seconds")), h.sum(1, attrResult("missing")),
			}, telOpts...)
			if !detailed {
				requireNoMetric(t, h, mParseDuration)
				return
			}
			// One sample per examined header, with the exporter's identity
			// and nothing else; the fake clock does not move while parsing,
			// so the recorded time is exactly 0.
			metadatatest.AssertEqualOtlpHTTPRetryRetryAfterParseDurationSeconds(t, h.tel, []metricdata.HistogramDataPoint[float64]{
				h.hist(parseBounds, []float64{0, 0}),
			}, telOpts...)
			assertIdentityOnEveryPoint(t, h)
		})
	}
}

func TestGaugesFollowTheWindowAndBackoff(t *testing.T) {
	srv := newBackend(t, reply(429, "Retry-After", "30"), reply(503), reply(200))
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, testConfig(srv.URL), clock)
	assertGauges(t, h, 0, 0, 0)

	done := make(chan error, 1)
	go func() { done <- h.consume(1) }()

	require.True(t, clock.WaitForTimers(1, 10*time.Second), "waiting at the holding gate")
	assertGauges(t, h, 1, 30, 1)
	assertHeld(t, h, "throttle")
	clock.Advance(10 * time.Second)
	assertGauges(t, h, 1, 20, 1)

	// The window ends; the probe gets a 503 without Retry-After: nothing
	// has succeeded, so the destination is down, and the gate holds for an
	// outage, 1 s until the next probe.
	clock.Advance(20 * time.Second)
	require.Eventually(t, func() bool { return len(srv.got()) == 2 && clock.Pending() == 1 }, 10*time.Second, time.Millisecond)
	assertGauges(t, h, 0, 1, 1)
	assertHeld(t, h, "outage")

	clock.Advance(time.Second)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the export did not finish")
	}
	assertGauges(t, h, 0, 0, 0)
	assertHeld(t, h, "")
	assertExport(t, h, "success", 31)
	assertIdentityOnEveryPoint(t, h)
}

func TestGaugesAfterTheWindowEnds(t *testing.T) {
	srv := newBackend(t, reply(429, "Retry-After", "300"), reply(200))
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, 10)
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, cfg, clock)

	require.NoError(t, h.consume(1))
	require.True(t, clock.WaitForTimers(1, 10*time.Second))
	assertGauges(t, h, 1, 300, 1)

	clock.Advance(301 * time.Second)
	waitExports(t, h, 1, "the probe after the window succeeds")
	assertGauges(t, h, 0, 0, 0)
	// the probe went out at 301 s, when the clock was advanced
	assertExport(t, h, "success", 301)
	require.Len(t, srv.got(), 2)
	assertIdentityOnEveryPoint(t, h)
}

func TestTelemetryAttemptCancelledByCallerIsCounted(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := newBackend(t, func(w http.ResponseWriter) {
		once.Do(func() { close(arrived) })
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.WriteHeader(http.StatusOK)
	})
	t.Cleanup(func() { close(release) })
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.exp.ConsumeTraces(ctx, spans("a", 1)) }()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the backend")
	}
	cancel()
	require.Error(t, <-done)

	assertExport(t, h, "interrupted", 0)
	requireNoMetric(t, h, mDropped)
	// The request went out: "Number of HTTP attempts made" counts it, with
	// no status code since no response arrived.
	m, err := h.tel.GetMetric(mAttempts)
	require.NoError(t, err, "an attempt that was sent and then cancelled is not counted")
	dps := m.Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, dps, 1)
	assert.Equal(t, int64(1), dps[0].Value)
	sc, _ := dps[0].Attributes.Value("status_code")
	assert.Equal(t, "none", sc.AsString())
}

// TestTelemetryPacingGauges: the ceiling the pacer learned at a refusal and
// the pace of the moment are exported, with the exporter's attributes; both
// are 0 while the destination is unlimited.
func TestTelemetryPacingGauges(t *testing.T) {
	h, clock := tenThenRefused(t, reply(http.StatusTooManyRequests, "Retry-After", "1"), 0)
	metadatatest.AssertEqualOtlpHTTPRetryPacingCeiling(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(0)}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryPacingRate(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(0)}, telOpts...)

	done := make(chan error, 1)
	go func() { done <- h.consume(3) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the refused payload waits out its Retry-After")
	// 30 spans accepted, over at least a second: 30 a second; the pace
	// starts again at it.
	metadatatest.AssertEqualOtlpHTTPRetryPacingCeiling(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(30)}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryPacingRate(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(30)}, telOpts...)
	clock.Advance(time.Second)
	require.NoError(t, <-done)
	// A second later the pace has grown by 0.15 of a request (of 3 spans)
	// a second, and by 0.5 % of the ceiling; the ceiling stays.
	ceiling, seconds := 30.0, 1.0
	metadatatest.AssertEqualOtlpHTTPRetryPacingCeiling(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(30)}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryPacingRate(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(ceiling*(1+0.005*seconds*seconds) + 0.15*3*seconds)}, telOpts...)
}

// TestTelemetryPacingGaugesAfterABare429: a 429 without Retry-After after
// requests were accepted sets the pace 5 % below the rate requests went
// at, and the pace climbs back towards the rate the backend accepted.
func TestTelemetryPacingGaugesAfterABare429(t *testing.T) {
	h, clock := tenThenRefused(t, reply(http.StatusTooManyRequests), 100*time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- h.consume(3) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the refused payload waits for its paced slot")
	// 11 requests of 3 spans went in the second since the first was
	// accepted: 33 spans a second; 5 % below (computed as the pacer does,
	// in float64).
	below, sent := 1-0.05, 33.0
	metadatatest.AssertEqualOtlpHTTPRetryPacingCeiling(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(below * sent)}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryPacingRate(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(below * sent)}, telOpts...)
	clock.Advance(time.Second)
	require.NoError(t, <-done)
	metadatatest.AssertEqualOtlpHTTPRetryPacingCeiling(t, h.tel, []metricdata.DataPoint[float64]{h.gaugeF(below * sent)}, telOpts...)
}
