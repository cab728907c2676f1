// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// batchConfig is testConfig with a memory queue and sending_queue::batch:
// sizer items, min_size min, max_size max, flush_timeout 200ms.
func batchConfig(endpoint string, minSize, maxSize int64) *Config {
	cfg := testConfig(endpoint)
	q := newDefaultQueueConfig()
	b := newDefaultBatchConfig()
	b.MinSize, b.MaxSize = minSize, maxSize
	q.Batch = configoptional.Some(b)
	cfg.QueueConfig = configoptional.Some(q)
	return cfg
}

func batchOf(cfg *Config) *BatchConfig { return cfg.QueueConfig.Get().Batch.Get() }

// named returns a request of n spans named name-0 … name-(n-1).
func named(name string, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range n {
		s := ss.Spans().AppendEmpty()
		s.SetName(fmt.Sprintf("%s-%d", name, i))
		s.SetSpanID([8]byte{byte(i + 1), byte(i >> 8)})
	}
	return td
}

// waitRequests waits until the backend has received n requests.
func waitRequests(t *testing.T, b *backend, n int) []received {
	t.Helper()
	require.Eventually(t, func() bool { return len(b.got()) >= n }, 10*time.Second, time.Millisecond,
		"the backend received %d requests, want %d", len(b.got()), n)
	return b.got()
}

// A batch is formed once it holds min_size items, and its request is the
// protobuf bytes of the requests that went into it, one after the other,
// compressed once: nothing is decoded or re-encoded. Each batch has a key
// of its own, minted when it was formed. What is left waits flush_timeout.
func TestBatchFormsAtMinSizeFromTheRequestsBytes(t *testing.T) {
	srv := newBackend(t)
	cfg := batchConfig(srv.URL, 100, 0)
	clock := retrytest.NewClock(start)
	h := startTraces(t, cfg, clock)

	var want [][]byte // each request's protobuf bytes
	for i := range 25 {
		td := named(fmt.Sprintf("r%02d", i), 10)
		raw, err := tracesMarshaler.MarshalTraces(td)
		require.NoError(t, err)
		want = append(want, raw)
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), td))
	}
	got := waitRequests(t, srv, 2)
	require.Len(t, got, 2, "two batches of 100 spans; the last 50 wait for flush_timeout")
	sort.Slice(got, func(i, j int) bool { return spanNames(t, got[i].Body)[0] < spanNames(t, got[j].Body)[0] })
	for i, r := range got {
		assert.Equal(t, bytes.Join(want[10*i:10*i+10], nil), gunzip(t, r.Body), "batch %d is its requests' bytes, concatenated", i)
		names := spanNames(t, r.Body)
		assert.Len(t, names, 100)
		assert.Equal(t, fmt.Sprintf("r%02d-0", 10*i), names[0])
		assert.Equal(t, fmt.Sprintf("r%02d-9", 10*i+9), names[99])
	}
	k0, k1 := uuid.MustParse(key(got[0])), uuid.MustParse(key(got[1]))
	assert.NotEqual(t, k0, k1, "a key per batch")
	assert.Equal(t, uuid.Version(7), k0.Version())

	clock.Advance(200 * time.Millisecond)
	got = waitRequests(t, srv, 3)
	assert.Equal(t, bytes.Join(want[20:], nil), gunzip(t, got[2].Body), "the rest, at flush_timeout")
}

// Data below min_size waits for flush_timeout from the first data of its
// batch, and not a moment less.
func TestBatchFlushTimeout(t *testing.T) {
	srv := newBackend(t)
	cfg := batchConfig(srv.URL, 1000, 0)
	batchOf(cfg).FlushTimeout = time.Second
	clock := retrytest.NewClock(start)
	h := startTraces(t, cfg, clock)

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), named("a", 3)))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the batch's flush_timeout is running")
	clock.Advance(999 * time.Millisecond)
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), named("b", 2)), "a second request joins the open batch")
	assert.Empty(t, srv.got(), "before flush_timeout, nothing is sent")
	clock.Advance(time.Millisecond)
	got := waitRequests(t, srv, 1)
	assert.Equal(t, []string{"a-0", "a-1", "a-2", "b-0", "b-1"}, spanNames(t, got[0].Body))
}

