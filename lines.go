// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// A payload that waits at a held gate waits on a queue consumer, and the
// consumers are shared by every partition: a tenant held by a 429 for long
// would take them all, and hold every other tenant with it. So, with
// sending_queue::batch::partition, no batch waits for a held partition on
// a consumer: a batch that would (on arrival, or after its attempt was
// refused) leaves its consumer for its partition's line (retry.WithYield).
// One goroutine per held partition, not a consumer, takes the line's first
// batch to the gate, where it goes first when the hold ends, as the probe;
// once the gate opens, the rest of the line goes back into the queue, in
// order. A batch in a line keeps its key and its bytes; with a persistent
// queue it is written to the queue's storage extension before the queue
// lets it go (holdStore.park), and a restart puts it back in the queue.

// lines are the lines of an exporter's held partitions.
type lines struct {
	// offer puts a payload back into exporterhelper's queue.
	offer func(context.Context, *payload) error
	// run sends a payload through its partition's loop without yielding,
	// as push would, and finishes it; false when shutdown interrupted it.
	run func(*payload) bool
	// gate is a partition's gate.
	gate func(partition string) *retry.Gate
	// store keeps the lines on disk (persistent queue); nil in memory.
	store *holdStore
	// limit bounds what the lines hold, in sending_queue::sizer's unit
	// (persistent queue: the queue's capacity no longer counts a batch in
	// a line); 0 without bound (memory queue: the batcher counts them).
	limit int64
	sizer exporterhelper.RequestSizerType
	// lost counts a payload a shutdown finds in a memory queue's line.
	lost func(p *payload)

	mu     sync.Mutex
	m      map[string]*line
	held   int64 // what the lines hold, in sizer's unit
	count  int64 // payloads in the lines
	closed bool
	wg     sync.WaitGroup
}

type line struct {
	parked []*payload // in order; the first goes to the gate
}

func (l *lines) size(p *payload) int64 {
	switch l.sizer {
	case exporterhelper.RequestSizerTypeItems:
		return int64(p.items)
	case exporterhelper.RequestSizerTypeBytes:
		return int64(len(p.body))
	}
	return 1
}

// yield is the retry.WithYield function of p's runs on consumers: p may
// leave for its line (while the lines take more).
func (l *lines) yield(p *payload) func() bool {
	return func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return !l.closed && (l.limit <= 0 || l.held+l.size(p) <= l.limit)
	}
}

// park puts p in its partition's line, starting the line's goroutine; it
// reports false when p could not be kept (shutting down, the lines full,
// the disk refusing it): p then runs on its consumer.
func (l *lines) park(p *payload) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || (l.limit > 0 && l.held+l.size(p) > l.limit) || (l.store != nil && !l.store.park(p)) {
		return false
	}
	ln := l.m[p.partition.key]
	if ln == nil {
		ln = &line{}
		l.m[p.partition.key] = ln
		l.wg.Add(1)
		go l.serve(p.partition.key, ln)
	}
	ln.parked = append(ln.parked, p)
	l.held += l.size(p)
	l.count++
	return true
}

// serve takes the line's first batch to the gate, and again after each
// outcome while the gate holds; once it is open, it puts the rest back into
// the queue, in order.
func (l *lines) serve(key string, ln *line) {
	defer l.wg.Done()
	gate := l.gate(key)
	for {
		l.mu.Lock()
		if len(ln.parked) == 0 {
			delete(l.m, key)
			l.mu.Unlock()
			return
		}
		if reason, _ := gate.State(); reason == retry.HoldNone || l.closed {
			rest := l.detachLocked(key, ln)
			l.mu.Unlock()
			for _, q := range rest {
				l.requeue(q)
			}
			return
		}
		first := ln.parked[0]
		// At the gate, the loop counts it as waiting: the line does not.
		l.count--
		l.mu.Unlock()
		finished := l.run(first)
		l.mu.Lock()
		ln.parked = ln.parked[1:]
		l.held -= l.size(first)
		l.mu.Unlock()
		if l.store != nil && finished {
			l.store.unpark(first)
		}
		if !finished {
			// Shutdown: the rest stays where it is kept.
			l.mu.Lock()
			rest := l.detachLocked(key, ln)
			l.mu.Unlock()
			for _, q := range rest {
				l.dropOnShutdown(q)
			}
			return
		}
	}
}

// detachLocked ends the line: it leaves the map, and its parked batches
// are returned for the caller to hand on once l.mu is released.
func (l *lines) detachLocked(key string, ln *line) []*payload {
	rest := ln.parked
	ln.parked = nil
	delete(l.m, key)
	return rest
}

// requeue puts q back into the queue and out of its line; shutting down,
// it stays on disk (persistent queue) or is lost (memory queue).
func (l *lines) requeue(q *payload) {
	l.mu.Lock()
	closed := l.closed
	l.held -= l.size(q)
	l.count--
	l.mu.Unlock()
	if closed {
		l.dropOnShutdown(q)
		return
	}
	if err := l.offer(q.partition.context(), q); err != nil {
		l.dropOnShutdown(q)
		return
	}
	if l.store != nil {
		l.store.unpark(q)
	}
}

func (l *lines) dropOnShutdown(q *payload) {
	if l.store == nil {
		l.lost(q)
	}
}

// waiting is how many payloads wait in the lines.
func (l *lines) waiting() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// close stops the lines (shutdown, after the loops stopped): the batches
// at the gates end interrupted, the lines stay on disk or are lost.
func (l *lines) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.wg.Wait()
}

// restore puts back into the queue the lines a previous process kept on
// disk (persistent queue), once the queue runs.
func (l *lines) restore() {
	if l == nil || l.store == nil {
		return
	}
	for _, p := range l.store.parkedPayloads() {
		l.mu.Lock()
		l.held += l.size(p)
		l.count++
		l.mu.Unlock()
		l.requeue(p)
	}
}

// errLostAtShutdown finishes a payload a memory queue's line held at shutdown.
var errLostAtShutdown = errors.New("lost at shutdown: its partition was held, and the memory queue keeps nothing")
