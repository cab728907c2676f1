// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// encodeHarness is a traces exporter driven without exporterhelper, so a
// test sees each payload as the queue would hold it.
type encodeHarness struct {
	e     *baseExporter
	clock *retrytest.Clock
}

func startEncodeHarness(t *testing.T, cfg *Config, clock *retrytest.Clock) *encodeHarness {
	t.Helper()
	require.NoError(t, cfg.Validate())
	e, _, err := build(exportertest.NewNopSettings(metadata.Type), cfg, tracesSignal, clock)
	require.NoError(t, err)
	require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() {
		e.stop()
		require.NoError(t, e.shutdown(context.Background()))
	})
	return &encodeHarness{e: e, clock: clock}
}

// enter hands a batch of n spans to the exporter as the queue's converter does.
func (h *encodeHarness) enter(t *testing.T, n int) *payload {
	t.Helper()
	r, err := h.e.newPayload(context.Background(), n, ptraceotlp.NewExportRequestFromTraces(spans("enc", n)))
	require.NoError(t, err)
	return r.(*payload)
}

// encodedAtEntry says whether the payload held its bytes when it entered.
func encodedAtEntry(p *payload) bool { return p.pending == nil && p.body != nil }

// TestEncodeAtAutoEncodesInTheConsumerUntilSomethingWaits: on a memory queue
// a batch that enters while nothing waits keeps its pdata until its consumer
// encodes it; one that enters while the gate holds is encoded at once, so a
// queue that fills during a throttle window holds compressed bytes. Either
// way every attempt sends the same bytes under the same key.
func TestEncodeAtAutoEncodesInTheConsumerUntilSomethingWaits(t *testing.T) {
	srv := newBackend(t, reply(http.StatusTooManyRequests, "Retry-After", "60"), reply(http.StatusOK))
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, 1)
	cfg.EncodeAt = EncodeAtAuto
	h := startEncodeHarness(t, cfg, retrytest.NewClock(start))

	first := h.enter(t, 3)
	require.False(t, encodedAtEntry(first), "nothing waits: the consumer encodes")
	assert.Equal(t, tracesSizer.TracesSize(spans("enc", 3)), first.BytesSize(), "before encoding, the queue counts the protobuf size")

	done := make(chan error, 1)
	go func() { done <- h.e.push(context.Background(), first) }()
	require.True(t, h.clock.WaitForTimers(1, 10*time.Second), "the 429 holds the gate for 60 s")

	held := h.enter(t, 5)
	assert.True(t, encodedAtEntry(held), "the gate holds: encoded as it enters")
	assert.Equal(t, len(held.body), held.BytesSize())

	h.clock.Advance(time.Minute)
	require.NoError(t, <-done)
	got := srv.got()
	require.Len(t, got, 2)
	assert.Equal(t, got[0].Body, got[1].Body, "the retry sent the bytes the consumer made for the first attempt")
	assert.Equal(t, got[0].Header.Get("Idempotency-Key"), got[1].Header.Get("Idempotency-Key"))
	assert.Equal(t, first.key.String(), got[0].Header.Get("Idempotency-Key"), "the key minted at entry")
	assert.Equal(t, 3, spanCount(t, got[0].Body))
	assert.Nil(t, first.pending, "the pdata is let go once encoded")

	require.NoError(t, h.e.push(context.Background(), held))
	got = srv.got()
	require.Len(t, got, 3)
	assert.Equal(t, held.body, got[2].Body, "the bytes made at entry are the bytes sent")
	assert.Equal(t, 5, spanCount(t, got[2].Body))

	// Once the window is over and nothing waits, the consumer encodes again.
	assert.False(t, encodedAtEntry(h.enter(t, 2)))
}

// TestEncodeAtAutoEncodesAtEntryWhileAPayloadWaitsForItsSlot: a payload
// that waits with the gate open (here for a spent RateLimit quota) is
// something waiting too: what enters meanwhile may queue for long.
func TestEncodeAtAutoEncodesAtEntryWhileAPayloadWaitsForItsSlot(t *testing.T) {
	srv := newBackend(t, reply(http.StatusOK, "RateLimit-Policy", `"default";q=10;w=30`, "RateLimit", `"default";r=0;t=30`), reply(http.StatusOK))
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, 1)
	cfg.EncodeAt = EncodeAtAuto
	h := startEncodeHarness(t, cfg, retrytest.NewClock(start))

	require.NoError(t, h.e.push(context.Background(), h.enter(t, 1)), "accepted; the quota is spent for 30 s")
	second := h.enter(t, 1)
	require.False(t, encodedAtEntry(second), "nothing waits yet")
	done := make(chan error, 1)
	go func() { done <- h.e.push(context.Background(), second) }()
	require.True(t, h.clock.WaitForTimers(1, 10*time.Second), "the second payload waits for the quota's reset")
	reason, _ := h.e.loop.Gate().State()
	require.Zero(t, reason, "the gate is open: only the pacer holds the payload")
	assert.True(t, encodedAtEntry(h.enter(t, 1)), "a payload waits for its slot: encoded as it enters")
	h.clock.Advance(time.Minute)
	require.NoError(t, <-done)
	assert.Len(t, srv.got(), 2)
}

