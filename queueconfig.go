// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// QueueConfig is sending_queue: exporterhelper's keys, under the same
// names and with the same defaults, so that a configuration written for
// any exporter reads the same here. The queue itself is exporterhelper's;
// batching (batch) is this exporter's own, done as data enters, before the
// queue (batcher.go): a batch gets its bytes and its idempotency key once,
// when it is formed, and the queue, memory or persistent, only ever holds
// formed batches, so nothing merges or splits them afterwards.
type QueueConfig struct {
	// WaitForResult makes the caller of ConsumeX wait for the final
	// outcome of its data (memory queue only).
	WaitForResult bool `mapstructure:"wait_for_result"`
	// Sizer measures queue_size: requests, items or bytes.
	Sizer exporterhelper.RequestSizerType `mapstructure:"sizer"`
	// QueueSize is the queue's capacity, in Sizer's unit.
	QueueSize int64 `mapstructure:"queue_size"`
	// BlockOnOverflow makes the caller wait for room instead of being
	// refused when the queue is full.
	BlockOnOverflow bool `mapstructure:"block_on_overflow"`
	// StorageID names a storage extension (file_storage): the queue is then
	// persistent.
	StorageID *component.ID `mapstructure:"storage"`
	// NumConsumers is how many batches are sent at once.
	NumConsumers int `mapstructure:"num_consumers"`
	// Batch forms batches as data enters (see BatchConfig).
	Batch configoptional.Optional[BatchConfig] `mapstructure:"batch"`

	_ struct{}
}

// BatchConfig is sending_queue::batch. A batch is formed, per partition,
// once it holds min_size (in sizer's unit) or flush_timeout after its first
// data, whichever comes first, and never holds more than max_size.
type BatchConfig struct {
	// FlushTimeout is the longest a batch waits for more data.
	FlushTimeout time.Duration `mapstructure:"flush_timeout"`
	// Sizer measures min_size and max_size: items, bytes (the request as
	// sent, after compression) or requests (the requests that entered).
	Sizer exporterhelper.RequestSizerType `mapstructure:"sizer"`
	// MinSize forms a batch as soon as it holds at least this much; 0
	// forms one from each request as it enters.
	MinSize int64 `mapstructure:"min_size"`
	// MaxSize bounds a batch (0: no bound). With the bytes sizer it bounds
	// the request body as sent; data that would exceed it is split before
	// the batch is keyed.
	MaxSize int64 `mapstructure:"max_size"`
	// Partition forms batches per distinct value of client metadata keys;
	// each partition has its own gate and pacer.
	Partition exporterhelper.PartitionConfig `mapstructure:"partition"`

	_ struct{}
}

var (
	_ confmap.Unmarshaler = (*QueueConfig)(nil)
	_ confmap.Validator   = (*QueueConfig)(nil)
	_ confmap.Validator   = (*BatchConfig)(nil)
)

// newDefaultQueueConfig is exporterhelper's default queue, batch included:
// with the feature gate pkg.exporterhelper.queueBatchEnabled on, batching
// is on (the collector's standard); with it off, batch is off but keeps its
// defaults for a user's batch section.
func newDefaultQueueConfig() QueueConfig {
	h := exporterhelper.NewDefaultQueueConfig()
	return QueueConfig{
		WaitForResult:   h.WaitForResult,
		Sizer:           h.Sizer,
		QueueSize:       h.QueueSize,
		BlockOnOverflow: h.BlockOnOverflow,
		StorageID:       h.StorageID,
		NumConsumers:    h.NumConsumers,
		Batch:           batchOptional(h.Batch),
	}
}

// newDefaultBatchConfig is exporterhelper's default batch.
func newDefaultBatchConfig() BatchConfig {
	h := exporterhelper.NewDefaultBatchConfig()
	return BatchConfig{
		FlushTimeout: h.FlushTimeout,
		Sizer:        h.Sizer,
		MinSize:      h.MinSize,
		MaxSize:      h.MaxSize,
		Partition:    h.Partition,
	}
}

// batchOptional keeps exporterhelper's choice of on (Some) or off
// (Default), with this exporter's BatchConfig behind it.
func batchOptional(h configoptional.Optional[exporterhelper.BatchConfig]) configoptional.Optional[BatchConfig] {
	if h.HasValue() {
		return configoptional.Some(newDefaultBatchConfig())
	}
	return configoptional.Default(newDefaultBatchConfig())
}

// Unmarshal decodes sending_queue as exporterhelper does: a batch section
// without its own sizer takes the queue's, when the queue's is set.
func (q *QueueConfig) Unmarshal(conf *confmap.Conf) error {
	if err := conf.Unmarshal(q); err != nil {
		return err
	}
	if conf.IsSet("sizer") && !conf.IsSet("batch::sizer") && conf.IsSet("batch") && conf.Get("batch") != nil && q.Batch.HasValue() {
		q.Batch.Get().Sizer = q.Sizer
	}
	return nil
}

