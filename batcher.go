// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// The batcher forms batches as data enters the exporter, before the queue
// (sending_queue::batch). Why before: a batch's identity, its bytes and its
// idempotency key, is fixed when it is formed, and from then on only whole
// formed batches move: into the queue (memory or persistent), to their
// consumer, to the backend on every attempt, to disk and back after a
// restart or a kill -9. Nothing ever merges or splits a formed batch, so
// nothing can ever re-form one: there is no second formation whose key
// could differ. (exporterhelper's own batcher works after the queue; a
// restart would hand it the queued requests again, and it would group them
// by the timing of that moment, under new keys.)
//
// The price is where the caller waits. With a memory queue the caller is
// answered as soon as its data is in an open batch, as exporterhelper's
// memory queue answers once the data is queued; the queue's capacity is
// counted here, on open and formed batches together. With a persistent
// queue the caller is answered once the batch holding its data is stored,
// so that nothing acknowledged lives only in memory: up to flush_timeout
// later. With wait_for_result the caller gets the final outcome of the
// batch holding its data, after the retry loop.

// batcherSettings is what the batcher needs from the exporter.
type batcherSettings struct {
	cfg   BatchConfig
	queue QueueConfig
	clock retry.Clock
	// form encodes, compresses, splits (bytes sizer) and keys a batch.
	form func(parts []part, received time.Time, p partition) ([]*payload, error)
	// offer hands a formed batch to exporterhelper's queue; with
	// wait_for_result it returns the batch's final outcome.
	offer func(ctx context.Context, p *payload) error
	// lost reports a formed batch the queue refused after its callers were
	// answered (memory queue without wait_for_result).
	lost func(items int, err error)
	// encodeFailed counts and logs data that could not be encoded as it
	// entered, and returns the error for its caller.
	encodeFailed func(ctx context.Context, items int, err error) error
}

type batcher struct {
	batcherSettings
	// wait: callers wait for their batch (persistent queue: until stored;
	// wait_for_result: until its outcome). Otherwise the batcher enforces
	// the memory queue's capacity as data enters.
	wait bool

	mu     sync.Mutex
	open   map[string]*openBatch // by partition key
	order  []*openBatch          // open batches, oldest first (partition::cache_size)
	used   int64                 // capacity held, in sending_queue::sizer's unit
	room   chan struct{}         // closed when capacity is given back
	closed bool
	ratio  float64 // compressed ÷ raw bytes of recent batches (bytes sizer)

	flushes sync.WaitGroup // timers and formations in progress
}

// openBatch is a batch still taking data.
type openBatch struct {
	partition partition
	parts     []part
	items     int
	raw       int // protobuf bytes
	requests  int
	units     int64 // capacity held for its data
	first     time.Time

	sealed chan struct{} // closed when the batch stops taking data
	done   chan struct{} // closed when it is stored (or its outcome known)
	err    error
}

// errBatcherClosed is returned for data entering after shutdown began.
var errBatcherClosed = errors.New("otlp_http_retry is shutting down: the data was not accepted")

func newBatcher(set batcherSettings) *batcher {
	return &batcher{
		batcherSettings: set,
		wait:            set.queue.StorageID != nil || set.queue.WaitForResult,
		open:            map[string]*openBatch{},
		room:            make(chan struct{}),
		ratio:           1,
	}
}

// enter encodes one request's data as parts (split by items when the
// items sizer's max_size asks) and consumes them.
//
// A memory queue's capacity is taken before the data is encoded when the
// queue counts requests or items, so that a full queue refuses a request
// without spending anything on it. A request without items is ignored, as
// exporterhelper's queue ignores it.
func (b *batcher) enter(ctx context.Context, items int, encode func(limit int) ([]part, error)) error {
	if items == 0 {
		return nil
	}
	var units int64
	admitted := b.wait
	if !b.wait && b.queue.Sizer != exporterhelper.RequestSizerTypeBytes {
		units = b.units([]part{{items: items}})
		if err := b.admit(ctx, units); err != nil {
			return err
		}
		admitted = true
	}
	limit := 0
	if b.cfg.Sizer == exporterhelper.RequestSizerTypeItems {
		limit = int(b.cfg.MaxSize)
	}
	parts, err := encode(limit)
	if err != nil {
		b.release(units)
		return consumererror.NewPermanent(b.encodeFailed(ctx, items, err))
	}
	if !admitted {
		units = b.units(parts)
		if err := b.admit(ctx, units); err != nil {
			return err
		}
	}
	return b.consume(ctx, parts, units)
}