// With the items sizer, a request that would take a batch past max_size
// goes into the next batch, and a request larger than max_size on its own
// is split into pieces of max_size, in order, each item once.
func TestBatchMaxSizeItems(t *testing.T) {
	srv := newBackend(t)
	cfg := batchConfig(srv.URL, 30, 30)
	clock := retrytest.NewClock(start)
	h := startTraces(t, cfg, clock)

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), named("big", 100)))
	got := waitRequests(t, srv, 3)
	var all []string
	for _, r := range got {
		n := spanNames(t, r.Body)
		assert.Len(t, n, 30)
		all = append(all, n...)
	}
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), named("small", 25)))
	got = waitRequests(t, srv, 4)
	assert.Equal(t, []string{"big-90", "big-91", "big-92", "big-93", "big-94", "big-95", "big-96", "big-97", "big-98", "big-99"}, spanNames(t, got[3].Body),
		"the 10 left over are formed without the next request, which would overflow max_size")
	clock.Advance(200 * time.Millisecond)
	got = waitRequests(t, srv, 5)
	assert.Len(t, spanNames(t, got[4].Body), 25)
	all = append(all, spanNames(t, got[3].Body)...)
	sort.Strings(all)
	want := spanNames(t, mustGzipTraces(t, named("big", 100)))
	sort.Strings(want)
	assert.Equal(t, want, all, "every span of the split request once")
}

func mustGzipTraces(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	raw, err := tracesMarshaler.MarshalTraces(td)
	require.NoError(t, err)
	body, err := compress(configcompression.TypeGzip, 0, raw)
	require.NoError(t, err)
	return body
}

// incompressible returns a request of n spans whose names are random hex
// of size bytes: gzip cannot make them much smaller.
func incompressible(t *testing.T, name string, n, size int) ptrace.Traces {
	t.Helper()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range n {
		b := make([]byte, size/2)
		_, err := rand.Read(b)
		require.NoError(t, err)
		s := ss.Spans().AppendEmpty()
		s.SetName(fmt.Sprintf("%s-%d-%s", name, i, hex.EncodeToString(b)))
	}
	return td
}

// With the bytes sizer, max_size bounds the request as sent: the body after
// compression. Compressible data fills batches whose uncompressed request
// is larger than max_size; incompressible data is split before it is keyed
// so that no body exceeds max_size. Every span arrives once.
func TestBatchMaxSizeBytesBoundsTheBodyAsSent(t *testing.T) {
	const limit = 4096
	for _, tc := range []struct {
		name string
		make func(i int) ptrace.Traces
	}{
		{"compressible", func(i int) ptrace.Traces { return named(fmt.Sprintf("c%03d", i), 50) }},
		{"incompressible", func(i int) ptrace.Traces { return incompressible(t, fmt.Sprintf("i%03d", i), 5, 300) }},
		{"one request larger than max_size", func(i int) ptrace.Traces { return incompressible(t, fmt.Sprintf("l%03d", i), 40, 300) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t)
			cfg := batchConfig(srv.URL, limit, limit)
			batchOf(cfg).Sizer = exporterhelper.RequestSizerTypeBytes
			clock := retrytest.NewClock(start)
			h := startTraces(t, cfg, clock)
			var sent []string
			consume := func(from, to int) {
				for i := from; i < to; i++ {
					td := tc.make(i)
					sent = append(sent, spanNames(t, mustGzipTraces(t, td))...)
					require.NoError(t, h.exp.ConsumeTraces(context.Background(), td))
				}
				clock.Advance(200 * time.Millisecond)
			}
			// The batcher learns the compression ratio from the batches it
			// forms (learnRatio, before they are sent): the first ones, sized
			// before anything was learned, close at max_size uncompressed.
			// Wait until one has reached the backend, so that the rest are
			// sized by what was learned, whatever the goroutines' timing.
			consume(0, 5)
			require.Eventually(t, func() bool { return len(srv.got()) > 0 }, 10*time.Second, time.Millisecond)
			consume(5, 40)
			var got []string
			var largestRaw int
			require.Eventually(t, func() bool {
				got, largestRaw = nil, 0
				for _, r := range srv.got() {
					got = append(got, spanNames(t, r.Body)...)
					largestRaw = max(largestRaw, len(gunzip(t, r.Body)))
				}
				return len(got) >= len(sent)
			}, 10*time.Second, time.Millisecond)
			keys := map[string]bool{}
			for _, r := range srv.got() {
				assert.LessOrEqual(t, len(r.Body), limit, "a body as sent is at most max_size")
				keys[key(r)] = true
			}
			assert.Len(t, keys, len(srv.got()), "a key per request")
			sort.Strings(got)
			sort.Strings(sent)
			assert.Equal(t, sent, got, "every span once")
			if tc.name == "compressible" {
				assert.Greater(t, largestRaw, limit, "the bound is on the compressed body: batches of compressible data hold more than max_size uncompressed")
			}
			t.Logf("%d requests, largest uncompressed %d bytes", len(srv.got()), largestRaw)
		})
	}
}