// TestEncodeAtModes: entry always encodes at entry, consumer never does
// (even while the gate holds), and a persistent queue, a queue sized in
// bytes or no queue at all get the bytes at entry under auto.
func TestEncodeAtModes(t *testing.T) {
	storage := component.MustNewID("file_storage")
	for _, tc := range []struct {
		name   string
		mode   EncodeAt
		queue  func(*Config)
		atOpen bool // encoded at entry while nothing waits
		atHeld bool // encoded at entry while the gate holds
	}{
		{"auto memory queue", EncodeAtAuto, func(c *Config) { withMemoryQueue(c, 1) }, false, true},
		{"entry memory queue", EncodeAtEntry, func(c *Config) { withMemoryQueue(c, 1) }, true, true},
		{"consumer memory queue", EncodeAtConsumer, func(c *Config) { withMemoryQueue(c, 1) }, false, false},
		{"auto persistent queue", EncodeAtAuto, func(c *Config) {
			withMemoryQueue(c, 1)
			c.QueueConfig.Get().StorageID = &storage
		}, true, true},
		{"auto queue sized in bytes", EncodeAtAuto, func(c *Config) {
			withMemoryQueue(c, 1)
			c.QueueConfig.Get().Sizer = exporterhelper.RequestSizerTypeBytes
			c.QueueConfig.Get().QueueSize = 1 << 20
		}, true, true},
		{"auto no queue", EncodeAtAuto, func(*Config) {}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t, reply(http.StatusTooManyRequests, "Retry-After", "60"), reply(http.StatusOK))
			cfg := testConfig(srv.URL)
			tc.queue(cfg)
			cfg.EncodeAt = tc.mode
			h := startEncodeHarness(t, cfg, retrytest.NewClock(start))

			first := h.enter(t, 2)
			assert.Equal(t, tc.atOpen, encodedAtEntry(first), "while nothing waits")
			done := make(chan error, 1)
			go func() { done <- h.e.push(context.Background(), first) }()
			require.True(t, h.clock.WaitForTimers(1, 10*time.Second))
			held := h.enter(t, 2)
			assert.Equal(t, tc.atHeld, encodedAtEntry(held), "while the gate holds")
			h.clock.Advance(time.Minute)
			require.NoError(t, <-done)
			require.NoError(t, h.e.push(context.Background(), held))
			for i, r := range srv.got() {
				assert.Equal(t, 2, spanCount(t, r.Body), "request %d", i+1)
			}
		})
	}
}

func spanCount(t *testing.T, body []byte) int {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	require.NoError(t, req.UnmarshalProto(gunzip(t, body)))
	return req.Traces().SpanCount()
}

// TestRequestSizeIsTheProtobufSize: a payload not yet encoded reports, for
// the queue, the size its protobuf encoding will have, for every signal.
func TestRequestSizeIsTheProtobufSize(t *testing.T) {
	md := pmetric.NewMetrics()
	md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(7)
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("a log line")
	for _, req := range []otlpRequest{
		ptraceotlp.NewExportRequestFromTraces(spans("size", 3)),
		pmetricotlp.NewExportRequestFromMetrics(md),
		plogotlp.NewExportRequestFromLogs(ld),
	} {
		raw, err := req.MarshalProto()
		require.NoError(t, err)
		assert.Equal(t, len(raw), requestSize(req), "%T", req)
		assert.NotZero(t, requestSize(req))
	}
}

// TestPersistingAPayloadNotYetEncodedIsRefused: a persistent queue gets
// payloads encoded at entry; one that is not (which the config prevents)
// is refused rather than stored without its bytes.
func TestPersistingAPayloadNotYetEncodedIsRefused(t *testing.T) {
	p := &payload{items: 1, pending: ptraceotlp.NewExportRequestFromTraces(spans("p", 1))}
	_, err := payloadEncoding{}.Marshal(context.Background(), p)
	require.ErrorContains(t, err, "not encoded yet")
}
