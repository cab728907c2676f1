// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// entryText is everything a log entry holds: message, logger, every field.
func entryText(e observer.LoggedEntry) string {
	var b strings.Builder
	b.WriteString(e.Message)
	b.WriteString(" | ")
	b.WriteString(e.LoggerName)
	b.WriteString(" | ")
	b.WriteString(e.Stack)
	for k, v := range e.ContextMap() {
		fmt.Fprintf(&b, " | %s=%v", k, v)
	}
	for _, f := range e.Context {
		fmt.Fprintf(&b, " | %s=%s %d %v", f.Key, f.String, f.Integer, f.Interface)
	}
	return b.String()
}

// masked is how the logs show the full key k; it checks that the mask is 8
// characters of the key and an ellipsis.
func maskedKeyOf(t *testing.T, k string) string {
	t.Helper()
	m := maskKey(uuid.MustParse(k))
	visible := strings.ReplaceAll(m, "…", "")
	assert.Len(t, visible, 8, "mask %q shows 8 characters of the key", m)
	assert.Contains(t, k, visible, "mask %q is part of key %q", m, k)
	assert.Len(t, []rune(m), 9, "mask %q is 8 characters and an ellipsis", m)
	return m
}

// decisionLine finds the debug "Retry decision" line with the given status.
func decisionLine(t *testing.T, logs *observer.ObservedLogs, status string) map[string]any {
	t.Helper()
	for _, e := range logs.FilterMessage("Retry decision").All() {
		if f := e.ContextMap(); f["status"] == status {
			assert.Equal(t, zapcore.DebugLevel, e.Level)
			return f
		}
	}
	t.Fatalf("no Retry decision line for status %s", status)
	return nil
}

func TestLogsNeverLeakSecretsAndCarryDecisionFields(t *testing.T) {
	const (
		bearer      = "SECRET-TOKEN-123"
		apiKey      = "APIKEY-VALUE-456"
		password    = "S3CRETPASS"
		querySecret = "QUERYSECRET"
		locToken    = "LOCATIONTOKEN"
		marker      = "PAYLOAD-MARKER"
	)
	other := newBackend(t)
	srv := newBackend(t,
		reply(429, "Retry-After", "3"),
		reply(503),
		reply(200),
		reply(http.StatusTemporaryRedirect, "Location", other.URL+"/v1/traces?token="+locToken),
		reply(401),
		reply(200),
	)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Endpoint = "http://user:" + password + "@" + u.Host + "/?apikey=" + querySecret
	cfg.TracesEndpoint = "http://user:" + password + "@" + u.Host + "/v1/traces?apikey=" + querySecret
	cfg.ClientConfig.Headers.Set("Authorization", "Bearer "+bearer)
	cfg.ClientConfig.Headers.Set("X-Api-Key", apiKey)
	require.Error(t, cfg.Validate(), "Validate refuses credentials in an endpoint; the logs must not leak them either")
	h := startTracesUnvalidated(t, cfg, retrytest.NewAutoClock(start))

	// A: 429 (3 s), 503 (outage, 1 s), 200. B: redirect. C: 401 (hold,
	// 1 min), 200. D: 200.
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans(marker+"-a", 2)))
	require.Error(t, h.exp.ConsumeTraces(context.Background(), spans(marker+"-b", 1)))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans(marker+"-c", 1)))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans(marker+"-d", 1)))

	got := srv.got()
	require.Len(t, got, 7)
	assert.Empty(t, other.got())
	// the secrets did reach the backend: they are configured, not lost
	assert.Equal(t, "Bearer "+bearer, got[0].Header.Get("Authorization"))
	assert.Equal(t, apiKey, got[0].Header.Get("X-Api-Key"))
	assert.Contains(t, got[0].URL, querySecret)

	keys := map[string]bool{}
	for _, r := range got {
		k := r.Header.Get("Idempotency-Key")
		require.Len(t, k, 36)
		keys[k] = true
	}
	require.Len(t, keys, 4, "batches A, B, C and D reached the backend")

	secrets := []string{bearer, apiKey, password, querySecret, locToken, marker, "user:"}
	for k := range keys {
		secrets = append(secrets, k, k[9:]) // the whole key, and its unmasked tail
	}
	all := h.logs.All()
	require.NotEmpty(t, all)
	for i, e := range all {
		text := entryText(e)
		for _, s := range secrets {
			assert.NotContains(t, text, s, "log entry %d (%q) leaks %q", i, e.Message, s)
		}
	}

	keyA := got[0].Header.Get("Idempotency-Key")
	keyB := got[3].Header.Get("Idempotency-Key")
	keyC := got[4].Header.Get("Idempotency-Key")
	endpoint := "http://" + u.Host + "/v1/traces"

	f := decisionLine(t, h.logs, "429")
	assert.Equal(t, endpoint, f["endpoint"])
	assert.Equal(t, int64(1), f["attempt"])
	assert.Equal(t, int64(5), f["max_attempts"])
	assert.Equal(t, "throttled", f["outcome"])
	assert.Equal(t, "429", f["reason"])
	assert.Equal(t, maskedKeyOf(t, keyA), f["key"])
	assert.Equal(t, "seconds", f["retry_after"])
	assert.Equal(t, 3*time.Second, f["retry_after_parsed"])
	assert.Equal(t, false, f["defaulted"])
	assert.Equal(t, false, f["capped"])
	assert.Equal(t, "rate_limit", f["path"])
	assert.Equal(t, 3*time.Second, f["delay"])

	f = decisionLine(t, h.logs, "503")
	assert.Equal(t, endpoint, f["endpoint"])
	assert.Equal(t, int64(2), f["attempt"])
	assert.Equal(t, int64(5), f["max_attempts"])
	assert.Equal(t, "retryable", f["outcome"])
	assert.Equal(t, maskedKeyOf(t, keyA), f["key"])
	assert.Equal(t, "missing", f["retry_after"])
	assert.Equal(t, time.Duration(0), f["retry_after_parsed"])
	assert.Equal(t, false, f["defaulted"])
	assert.Equal(t, false, f["capped"])
	assert.Equal(t, "outage", f["path"], "nothing had succeeded yet: the destination is down, not the payload")
	assert.Equal(t, time.Second, f["delay"])

	f = decisionLine(t, h.logs, "307")
	assert.Equal(t, endpoint, f["endpoint"])
	assert.Equal(t, int64(1), f["attempt"])
	assert.Equal(t, int64(5), f["max_attempts"])
	assert.Equal(t, "permanent", f["outcome"])
	assert.Equal(t, maskedKeyOf(t, keyB), f["key"])
	assert.Contains(t, f["error"], other.URL+"/v1/traces", "the error names where the redirect pointed")
	assert.NotContains(t, f, "delay", "nothing is scheduled after a redirect")

	f = decisionLine(t, h.logs, "401")
	assert.Equal(t, endpoint, f["endpoint"])
	assert.Equal(t, "unauthorized", f["outcome"])
	assert.Equal(t, maskedKeyOf(t, keyC), f["key"])
	assert.Equal(t, "unauthorized", f["path"])
	assert.Equal(t, time.Minute, f["delay"], "the next probe after unauthorized::probe_interval")

	assert.Len(t, h.logs.FilterMessage("Retry decision").All(), 4, "one per attempt that did not succeed")
	maskA, withA := maskedKeyOf(t, keyA), 0
	for _, e := range h.logs.All() {
		if e.ContextMap()["key"] == maskA {
			withA++
		}
	}
	assert.GreaterOrEqual(t, withA, 2, "the masked key lets one follow payload A through the logs")
}