// One item that is larger than max_size once compressed cannot be sent
// within the bound: it is dropped (too_large) with an error that says so,
// and the caller waiting for the result gets it as permanent.
func TestBatchSingleItemLargerThanMaxBytesIsDropped(t *testing.T) {
	srv := newBackend(t)
	cfg := batchConfig(srv.URL, 0, 1024)
	batchOf(cfg).Sizer = exporterhelper.RequestSizerTypeBytes
	cfg.QueueConfig.Get().WaitForResult = true
	h := startTracesWithID(t, cfg, retrytest.NewClock(start))

	err := h.exp.ConsumeTraces(context.Background(), incompressible(t, "huge", 1, 4000))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err))
	assert.Contains(t, err.Error(), "a single item is larger than sending_queue::batch::max_size")
	assert.Empty(t, srv.got())
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(1, attrReason("too_large")),
	}, telOpts...)
}

// A batch keeps its key and its bytes on every attempt.
func TestBatchSameKeyAndBytesOnEveryAttempt(t *testing.T) {
	srv := newBackend(t, reply(http.StatusServiceUnavailable), reply(http.StatusTooManyRequests, "Retry-After", "1"), reply(http.StatusOK))
	cfg := batchConfig(srv.URL, 20, 0)
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), named("a", 20)))
	got := waitRequests(t, srv, 3)
	for _, r := range got[1:] {
		assert.Equal(t, key(got[0]), key(r), "same key on every attempt")
		assert.True(t, bytes.Equal(got[0].Body, r.Body), "same bytes on every attempt")
	}
	assert.Len(t, spanNames(t, got[2].Body), 20)
}

