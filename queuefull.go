// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// dropQueueFull: exporterhelper's sending queue was full
// (block_on_overflow: false) and refused the batch.
const dropQueueFull = "queue_full"

// A full queue refuses a batch before the exporter sees it: Consume*
// returns exporterhelper.ErrQueueIsFull ("sending queue is full"), the
// very value both the memory and the persistent queue return, unwrapped.
// exporterhelper logs the refusal and counts it in its own
// enqueue_failed metrics; these wrappers count the items in the exporter's
// dropped_items too, so that one metric shows every item lost on the way.

func (x tracesExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	var err error
	if x.door != nil {
		err = x.door.enter(ctx, td.SpanCount(), func(limit int) ([]part, error) { return tracesParts(td, limit) })
	} else {
		err = x.Traces.ConsumeTraces(ctx, td)
	}
	if errors.Is(err, exporterhelper.ErrQueueIsFull) {
		x.tel.dropped(ctx, td.SpanCount(), dropQueueFull)
	}
	return err
}

func (x metricsExporter) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	var err error
	if x.door != nil {
		err = x.door.enter(ctx, md.DataPointCount(), func(limit int) ([]part, error) { return metricsParts(md, limit) })
	} else {
		err = x.Metrics.ConsumeMetrics(ctx, md)
	}
	if errors.Is(err, exporterhelper.ErrQueueIsFull) {
		x.tel.dropped(ctx, md.DataPointCount(), dropQueueFull)
	}
	return err
}

func (x logsExporter) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	var err error
	if x.door != nil {
		err = x.door.enter(ctx, ld.LogRecordCount(), func(limit int) ([]part, error) { return logsParts(ld, limit) })
	} else {
		err = x.Logs.ConsumeLogs(ctx, ld)
	}
	if errors.Is(err, exporterhelper.ErrQueueIsFull) {
		x.tel.dropped(ctx, ld.LogRecordCount(), dropQueueFull)
	}
	return err
}
