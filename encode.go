// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"encoding"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// EncodeAt says where a batch is encoded and compressed: as it enters the
// exporter, on the receiver's goroutine, or by the queue consumer that
// sends it. Either way it happens once: every attempt sends the same bytes.
type EncodeAt string

const (
	// EncodeAtEntry always encodes as the batch enters (the default).
	EncodeAtEntry EncodeAt = "entry"
	// EncodeAtAuto encodes in the consumer while nothing waits (the gate is
	// open and no payload waits for a retry or a paced slot), and as the
	// batch enters once something does: a queue that fills while the
	// destination is held then holds compressed bytes, not pdata. A
	// persistent queue and a queue sized in bytes always get the bytes at
	// entry.
	EncodeAtAuto EncodeAt = "auto"
	// EncodeAtConsumer always encodes in the consumer (memory queue only):
	// the queue holds pdata, as the core otlp_http exporter's does.
	EncodeAtConsumer EncodeAt = "consumer"
)

var _ encoding.TextUnmarshaler = (*EncodeAt)(nil)

// UnmarshalText rejects anything but entry, auto and consumer at config load.
func (e *EncodeAt) UnmarshalText(text []byte) error {
	switch s := EncodeAt(text); s {
	case EncodeAtEntry, EncodeAtAuto, EncodeAtConsumer:
		*e = s
		return nil
	default:
		return fmt.Errorf("invalid encode_at %q: use entry, auto or consumer", string(text))
	}
}

// consumerCannotEncode says why this exporter's queue needs a batch's
// bytes as it enters, whatever encode_at says: a persistent queue stores
// bytes, and a queue sized in bytes counts them. It is nil for a memory
// queue sized in requests or items, and for no queue at all (push then
// runs as the batch enters).
func (cfg *Config) consumerCannotEncode() error {
	if !cfg.QueueConfig.HasValue() {
		return nil
	}
	q := cfg.QueueConfig.Get()
	switch {
	case q.StorageID != nil:
		return errors.New("encode_at: consumer keeps batches as pdata in the queue, but a persistent queue (sending_queue::storage) stores bytes: use entry or auto")
	case q.Sizer == exporterhelper.RequestSizerTypeBytes:
		return errors.New("encode_at: consumer cannot size the queue in bytes before a batch is encoded: use entry or auto, or another sending_queue::sizer")
	}
	return nil
}

// encodeAtError says why encode_at: consumer cannot work with this queue.
func (cfg *Config) encodeAtError() error {
	if cfg.EncodeAt != EncodeAtConsumer {
		return nil
	}
	return cfg.consumerCannotEncode()
}

// lazyEncoding is whether this exporter may leave a batch's encoding to
// the consumer: a memory queue sized in requests or items.
func (cfg *Config) lazyEncoding() bool {
	return cfg.EncodeAt != EncodeAtEntry && cfg.QueueConfig.HasValue() && cfg.consumerCannotEncode() == nil
}

// encodeAtEntry decides, for a batch entering now, whether it is encoded
// now or by its consumer.
func (e *baseExporter) encodeAtEntry() bool {
	if !e.lazy {
		return true
	}
	if e.cfg.EncodeAt == EncodeAtConsumer {
		return false
	}
	reason, _ := e.loop.Gate().State()
	return reason != retry.HoldNone || e.loop.Waiting() > 0
}

// Sizers of the protobuf encoding, for the queue's byte count of a batch
// not yet encoded.
var (
	tracesSizer  ptrace.ProtoMarshaler
	metricsSizer pmetric.ProtoMarshaler
	logsSizer    plog.ProtoMarshaler
)

// requestSize is the size of req's protobuf encoding, without encoding it.
func requestSize(req otlpRequest) int {
	switch r := req.(type) {
	case ptraceotlp.ExportRequest:
		return tracesSizer.TracesSize(r.Traces())
	case pmetricotlp.ExportRequest:
		return metricsSizer.MetricsSize(r.Metrics())
	case plogotlp.ExportRequest:
		return logsSizer.LogsSize(r.Logs())
	}
	return 0
}