// With wait_for_result, each caller gets the final outcome of its own data
// after the retry loop, even when its data shares a batch with others': a
// batch dropped as permanent fails both callers, a batch delivered after a
// retry succeeds for both, and neither returns before the last attempt.
func TestBatchWaitForResultGivesEachCallerItsBatchsOutcome(t *testing.T) {
	for _, tc := range []struct {
		name      string
		final     int
		permanent bool
	}{
		{"delivered after a retry", http.StatusOK, false},
		{"dropped as permanent after a retry", http.StatusBadRequest, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int32
			srv := newBackend(t, func(w http.ResponseWriter) {
				attempts.Add(1)
				w.WriteHeader(http.StatusServiceUnavailable)
			}, func(w http.ResponseWriter) {
				attempts.Add(1)
				w.WriteHeader(tc.final)
			})
			cfg := batchConfig(srv.URL, 20, 0)
			cfg.QueueConfig.Get().WaitForResult = true
			clock := retrytest.NewClock(start)
			h := startTraces(t, cfg, clock)

			type outcome struct {
				err      error
				attempts int32
			}
			results := make(chan outcome, 2)
			var wg sync.WaitGroup
			for _, name := range []string{"a", "b"} {
				wg.Go(func() {
					err := h.exp.ConsumeTraces(context.Background(), named(name, 10))
					results <- outcome{err, attempts.Load()}
				})
			}
			waitForWait(t, clock, time.Second, "the batch waits for its retry")
			clock.Advance(time.Second)
			wg.Wait()
			close(results)
			for r := range results {
				assert.Equal(t, int32(2), r.attempts, "the caller is answered after the retry loop, not at enqueue")
				if tc.permanent {
					require.Error(t, r.err)
					assert.True(t, consumererror.IsPermanent(r.err), "a permanent drop reaches every caller of the batch as permanent")
				} else {
					assert.NoError(t, r.err)
				}
			}
			got := srv.got()
			require.Len(t, got, 2)
			assert.Len(t, spanNames(t, got[0].Body), 20, "the two callers' data shared one batch")
		})
	}
}

// With a memory queue, the queue's capacity is counted as data enters,
// open and formed batches together, in the queue's unit: once it is full,
// a request is refused (queue_full) as exporterhelper's queue would refuse
// it, and room comes back when batches finish.
func TestBatchMemoryQueueCapacityCountsAtTheDoor(t *testing.T) {
	release := make(chan struct{})
	srv := newBackend(t, func(w http.ResponseWriter) {
		<-release
		w.WriteHeader(http.StatusOK)
	})
	defer close(release)
	cfg := batchConfig(srv.URL, 20, 0)
	q := cfg.QueueConfig.Get()
	q.QueueSize, q.NumConsumers = 5, 1
	h := startTracesWithID(t, cfg, retrytest.NewClock(start))

	for i := range 5 {
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), named(fmt.Sprint(i), 10)))
	}
	waitRequests(t, srv, 1)
	err := h.exp.ConsumeTraces(context.Background(), named("refused", 7))
	require.ErrorIs(t, err, exporterhelper.ErrQueueIsFull, "five requests held (two batches sent or queued, one open): full")
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(7, attrReason("queue_full")),
	}, telOpts...)
	release <- struct{}{}
	require.Eventually(t, func() bool {
		return h.exp.ConsumeTraces(context.Background(), named("later", 1)) == nil
	}, 10*time.Second, time.Millisecond, "room comes back once the first batch is delivered")
}

// At shutdown, what the batcher still holds is formed and sent (memory
// queue, healthy destination): nothing is left in an open batch.
func TestBatchShutdownSendsOpenBatches(t *testing.T) {
	srv := newBackend(t)
	cfg := batchConfig(srv.URL, 1000, 0)
	h := startTraces(t, cfg, retrytest.NewClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), named("open", 4)))
	require.NoError(t, h.exp.Shutdown(context.Background()))
	got := srv.got()
	require.Len(t, got, 1)
	assert.Equal(t, []string{"open-0", "open-1", "open-2", "open-3"}, spanNames(t, got[0].Body))
	assert.Error(t, h.exp.ConsumeTraces(context.Background(), named("late", 1)), "nothing enters after shutdown")
}

// tenantCtx is a request's context with the client metadata a receiver
// with include_metadata gives it.
func tenantCtx(tenant string) context.Context {
	return client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{"x-scope-orgid": {tenant}})})
}