// TestLogFirstBare429IsDefaulted: the first hold of a 429 without
// Retry-After is the exporter's wait (1 s), not the server's: its decision
// line says defaulted, as retry_after::default's does.
func TestLogFirstBare429IsDefaulted(t *testing.T) {
	srv := newBackend(t, reply(429), reply(200))
	h := startTracesWithID(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.consume(1))
	f := decisionLine(t, h.logs, "429")
	assert.Equal(t, "missing", f["retry_after"])
	assert.Equal(t, true, f["defaulted"])
	assert.Equal(t, "rate_limit", f["path"])
	assert.Equal(t, time.Second, f["delay"])
}

func TestLogEndpointWithUserinfoAndQuery(t *testing.T) {
	srv := newBackend(t, reply(503), reply(200))
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	cfg := testConfig("http://user:S3CRETPASS@" + u.Host + "/?apikey=QUERYSECRET")
	require.Error(t, cfg.Validate(), "Validate refuses credentials in an endpoint; the logs must not leak them either")
	h := startTracesUnvalidated(t, cfg, retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))

	for i, e := range h.logs.All() {
		text := entryText(e)
		for _, s := range []string{"S3CRETPASS", "QUERYSECRET"} {
			assert.NotContains(t, text, s, "log entry %d (%q) leaks %q", i, e.Message, s)
		}
	}
	got := srv.got()
	require.Len(t, got, 2)
	// The signal path belongs in the path, the query stays the query: not
	// "/?apikey=QUERYSECRET/v1/traces".
	assert.Equal(t, "/v1/traces?apikey=QUERYSECRET", got[0].URL)
}

