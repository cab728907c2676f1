// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap/zapcore"

	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

func TestEveryAttemptSendsTheSameBytesAndKey(t *testing.T) {
	srv := newBackend(t, reply(503), reply(503), reply(429, "Retry-After", "2"), reply(200))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 3)))

	got := srv.got()
	require.Len(t, got, 4)
	key := got[0].Header.Get("Idempotency-Key")
	parsed, err := uuid.Parse(key)
	require.NoError(t, err, "the key is a UUID")
	assert.Equal(t, uuid.Version(7), parsed.Version(), "the key is a UUIDv7")
	for i, r := range got {
		assert.Equal(t, got[0].Body, r.Body, "attempt %d sent other bytes", i+1)
		assert.Equal(t, key, r.Header.Get("Idempotency-Key"), "attempt %d sent another key", i+1)
		assert.Equal(t, "gzip", r.Header.Get("Content-Encoding"))
		assert.Equal(t, "application/x-protobuf", r.Header.Get("Content-Type"))
		assert.Equal(t, "/v1/traces", r.URL)
	}
	req := ptraceotlp.NewExportRequest()
	require.NoError(t, req.UnmarshalProto(gunzip(t, got[0].Body)), "the body is gzip-compressed OTLP protobuf")
	assert.Equal(t, 3, req.Traces().SpanCount())
	// 503, 503 took the backoff path (1 s, 2 s), the 429 waited exactly its 2 s.
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 2 * time.Second}, h.clock.Waits())
}

func TestDistinctBatchesGetDistinctKeys(t *testing.T) {
	srv := newBackend(t)
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	for range 20 {
		// identical content: a content hash would conflate these batches
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("same", 1)))
	}
	keys := map[string]bool{}
	for _, r := range srv.got() {
		keys[r.Header.Get("Idempotency-Key")] = true
	}
	assert.Len(t, keys, 20)
}

func TestHeadersAndEncodingOptions(t *testing.T) {
	srv := newBackend(t, reply(503), reply(200))
	cfg := testConfig(srv.URL)
	cfg.Encoding = EncodingJSON
	cfg.ClientConfig.Compression = "none"
	cfg.IdempotencyHeader = "X-Request-Key"
	cfg.AttemptHeader = "X-Attempt"
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("json", 2)))
	got := srv.got()
	require.Len(t, got, 2)
	for i, r := range got {
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		assert.Empty(t, r.Header.Get("Content-Encoding"))
		assert.Empty(t, r.Header.Get("Idempotency-Key"), "the default header is replaced, not added")
		assert.NotEmpty(t, r.Header.Get("X-Request-Key"))
		assert.Equal(t, []string{"1", "2"}[i], r.Header.Get("X-Attempt"))
	}
	req := ptraceotlp.NewExportRequest()
	require.NoError(t, req.UnmarshalJSON(got[0].Body))
	assert.Equal(t, 2, req.Traces().SpanCount())
}

func TestNoIdempotencyOrAttemptHeaderWhenDisabled(t *testing.T) {
	srv := newBackend(t)
	cfg := testConfig(srv.URL)
	cfg.IdempotencyHeader = ""
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	got := srv.got()
	require.Len(t, got, 1)
	for name := range got[0].Header {
		assert.NotContains(t, []string{"Idempotency-Key", "X-Attempt"}, name)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	other := newBackend(t)
	srv := newBackend(t, reply(http.StatusTemporaryRedirect, "Location", other.URL+"/v1/traces?token=secret"))
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Headers.Set("Authorization", "Bearer do-not-forward")
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))

	err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "a redirect is a permanent failure")
	assert.Contains(t, err.Error(), other.URL+"/v1/traces", "the error names where the endpoint pointed")
	assert.NotContains(t, err.Error(), "secret", "the Location's query string is not repeated")
	assert.Len(t, srv.got(), 1, "never retried")
	assert.Empty(t, other.got(), "the redirect target saw nothing")
}

func TestPermanentStatusIsDroppedWithTheBackendsMessage(t *testing.T) {
	for _, code := range []int{400, 403, 404, 413, 422, 501, 505, 511} {
		srv := newBackend(t, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(code)
			_, _ = w.Write([]byte("tenant quota config is wrong"))
		})
		h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
		err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
		require.Error(t, err, "status %d", code)
		assert.True(t, consumererror.IsPermanent(err), "status %d", code)
		assert.Contains(t, err.Error(), "tenant quota config is wrong", "status %d", code)
		assert.Len(t, srv.got(), 1, "status %d is never retried", code)
	}
}

func TestStatusOverrideTurnsADropIntoARetry(t *testing.T) {
	srv := newBackend(t, reply(404), reply(200))
	cfg := testConfig(srv.URL)
	cfg.StatusOverrides = map[string]string{"404": "retry", "503": "drop"}
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Len(t, srv.got(), 2)
}

