// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// contractReceiverConfig is the real otlp receiver, HTTP only, on a free
// local port. It answers the contract's retryable consumer errors with 503
// (no Retry-After) and its permanent ones with 500.
func contractReceiverConfig(t *testing.T) (*otlpreceiver.Config, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	cfg := otlpreceiver.NewFactory().CreateDefaultConfig().(*otlpreceiver.Config)
	http := cfg.Protocols.HTTP.GetOrInsertDefault()
	http.ServerConfig.NetAddr.Endpoint = addr
	require.False(t, cfg.Protocols.GRPC.HasValue(), "only the HTTP protocol is wanted")
	return cfg, "http://" + addr
}

// contractExporterConfig points the exporter at the receiver and makes the
// contract's checks meaningful and fast:
//   - no sending queue, so ConsumeX returns only after the payload was
//     delivered or dropped, and the contract counts settled numbers;
//   - a short, flat, jitter-free backoff with enough attempts that a
//     payload the receiver fails retryably (50 % per attempt in the
//     contract's scenarios) is in practice always delivered in the end;
//   - status_overrides 500: drop. The classifier retries every 5xx but 501,
//     505 and 511 by default (a 500 from a proxy is usually transient), but
//     the otlp receiver answers 500 only for a consumererror.Permanent
//     (gRPC Internal), which the contract requires never to be retried.
func contractExporterConfig(endpoint string, encoding EncodingType) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.ClientConfig.Endpoint = endpoint
	cfg.ClientConfig.Timeout = 5 * time.Second
	cfg.QueueConfig = configoptional.None[QueueConfig]()
	cfg.Encoding = encoding
	cfg.Backoff = retry.BackoffConfig{
		MaxAttempts:     64,
		InitialInterval: 5 * time.Millisecond,
		Multiplier:      1,
		MaxInterval:     5 * time.Millisecond,
		Jitter:          0,
	}
	cfg.StatusOverrides = map[string]string{"500": "drop"}
	return cfg
}

func TestContractConsume(t *testing.T) {
	tests := []struct {
		name     string
		signal   pipeline.Signal
		encoding EncodingType
	}{
		{"traces", pipeline.SignalTraces, EncodingProto},
		{"metrics", pipeline.SignalMetrics, EncodingProto},
		{"logs", pipeline.SignalLogs, EncodingProto},
		{"traces_json", pipeline.SignalTraces, EncodingJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rcvCfg, endpoint := contractReceiverConfig(t)
			cfg := contractExporterConfig(endpoint, tt.encoding)
			require.NoError(t, cfg.Validate())
			exportertest.CheckConsumeContract(exportertest.CheckConsumeContractParams{
				T:                    t,
				NumberOfTestElements: 50,
				Signal:               tt.signal,
				// The waits the policy asks for (at least a second for
				// each hold: the floor under every wait) pass on a clock
				// that advances by every wait asked of it: the contract
				// is about what is delivered and what is retried, not
				// about how long the waits take.
				ExporterFactory: newFactory(retrytest.NewAutoClock(start)),
				ExporterConfig:  cfg,
				ReceiverFactory: otlpreceiver.NewFactory(),
				ReceiverConfig:  rcvCfg,
			})
		})
	}
}

// The contract with sending_queue::batch on: a memory queue whose callers
// wait for their data's final outcome (wait_for_result), so that the
// contract counts settled numbers, and batches of one item. The contract's
// receiver tells requests apart by their first item only, so a batch of
// two of its requests would count as one; batches of one still go through
// everything batching does (the batcher, formation from the request's
// bytes, a key minted at formation, the outcome handed to the caller).
func TestContractConsumeWithBatching(t *testing.T) {
	for _, tt := range []struct {
		name   string
		signal pipeline.Signal
	}{
		{"traces", pipeline.SignalTraces},
		{"metrics", pipeline.SignalMetrics},
		{"logs", pipeline.SignalLogs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rcvCfg, endpoint := contractReceiverConfig(t)
			cfg := contractExporterConfig(endpoint, EncodingProto)
			q := newDefaultQueueConfig()
			q.WaitForResult = true
			b := newDefaultBatchConfig()
			b.MinSize, b.MaxSize = 1, 1
			q.Batch = configoptional.Some(b)
			cfg.QueueConfig = configoptional.Some(q)
			require.NoError(t, cfg.Validate())
			require.True(t, cfg.batching())
			exportertest.CheckConsumeContract(exportertest.CheckConsumeContractParams{
				T:                    t,
				NumberOfTestElements: 50,
				Signal:               tt.signal,
				ExporterFactory:      NewFactory(),
				ExporterConfig:       cfg,
				ReceiverFactory:      otlpreceiver.NewFactory(),
				ReceiverConfig:       rcvCfg,
			})
		})
	}
}

