// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// part is data that entered the exporter, as it waits in a batch: an OTLP
// export request in protobuf, and its item count. Two such requests of one
// signal, concatenated, are one valid request holding both (every field of
// an export request is a repeated field), so a batch's request is its
// parts' bytes one after the other: nothing is decoded or copied again to
// form it.
type part struct {
	raw   []byte
	items int
}

// errSingleItem: a request of one item does not fit sending_queue::batch::max_size.
var errSingleItem = errors.New("a single item is larger than sending_queue::batch::max_size once encoded and compressed")

// batchCodec is what the batcher needs of a signal beyond bytes.
type batchCodec struct {
	// halve splits a part in two by items (errSingleItem for one item).
	halve func(raw []byte) ([]part, error)
	// toJSON re-encodes a protobuf request as JSON.
	toJSON func(raw []byte) ([]byte, error)
}

var (
	tracesCodec = batchCodec{
		halve: func(raw []byte) ([]part, error) {
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				return nil, err
			}
			td := req.Traces()
			if td.SpanCount() < 2 {
				return nil, errSingleItem
			}
			return tracesParts(td, (td.SpanCount()+1)/2)
		},
		toJSON: func(raw []byte) ([]byte, error) {
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				return nil, err
			}
			return req.MarshalJSON()
		},
	}
	metricsCodec = batchCodec{
		halve: func(raw []byte) ([]part, error) {
			req := pmetricotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				return nil, err
			}
			md := req.Metrics()
			if md.DataPointCount() < 2 {
				return nil, errSingleItem
			}
			return metricsParts(md, (md.DataPointCount()+1)/2)
		},
		toJSON: func(raw []byte) ([]byte, error) {
			req := pmetricotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				return nil, err
			}
			return req.MarshalJSON()
		},
	}
	logsCodec = batchCodec{
		halve: func(raw []byte) ([]part, error) {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				return nil, err
			}
			ld := req.Logs()
			if ld.LogRecordCount() < 2 {
				return nil, errSingleItem
			}
			return logsParts(ld, (ld.LogRecordCount()+1)/2)
		},
		toJSON: func(raw []byte) ([]byte, error) {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				return nil, err
			}
			return req.MarshalJSON()
		},
	}
)

// Marshalers of the three signals' protobuf encoding, the same bytes as
// the export requests' (TracesData and ExportTraceServiceRequest share
// their wire format, and likewise for metrics and logs).
var (
	tracesMarshaler  ptrace.ProtoMarshaler
	metricsMarshaler pmetric.ProtoMarshaler
	logsMarshaler    plog.ProtoMarshaler
)

// tracesParts encodes td as parts of at most limit spans (0: one part).
func tracesParts(td ptrace.Traces, limit int) ([]part, error) {
	pieces := splitTraces(td, limit)
	out := make([]part, 0, len(pieces))
	for _, p := range pieces {
		raw, err := tracesMarshaler.MarshalTraces(p)
		if err != nil {
			return nil, fmt.Errorf("encoding spans: %w", err)
		}
		out = append(out, part{raw: raw, items: p.SpanCount()})
	}
	return out, nil
}

// metricsParts encodes md as parts of at most limit data points (0: one part).
func metricsParts(md pmetric.Metrics, limit int) ([]part, error) {
	pieces := splitMetrics(md, limit)
	out := make([]part, 0, len(pieces))
	for _, p := range pieces {
		raw, err := metricsMarshaler.MarshalMetrics(p)
		if err != nil {
			return nil, fmt.Errorf("encoding data points: %w", err)
		}
		out = append(out, part{raw: raw, items: p.DataPointCount()})
	}
	return out, nil
}

// logsParts encodes ld as parts of at most limit log records (0: one part).
func logsParts(ld plog.Logs, limit int) ([]part, error) {
	pieces := splitLogs(ld, limit)
	out := make([]part, 0, len(pieces))
	for _, p := range pieces {
		raw, err := logsMarshaler.MarshalLogs(p)
		if err != nil {
			return nil, fmt.Errorf("encoding log records: %w", err)
		}
		out = append(out, part{raw: raw, items: p.LogRecordCount()})
	}
	return out, nil
}