// TestUnauthorizedHoldsAndProbes: after a 401 nothing is dropped; one probe
// per unauthorized::probe_interval reaches the backend, and the first one
// accepted resumes sending without a restart. The hold is logged once at
// error and its end once at info.
func TestUnauthorizedHoldsAndProbes(t *testing.T) {
	srv := newBackend(t, reply(401), reply(401), reply(401), reply(200))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)), "the batch is held, not dropped, and delivered once accepted")
	assert.Len(t, srv.got(), 4, "the first request and one probe per probe interval")
	assert.Equal(t, []time.Duration{time.Minute, time.Minute, time.Minute}, h.clock.Waits(), "probes one probe_interval apart")
	for _, r := range srv.got()[1:] {
		assert.Equal(t, srv.got()[0].Header.Get("Idempotency-Key"), r.Header.Get("Idempotency-Key"), "every probe is the same payload under the same key")
	}
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("b", 1)))
	assert.Len(t, srv.got(), 5, "sending resumed")

	errorLines := h.logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errorLines, 1, "the hold is logged once at error, not per probe or batch: %v", errorLines)
	assert.Contains(t, errorLines[0].Message, "401 Unauthorized")
	assert.Contains(t, errorLines[0].Message, "Fix the headers or auth", "the log says what to change")
	ended := h.logs.FilterMessageSnippet("Hold ended").All()
	require.Len(t, ended, 1)
	assert.Equal(t, zapcore.InfoLevel, ended[0].Level)
	assert.Empty(t, h.logs.FilterLevelExact(zapcore.WarnLevel).All(), "nothing dropped, nothing warned")
}

func TestUnauthorizedDropModeKeepsSending(t *testing.T) {
	srv := newBackend(t, reply(401))
	cfg := testConfig(srv.URL)
	cfg.OnUnauthorized = UnauthorizedDrop
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	for range 3 {
		err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
		assert.True(t, consumererror.IsPermanent(err))
	}
	assert.Len(t, srv.got(), 3, "each batch tried once, none retried")
}

// TestOutageHoldsThenDelivers: a backend that answers 503 (no Retry-After)
// to everything is down, not the payload's fault: the payload waits at the
// gate, one probe per backoff interval (1 s, 2 s, 4 s, … up to
// backoff::max_interval, and at most retry_after::default: the backend
// answers), and is delivered when the backend recovers, after more
// failures than max_attempts.
func TestOutageHoldsThenDelivers(t *testing.T) {
	script := make([]func(http.ResponseWriter), 0, 9)
	for range 8 {
		script = append(script, reply(503))
	}
	srv := newBackend(t, append(script, reply(200))...)
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Len(t, srv.got(), 9)
	assert.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}, h.clock.Waits(),
		"the backoff schedule, at most retry_after::default: the backend answers")
	warns := h.logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1, "the outage is logged once: %v", warns)
	assert.Contains(t, warns[0].Message, "nothing is dropped")
}

// TestOutageMaxDurationDrops: outage::max_duration bounds the wait.
func TestOutageMaxDurationDrops(t *testing.T) {
	srv := newBackend(t, reply(503))
	cfg := testConfig(srv.URL)
	cfg.Outage.MaxDuration = 10 * time.Second
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err))
	assert.Contains(t, err.Error(), "outage_exhausted")
	assert.Len(t, srv.got(), 4, "attempts at 0, 1 s, 3 s, 7 s; the deadline at 10 s comes before the next probe")
}

// TestConnectionRefusedHoldsUntilTheBackendListens: connection refused is
// an outage: the payload is delivered once the backend listens again.
func TestConnectionRefusedHoldsUntilTheBackendListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there for now
	var restarted sync.Once
	got := make(chan received, 1)
	fake := retrytest.NewAutoClock(start)
	clock := &hookClock{Clock: fake, onWait: func(waits int) {
		if waits < 6 {
			return
		}
		// Before the sixth wait ends (61 s of outage), the backend comes back.
		restarted.Do(func() {
			l, lerr := net.Listen("tcp", addr)
			require.NoError(t, lerr)
			s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- received{Header: r.Header.Clone()}
				w.WriteHeader(http.StatusOK)
			}), ReadHeaderTimeout: time.Second}
			go func() { _ = s.Serve(l) }()
			t.Cleanup(func() { _ = s.Close() })
		})
	}}
	cfg := testConfig("http://" + addr)
	require.NoError(t, cfg.Validate())
	h := startTracesOn(t, cfg, fake, clock)
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	require.Len(t, got, 1, "delivered once the backend is back")
	assert.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second}, fake.Waits())
	attempts := h.logs.FilterMessage("Retry decision").All()
	require.Len(t, attempts, 6, "six refused connections, then the delivery")
	for _, e := range attempts {
		assert.Equal(t, "connection_refused", e.ContextMap()["reason"])
	}
}