// By default a 500 is retryable (a 500 from a proxy is usually transient):
// a backend answering 500 and then 200 gets the payload, once delivered,
// as the same bytes under the same key.
func TestContract500IsRetriedByDefault(t *testing.T) {
	srv := newBackend(t, reply(http.StatusInternalServerError), reply(http.StatusOK))
	cfg := testConfig(srv.URL)
	require.Empty(t, cfg.StatusOverrides, "the default config has no override")
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("five-hundred", 2)), "delivered after the 500")

	got := srv.got()
	require.Len(t, got, 2, "one 500, one retry that was accepted, nothing after it")
	assert.NotEmpty(t, key(got[0]))
	assert.Equal(t, key(got[0]), key(got[1]), "the retry carries the same Idempotency-Key")
	assert.True(t, bytes.Equal(got[0].Body, got[1].Body), "the retry sends the same bytes")
	assert.Equal(t, []string{"five-hundred", "five-hundred"}, spanNames(t, got[1].Body))
}

// The otlp receiver answers 500 only for a permanent consumer error, which
// the contract requires never to be retried: contractExporterConfig's
// status_overrides {500: drop} drops the payload after its first 500, and
// the backend never sees it again.
func TestContract500DroppedWithTheOverride(t *testing.T) {
	srv := newBackend(t, reply(http.StatusInternalServerError), reply(http.StatusOK))
	cfg := contractExporterConfig(srv.URL, EncodingProto)
	require.Equal(t, map[string]string{"500": "drop"}, cfg.StatusOverrides)
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))

	err := h.exp.ConsumeTraces(context.Background(), spans("five-hundred", 2))
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "a drop is permanent: exporterhelper must not retry it either")
	assert.Contains(t, err.Error(), "permanent_status")
	assert.Contains(t, err.Error(), "500")
	assert.Len(t, srv.got(), 1, "the 500 is not retried")
	assert.Empty(t, h.clock.Waits(), "nothing waited for a retry")
}

// Every compression the exporter accepts, in both encodings, is understood
// by the real otlp receiver: the bytes compressed once at the door carry a
// Content-Encoding its decompressor agrees with.
func TestContractRealReceiverDecodesEveryCompressionAndEncoding(t *testing.T) {
	rcvCfg, endpoint := contractReceiverConfig(t)
	sink := new(consumertest.TracesSink)
	rf := otlpreceiver.NewFactory()
	rcv, err := rf.CreateTraces(context.Background(), receivertest.NewNopSettings(rf.Type()), rcvCfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, rcv.Shutdown(context.Background())) }()

	compressions := []configcompression.Type{
		"", "none", configcompression.TypeGzip, configcompression.TypeZlib,
		configcompression.TypeDeflate, configcompression.TypeSnappy, configcompression.TypeZstd,
	}
	for _, enc := range []EncodingType{EncodingProto, EncodingJSON} {
		for _, comp := range compressions {
			t.Run(string(enc)+"/"+string(comp), func(t *testing.T) {
				sink.Reset()
				cfg := contractExporterConfig(endpoint, enc)
				cfg.ClientConfig.Compression = comp
				require.NoError(t, cfg.Validate())
				exp, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
				require.NoError(t, err)
				require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
				defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

				td := ptrace.NewTraces()
				ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
				for i := range 100 {
					sp := ss.Spans().AppendEmpty()
					sp.SetName("compressible span name repeated many times")
					sp.SetSpanID([8]byte{byte(i + 1)})
				}
				require.NoError(t, exp.ConsumeTraces(context.Background(), td))
				require.Equal(t, 100, sink.SpanCount())
				got := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
				assert.Equal(t, "compressible span name repeated many times", got.At(99).Name())
			})
		}
	}
}
