// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// A payload that waits at a held gate waits on a queue consumer, and the
// consumers are shared by every partition: a tenant held by a 429 long
// enough would take them all, and hold every other tenant with it. So,
// with sending_queue::batch::partition, a held partition keeps one batch at
// its gate, on one consumer (it goes first, as the probe, when the hold
// ends), and its other batches wait in the partition's line, off the
// consumers. When the batches of the partition that were at the gate have
// their outcome, the line goes back into the queue, in order. A batch in a line keeps its key and its bytes; with a
// persistent queue it is written to the queue's storage extension before
// the queue lets it go (parkedStore), and a restart puts it back in the
// queue.

// lines are the lines of an exporter's held partitions.
type lines struct {
	// offer puts a payload back into exporterhelper's queue.
	offer func(context.Context, *payload) error
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
	running int        // the partition's batches on consumers (at the gate, or sending)
	parked  []*payload // the others, in order
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

// park takes p off its consumer when its partition's gate holds and a
// batch of the partition is on a consumer already (it will be the probe),
// and reports whether it did. Otherwise p runs, counted on its partition.
func (l *lines) park(p *payload, gate *retry.Gate) bool {
	reason, _ := gate.State()
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.m[p.partition.key]
	if ln == nil {
		ln = &line{}
		l.m[p.partition.key] = ln
	}
	if reason == retry.HoldNone || ln.running == 0 || l.closed || (l.limit > 0 && l.held+l.size(p) > l.limit) ||
		(l.store != nil && !l.store.park(p)) {
		ln.running++
		return false
	}
	ln.parked = append(ln.parked, p)
	l.held += l.size(p)
	l.count++
	return true
}

// sent tells the lines that p's push has ended; when no batch of its
// partition is left on a consumer, the partition's line goes back into
// the queue (its first batch then goes to the gate, the others park again
// if it still holds).
func (l *lines) sent(p *payload) {
	l.mu.Lock()
	ln := l.m[p.partition.key]
	if ln == nil {
		l.mu.Unlock()
		return
	}
	ln.running--
	if ln.running > 0 {
		l.mu.Unlock()
		return
	}
	parked := ln.parked
	delete(l.m, p.partition.key)
	if len(parked) == 0 {
		l.mu.Unlock()
		return
	}
	if l.closed {
		// Shutting down: a memory queue loses its lines (as it loses what
		// waits at a held gate); a persistent one has them on disk.
		for _, q := range parked {
			l.held -= l.size(q)
			l.count--
			if l.store == nil {
				l.lost(q)
			}
		}
		l.mu.Unlock()
		return
	}
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		for _, q := range parked {
			l.requeue(q)
		}
	}()
}

// requeue puts q back into the queue and out of its line.
func (l *lines) requeue(q *payload) {
	err := l.offer(q.partition.context(), q)
	l.mu.Lock()
	l.held -= l.size(q)
	l.count--
	l.mu.Unlock()
	if err != nil {
		if l.store == nil {
			l.lost(q)
		}
		return // on disk, for the next start
	}
	if l.store != nil {
		l.store.unpark(q)
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

// close stops the lines going back into the queue (shutdown).
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
