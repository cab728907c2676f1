// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"sort"
	"sync"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// loops holds an exporter's retry loops, one per partition of
// sending_queue::batch::partition::metadata_keys, each on the gate (and
// pacer) of its partition: a tenant held by a 429 waits on its own gate
// while another tenant's batches pass theirs. Without partitions there is
// one, the "" partition's, on the destination's gate.
type loops struct {
	// create builds the loop of a partition and the function that
	// releases its gate.
	create func(partition string) (*retry.Loop, func())
	// limit bounds the partitions kept (partition::cache_size); a
	// partition whose gate is open and that has nothing in flight is let
	// go first.
	limit int

	mu      sync.Mutex
	m       map[string]*partitionLoop
	stopped bool
	// attach, once set (setAttach), runs on every partition's loop (its
	// gate and pacer) and returns what undoes it.
	attach func(partition string, loop *retry.Loop) (detach func())
}

type partitionLoop struct {
	loop     *retry.Loop
	release  func()
	detach   func()
	inflight int
}

// setAttach runs f on the loop of every partition, now and as they are
// made; what f returns runs when the partition is let go.
func (l *loops) setAttach(f func(partition string, loop *retry.Loop) func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.attach = f
	for p, pl := range l.m {
		pl.detach = f(p, pl.loop)
	}
}

func (pl *partitionLoop) letGo() {
	if pl.detach != nil {
		pl.detach()
	}
	pl.release()
}

func newLoops(create func(string) (*retry.Loop, func()), limit int) *loops {
	l := &loops{create: create, limit: limit, m: map[string]*partitionLoop{}}
	l.get("")
	return l
}

// acquire returns the loop of partition, and done to call once the
// payload using it is finished.
func (l *loops) acquire(partition string) (*retry.Loop, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pl := l.getLocked(partition)
	pl.inflight++
	return pl.loop, func() {
		l.mu.Lock()
		pl.inflight--
		l.mu.Unlock()
	}
}

// get returns the loop of partition.
func (l *loops) get(partition string) *retry.Loop {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.getLocked(partition).loop
}

func (l *loops) getLocked(partition string) *partitionLoop {
	if pl, ok := l.m[partition]; ok {
		return pl
	}
	if l.limit > 0 && len(l.m) >= l.limit {
		l.evictLocked()
	}
	loop, release := l.create(partition)
	if l.stopped {
		loop.Stop()
	}
	pl := &partitionLoop{loop: loop, release: release}
	if l.attach != nil {
		pl.detach = l.attach(partition, loop)
	}
	l.m[partition] = pl
	return pl
}

// evictLocked lets go of partitions that have nothing in flight and whose
// gate is open: nothing about them is lost but an idle pacer's rate.
func (l *loops) evictLocked() {
	for key, pl := range l.m {
		if key == "" || pl.inflight > 0 {
			continue
		}
		if reason, _ := pl.loop.Gate().State(); reason != retry.HoldNone {
			continue
		}
		pl.loop.Stop()
		pl.letGo()
		delete(l.m, key)
	}
}

// all returns every loop, in a fixed order.
func (l *loops) all() []*retry.Loop {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.m))
	for k := range l.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*retry.Loop, 0, len(keys))
	for _, k := range keys {
		out = append(out, l.m[k].loop)
	}
	return out
}

// stop ends every wait of every loop, now and of loops made later.
func (l *loops) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	for _, pl := range l.m {
		pl.loop.Stop()
	}
}

// release lets go of every gate.
func (l *loops) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, pl := range l.m {
		pl.letGo()
		delete(l.m, key)
	}
}

// waiting is how many payloads wait for a retry or a slot, all partitions.
func (l *loops) waiting() int64 {
	var n int64
	for _, loop := range l.all() {
		n += loop.Waiting()
	}
	return n
}