// With partition::metadata_keys, batches are formed per tenant and each
// tenant has its own gate: tenant A, held by a 429 for a minute, does not
// hold tenant B, whose batches keep flowing; A's data is sent once its
// wait is over. Two consumers only: A's batches beyond the one at its gate
// wait in A's line, off the consumers, or A would take both.
func TestBatchTenantHeldByA429DoesNotHoldAnother(t *testing.T) {
	var refuseA atomic.Bool
	refuseA.Store(true)
	srv := &backend{}
	srv.Server = httptest.NewServer(tenantHandler(srv, &refuseA))
	t.Cleanup(srv.Close)
	cfg := batchConfig(srv.URL, 10, 0)
	batchOf(cfg).Partition.MetadataKeys = []string{"X-Scope-OrgID"}
	cfg.QueueConfig.Get().NumConsumers = 2
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, cfg, clock)

	require.NoError(t, h.exp.ConsumeTraces(tenantCtx("a"), named("a1", 10)))
	waitForWait(t, clock, time.Minute, "tenant A's batch got its 429 and waits for Retry-After")
	for i := range 5 {
		require.NoError(t, h.exp.ConsumeTraces(tenantCtx("b"), named(fmt.Sprintf("b%d", i), 10)))
		require.NoError(t, h.exp.ConsumeTraces(tenantCtx("a"), named(fmt.Sprintf("a%d", i+2), 10)))
	}
	// B's five batches arrive while A is held: the clock has not moved.
	require.Eventually(t, func() bool { return countTenant(t, srv.got(), "b", http.StatusOK) == 5 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return waitingPayloads(t, h) == 6 }, 10*time.Second, time.Millisecond,
		"A's six batches wait: one at its gate, five in its line")
	assert.Equal(t, 1, countTenant(t, srv.got(), "a", 0), "nothing of A's but its first request while held")
	for _, r := range srv.got() {
		names := spanNames(t, r.Body)
		tenant := names[0][:1]
		for _, n := range names {
			assert.True(t, strings.HasPrefix(n, tenant), "a batch holds one tenant's data: %v", names)
		}
	}

	refuseA.Store(false)
	clock.Advance(time.Minute)
	require.Eventually(t, func() bool {
		clock.Advance(100 * time.Millisecond) // the pace after a hold starts slow
		return countTenant(t, srv.got(), "a", http.StatusOK) == 6
	}, 10*time.Second, time.Millisecond, "A's batches go once its wait is over")
}

// tenantHandler answers 429 Retry-After: 60 to requests of tenant A (span
// names starting with "a") while refuseA is set, 200 otherwise, and records
// the status with each request.
func tenantHandler(b *backend, refuseA *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readAll(r)
		status := http.StatusOK
		if refuseA.Load() && isTenant(body, "a") {
			w.Header().Set("Retry-After", "60")
			status = http.StatusTooManyRequests
		}
		h := r.Header.Clone()
		h.Set("X-Test-Status", fmt.Sprint(status))
		b.mu.Lock()
		b.requests = append(b.requests, received{Header: h, Body: body, URL: r.URL.String()})
		b.mu.Unlock()
		w.WriteHeader(status)
	})
}

func readAll(r *http.Request) []byte {
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	return buf.Bytes()
}

// isTenant reports whether a gzip'd traces body holds tenant's spans.
func isTenant(body []byte, tenant string) bool {
	raw, err := gunzipBytes(body)
	if err != nil {
		return false
	}
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil || td.SpanCount() == 0 {
		return false
	}
	return strings.HasPrefix(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name(), tenant)
}

// countTenant counts requests of tenant answered status (0: any).
func countTenant(_ *testing.T, got []received, tenant string, status int) int {
	n := 0
	for _, r := range got {
		if isTenant(r.Body, tenant) && (status == 0 || r.Header.Get("X-Test-Status") == fmt.Sprint(status)) {
			n++
		}
	}
	return n
}

// The partition's metadata goes with its batches: an auth extension (or
// headers_setter) reading client metadata from the request's context sees
// each batch's tenant, and only its own.
func TestBatchCarriesItsPartitionsMetadata(t *testing.T) {
	p := partitionOf(tenantCtx("acme"), []string{"X-Scope-OrgID"})
	info := client.FromContext(p.context())
	assert.Equal(t, []string{"acme"}, info.Metadata.Get("X-Scope-OrgID"))
	assert.NotEqual(t, partitionOf(tenantCtx("other"), []string{"X-Scope-OrgID"}).key, p.key)
	assert.Equal(t, p.key, partitionOf(tenantCtx("acme"), []string{"X-Scope-OrgID"}).key)
	none := partitionOf(context.Background(), []string{"X-Scope-OrgID"})
	assert.NotEqual(t, p.key, none.key, "no value is a partition of its own")
	assert.Empty(t, partitionOf(tenantCtx("acme"), nil).key, "without keys, one partition")
}

