// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/goleak"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

var (
	persistStorageID = component.MustNewID("file_storage")
	// Both instances of a restart test use this ID: the persistent queue's
	// storage is named after the exporter ID and the signal.
	persistExporterID = component.MustNewIDWithName(metadata.Type.String(), "persist")
)

// persistHost serves the file_storage extension to the exporter.
type persistHost struct {
	component.Host
	extensions map[component.ID]component.Component
}

func (h persistHost) GetExtensions() map[component.ID]component.Component { return h.extensions }

// startFileStorage starts the contrib file_storage extension on dir and
// returns a host that serves it, and its shutdown.
func startFileStorage(t testing.TB, dir string) (component.Host, func()) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	cfg.Compaction.Directory = dir
	require.NoError(t, cfg.Validate())
	ext, err := f.Create(context.Background(), extension.Settings{
		ID:                persistStorageID,
		TelemetrySettings: componenttest.NewNopTelemetrySettings(),
		BuildInfo:         component.NewDefaultBuildInfo(),
	}, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	host := persistHost{Host: componenttest.NewNopHost(), extensions: map[component.ID]component.Component{persistStorageID: ext}}
	return host, func() { require.NoError(t, ext.Shutdown(context.Background())) }
}

// persistConfig is a file_storage-backed queue with one consumer, so a
// second batch waits in the queue while the first is being sent, and a
// backoff whose first wait (an hour) only shutdown can end.
func persistConfig(endpoint string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.ClientConfig.Endpoint = endpoint
	q := cfg.QueueConfig.Get()
	id := persistStorageID
	q.StorageID = &id
	q.NumConsumers = 1
	cfg.Backoff = retry.BackoffConfig{MaxAttempts: 100, InitialInterval: time.Hour, Multiplier: 1, MaxInterval: time.Hour}
	cfg.RetryAfter.Jitter = 0
	return cfg
}

func startPersistExporter(t *testing.T, host component.Host, cfg *Config, clock retry.Clock) exporter.Traces {
	t.Helper()
	set := exportertest.NewNopSettings(metadata.Type)
	set.ID = persistExporterID
	exp, err := newFactory(clock).CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), host))
	return exp
}

func key(r received) string { return r.Header.Get("Idempotency-Key") }

// spanNames decodes a gzip'd OTLP/protobuf traces body.
func spanNames(t *testing.T, body []byte) []string {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	require.NoError(t, req.UnmarshalProto(gunzip(t, body)))
	var names []string
	rs := req.Traces().ResourceSpans()
	for i := range rs.Len() {
		ss := rs.At(i).ScopeSpans()
		for j := range ss.Len() {
			sp := ss.At(j).Spans()
			for k := range sp.Len() {
				names = append(names, sp.At(k).Name())
			}
		}
	}
	return names
}