// consume takes one request's data (parts, in order, holding units of the
// memory queue's capacity) for the partition of ctx. It returns once the
// data is in an open batch, or, when callers wait, once every batch
// holding some of it is stored or has its outcome.
func (b *batcher) consume(ctx context.Context, parts []part, units int64) error {
	p := partitionOf(ctx, b.cfg.Partition.MetadataKeys)
	var mine, ready []*openBatch
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.release(units)
		return errBatcherClosed
	}
	for i, pt := range parts {
		cur := b.open[p.key]
		if cur != nil && b.overflows(cur, pt) {
			ready = append(ready, b.sealLocked(cur))
			cur = nil
		}
		if cur == nil {
			if len(b.order) >= b.cfg.Partition.CacheSize && b.cfg.Partition.CacheSize > 0 {
				ready = append(ready, b.sealLocked(b.order[0]))
			}
			cur = b.openLocked(p)
		}
		cur.parts = append(cur.parts, pt)
		cur.items += pt.items
		cur.raw += len(pt.raw)
		if i == 0 {
			cur.requests++
		}
		cur.units += b.partUnits(pt, i == 0)
		if len(mine) == 0 || mine[len(mine)-1] != cur {
			mine = append(mine, cur)
		}
		if b.full(cur) {
			ready = append(ready, b.sealLocked(cur))
		}
	}
	b.mu.Unlock()
	for _, r := range ready {
		b.flushes.Add(1)
		go b.flush(r)
	}
	if !b.wait {
		return nil
	}
	var errs []error
	for _, m := range mine {
		select {
		case <-m.done:
			errs = append(errs, m.err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errors.Join(errs...)
}

// units is what a request's data counts against the memory queue's
// capacity: 1 request, its items, or its protobuf bytes.
func (b *batcher) units(parts []part) int64 {
	var n int64
	for i, pt := range parts {
		n += b.partUnits(pt, i == 0)
	}
	return n
}

func (b *batcher) partUnits(pt part, first bool) int64 {
	switch b.queue.Sizer {
	case exporterhelper.RequestSizerTypeItems:
		return int64(pt.items)
	case exporterhelper.RequestSizerTypeBytes:
		return int64(len(pt.raw))
	}
	if first {
		return 1
	}
	return 0
}

// admit takes units of the memory queue's capacity, waiting for room with
// block_on_overflow, and refusing as exporterhelper's queue would without.
func (b *batcher) admit(ctx context.Context, units int64) error {
	if units > b.queue.QueueSize {
		return fmt.Errorf("the request is larger than the sending queue (%d > queue_size %d %s)", units, b.queue.QueueSize, b.queue.Sizer)
	}
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return errBatcherClosed
		}
		if b.used+units <= b.queue.QueueSize {
			b.used += units
			b.mu.Unlock()
			return nil
		}
		room := b.room
		b.mu.Unlock()
		if !b.queue.BlockOnOverflow {
			return exporterhelper.ErrQueueIsFull
		}
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release gives units of capacity back.
func (b *batcher) release(units int64) {
	if b.wait || units == 0 {
		return
	}
	b.mu.Lock()
	b.used -= units
	close(b.room)
	b.room = make(chan struct{})
	b.mu.Unlock()
}

// size is the batch's size in the batch sizer's unit; for bytes, the
// expected size once compressed.
func (b *batcher) size(items, raw, requests int) int64 {
	switch b.cfg.Sizer {
	case exporterhelper.RequestSizerTypeBytes:
		return int64(float64(raw) * b.ratio)
	case exporterhelper.RequestSizerTypeRequests:
		return int64(requests)
	}
	return int64(items)
}

// overflows: adding pt would take cur past max_size. The batch is then
// formed without it; only data larger than max_size on its own is split
// (at entry by items, at formation by bytes).
func (b *batcher) overflows(cur *openBatch, pt part) bool {
	if b.cfg.MaxSize <= 0 {
		return false
	}
	return b.size(cur.items+pt.items, cur.raw+len(pt.raw), cur.requests+1) > b.cfg.MaxSize
}

// full: cur has reached min_size (or max_size).
func (b *batcher) full(cur *openBatch) bool {
	s := b.size(cur.items, cur.raw, cur.requests)
	return s >= b.cfg.MinSize || (b.cfg.MaxSize > 0 && s >= b.cfg.MaxSize)
}

// openLocked starts a batch for p and its flush_timeout.
func (b *batcher) openLocked(p partition) *openBatch {
	ob := &openBatch{partition: p, first: b.clock.Now(), sealed: make(chan struct{}), done: make(chan struct{})}
	b.open[p.key] = ob
	b.order = append(b.order, ob)
	timer, stop := b.clock.After(b.cfg.FlushTimeout)
	b.flushes.Add(1)
	go func() {
		defer b.flushes.Done()
		select {
		case <-timer:
		case <-ob.sealed:
			stop()
			return
		}
		b.mu.Lock()
		mine := b.open[p.key] == ob
		if mine {
			b.sealLocked(ob)
		}
		b.mu.Unlock()
		if mine {
			b.flushes.Add(1)
			b.flush(ob)
		}
	}()
	return ob
}

// sealLocked stops ob taking data.
func (b *batcher) sealLocked(ob *openBatch) *openBatch {
	if b.open[ob.partition.key] == ob {
		delete(b.open, ob.partition.key)
	}
	for i, o := range b.order {
		if o == ob {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
	close(ob.sealed)
	return ob
}

// flush forms ob and hands what it became to the queue. Its capacity is
// given back, and its waiting callers answered (wait_for_result), once
// every batch it became is finished (push calls finish); with a persistent
// queue, the callers are answered once every batch is stored.
func (b *batcher) flush(ob *openBatch) {
	defer b.flushes.Done()
	defer close(ob.done)
	payloads, formErr := b.form(ob.parts, ob.first, ob.partition)
	if len(payloads) > 0 && b.cfg.Sizer == exporterhelper.RequestSizerTypeBytes {
		b.learnRatio(payloads, ob.raw)
	}
	var mu sync.Mutex
	remaining := len(payloads)
	results := make([]error, 0, len(payloads)+1)
	results = append(results, formErr)
	finished := make(chan struct{})
	if remaining == 0 {
		close(finished)
	}
	done := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, err)
		remaining--
		if remaining == 0 {
			b.release(ob.units)
			close(finished)
		}
	}
	if remaining == 0 {
		b.release(ob.units)
	}
	stored := []error{formErr}
	for _, p := range payloads {
		p.done = done
		if err := b.offer(ob.partition.context(), p); err != nil {
			stored = append(stored, err)
			if !b.wait && !errors.Is(err, errBatcherClosed) {
				b.lost(p.items, err)
			}
			p.finish(err)
		}
	}
	if !b.queue.WaitForResult {
		ob.err = errors.Join(stored...)
		return
	}
	<-finished
	mu.Lock()
	ob.err = errors.Join(results...)
	mu.Unlock()
}

// learnRatio follows the compression ratio, so that batches sized in bytes
// close near max_size rather than at its uncompressed equivalent.
func (b *batcher) learnRatio(payloads []*payload, raw int) {
	if raw <= 0 {
		return
	}
	body := 0
	for _, p := range payloads {
		body += len(p.body)
	}
	b.mu.Lock()
	b.ratio = 0.7*b.ratio + 0.3*float64(body)/float64(raw)
	b.mu.Unlock()
}

// shutdown forms every open batch at once and waits until each is in the
// queue (or has its outcome); data entering afterwards is refused.
func (b *batcher) shutdown() {
	b.mu.Lock()
	b.closed = true
	var ready []*openBatch
	for len(b.order) > 0 {
		ready = append(ready, b.sealLocked(b.order[0]))
	}
	close(b.room)
	b.room = make(chan struct{})
	b.mu.Unlock()
	for _, r := range ready {
		b.flushes.Add(1)
		go b.flush(r)
	}
	b.flushes.Wait()
}
