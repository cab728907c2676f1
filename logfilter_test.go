// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// observedSettings are exporter settings whose logger records every entry
// at debug level and above, with caller and, from error up, a stack trace,
// as the collector's logger does.
func observedSettings(t *testing.T) (exporter.Settings, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core, zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel))
	return set, logs
}

// fromExporterhelper reports whether exporterhelper wrote the entry.
func fromExporterhelper(e observer.LoggedEntry) bool {
	return strings.Contains(e.Caller.File, "exporter/exporterhelper")
}

func dumpLogs(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		fmt.Fprintf(&b, "%s %s %s %v\n", e.Level, e.Caller.TrimmedPath(), e.Message, e.ContextMap())
	}
	return b.String()
}

// Payloads interrupted in their backoff wait by shutdown stay in the
// persistent queue. The collector's log says so once per payload and
// nowhere claims they were dropped or will be retried after an hour; the
// next instance does send them.
func TestShutdownLogWithPersistentQueueSaysPayloadsAreKept(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	const payloads = 3
	dir := t.TempDir()
	ctx := context.Background()

	down := newBackend(t, reply(http.StatusServiceUnavailable))
	defer down.Close()
	host1, stopStorage1 := startFileStorage(t, dir)
	clock := retrytest.NewClock(start)
	cfg := persistConfig(down.URL)
	cfg.QueueConfig.Get().NumConsumers = payloads
	set, logs := observedSettings(t)
	set.ID = persistExporterID
	exp1, err := newFactory(clock).CreateTraces(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp1.Start(ctx, host1))
	for i := range payloads {
		require.NoError(t, exp1.ConsumeTraces(ctx, spans(fmt.Sprintf("kept-%d", i), 2)))
	}
	require.True(t, clock.WaitForTimers(payloads, 10*time.Second), "every payload is in its one-hour backoff wait")
	before := logs.Len()
	require.NoError(t, exp1.Shutdown(ctx))
	stopStorage1()
	for _, e := range logs.All()[before:] {
		t.Logf("at shutdown: %s %s %s", e.Level, e.Caller.TrimmedPath(), e.Message)
	}

	var kept, errorLines, dropping, willRetry int
	for _, e := range logs.All() {
		if e.Level >= zapcore.ErrorLevel {
			errorLines++
		}
		if strings.Contains(e.Message, "Dropping data") {
			dropping++
		}
		if strings.Contains(e.Message, "Will retry") {
			willRetry++
		}
		if strings.Contains(e.Message, "kept in the persistent queue") {
			kept++
			assert.Equal(t, zapcore.InfoLevel, e.Level)
			assert.Empty(t, e.Stack, "an info line carries no stack trace")
			fields := e.ContextMap()
			// The first payload met the 503 (1 attempt); the others may have
			// waited at the holding gate without an attempt (0).
			assert.Regexp(t, `export of 2 traces items interrupted after [01] attempts`, fields["error"], "the line carries the error text")
			assert.EqualValues(t, 2, fields["items"])
			assert.NotContains(t, fields, "dropped_items")
		}
	}
	assert.Zero(t, errorLines, "no error line for a payload that is kept")
	assert.Zero(t, dropping, `no "Dropping data" for a payload that is kept`)
	assert.Zero(t, willRetry, `no "Will retry the request after interval" (1h) at shutdown`)
	assert.Equal(t, payloads, kept, "one line per interrupted payload")
	if t.Failed() {
		t.Logf("the whole log:\n%s", dumpLogs(logs))
	}

	// The line is true: the next instance sends every payload.
	up := newBackend(t)
	defer up.Close()
	host2, stopStorage2 := startFileStorage(t, dir)
	exp2 := startPersistExporter(t, host2, persistConfig(up.URL), retry.RealClock{})
	require.Eventually(t, func() bool { return len(up.got()) >= payloads }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, exp2.Shutdown(ctx))
	stopStorage2()
	assert.Len(t, up.got(), payloads)
}

// With the memory queue, what is still queued at shutdown against a dead
// backend is dropped and the exporter says so itself: exporterhelper adds
// no line of its own ("Will retry … 1h0m0s" would be false, and its
// "Dropping data" error with a stack trace per payload only repeats it).
func TestShutdownLogWithMemoryQueueHasNoExporterhelperLines(t *testing.T) {
	const queued = 100
	dead := newBackend(t)
	dead.Close() // connection refused from now on
	clock := retrytest.NewClock(start)
	cfg := testConfig(dead.URL)
	withMemoryQueue(cfg, 1)
	set, logs := observedSettings(t)
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	logger := set.Logger
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = logger
	ctx := context.Background()
	exp, err := newFactory(clock).CreateTraces(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))

	// The first payload waits in backoff; the rest stay in the queue.
	require.NoError(t, exp.ConsumeTraces(ctx, spans("first", 1)))
	require.True(t, clock.WaitForTimers(1, 10*time.Second))
	for i := range queued {
		require.NoError(t, exp.ConsumeTraces(ctx, spans(fmt.Sprintf("queued-%d", i), 1)))
	}
	before := logs.Len()
	require.NoError(t, exp.Shutdown(ctx))

	var fromHelper, errorLines, infoUp int
	for _, e := range logs.All()[before:] {
		if fromExporterhelper(e) {
			fromHelper++
		}
		if e.Level >= zapcore.ErrorLevel {
			errorLines++
		}
		if e.Level >= zapcore.InfoLevel {
			infoUp++
		}
	}
	t.Logf("at shutdown, for %d payloads: %d log lines (%d at info or above), %d of them from exporterhelper",
		queued+1, logs.Len()-before, infoUp, fromHelper)
	assert.Zero(t, fromHelper, "exporterhelper's lines")
	assert.Zero(t, errorLines, "error lines")
	// What remains is one line for everything the memory queue lost, and
	// debug lines for the one attempt the drain makes.
	assert.Equal(t, 1, infoUp, "one line at info or above for the whole shutdown, not one per payload")
	lost := logs.FilterMessageSnippet("lost with the memory queue").All()
	require.Len(t, lost, 1)
	assert.Equal(t, int64(queued+1), lost[0].ContextMap()["payloads"])
	if t.Failed() {
		t.Logf("the whole log:\n%s", dumpLogs(logs))
	}
}

