// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// openStore opens the holds' store of the traces signal on host.
func openStore(t *testing.T, host component.Host, clock retry.Clock) *holdStore {
	t.Helper()
	s, err := openHoldStore(context.Background(), host, persistConfig("http://localhost:4318"), persistExporterID, "traces", zap.NewNop(), clock)
	require.NoError(t, err)
	require.NotNil(t, s)
	return s
}

// A kept pace is written next to the hold of its gate key and read back
// as it was by the next process, on a real file_storage: with a hold,
// without one, and after the hold ended (the pace stays). A pace that
// keeps nothing drops the entry.
func TestHoldStoreKeepsThePace(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	clock := retrytest.NewClock(start)
	pace := retry.KeptPace{At: start, Version: 2, Mode: "paced", Ceiling: 950, Since: start.Add(-time.Second), Bare: true, Plateau: 1000,
		Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 9.5, BackgroundRefused: 0.8, ItemsPerRequest: 100,
		AcceptedRun: 300, Answered: 4, RefusedRun: 1, FirstSlot: start.Add(-500 * time.Millisecond), Concurrency: 3, ConcurrencySince: start.Add(-2 * time.Second)}
	alone := retry.KeptPace{At: start, Version: 1, Mode: "slow_start", Ceiling: 10, Since: start, ItemsPerRequest: 10}

	host1, stop1 := startFileStorage(t, dir)
	s := openStore(t, host1, clock)
	s.put("held", retry.Hold{Reason: retry.HoldThrottle, Until: start.Add(time.Minute), Failures: 2, Version: 1})
	s.putPace("held", pace)
	s.putPace("paced", alone)
	s.putPace("ended", pace)
	s.put("ended", retry.Hold{Reason: retry.HoldOutage, Until: start.Add(time.Minute), Failures: 1, Version: 1})
	s.put("ended", retry.Hold{Version: 2})
	s.putPace("dropped", pace)
	s.putPace("dropped", retry.KeptPace{At: start, Version: 3})
	s.putPace("stale version", alone)
	s.putPace("stale version", retry.KeptPace{At: start, Version: 0})
	require.NoError(t, s.close(context.Background()))
	stop1()

	host2, stop2 := startFileStorage(t, dir)
	defer stop2()
	r := openStore(t, host2, clock)
	defer func() { require.NoError(t, r.close(context.Background())) }()
	h, ok := r.restored("held")
	require.True(t, ok)
	assert.Equal(t, retry.HoldThrottle, h.Reason)
	assert.True(t, start.Add(time.Minute).Equal(h.Until))
	assert.Equal(t, 2, h.Failures)
	equalPace := func(want retry.KeptPace, key string) {
		t.Helper()
		got, found := r.restoredPace(key)
		require.True(t, found, key)
		want.Version = 0 // not written: it orders one process's reports
		assert.True(t, want.At.Equal(got.At) && want.Since.Equal(got.Since) && want.ConcurrencySince.Equal(got.ConcurrencySince) && want.FirstSlot.Equal(got.FirstSlot), key)
		want.At, want.Since, want.ConcurrencySince, want.FirstSlot = got.At, got.Since, got.ConcurrencySince, got.FirstSlot
		assert.Equal(t, want, got, key)
	}
	equalPace(pace, "held")
	equalPace(alone, "paced")
	equalPace(pace, "ended")
	equalPace(alone, "stale version")
	_, ok = r.restored("paced")
	assert.False(t, ok, "a pace without a hold restores no hold")
	_, ok = r.restored("ended")
	assert.False(t, ok, "the hold ended; its pace stays")
	_, ok = r.restoredPace("dropped")
	assert.False(t, ok, "a pace that keeps nothing drops the entry")
}

// A record written before paces were kept (holds only) still reads, and a
// pace whose entry is older than holdsKeptFor is dropped when read.
func TestHoldStoreReadsRecordsWithoutPace(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	host1, stop1 := startFileStorage(t, dir)
	s := openStore(t, host1, retry.RealClock{})
	until := start.Add(time.Hour)
	old := `{"k":{"reason":"unauthorized","until_unix_nano":` + itoa(until.UnixNano()) + `,"failures":1},` +
		`"old":{"reason":"","until_unix_nano":0,"failures":0,"pace":{"at_unix_nano":` + itoa(start.Add(-25*time.Hour).UnixNano()) + `,"mode":"paced","ceiling":5}}}`
	require.NoError(t, s.client.Set(context.Background(), holdsKey, []byte(old)))
	require.NoError(t, s.close(context.Background()))
	stop1()

	host2, stop2 := startFileStorage(t, dir)
	defer stop2()
	r, err := openHoldStore(context.Background(), host2, persistConfig("http://localhost:4318"), persistExporterID, "traces", zap.NewNop(), retrytest.NewClock(start))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.close(context.Background())) }()
	h, ok := r.restored("k")
	require.True(t, ok)
	assert.Equal(t, retry.HoldUnauthorized, h.Reason)
	_, ok = r.restoredPace("k")
	assert.False(t, ok)
	_, ok = r.restoredPace("old")
	assert.False(t, ok, "read more than holdsKeptFor ago")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Changes of a pace alone are written at most once every paceWriteEvery:
// the first at once, those that follow within it together, that long
// after the first; close writes what is left. A hold's change is written
// at once.
func TestHoldStoreBoundsThePaceWrites(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	clock := retrytest.NewClock(start)
	host, stop := startFileStorage(t, t.TempDir())
	defer stop()
	s := openStore(t, host, clock)
	cut := func(v uint64) retry.KeptPace {
		return retry.KeptPace{At: clock.Now(), Version: v, Mode: "paced", Ceiling: 100 / float64(v), Since: clock.Now(), ItemsPerRequest: 1}
	}
	writes := func() int { s.mu.Lock(); defer s.mu.Unlock(); return s.writes }
	s.putPace("k", cut(1))
	assert.Equal(t, 1, writes(), "the first change: written at once")
	for v := uint64(2); v <= 50; v++ {
		clock.Advance(10 * time.Millisecond)
		s.putPace("k", cut(v))
		if v == 2 {
			require.True(t, clock.WaitForTimers(1, 10*time.Second), "one write is due")
		}
	}
	assert.Equal(t, 1, writes(), "49 cuts within paceWriteEvery: none written yet")
	assert.Equal(t, 1, clock.Pending(), "one write is due, not one per cut")
	clock.Advance(paceWriteEvery - 490*time.Millisecond)
	require.Eventually(t, func() bool { return writes() == 2 }, 10*time.Second, time.Millisecond, "the 49 written as one, paceWriteEvery after the first")
	got, ok := s.restoredPace("k")
	require.True(t, ok)
	assert.InDelta(t, 2, got.Ceiling, 1e-9, "the last")

	s.put("k", retry.Hold{Reason: retry.HoldThrottle, Until: clock.Now().Add(time.Second), Failures: 1, Version: 1})
	assert.Equal(t, 3, writes(), "a hold is written at once")
	s.putPace("k", cut(51))
	assert.Equal(t, 3, writes())
	require.NoError(t, s.close(context.Background()))
	assert.Equal(t, 4, writes(), "close writes the change left")
}

// A pace learned from a bare 429 survives a restart with file_storage:
// the new process says so once, sends the payload the queue kept at
// once, and the next one only at the pace (it waits for a timer), where
// a fresh pacer would send it at once.
func TestPaceKeptAcrossRestartWithFileStorage(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	dir := t.TempDir()
	ctx := context.Background()
	clock := retrytest.NewClock(start)
	srv, refuse := switchedBackend(t, http.StatusOK, http.StatusTooManyRequests)
	defer srv.Close()

	host1, stopStorage1 := startFileStorage(t, dir)
	exp1 := startPersistExporter(t, host1, persistConfig(srv.URL), clock)
	for i := range 10 {
		deliverMarker(t, exp1, srv, "accepted-"+itoa(int64(i)))
	}
	refuse.Store(true)
	require.NoError(t, exp1.ConsumeTraces(ctx, spans("refused", 2)))
	waitRequests(t, srv, 11)
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the refused payload waits")
	require.NoError(t, exp1.Shutdown(ctx))
	stopStorage1()

	refuse.Store(false)
	clock.Advance(10 * time.Second)
	host2, stopStorage2 := startFileStorage(t, dir)
	logs := startPersistExporterLogged(t, host2, persistConfig(srv.URL), clock)
	exp2 := logs.exp
	restored := logs.logs.FilterMessageSnippet("Pacing, as before the restart").All()
	require.Len(t, restored, 1)
	assert.Equal(t, "paced", restored[0].ContextMap()["mode"])
	assert.Greater(t, restored[0].ContextMap()["items_per_second"], 0.0)
	got := waitRequests(t, srv, 12)
	assert.Equal(t, key(got[10]), key(got[11]), "the kept payload, at once")

	require.NoError(t, exp2.ConsumeTraces(ctx, spans("next", 2)))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the next request waits for its slot at the kept pace")
	assert.Len(t, srv.got(), 12)
	clock.Advance(time.Second)
	waitRequests(t, srv, 13)
	require.NoError(t, exp2.Shutdown(ctx))
	stopStorage2()
}

// With a persistent queue, a payload that reaches the loop after it
// stopped (a queue consumer takes it up between the exporter's stop and the
// queue's own) is attempted only when the learned pace lets it leave at
// once: the others stay in the queue for the next process, unsent. With a
// queue in memory each gets its attempt, its last chance.
func TestShutdownDrainKeepsThePaceWithPersistentQueue(t *testing.T) {
	for _, tt := range []struct {
		name       string
		persistent bool
		want       int
	}{
		{name: "persistent queue: one now, one kept", persistent: true, want: 1},
		{name: "memory queue: both attempted", persistent: false, want: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			// A URL of its own: the gate and pacer are shared per URL.
			cfg.ClientConfig.Endpoint = "http://127.0.0.1:9/drain-" + strconv.FormatBool(tt.persistent)
			if tt.persistent {
				id := persistStorageID
				cfg.QueueConfig.Get().StorageID = &id
			}
			e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type), tracesSignal, retrytest.NewAutoClock(start))
			require.NoError(t, err)
			defer func() { _ = e.shutdown(context.Background()) }()
			require.True(t, e.loop.Pacer().Restore(retry.KeptPace{At: start, Mode: "paced", Ceiling: 1, Since: start, ItemsPerRequest: 1}))
			e.loop.Stop()

			sent := 0
			send := func(context.Context, int) retry.Response { sent++; return retry.Response{Status: http.StatusOK} }
			first := e.loop.RunItems(context.Background(), 1, send)
			second := e.loop.RunItems(context.Background(), 1, send)
			assert.Equal(t, retry.Delivered, first.Kind)
			assert.Equal(t, tt.want, sent, "attempts after the stop, at one request a second")
			if tt.persistent {
				assert.Equal(t, retry.Interrupted, second.Kind)
				assert.True(t, second.Shutdown, "kept in the queue as a shutdown's")
			}
		})
	}
}
