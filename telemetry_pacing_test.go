// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// pacingWaitBounds are otlp_http_retry_pacing_wait_seconds' buckets in
// metadata.yaml.
var pacingWaitBounds = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}

// The RateLimit metrics' names.
const (
	mRatelimitRemaining = "otelcol_otlp_http_retry_ratelimit_remaining"
	mRatelimitRejected  = "otelcol_otlp_http_retry_ratelimit_rejected"
)

// TestTelemetryRateLimitRemaining: the remaining quota of the last
// RateLimit header is exported, with the exporter's attributes only; there
// is no data point before a RateLimit header was seen.
func TestTelemetryRateLimitRemaining(t *testing.T) {
	srv := newBackend(t, reply(http.StatusOK, "RateLimit-Policy", `"default";q=100;w=10`, "RateLimit", `"default";r=42;t=10`))
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	_, err := h.tel.GetMetric(mRatelimitRemaining)
	require.Error(t, err, "not reported until a RateLimit header was seen")
	require.NoError(t, h.consume(1))
	metadatatest.AssertEqualOtlpHTTPRetryRatelimitRemaining(t, h.tel, []metricdata.DataPoint[int64]{{Attributes: h.attrs(), Value: 42}}, telOpts...)
}

// TestTelemetryRateLimitRejected: a RateLimit value the exporter ignores is
// counted once per value, by its reason, under the attribute `reason`.
func TestTelemetryRateLimitRejected(t *testing.T) {
	for _, tt := range []struct{ reason, header string }{
		{"malformed", `"default";r=lots;t=10`},
		{"negative", `"default";r=-5;t=10`},
		{"huge", `"default";r=9999999999999999;t=10`},
		{"excess", `"default";r=5;t=10, ` + strings.Repeat(`"other";r=5;t=10, `, 300) + `"last";r=5;t=10`},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			srv := newBackend(t, reply(http.StatusOK, "RateLimit-Policy", `"default";q=100;w=10`, "RateLimit", tt.header))
			h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
			require.NoError(t, h.consume(1))
			metadatatest.AssertEqualOtlpHTTPRetryRatelimitRejected(t, h.tel,
				[]metricdata.DataPoint[int64]{h.sum(1, attribute.String("reason", tt.reason))}, telOpts...)
		})
	}
}

// TestTelemetryPacingWaitByQuota: a RateLimit header saying the quota is
// spent until a reset 5 s away holds the next request back until then, and
// the wait is recorded as pacer="ratelimit".
func TestTelemetryPacingWaitByQuota(t *testing.T) {
	spent := reply(http.StatusOK, "RateLimit-Policy", `"default";q=10;w=5`, "RateLimit", `"default";r=0;t=5`)
	fresh := reply(http.StatusOK, "RateLimit-Policy", `"default";q=10;w=5`, "RateLimit", `"default";r=9;t=5`)
	srv := newBackend(t, spent, fresh)
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, testConfig(srv.URL), clock)
	require.NoError(t, h.consume(1))

	done := make(chan error, 1)
	go func() { done <- h.consume(1) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the second request waits for the quota's reset")
	assert.Len(t, srv.got(), 1, "nothing left before the reset")
	clock.Advance(5 * time.Second)
	require.NoError(t, <-done)
	require.Len(t, srv.got(), 2)
	metadatatest.AssertEqualOtlpHTTPRetryPacingWaitSeconds(t, h.tel,
		[]metricdata.HistogramDataPoint[float64]{h.hist(pacingWaitBounds, []float64{5}, attribute.String("pacer", "ratelimit"))}, telOpts...)
}