// A real drop keeps exporterhelper's line as it is: at error, with its
// stack trace and dropped_items.
func TestPermanentDropKeepsExporterhelperLine(t *testing.T) {
	b := newBackend(t, reply(http.StatusBadRequest))
	cfg := testConfig(b.URL)
	withMemoryQueue(cfg, 1)
	set, logs := observedSettings(t)
	ctx := context.Background()
	exp, err := newFactory(retrytest.NewClock(start)).CreateTraces(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(t, exp.Shutdown(ctx)) }()
	require.NoError(t, exp.ConsumeTraces(ctx, spans("bad", 4)))
	require.Eventually(t, func() bool { return logs.FilterMessageSnippet("Dropping data").Len() == 1 }, 10*time.Second, 5*time.Millisecond)
	e := logs.FilterMessageSnippet("Dropping data").All()[0]
	assert.Equal(t, zapcore.ErrorLevel, e.Level)
	assert.NotEmpty(t, e.Stack)
	assert.EqualValues(t, 4, e.ContextMap()["dropped_items"])
	assert.Contains(t, e.ContextMap()["error"], "400")
}

// The core rewrites only exporterhelper's two messages, and only for an
// interrupted payload; the level of the wrapped core still applies.
func TestHelperLogCore(t *testing.T) {
	interrupted := &interruptedError{err: fmt.Errorf("export of 3 traces items interrupted after 1 attempts")}
	// What exporterhelper's retry sender returns once Shutdown ends its wait.
	shutdown := fmt.Errorf("%s%w", helperShutdownPrefix, interrupted)
	other := fmt.Errorf("no more retries left: %w", interrupted)
	plain := fmt.Errorf("backend said no")

	type line struct {
		level zapcore.Level
		msg   string
	}
	for _, tc := range []struct {
		name       string
		persistent bool
		level      zapcore.Level // of the wrapped core
		log        func(*zap.Logger)
		want       []line
	}{
		{"retry line, interrupted", true, zapcore.DebugLevel, func(l *zap.Logger) {
			l.Info(helperRetryMsg, zap.Error(interrupted), zap.String("interval", "1h0m0s"))
		}, nil},
		{"retry line, other error", false, zapcore.DebugLevel, func(l *zap.Logger) {
			l.Info(helperRetryMsg, zap.Error(plain), zap.String("interval", "1s"))
		}, []line{{zapcore.InfoLevel, helperRetryMsg}}},
		{"drop line, shutdown, persistent", true, zapcore.DebugLevel, func(l *zap.Logger) {
			l.Error(helperDropMsg, zap.Error(shutdown), zap.Int("dropped_items", 3))
		}, []line{{zapcore.InfoLevel, keptMsg}}},
		{"drop line, shutdown, persistent, core at warn", true, zapcore.WarnLevel, func(l *zap.Logger) {
			l.Error(helperDropMsg, zap.Error(shutdown), zap.Int("dropped_items", 3))
		}, nil},
		{"drop line, shutdown, memory", false, zapcore.DebugLevel, func(l *zap.Logger) {
			l.Error(helperDropMsg, zap.Error(shutdown), zap.Int("dropped_items", 3))
		}, nil},
		{"drop line, interrupted but not by shutdown", true, zapcore.DebugLevel, func(l *zap.Logger) {
			l.Error(helperDropMsg, zap.Error(other), zap.Int("dropped_items", 3))
		}, []line{{zapcore.ErrorLevel, helperDropMsg}}},
		{"drop line with a suffix, permanent", false, zapcore.DebugLevel, func(l *zap.Logger) {
			l.Error(helperDropMsg+" Try enabling sending_queue.", zap.Error(plain), zap.Int("dropped_items", 3))
		}, []line{{zapcore.ErrorLevel, helperDropMsg + " Try enabling sending_queue."}}},
		{"other lines", false, zapcore.DebugLevel, func(l *zap.Logger) {
			l.Error("Exporting failed. Rejecting data.", zap.Error(shutdown))
			l.Debug("something", zap.Error(interrupted))
		}, []line{{zapcore.ErrorLevel, "Exporting failed. Rejecting data."}, {zapcore.DebugLevel, "something"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(tc.level)
			set := exportertest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core, zap.AddStacktrace(zapcore.ErrorLevel)).With(zap.String("otelcol.component.id", "x"))
			cfg := createDefaultConfig().(*Config)
			if tc.persistent {
				id := persistStorageID
				cfg.QueueConfig.Get().StorageID = &id
			}
			tc.log(helperSettings(set, cfg).Logger)
			var got []line
			for _, e := range logs.All() {
				got = append(got, line{e.Level, e.Message})
				assert.Equal(t, "x", e.ContextMap()["otelcol.component.id"], "fields added with With are kept")
				if e.Message == keptMsg {
					assert.Empty(t, e.Stack)
					assert.EqualValues(t, 3, e.ContextMap()["items"])
					assert.Equal(t, shutdown.Error(), e.ContextMap()["error"])
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