// deliverMarker queues a one-span batch named marker on exp and waits until
// b has received it. With one consumer and a FIFO persistent queue, the
// marker is sent only after every payload queued before it has been
// pushed to its end: when it arrives, whatever the exporter was going to
// send of those payloads has arrived before it. That is what lets a test
// count requests without sleeping "long enough for a duplicate".
func deliverMarker(t *testing.T, exp exporter.Traces, b *backend, marker string) {
	t.Helper()
	require.NoError(t, exp.ConsumeTraces(context.Background(), spans(marker, 1)))
	require.Eventually(t, func() bool {
		for _, r := range b.got() {
			if slices.Equal(spanNames(t, r.Body), []string{marker}) {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "the marker %q never reached the backend", marker)
}

// batches names each request of got by its spans, e.g. "a,a".
func batches(t *testing.T, got []received) []string {
	t.Helper()
	out := make([]string, len(got))
	for i, r := range got {
		out[i] = strings.Join(spanNames(t, r.Body), ",")
	}
	return out
}

// No goroutine of the exporter, the queue or its HTTP client outlives
// Shutdown; only the test servers' connection handlers may linger.
var persistLeakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
}

// A payload waiting in backoff when the collector stops stays on disk, and
// the next instance sends the same bytes under the same key.
func TestPersistentQueueRedeliversWaitingPayloadAfterRestart(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	ctx := context.Background()

	// First instance: the backend fails retryably, the payload waits.
	down := newBackend(t, reply(http.StatusServiceUnavailable))
	defer down.Close() // before goleak looks
	host1, stopStorage1 := startFileStorage(t, dir)
	clock := retrytest.NewClock(start)
	exp1 := startPersistExporter(t, host1, persistConfig(down.URL), clock)
	require.NoError(t, exp1.ConsumeTraces(ctx, spans("waiting", 3)))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the payload is in its one-hour backoff wait")

	require.NoError(t, exp1.Shutdown(ctx))
	assert.Equal(t, start, clock.Now(), "Shutdown ended the backoff wait without waiting it out")
	stopStorage1()
	first := down.got()
	require.Len(t, first, 1, "no further attempt during shutdown")
	require.NotEmpty(t, key(first[0]))

	// Second instance, same storage and ID: the backend is back.
	up := newBackend(t)
	defer up.Close()
	host2, stopStorage2 := startFileStorage(t, dir)
	exp2 := startPersistExporter(t, host2, persistConfig(up.URL), retry.RealClock{})
	deliverMarker(t, exp2, up, "marker")
	require.NoError(t, exp2.Shutdown(ctx))
	stopStorage2()

	require.Equal(t, []string{"waiting,waiting,waiting", "marker"}, batches(t, up.got()),
		"the payload is redelivered exactly once, before the marker")
	again := up.got()[:1]
	assert.Equal(t, key(first[0]), key(again[0]), "same Idempotency-Key after restart")
	assert.True(t, bytes.Equal(first[0].Body, again[0].Body), "byte-identical body after restart")
	assert.Equal(t, "gzip", again[0].Header.Get("Content-Encoding"))
	assert.Equal(t, "application/x-protobuf", again[0].Header.Get("Content-Type"))
	assert.Equal(t, []string{"waiting", "waiting", "waiting"}, spanNames(t, again[0].Body))

	// Delivered means deleted: a third instance finds the queue empty.
	idle := newBackend(t)
	defer idle.Close()
	host3, stopStorage3 := startFileStorage(t, dir)
	exp3 := startPersistExporter(t, host3, persistConfig(idle.URL), retry.RealClock{})
	// Anything left on disk would be queued at Start, ahead of the marker.
	deliverMarker(t, exp3, idle, "marker")
	require.NoError(t, exp3.Shutdown(ctx))
	stopStorage3()
	assert.Equal(t, []string{"marker"}, batches(t, idle.got()), "a delivered payload must not be sent again")
}

// A payload whose attempt is in flight when the collector stops, and one
// still queued behind it (never attempted), both survive the restart: the
// first with its bytes and key, the second with the key minted when it
// entered the first instance.
func TestPersistentQueueKeepsInFlightAndQueuedPayloadsAcrossRestart(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	ctx := context.Background()
	minted := time.Now().Truncate(time.Millisecond)

	// The first backend holds every request until released, then answers 503.
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	slow := newBackend(t, func(w http.ResponseWriter) {
		<-release
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	defer slow.Close()
	defer releaseAll() // before slow.Close, which waits for handlers

	host1, stopStorage1 := startFileStorage(t, dir)
	exp1 := startPersistExporter(t, host1, persistConfig(slow.URL), retry.RealClock{})
	require.NoError(t, exp1.ConsumeTraces(ctx, spans("in-flight", 2)))
	require.Eventually(t, func() bool { return len(slow.got()) == 1 }, 10*time.Second, 5*time.Millisecond)
	// The only consumer is busy: this one stays in the queue.
	require.NoError(t, exp1.ConsumeTraces(ctx, spans("queued", 4)))

	// Shutdown first stops the loop's waits (shutdownOnce.stop), then runs
	// exporterhelper's Shutdown, which waits for the in-flight push. The
	// backend answers 503 only once the loop has stopped, so the attempt
	// is in flight when the collector stops.
	loopStopped := make(chan struct{})
	stops := exp1.(tracesExporter).shutdownOnce
	stopLoop := stops.stop
	stops.stop = func() { stopLoop(); close(loopStopped) }
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- exp1.Shutdown(ctx) }()
	select {
	case <-loopStopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not stop the loop")
	}
	require.Len(t, slow.got(), 1, "the attempt is still in flight")
	restart := time.Now()
	releaseAll()
	select {
	case err := <-shutdownDone:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after the in-flight attempt completed")
	}
	stopStorage1()
	first := slow.got()
	require.Len(t, first, 1, "the queued payload must not be attempted during shutdown")
	assert.Equal(t, []string{"in-flight", "in-flight"}, spanNames(t, first[0].Body))

	up := newBackend(t)
	defer up.Close()
	host2, stopStorage2 := startFileStorage(t, dir)
	exp2 := startPersistExporter(t, host2, persistConfig(up.URL), retry.RealClock{})
	deliverMarker(t, exp2, up, "marker")
	require.NoError(t, exp2.Shutdown(ctx))
	stopStorage2()

	redelivered := batches(t, up.got())
	require.Len(t, redelivered, 3, "each payload is redelivered exactly once, then the marker: %q", redelivered)
	assert.Equal(t, "marker", redelivered[2])
	assert.ElementsMatch(t, []string{"in-flight,in-flight", "queued,queued,queued,queued"}, redelivered[:2])
	got := up.got()[:2]
	byKey := map[string]received{}
	for _, r := range got {
		byKey[key(r)] = r
	}
	require.Len(t, byKey, 2, "two payloads, two keys")

	inFlight, ok := byKey[key(first[0])]
	require.True(t, ok, "the in-flight payload comes back under the key it was first sent with")
	assert.True(t, bytes.Equal(first[0].Body, inFlight.Body), "byte-identical body after restart")

	delete(byKey, key(first[0]))
	for queuedKey, queued := range byKey {
		assert.Equal(t, []string{"queued", "queued", "queued", "queued"}, spanNames(t, queued.Body))
		k, err := uuid.Parse(queuedKey)
		require.NoError(t, err)
		assert.Equal(t, uuid.Version(7), k.Version())
		sec, nsec := k.Time().UnixTime()
		at := time.Unix(sec, nsec)
		assert.False(t, at.Before(minted), "key minted before the test began: %s", at)
		assert.True(t, at.Before(restart), "the queued payload's key was minted by the first instance, at the door, not after the restart (minted %s, restart %s)", at, restart)
	}
}