// A partitioned batch is stored with its partition and metadata, and comes
// back with them (and the same key and bytes); one without a partition is
// stored in the format earlier versions read.
func TestPayloadEncodingKeepsThePartition(t *testing.T) {
	p := newTestPayload(t, []byte("BODY"), 3, time.Unix(1, 2))
	p.partition = partitionOf(tenantCtx("acme"), []string{"X-Scope-OrgID", "absent"})
	data, err := payloadEncoding{}.Marshal(context.Background(), p)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), payloadMagicPartitioned))
	ctx, r, err := payloadEncoding{}.Unmarshal(data)
	require.NoError(t, err)
	back := r.(*payload)
	assert.Equal(t, p.key, back.key)
	assert.Equal(t, p.body, back.body)
	assert.Equal(t, p.items, back.items)
	assert.Equal(t, p.partition, back.partition)
	assert.Equal(t, []string{"acme"}, client.FromContext(ctx).Metadata.Get("X-Scope-OrgID"), "the batch is sent with its tenant after a restart")

	for cut := len(payloadMagic) + 24; cut < len(data)-len("BODY"); cut++ {
		_, _, err := payloadEncoding{}.Unmarshal(data[:cut])
		assert.Error(t, err, "truncated at %d", cut)
	}
}

// A fresh collector with the feature gate off has batching off; the gate
// turns it on with exporterhelper's defaults (the collector's standard).
func TestBatchDefaultFollowsTheFeatureGate(t *testing.T) {
	assert.False(t, createDefaultConfig().(*Config).batching(), "off by default, as before")
	setQueueBatchGate(t, true)
	cfg := createDefaultConfig().(*Config)
	require.True(t, cfg.batching(), "on with pkg.exporterhelper.queueBatchEnabled")
	assert.Equal(t, newDefaultBatchConfig(), *cfg.QueueConfig.Get().Batch.Get())
	cfg.ClientConfig.Endpoint = "http://localhost:4318"
	assert.NoError(t, cfg.Validate())
}

// The formed batches' parts, as the batcher hands them over, are only read:
// the caller's data is copied into parts, never taken.
func TestBatchDoesNotMutateTheCallersData(t *testing.T) {
	srv := newBackend(t)
	cfg := batchConfig(srv.URL, 5, 5)
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	td := named("mine", 12)
	before := ptrace.NewTraces()
	td.CopyTo(before)
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), td))
	assert.Equal(t, before, td)
	waitRequests(t, srv, 2)
}

// waitForWait waits until somebody waits d on clock.
func waitForWait(t *testing.T, clock *retrytest.Clock, d time.Duration, msg string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Contains(clock.Waits(), d) }, 10*time.Second, time.Millisecond, msg)
}

// gunzipBytes decodes a gzip body, for handlers (no t there).
func gunzipBytes(body []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// setQueueBatchGate sets exporterhelper's feature gate for the test.
func setQueueBatchGate(t *testing.T, on bool) {
	t.Helper()
	const id = "pkg.exporterhelper.queueBatchEnabled"
	var was bool
	featuregate.GlobalRegistry().VisitAll(func(g *featuregate.Gate) {
		if g.ID() == id {
			was = g.IsEnabled()
		}
	})
	require.NoError(t, featuregate.GlobalRegistry().Set(id, on))
	t.Cleanup(func() { require.NoError(t, featuregate.GlobalRegistry().Set(id, was)) })
}

// openRequests counts the requests in the batcher's open batches.
func (b *batcher) openRequests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, ob := range b.order {
		n += ob.requests
	}
	return n
}
