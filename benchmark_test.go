// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlphttpretry/otlphttpretry"
)

// The benchmarks run the core otlp_http exporter and this one side by side,
// same batch, same loopback server, no queue, so that each op is one
// ConsumeTraces from the pipeline to the backend's answer. Compare them as
// ratios (see docs/benchmarks.md); absolute numbers depend on the machine.

func benchBatch(spans int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range spans {
		s := ss.Spans().AppendEmpty()
		s.SetName("benchmark-span")
		s.SetTraceID([16]byte{byte(i), byte(i >> 8), 1})
		s.SetSpanID([8]byte{byte(i), byte(i >> 8), 1})
		s.Attributes().PutStr("http.route", "/api/v1/items/{id}")
		s.Attributes().PutInt("http.status_code", 200)
	}
	return td
}

// server answers 503 to every failEvery-th request (0: never), 200 otherwise,
// and counts the requests it accepted in accepted (when not nil).
func server(b *testing.B, failEvery int64, accepted *atomic.Int64) string {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if failEvery > 0 && n.Add(1)%failEvery == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if accepted != nil {
			accepted.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// coreConfig is the core exporter's default config to url, without a
// queue and with a 1 µs backoff.
func coreConfig(url string) *otlphttpexporter.Config {
	cfg := otlphttpexporter.NewFactory().CreateDefaultConfig().(*otlphttpexporter.Config)
	cfg.ClientConfig.Endpoint = url
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.InitialInterval = time.Microsecond
	cfg.RetryConfig.RandomizationFactor = 0
	return cfg
}

// retryConfig is this exporter's default config to url, without a queue
// and with a 1 µs backoff.
func retryConfig(url string) *otlphttpretry.Config {
	cfg := otlphttpretry.NewFactory().CreateDefaultConfig().(*otlphttpretry.Config)
	cfg.ClientConfig.Endpoint = url
	cfg.QueueConfig = configoptional.None[otlphttpretry.QueueConfig]()
	cfg.Backoff.InitialInterval = time.Microsecond
	cfg.Backoff.Jitter = 0
	return cfg
}

func coreExporter(b *testing.B, url string) exporter.Traces {
	return start(b, otlphttpexporter.NewFactory(), coreConfig(url))
}

func retryExporter(b *testing.B, url string, pacing bool) exporter.Traces {
	cfg := retryConfig(url)
	cfg.Pacing.Enabled = pacing
	return start(b, otlphttpretry.NewFactory(), cfg)
}

func start(b *testing.B, f exporter.Factory, cfg component.Config) exporter.Traces {
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

func run(b *testing.B, exp exporter.Traces, td ptrace.Traces) {
	b.ReportAllocs()
	for b.Loop() {
		if err := exp.ConsumeTraces(context.Background(), td); err != nil {
			b.Fatal(err)
		}
	}
}

// The sub-benchmarks are named exporter=<type>, so that benchstat puts
// them side by side: benchstat -col /exporter (see docs/benchmarks.md).

// BenchmarkExport: every batch accepted at the first attempt; this
// exporter with pacing on (the default) and off.
func BenchmarkExport(b *testing.B) {
	td := benchBatch(500)
	b.Run("exporter=otlp_http", func(b *testing.B) { run(b, coreExporter(b, server(b, 0, nil)), td) })
	b.Run("exporter=otlp_http_retry", func(b *testing.B) { run(b, retryExporter(b, server(b, 0, nil), true), td) })
	b.Run("exporter=otlp_http_retry_pacing_off", func(b *testing.B) { run(b, retryExporter(b, server(b, 0, nil), false), td) })
}

// BenchmarkExportWithRetry: every batch refused once with 503, so each op
// is two attempts; the core exporter marshals and compresses the batch
// again for the second one. The core exporter waits a 1 µs backoff; this
// one waits on a clock that skips its waits (the floor under its waits is
// a second: a real one would time the wait, not the work).
func BenchmarkExportWithRetry(b *testing.B) {
	td := benchBatch(500)
	b.Run("exporter=otlp_http", func(b *testing.B) { run(b, coreExporter(b, server(b, 2, nil)), td) })
	b.Run("exporter=otlp_http_retry", func(b *testing.B) {
		cfg := retryConfig(server(b, 2, nil))
		run(b, start(b, otlphttpretry.NewFactoryWithClock(&skipClock{}), cfg), td)
	})
}

// skipClock is the wall clock, except that a wait returns at once and
// moves the clock on by its length.
type skipClock struct {
	mu      sync.Mutex
	skipped time.Duration
}

func (c *skipClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skipped)
}

func (c *skipClock) After(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	c.skipped += max(d, 0)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch, func() {}
}

// withQueue gives both exporters' configs the same memory queue: the
// default 10 consumers, 100 slots, and a caller that waits for a slot when
// it is full (as a receiver under back-pressure does).
func withQueue() exporterhelper.QueueBatchConfig {
	q := exporterhelper.NewDefaultQueueConfig()
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	q.QueueSize = 100
	q.BlockOnOverflow = true
	return q
}

// withRetryQueue is withQueue in this exporter's sending_queue.
func withRetryQueue() otlphttpretry.QueueConfig {
	q := withQueue()
	return otlphttpretry.QueueConfig{Sizer: q.Sizer, QueueSize: q.QueueSize, BlockOnOverflow: q.BlockOnOverflow, NumConsumers: q.NumConsumers}
}

// runQueued sends td from four callers at once (the scenario benchmark's
// four senders) into a queued exporter, and stops the clock only when the
// backend has received every batch: an op is one batch end to end, with
// the encoding wherever the exporter does it.
func runQueued(b *testing.B, exp exporter.Traces, got *atomic.Int64, td ptrace.Traces) {
	b.ReportAllocs()
	b.SetParallelism(max(1, 4/runtime.GOMAXPROCS(0)))
	var sent atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := exp.ConsumeTraces(context.Background(), td); err != nil {
				b.Error(err)
				return
			}
			sent.Add(1)
		}
	})
	for got.Load() < sent.Load() {
		runtime.Gosched()
	}
	b.StopTimer()
}