// TestTelemetryPacingWaitByRate: after a refusal the pacer sends at the
// rate it learned; a request booked behind another waits for its slot,
// recorded as pacer="rate".
func TestTelemetryPacingWaitByRate(t *testing.T) {
	h, clock := tenThenRefused(t, reply(http.StatusTooManyRequests, "Retry-After", "1"), 0)
	// The 11th is refused: the ceiling is the 30 spans accepted over the
	// first second, 30 items/s; the payload waits out its Retry-After.
	done := make(chan error, 1)
	go func() { done <- h.consume(3) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the refused payload waits out its Retry-After")
	clock.Advance(time.Second)
	require.NoError(t, <-done)

	// The next 3 spans may leave only 3 ÷ pace seconds after the last.
	go func() { done <- h.consume(3) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the next request waits for its paced slot")
	waited := clock.Waits()[len(clock.Waits())-1]
	assert.Greater(t, waited, time.Duration(0))
	assert.LessOrEqual(t, waited, 100*time.Millisecond, "3 items at no less than 30 items/s")
	clock.Advance(waited)
	require.NoError(t, <-done)
	metadatatest.AssertEqualOtlpHTTPRetryPacingWaitSeconds(t, h.tel,
		[]metricdata.HistogramDataPoint[float64]{h.hist(pacingWaitBounds, []float64{waited.Seconds()}, attribute.String("pacer", "rate"))}, telOpts...)
}

// TestTelemetryRateLimitContradicted: RateLimit headers that say the quota
// is spent until a reset a day away hold the next request back
// QuotaHoldBound at most; it then goes alone, and when the backend accepts
// it the headers are set aside, counted once as reason="contradicted".
func TestTelemetryRateLimitContradicted(t *testing.T) {
	spent := reply(http.StatusOK, "RateLimit-Policy", `"default";q=100;w=86400`, "RateLimit", `"default";r=0;t=86400`)
	srv := newBackend(t, spent, spent, spent)
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, testConfig(srv.URL), clock)
	require.NoError(t, h.consume(1))
	_, err := h.tel.GetMetric(mRatelimitRejected)
	require.Error(t, err, "nothing contradicted yet")

	done := make(chan error, 1)
	go func() { done <- h.consume(1) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the second request waits: the headers say the quota is spent")
	assert.Len(t, srv.got(), 1, "nothing left before the bound")
	clock.Advance(retry.QuotaHoldBound)
	require.NoError(t, <-done)
	require.Len(t, srv.got(), 2, "after the bound one request goes against the headers")
	metadatatest.AssertEqualOtlpHTTPRetryRatelimitRejected(t, h.tel,
		[]metricdata.DataPoint[int64]{h.sum(1, attribute.String("reason", "contradicted"))}, telOpts...)

	// Set aside: the next request leaves at once, and is not counted again.
	require.NoError(t, h.consume(1))
	require.Len(t, srv.got(), 3)
	metadatatest.AssertEqualOtlpHTTPRetryRatelimitRejected(t, h.tel,
		[]metricdata.DataPoint[int64]{h.sum(1, attribute.String("reason", "contradicted"))}, telOpts...)
}

// TestTelemetryPacingWaitByConcurrency: a bare 429 while more requests
// were in flight than the backend had accepted at once teaches the pacer a
// concurrency limit; the refused payload then waits for an answer before
// it leaves again, recorded as pacer="concurrency".
func TestTelemetryPacingWaitByConcurrency(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch n.Add(1) {
		case 2, 3: // held open until the test lets them answer
			<-release
		case 4:
			w.WriteHeader(http.StatusTooManyRequests) // bare: no Retry-After
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	var once sync.Once
	answer := func() { once.Do(func() { close(release) }) }
	t.Cleanup(answer) // let the held requests end even if the test fails
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, testConfig(srv.URL), clock)
	require.NoError(t, h.consume(1), "accepted alone: the backend took one at once")

	done := make(chan error, 3)
	for range 2 {
		go func() { done <- h.consume(1) }()
	}
	require.Eventually(t, func() bool { return n.Load() == 3 }, 10*time.Second, time.Millisecond, "two requests held open")
	go func() { done <- h.consume(1) }()
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "refused with three in flight: the payload waits for an answer")
	assert.EqualValues(t, 4, n.Load(), "nothing leaves while two are open")
	answer()
	for range 3 {
		require.NoError(t, <-done)
	}
	assert.EqualValues(t, 5, n.Load())
	// It waits once, or twice when it wakes at the first answer with the
	// other still open; no time passes on the clock.
	m, err := h.tel.GetMetric("otelcol_otlp_http_retry_pacing_wait_seconds")
	require.NoError(t, err)
	points := m.Data.(metricdata.Histogram[float64]).DataPoints
	require.Len(t, points, 1)
	assert.Equal(t, h.attrs(attribute.String("pacer", "concurrency")), points[0].Attributes)
	assert.Contains(t, []uint64{1, 2}, points[0].Count)
	assert.Zero(t, points[0].Sum)
}

// tenThenRefused starts an exporter on a manual clock against a backend
// that accepts ten requests, answers the eleventh with refusal and accepts
// every one after it, and sends the ten accepted ones (3 spans each), the
// clock moved on by step after each.
func tenThenRefused(t *testing.T, refusal func(http.ResponseWriter), step time.Duration) (*telHarness, *retrytest.Clock) {
	t.Helper()
	ok := reply(http.StatusOK)
	srv := newBackend(t, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, refusal, ok)
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, testConfig(srv.URL), clock)
	for range 10 {
		require.NoError(t, h.consume(3))
		clock.Advance(step)
	}
	return h, clock
}