func TestShutdownDuringALongWaitReturnsAtOnce(t *testing.T) {
	srv := newBackend(t, reply(429, "Retry-After", "300"))
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, 10)
	clock := retrytest.NewClock(start)
	h := startTraces(t, cfg, clock)

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the payload is waiting out its Retry-After")
	// The wait does not block the pipeline: more batches are accepted at
	// once, while the fake clock still stands at the start of the window.
	for range 3 {
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("b", 1)))
	}

	done := make(chan error, 1)
	go func() { done <- h.exp.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Second):
		t.Fatal("Shutdown did not return within 1 s while a 300 s wait was pending")
	}
	assert.Equal(t, start, clock.Now(), "shutdown did not wait for the fake clock")
	assert.Len(t, srv.got(), 1, "no request after the 429 inside its window")
}

// TestUnauthorizedHoldFillsTheMemoryQueue: while a 401 holds the
// destination, the memory queue fills, then refuses new batches, counted as
// dropped_items{reason=queue_full}; the backend sees nothing but the first
// request, and the log has one error line however many batches arrive.
// When the probe is accepted, everything queued is delivered.
func TestUnauthorizedHoldFillsTheMemoryQueue(t *testing.T) {
	srv, accept := switchedBackend(t, http.StatusUnauthorized, http.StatusOK)
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, 1)
	cfg.QueueConfig.Get().QueueSize = 3
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, cfg, clock)

	require.NoError(t, h.consume(1))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the first batch got its 401 and waits for the probe")
	// The memory queue counts the held batch against its size: two more fit.
	require.NoError(t, h.consume(2))
	require.NoError(t, h.consume(3))
	for n := 4; n <= 6; n++ {
		require.Error(t, h.consume(n), "batch %d is refused: the queue is full", n)
	}
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(4+5+6, attrReason("queue_full")),
	}, telOpts...)
	assert.Len(t, srv.got(), 1, "nothing but the first request while held")
	assert.Len(t, h.logs.FilterLevelExact(zapcore.ErrorLevel).FilterMessageSnippet("401").All(), 1, "one error line for the hold")

	accept.Store(true)
	clock.Advance(time.Minute)
	require.Eventually(t, func() bool { return len(srv.got()) == 4 }, 10*time.Second, time.Millisecond, "the probe and the two queued batches")
	assert.Len(t, h.logs.FilterMessageSnippet("Hold ended").All(), 1)
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(4+5+6, attrReason("queue_full")),
	}, telOpts...)
}

// TestGateScopeIsTheTenant: exporters that send to one URL share a gate
// only when they send with the same credentials; a tenant throttled by the
// backend does not hold back another tenant on the same URL.
func TestGateScopeIsTheTenant(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tenantB   string
		wantShare bool
	}{
		{name: "another tenant", tenantB: "tenant-b", wantShare: false},
		{name: "the same tenant", tenantB: "tenant-a", wantShare: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t, reply(429, "Retry-After", "300"), reply(200))
			cfgA := testConfig(srv.URL)
			cfgA.ClientConfig.Headers.Set("X-Scope-OrgID", "tenant-a")
			withMemoryQueue(cfgA, 1)
			clockA := retrytest.NewClock(start)
			a := startTraces(t, cfgA, clockA)
			require.NoError(t, a.exp.ConsumeTraces(context.Background(), spans("a", 1)))
			require.True(t, clockA.WaitForTimers(1, 10*time.Second), "tenant A is held for 300 s")

			cfgB := testConfig(srv.URL)
			cfgB.ClientConfig.Headers.Set("X-Scope-OrgID", configopaque.String(tc.tenantB))
			b := startTraces(t, cfgB, clockA)
			done := make(chan error, 1)
			go func() { done <- b.exp.ConsumeTraces(context.Background(), spans("b", 1)) }()
			if tc.wantShare {
				require.True(t, clockA.WaitForTimers(2, 10*time.Second), "the same tenant waits at the shared gate")
				assert.Len(t, srv.got(), 1, "nothing sent while the shared gate holds")
				clockA.Advance(300 * time.Second)
			}
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("tenant B's batch was not sent: held by another tenant's gate")
			}
			if !tc.wantShare {
				assert.Equal(t, start, clockA.Now(), "another tenant was sent at once, the clock never moved")
			}
			got := srv.got()
			require.GreaterOrEqual(t, len(got), 2)
			assert.Equal(t, tc.tenantB, got[1].Header.Get("X-Scope-OrgID"), "the second request is tenant B's")
		})
	}
}