func TestLogThrottleWindowStartAndEndOnceForConcurrentPayloads(t *testing.T) {
	const payloads = 4
	clock := retrytest.NewClock(start)
	var arrived atomic.Int32
	allIn := make(chan struct{})
	srv := newBackend(t, func(w http.ResponseWriter) {
		if clock.Now().Before(start.Add(10 * time.Second)) {
			// hold every first attempt until all are in flight, so that all
			// of them are throttled, not just held at the gate
			if arrived.Add(1) == payloads {
				close(allIn)
			}
			select {
			case <-allIn:
			case <-time.After(5 * time.Second):
			}
			reply(429, "Retry-After", "10")(w)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, payloads)
	// The payloads that waited leave together when the window ends (the
	// slow start after a window is tested in retry/).
	cfg.Pacing.Enabled = false
	h := startTracesWithID(t, cfg, clock)

	for i := range payloads {
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans(fmt.Sprint("p", i), 1)))
	}
	require.True(t, clock.WaitForTimers(payloads, 10*time.Second), "every payload waits at the gate")
	assertGauges(t, h, 1, 10, payloads)
	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(payloads, attrOutcome("throttled"), attrStatus("429")),
	}, telOpts...)

	clock.Advance(10 * time.Second)
	waitExports(t, h, payloads)
	assert.Len(t, srv.got(), 2*payloads)
	assertExport(t, h, "success", repeatSecs(10, payloads)...)
	assertGauges(t, h, 0, 0, 0)

	started := h.logs.FilterMessageSnippet("Holding: the backend asked to wait").All()
	require.Len(t, started, 1, "one window, one start line")
	assert.Equal(t, zapcore.InfoLevel, started[0].Level)
	sf := started[0].ContextMap()
	assert.Equal(t, int64(429), sf["status"])
	assert.Equal(t, 10*time.Second, sf["wait"])
	assert.Equal(t, start.Add(10*time.Second), sf["until"])
	assert.Equal(t, "http://"+strings.TrimPrefix(srv.URL, "http://")+"/v1/traces", sf["endpoint"])

	ended := h.logs.FilterMessageSnippet("Hold ended: the first request after the wait").All()
	require.Len(t, ended, 1, "one window, one end line")
	assert.Equal(t, zapcore.InfoLevel, ended[0].Level)
}

func TestLogDropWarningsAreRateLimited(t *testing.T) {
	srv := newBackend(t, reply(400))
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, testConfig(srv.URL), clock)

	for range 20 {
		require.Error(t, h.consume(1))
	}
	warns := h.logs.FilterMessageSnippet("Dropped a batch").All()
	require.Len(t, warns, 1, "20 drops in the same instant give one warning")
	assert.Equal(t, zapcore.WarnLevel, warns[0].Level)
	f := warns[0].ContextMap()
	assert.Equal(t, "permanent_status", f["reason"])
	assert.Equal(t, int64(1), f["items"])
	assert.Equal(t, int64(0), f["drops_not_logged_since_last"])
	assert.Contains(t, f["error"], "400")

	clock.Advance(10*time.Second + time.Millisecond)
	require.Error(t, h.consume(1))
	warns = h.logs.FilterMessageSnippet("Dropped a batch").All()
	require.Len(t, warns, 2)
	assert.Equal(t, int64(19), warns[1].ContextMap()["drops_not_logged_since_last"])

	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(21, attribute.String("reason", "permanent_status")),
	}, telOpts...)
	metadatatest.AssertEqualOtlpHTTPRetryAttempts(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(21, attrOutcome("permanent"), attrStatus("400")),
	}, telOpts...)
}

func TestLogMaskedKeysTellPayloadsApart(t *testing.T) {
	// Two payloads a moment apart, each logged once by its decision line.
	srv := newBackend(t, reply(400))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.Error(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	require.Error(t, h.exp.ConsumeTraces(context.Background(), spans("b", 1)))

	got := srv.got()
	require.Len(t, got, 2)
	k1, k2 := got[0].Header.Get("Idempotency-Key"), got[1].Header.Get("Idempotency-Key")
	require.NotEqual(t, k1, k2)

	lines := h.logs.FilterMessage("Retry decision").All()
	require.Len(t, lines, 2)
	m1, m2 := lines[0].ContextMap()["key"].(string), lines[1].ContextMap()["key"].(string)
	for _, m := range []string{m1, m2} {
		assert.Len(t, []rune(m), 9, "8 characters and an ellipsis")
		assert.NotContains(t, m, k1)
		assert.NotContains(t, m, k2)
	}
	// The masked key exists to follow one payload through the logs: two
	// payloads must not share it. The first 8 characters of a UUIDv7 are the
	// top 32 bits of its millisecond timestamp, the same for every key minted
	// within ~65 s.
	assert.NotEqual(t, m1, m2, "payloads %s and %s are indistinguishable in the logs", k1, k2)
}

// TestLogDefaultedSources: the decision line's defaulted is true for the
// waits that are the exporter's own (retry_after::default, the first bare
// hold, a fixed window's hold until the next multiple of 10 s), false for
// the server's (a Retry-After, capped or not, and its "retry now" floor).
func TestLogDefaultedSources(t *testing.T) {
	want := map[retry.DelaySource]bool{
		retry.SourceNone: false, retry.SourceHeader: false, retry.SourceCapped: false, retry.SourceFloor: false,
		retry.SourceDefault: true, retry.SourceFirst: true, retry.SourceWindow: true,
	}
	for s, w := range want {
		assert.Equal(t, w, defaulted(s), "source %s", s)
	}
}
