// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// waitingPayloads reads the waiting_payloads gauge.
func waitingPayloads(t *testing.T, h *telHarness) int64 {
	t.Helper()
	m, err := h.tel.GetMetric(mWaiting)
	if err != nil {
		return -1
	}
	dps := m.Data.(metricdata.Gauge[int64]).DataPoints
	if len(dps) != 1 {
		return -1
	}
	return dps[0].Value
}

// loggedExporter is an exporter with its logs observed.
type loggedExporter struct {
	exp  exporter.Traces
	logs *observer.ObservedLogs
}

// startPersistExporterLogged is startPersistExporter with observed logs.
func startPersistExporterLogged(t *testing.T, host component.Host, cfg *Config, clock retry.Clock) loggedExporter {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.ID = persistExporterID
	set.Logger = zap.New(core)
	exp, err := newFactory(clock).CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), host))
	return loggedExporter{exp: exp, logs: logs}
}

// A hold survives a restart when the queue is persistent: the new process
// sends nothing before the hold the old one was in ends, then one probe.
// Here a 401 holds for unauthorized::probe_interval (1 min); the collector
// stops 20 s into it; the new one, started at once, waits the remaining
// 40 s. Without the kept hold it would send the queued payload at once.
func TestHoldKeptAcrossRestartWithFileStorage(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	ctx := context.Background()
	clock := retrytest.NewClock(start)

	// One destination (the gate is the URL's), refusing, then accepting.
	srv, accept := switchedBackend(t, http.StatusUnauthorized, http.StatusOK)
	defer srv.Close()
	host1, stopStorage1 := startFileStorage(t, dir)
	exp1 := startPersistExporter(t, host1, persistConfig(srv.URL), clock)
	require.NoError(t, exp1.ConsumeTraces(ctx, spans("held", 2)))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "held by the 401 until the next probe")
	clock.Advance(20 * time.Second)
	require.NoError(t, exp1.Shutdown(ctx))
	stopStorage1()
	require.Len(t, srv.got(), 1)

	accept.Store(true)
	host2, stopStorage2 := startFileStorage(t, dir)
	logs := startPersistExporterLogged(t, host2, persistConfig(srv.URL), clock)
	exp2 := logs.exp
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the redelivered payload waits at the kept hold")
	assert.Len(t, srv.got(), 1, "nothing before the kept hold ends")
	kept := logs.logs.FilterMessageSnippet("Holding, as before the restart").All()
	require.Len(t, kept, 1)
	assert.Equal(t, "unauthorized", kept[0].ContextMap()["reason"])
	assert.True(t, start.Add(time.Minute).Equal(kept[0].ContextMap()["until"].(time.Time)), "kept until the end the first process knew")

	clock.Advance(40*time.Second - time.Millisecond)
	assert.Len(t, srv.got(), 1, "not a moment before")
	clock.Advance(time.Millisecond)
	got := waitRequests(t, srv, 2)
	assert.Equal(t, []string{"held", "held"}, spanNames(t, got[1].Body))
	assert.Equal(t, key(got[0]), key(got[1]), "the same payload, the same key")
	deliverMarker(t, exp2, srv, "marker")
	require.NoError(t, exp2.Shutdown(ctx))
	stopStorage2()
	assert.Len(t, srv.got(), 3, "the probe (the held payload) and the marker")

	// The hold ended with the accepted probe: a third process finds none.
	host3, stopStorage3 := startFileStorage(t, dir)
	third := startPersistExporterLogged(t, host3, persistConfig(srv.URL), clock)
	deliverMarker(t, third.exp, srv, "third-marker")
	require.NoError(t, third.exp.Shutdown(ctx))
	stopStorage3()
	assert.Empty(t, third.logs.FilterMessageSnippet("Holding, as before the restart").All())
}

// A batch formed before a restart is stored whole, as formed, and sent
// after it with the key and the bytes it was first sent with: batches are
// formed before the queue and never re-formed. Data entering the new
// process forms new batches under new keys; it never joins a stored one.
func TestBatchKeptWholeAcrossRestart(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	ctx := context.Background()
	clock := retrytest.NewClock(start)
	batched := func(url string) *Config {
		cfg := persistConfig(url)
		b := newDefaultBatchConfig()
		b.MinSize = 1000
		cfg.QueueConfig.Get().Batch = configoptional.Some(b)
		return cfg
	}

	down := newBackend(t, reply(http.StatusServiceUnavailable))
	defer down.Close()
	host1, stopStorage1 := startFileStorage(t, dir)
	exp1 := startPersistExporter(t, host1, batched(down.URL), clock)
	// With a persistent queue, a caller is answered once its data is
	// stored: after flush_timeout here.
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, name := range []string{"a", "b", "c"} {
		wg.Go(func() { errs <- exp1.ConsumeTraces(ctx, named(name, 2)) })
	}
	door := exp1.(tracesExporter).door
	require.Eventually(t, func() bool { return door.openRequests() == 3 }, 10*time.Second, time.Millisecond, "the three requests are in one open batch")
	clock.Advance(200 * time.Millisecond)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "answered once stored")
	}
	got1 := waitRequests(t, down, 1)
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the batch waits in backoff")
	require.NoError(t, exp1.Shutdown(ctx))
	stopStorage1()
	require.Len(t, down.got(), 1)
	assert.ElementsMatch(t, []string{"a-0", "a-1", "b-0", "b-1", "c-0", "c-1"}, spanNames(t, got1[0].Body), "three requests, one batch")

	up := newBackend(t)
	defer up.Close()
	host2, stopStorage2 := startFileStorage(t, dir)
	exp2 := startPersistExporter(t, host2, batched(up.URL), retry.RealClock{})
	require.NoError(t, exp2.ConsumeTraces(ctx, named("new", 1)))
	got2 := waitRequests(t, up, 2)
	require.NoError(t, exp2.Shutdown(ctx))
	stopStorage2()

	var again, fresh *received
	for i := range got2 {
		if key(got2[i]) == key(got1[0]) {
			again = &got2[i]
		} else {
			fresh = &got2[i]
		}
	}
	require.NotNil(t, again, "the stored batch comes back under its key")
	assert.True(t, bytes.Equal(got1[0].Body, again.Body), "with its bytes")
	require.NotNil(t, fresh)
	assert.Equal(t, []string{"new-0"}, spanNames(t, fresh.Body), "new data forms a batch of its own")
}