// BenchmarkQueuedExport: the same memory queue in front of both
// exporters, every batch accepted. This exporter encodes each batch as it
// enters (encode_at: entry, the default: gzip on the caller's goroutine, as
// on the receiver's) or in its consumers while nothing waits (auto).
func BenchmarkQueuedExport(b *testing.B) {
	td := benchBatch(500)
	b.Run("exporter=otlp_http", func(b *testing.B) {
		var got atomic.Int64
		cfg := coreConfig(server(b, 0, &got))
		cfg.QueueConfig = configoptional.Some(withQueue())
		runQueued(b, start(b, otlphttpexporter.NewFactory(), cfg), &got, td)
	})
	for _, at := range []otlphttpretry.EncodeAt{otlphttpretry.EncodeAtEntry, otlphttpretry.EncodeAtAuto} {
		name := "exporter=otlp_http_retry"
		if at != otlphttpretry.EncodeAtEntry {
			name += "_encode_at_" + string(at)
		}
		b.Run(name, func(b *testing.B) {
			var got atomic.Int64
			cfg := retryConfig(server(b, 0, &got))
			cfg.QueueConfig = configoptional.Some(withRetryQueue())
			cfg.EncodeAt = at
			runQueued(b, start(b, otlphttpretry.NewFactory(), cfg), &got, td)
		})
	}
}

// BenchmarkSmallRequests: requests of 10 spans, as SDKs send them, from 20
// callers at once into both exporters with sending_queue::batch at its
// defaults (the scenario benchmark's small-requests load, in process),
// callers waiting for room when the queue is full. An op is one request;
// the clock stops once Shutdown has sent everything.
func BenchmarkSmallRequests(b *testing.B) {
	td := benchBatch(10)
	b.Run("exporter=otlp_http", func(b *testing.B) {
		cfg := coreConfig(server(b, 0, nil))
		q := exporterhelper.NewDefaultQueueConfig()
		q.Batch = configoptional.Some(exporterhelper.NewDefaultBatchConfig())
		q.BlockOnOverflow = true
		cfg.QueueConfig = configoptional.Some(q)
		runSmall(b, otlphttpexporter.NewFactory(), cfg, td)
	})
	b.Run("exporter=otlp_http_retry", func(b *testing.B) {
		cfg := retryConfig(server(b, 0, nil))
		q := otlphttpretry.NewFactory().CreateDefaultConfig().(*otlphttpretry.Config).QueueConfig
		q.Get().Batch.GetOrInsertDefault()
		q.Get().BlockOnOverflow = true
		cfg.QueueConfig = q
		runSmall(b, otlphttpretry.NewFactory(), cfg, td)
	})
}

func runSmall(b *testing.B, f exporter.Factory, cfg component.Config, td ptrace.Traces) {
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	// A request of its own for each op: the core exporter's batcher moves
	// the data out of what it is given.
	tds := make([]ptrace.Traces, b.N)
	for i := range tds {
		tds[i] = ptrace.NewTraces()
		td.CopyTo(tds[i])
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(max(1, 20/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := exp.ConsumeTraces(context.Background(), tds[next.Add(1)-1]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if err := exp.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
}
