// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// itemsConsumer sends a batch of n items of one signal.
type itemsConsumer struct {
	component.Component
	consume func(ctx context.Context, n int) error
}

func createItemsExporter(t *testing.T, sig string, cfg *Config, tel *componenttest.Telemetry) (itemsConsumer, string) {
	t.Helper()
	ctx := context.Background()
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	f := newFactory(retrytest.NewClock(start))
	switch sig {
	case "traces":
		exp, err := f.CreateTraces(ctx, set, cfg)
		require.NoError(t, err)
		return itemsConsumer{exp, func(ctx context.Context, n int) error {
			return exp.ConsumeTraces(ctx, spans("s", n))
		}}, set.ID.String()
	case "metrics":
		exp, err := f.CreateMetrics(ctx, set, cfg)
		require.NoError(t, err)
		return itemsConsumer{exp, func(ctx context.Context, n int) error {
			md := pmetric.NewMetrics()
			dps := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints()
			for i := range n {
				dps.AppendEmpty().SetIntValue(int64(i))
			}
			return exp.ConsumeMetrics(ctx, md)
		}}, set.ID.String()
	case "logs":
		exp, err := f.CreateLogs(ctx, set, cfg)
		require.NoError(t, err)
		return itemsConsumer{exp, func(ctx context.Context, n int) error {
			ld := plog.NewLogs()
			lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
			for i := range n {
				lrs.AppendEmpty().Body().SetStr(fmt.Sprint(i))
			}
			return exp.ConsumeLogs(ctx, ld)
		}}, set.ID.String()
	}
	t.Fatalf("unknown signal %q", sig)
	return itemsConsumer{}, ""
}

// Batches that exporterhelper's full queue refuses are counted as dropped
// items with reason queue_full, for each signal; the batches it accepted
// are not, and are delivered once the backend answers.
func TestQueueFullCountsRefusedItems(t *testing.T) {
	defer goleak.VerifyNone(t, append(persistLeakOptions, goleak.IgnoreCurrent())...)
	for _, sig := range factorySignals {
		t.Run(sig, func(t *testing.T) {
			release := make(chan struct{})
			b := newBackend(t, func(w http.ResponseWriter) {
				<-release
				w.WriteHeader(http.StatusOK)
			})
			defer b.Close()
			released := false
			unblock := func() {
				if !released {
					released = true
					close(release)
				}
			}
			defer unblock() // before b.Close, which waits for its handlers

			cfg := testConfig(b.URL)
			withMemoryQueue(cfg, 1)
			cfg.QueueConfig.Get().QueueSize = 2
			tel := componenttest.NewTelemetry()
			defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
			exp, id := createItemsExporter(t, sig, cfg, tel)
			ctx := context.Background()
			require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))
			defer func() {
				unblock()
				_ = exp.Shutdown(ctx) // a no-op after the Shutdown below
			}()

			// Batch 1 (1 item) is in flight, held by the backend. The memory
			// queue counts it against its capacity until its push returns.
			require.NoError(t, exp.consume(ctx, 1))
			require.Eventually(t, func() bool { return len(b.got()) == 1 }, 10*time.Second, time.Millisecond)
			// Batch 2 fills the queue (2 requests).
			require.NoError(t, exp.consume(ctx, 2))
			// Batches 3, 4 and 5 are refused.
			for n := 3; n <= 5; n++ {
				assert.Error(t, exp.consume(ctx, n), "batch %d", n)
			}

			metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, tel, []metricdata.DataPoint[int64]{{
				Attributes: attribute.NewSet(attribute.String("exporter", id), attribute.String("data_type", sig), attribute.String("reason", dropQueueFull)),
				Value:      3 + 4 + 5,
			}}, telOpts...)

			unblock()
			require.Eventually(t, func() bool { return len(b.got()) == 2 }, 10*time.Second, time.Millisecond)
			require.NoError(t, exp.Shutdown(ctx))
			assert.Len(t, b.got(), 2, "the accepted batches, each once")
		})
	}
}