// A request without items is not a batch.
func TestBatchIgnoresEmptyRequests(t *testing.T) {
	srv := newBackend(t)
	h := startTraces(t, batchConfig(srv.URL, 0, 0), retrytest.NewClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), ptrace.NewTraces()))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), named("x", 1)))
	got := waitRequests(t, srv, 1)
	assert.Equal(t, []string{"x-0"}, spanNames(t, got[0].Body))
}

// A held tenant's batches that wait in its line (off the consumers) are
// kept on disk with a persistent queue: a restart sends them, with the
// batch that waited at the gate, once the kept hold ends, each once. One
// consumer: tenant B's batch passes while A is held only because A's
// batches leave the consumer for A's line.
func TestHeldPartitionsLineKeptAcrossRestart(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	ctx := context.Background()
	clock := retrytest.NewClock(start)
	var refuseA atomic.Bool
	refuseA.Store(true)
	srv := &backend{}
	srv.Server = httptest.NewServer(tenantHandler(srv, &refuseA))
	defer srv.Close()
	partitioned := func() *Config {
		cfg := persistConfig(srv.URL)
		b := newDefaultBatchConfig()
		b.MinSize = 10
		b.Partition.MetadataKeys = []string{"X-Scope-OrgID"}
		cfg.QueueConfig.Get().Batch = configoptional.Some(b)
		return cfg
	}

	host1, stopStorage1 := startFileStorage(t, dir)
	first := startPersistExporterLogged(t, host1, partitioned(), clock)
	require.NoError(t, first.exp.ConsumeTraces(tenantCtx("a"), named("a1", 10)))
	waitForWait(t, clock, time.Minute, "A's first batch waits out its Retry-After at the gate")
	for i := 2; i <= 4; i++ {
		require.NoError(t, first.exp.ConsumeTraces(tenantCtx("a"), named(fmt.Sprintf("a%d", i), 10)))
	}
	require.NoError(t, first.exp.ConsumeTraces(tenantCtx("b"), named("b1", 10)))
	require.Eventually(t, func() bool { return countTenant(t, srv.got(), "b", http.StatusOK) == 1 }, 10*time.Second, time.Millisecond,
		"B's batch passes the one consumer while A is held")
	require.NoError(t, first.exp.Shutdown(ctx))
	stopStorage1()
	require.Equal(t, 1, countTenant(t, srv.got(), "a", 0), "A sent nothing but its first batch")

	refuseA.Store(false)
	host2, stopStorage2 := startFileStorage(t, dir)
	second := startPersistExporterLogged(t, host2, partitioned(), clock)
	require.Eventually(t, func() bool {
		clock.Advance(time.Second) // through the kept hold, and the slow start after it
		return countTenant(t, srv.got(), "a", http.StatusOK) == 4
	}, 20*time.Second, time.Millisecond, "A's four batches, after the restart")
	deliverTenantMarker(t, second.exp, srv)
	require.NoError(t, second.exp.Shutdown(ctx))
	stopStorage2()
	seen := map[string]int{}
	for _, r := range srv.got() {
		if r.Header.Get("X-Test-Status") == "200" {
			for _, n := range spanNames(t, r.Body) {
				seen[n]++
			}
		}
	}
	for i := 1; i <= 4; i++ {
		assert.Equal(t, 1, seen[fmt.Sprintf("a%d-0", i)], "batch a%d delivered once", i)
	}
	assert.Equal(t, 1, countTenant(t, srv.got(), "a", http.StatusTooManyRequests), "one 429: the restart kept the hold")
}

// deliverTenantMarker sends tenant B a marker and waits for it: whatever
// the exporter had to send before is sent.
func deliverTenantMarker(t *testing.T, exp exporter.Traces, b *backend) {
	t.Helper()
	before := countTenant(t, b.got(), "b", http.StatusOK)
	require.NoError(t, exp.ConsumeTraces(tenantCtx("b"), named("bmarker", 10)))
	require.Eventually(t, func() bool { return countTenant(t, b.got(), "b", http.StatusOK) > before }, 10*time.Second, time.Millisecond)
}