// Validate checks the queue as exporterhelper would, and what batching
// adds.
func (q *QueueConfig) Validate() error {
	var errs []error
	if q.NumConsumers <= 0 {
		errs = append(errs, fmt.Errorf("sending_queue::num_consumers: %d must be positive", q.NumConsumers))
	}
	if q.QueueSize <= 0 {
		errs = append(errs, fmt.Errorf("sending_queue::queue_size: %d must be positive", q.QueueSize))
	}
	if q.StorageID != nil && q.WaitForResult {
		errs = append(errs, errors.New("sending_queue::wait_for_result: not supported with a persistent queue (storage): "+
			"the caller is answered once its data is stored; remove wait_for_result or storage"))
	}
	if q.Batch.HasValue() {
		b := q.Batch.Get()
		if b.Sizer == q.Sizer && b.MinSize > q.QueueSize {
			errs = append(errs, fmt.Errorf("sending_queue::batch::min_size: %d is more than queue_size (%d) in the same unit (%s), so no batch could ever fill: lower min_size or raise queue_size",
				b.MinSize, q.QueueSize, b.Sizer))
		}
	}
	return errors.Join(errs...)
}

// Validate checks the batch keys, naming each.
func (b *BatchConfig) Validate() error {
	var errs []error
	switch b.Sizer {
	case exporterhelper.RequestSizerTypeItems, exporterhelper.RequestSizerTypeBytes, exporterhelper.RequestSizerTypeRequests:
	default:
		errs = append(errs, fmt.Errorf("sending_queue::batch::sizer: %q is not a sizer; use items, bytes or requests", b.Sizer.String()))
	}
	if b.FlushTimeout <= 0 {
		errs = append(errs, fmt.Errorf("sending_queue::batch::flush_timeout: %s must be positive (with a unit, e.g. 200ms)", b.FlushTimeout))
	}
	if b.MinSize < 0 {
		errs = append(errs, fmt.Errorf("sending_queue::batch::min_size: %d must not be negative", b.MinSize))
	}
	if b.MaxSize < 0 {
		errs = append(errs, fmt.Errorf("sending_queue::batch::max_size: %d must not be negative (0: no bound)", b.MaxSize))
	}
	if b.MaxSize > 0 && b.MaxSize < b.MinSize {
		errs = append(errs, fmt.Errorf("sending_queue::batch::max_size: %d is less than min_size (%d): raise max_size, or set it to 0 for no bound", b.MaxSize, b.MinSize))
	}
	if b.Sizer == exporterhelper.RequestSizerTypeBytes && b.MaxSize > 0 && b.MaxSize < minMaxBytes {
		errs = append(errs, fmt.Errorf("sending_queue::batch::max_size: %d bytes cannot hold a request; use at least %d", b.MaxSize, minMaxBytes))
	}
	return errors.Join(errs...)
}

// minMaxBytes is the smallest max_size accepted with the bytes sizer: a
// compressed OTLP request with one small item and its envelope.
const minMaxBytes = 1024

// batching reports whether this exporter forms batches.
func (cfg *Config) batching() bool {
	return cfg.QueueConfig.HasValue() && cfg.QueueConfig.Get().Batch.HasValue()
}

// helperQueue is the queue exporterhelper runs. It never batches: with
// sending_queue::batch, batches are formed before it, and the batcher
// answers the callers that wait for their data (wait_for_result). A memory queue then
// gets its capacity enforced as data enters (the batcher counts what it
// holds, formed or not, in the user's unit), so exporterhelper's own limit
// only ever waits, briefly, for a consumer that finished but has not yet
// given its room back. A persistent queue keeps exporterhelper's limit,
// counted on the formed batches it stores.
func (q QueueConfig) helperQueue(batching bool) exporterhelper.QueueBatchConfig {
	h := exporterhelper.NewDefaultQueueConfig()
	h.WaitForResult = q.WaitForResult
	h.Sizer = q.Sizer
	h.QueueSize = q.QueueSize
	h.BlockOnOverflow = q.BlockOnOverflow
	h.StorageID = q.StorageID
	h.NumConsumers = q.NumConsumers
	h.Batch = configoptional.None[exporterhelper.BatchConfig]()
	if batching {
		// The batcher answers the callers that wait for their data's
		// outcome (a batch holds many callers' data, and a held
		// partition's batch may leave a consumer before its outcome).
		h.WaitForResult = false
		if q.StorageID == nil {
			h.BlockOnOverflow = true
		}
	}
	return h
}

// helperQueueConfig is helperQueue for the whole config, None when there is
// no queue.
func (cfg *Config) helperQueueConfig() configoptional.Optional[exporterhelper.QueueBatchConfig] {
	if !cfg.QueueConfig.HasValue() {
		return configoptional.None[exporterhelper.QueueBatchConfig]()
	}
	return configoptional.Some(cfg.QueueConfig.Get().helperQueue(cfg.batching()))
}
