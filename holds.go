// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// A gate lives in memory. So that a restart does not forget a hold (a 401,
// a Retry-After, an outage the destination was in when the collector
// stopped or was killed), the exporter keeps its gates' holds in the
// storage extension of its persistent queue, when the queue has one: each
// change of a hold is written before the request that caused it is
// retried, and a fresh process starts its gates holding until the same
// moment; a kept hold whose end has passed makes the first sender the
// probe. Without storage a restart has nothing queued to send at once: the
// memory queue starts empty. At a healthy start (nothing kept) the cost is
// reading one record per signal before the consumers start
// (BenchmarkHoldStoreAtStart); no request waits.
//
// Next to each gate's hold is its pacer's learned pace (retry.KeptPace:
// the curve after the last cut, a concurrency limit), so that a process
// restarted while it paced a limiter resumes that pace instead of sending
// everything queued at once into the limit. The pace is written when it
// changes in a way worth keeping (a cut, a concurrency limit: not every
// accepted request), at most once every paceWriteEvery (a backend that
// sheds load cuts often; the last change is written paceWriteEvery later
// at most), and at shutdown with what was counted since; a kill -9 keeps
// the last one written. A fresh pacer resumes it while its last cut is
// less than pacing::quiet_period old (retry.KeptPace).

// holdsStorageName names the storage client of the holds, next to the
// queue's (which is named after the signal).
const holdsStorageName = "holds"

// holdsKey is the one key the holds are kept under: a storage client
// cannot list its keys, so the holds of every partition's gate are one
// record.
const holdsKey = "otlp_http_retry_holds"

// holdsKeptFor is how long a hold that has ended is still worth keeping
// the record of: older ones are dropped when read.
const holdsKeptFor = 24 * time.Hour

// paceWriteEvery is the least time between two writes of the record for
// changes of the pace alone (a hold's change is written at once).
const paceWriteEvery = time.Second

// storedHold is one gate's hold and pace as written: Reason is empty when
// the gate does not hold, Pace nil when nothing is paced. (A record of an
// earlier version has no pace; an earlier version reading this one drops
// an entry without a hold, as one whose hold ended long ago.)
type storedHold struct {
	Reason   string      `json:"reason"`
	Until    int64       `json:"until_unix_nano"`
	Failures int         `json:"failures"`
	Pace     *storedPace `json:"pace,omitempty"`
}

// storedPace is a pacer's learned pace as written (retry.KeptPace).
type storedPace struct {
	At                 int64   `json:"at_unix_nano"`
	Mode               string  `json:"mode,omitempty"`
	Ceiling            float64 `json:"ceiling,omitempty"`
	Since              int64   `json:"since_unix_nano,omitempty"`
	Bare               bool    `json:"bare,omitempty"`
	Plateau            float64 `json:"plateau,omitempty"`
	Regain             int64   `json:"regain_nanos,omitempty"`
	Measured           bool    `json:"measured,omitempty"`
	BackgroundAnswered float64 `json:"background_answered,omitempty"`
	BackgroundRefused  float64 `json:"background_refused,omitempty"`
	ItemsPerRequest    int     `json:"items_per_request,omitempty"`
	AcceptedRun        int     `json:"accepted_run,omitempty"`
	Answered           int     `json:"answered,omitempty"`
	RefusedRun         int     `json:"refused_run,omitempty"`
	FirstSlot          int64   `json:"first_slot_unix_nano,omitempty"`
	Concurrency        int     `json:"concurrency,omitempty"`
	ConcurrencySince   int64   `json:"concurrency_since_unix_nano,omitempty"`
}

// unixNano is t in nanoseconds since the epoch, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNano is unixNano's inverse.
func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// storedPaceOf is k as written; nil when it keeps nothing.
func storedPaceOf(k retry.KeptPace) *storedPace {
	if k.IsZero() {
		return nil
	}
	return &storedPace{At: unixNano(k.At), Mode: k.Mode, Ceiling: k.Ceiling, Since: unixNano(k.Since),
		Bare: k.Bare, Plateau: k.Plateau, Regain: int64(k.Regain), Measured: k.Measured,
		BackgroundAnswered: k.BackgroundAnswered, BackgroundRefused: k.BackgroundRefused,
		ItemsPerRequest: k.ItemsPerRequest, AcceptedRun: k.AcceptedRun, Answered: k.Answered, RefusedRun: k.RefusedRun,
		FirstSlot: unixNano(k.FirstSlot), Concurrency: k.Concurrency, ConcurrencySince: unixNano(k.ConcurrencySince)}
}

// kept is p as a pacer restores it.
func (p *storedPace) kept() retry.KeptPace {
	return retry.KeptPace{At: fromUnixNano(p.At), Mode: p.Mode, Ceiling: p.Ceiling, Since: fromUnixNano(p.Since),
		Bare: p.Bare, Plateau: p.Plateau, Regain: time.Duration(p.Regain), Measured: p.Measured,
		BackgroundAnswered: p.BackgroundAnswered, BackgroundRefused: p.BackgroundRefused,
		ItemsPerRequest: p.ItemsPerRequest, AcceptedRun: p.AcceptedRun, Answered: p.Answered, RefusedRun: p.RefusedRun,
		FirstSlot: fromUnixNano(p.FirstSlot), Concurrency: p.Concurrency, ConcurrencySince: fromUnixNano(p.ConcurrencySince)}
}

// stale reports whether nothing in h is worth keeping at now: its hold
// (if any) ended, and its pace (if any) was read, more than holdsKeptFor
// ago (no quiet period is longer).
func (h storedHold) stale(now time.Time) bool {
	holdStale := h.Reason == "" || now.Sub(time.Unix(0, h.Until)) > holdsKeptFor
	paceStale := h.Pace == nil || now.Sub(time.Unix(0, h.Pace.At)) > holdsKeptFor
	return holdStale && paceStale
}

// holdStore keeps an exporter's holds, by gate key (a hash: no credential
// or tenant value is written).
type holdStore struct {
	client storage.Client
	logger *zap.Logger
	clock  retry.Clock

	mu       sync.Mutex
	holds    map[string]storedHold
	versions map[string]uint64
	parked   []string // keys of the batches in lines, nil until read
	warned   bool

	// The pace's writes (putPace): paceVersions orders each key's paces;
	// written is when the record was last written, dirty is set while a
	// change of a pace waits for its write (flushing: a goroutine writes
	// it paceWriteEvery after the last write; done ends it at close).
	paceVersions map[string]uint64
	written      time.Time
	dirty        bool
	flushing     bool
	writes       int // records written, for the tests and the benchmark
	done         chan struct{}
	wg           sync.WaitGroup
}

// openHoldStore opens the holds' storage client on the queue's storage
// extension and reads what a previous process kept. It returns nil
// without a persistent queue.
func openHoldStore(ctx context.Context, host component.Host, cfg *Config, id component.ID, signal string, logger *zap.Logger, clock retry.Clock) (*holdStore, error) {
	if !cfg.QueueConfig.HasValue() || cfg.QueueConfig.Get().StorageID == nil {
		return nil, nil
	}
	sid := *cfg.QueueConfig.Get().StorageID
	ext, ok := host.GetExtensions()[sid]
	if !ok {
		// exporterhelper's persistent queue says so as it starts, next.
		return nil, nil
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("sending_queue::storage: %s is not a storage extension", sid)
	}
	client, err := se.GetClient(ctx, component.KindExporter, id, signal+"_"+holdsStorageName)
	if err != nil {
		return nil, fmt.Errorf("opening the storage of the gates' holds: %w", err)
	}
	s := &holdStore{client: client, logger: logger, clock: clock, holds: map[string]storedHold{}, versions: map[string]uint64{},
		paceVersions: map[string]uint64{}, done: make(chan struct{})}
	data, err := client.Get(ctx, holdsKey)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("reading the gates' holds: %w", err), client.Close(ctx))
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &s.holds); err != nil {
			// A record this version cannot read holds nothing it needs:
			// start afresh.
			logger.Warn("The gates' holds kept by the previous process could not be read; starting without them", zap.Error(err))
			s.holds = map[string]storedHold{}
		}
	}
	now := clock.Now()
	for k, h := range s.holds {
		if h.stale(now) {
			delete(s.holds, k)
		}
	}
	return s, nil
}

// restored is the hold kept for the gate key, if any.
func (s *holdStore) restored(key string) (retry.Hold, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[key]
	if !ok || h.Reason == "" {
		return retry.Hold{}, false
	}
	reason, ok := holdReasons[h.Reason]
	if !ok {
		return retry.Hold{}, false
	}
	return retry.Hold{Reason: reason, Until: time.Unix(0, h.Until), Failures: h.Failures}, true
}

var holdReasons = map[string]retry.HoldReason{
	retry.HoldThrottle.String():     retry.HoldThrottle,
	retry.HoldOutage.String():       retry.HoldOutage,
	retry.HoldUnauthorized.String(): retry.HoldUnauthorized,
}

// put writes the gate key's hold (none: deletes it), unless a later
// version was written already.
func (s *holdStore) put(key string, h retry.Hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.versions[key]; ok && h.Version <= v {
		return
	}
	s.versions[key] = h.Version
	old, had := s.holds[key]
	sh := storedHold{Pace: old.Pace}
	if h.Reason != retry.HoldNone {
		sh.Reason, sh.Until, sh.Failures = h.Reason.String(), h.Until.UnixNano(), h.Failures
	}
	if !s.setLocked(key, old, had, sh) {
		return
	}
	s.writeLocked()
}

// restoredPace is the pace kept for the gate key, if any.
func (s *holdStore) restoredPace(key string) (retry.KeptPace, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[key]
	if !ok || h.Pace == nil {
		return retry.KeptPace{}, false
	}
	return h.Pace.kept(), true
}

// putPace keeps the gate key's pace (nothing kept: drops it), unless a
// later version was kept already. The record is written now, or, when it
// was written less than paceWriteEvery ago, that long after the last
// write (and at close).
func (s *holdStore) putPace(key string, k retry.KeptPace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.paceVersions[key]; ok && k.Version < v {
		return
	}
	s.paceVersions[key] = k.Version
	old, had := s.holds[key]
	sh := old
	sh.Pace = storedPaceOf(k)
	if !s.setLocked(key, old, had, sh) {
		return
	}
	s.dirty = true
	due := s.written.Add(paceWriteEvery)
	switch {
	case !s.clock.Now().Before(due):
		s.writeLocked()
	case !s.flushing && s.done != nil:
		s.flushing = true
		s.wg.Add(1)
		go s.flushAt(due, s.done)
	}
}

// flushAt writes the record at due, unless close (done) comes first:
// close writes it then.
func (s *holdStore) flushAt(due time.Time, done <-chan struct{}) {
	defer s.wg.Done()
	ch, stop := s.clock.After(due.Sub(s.clock.Now()))
	defer stop()
	select {
	case <-ch:
	case <-done:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushing = false
	if s.dirty {
		s.writeLocked()
	}
}

// setLocked sets the gate key's entry from old (had: there was one) to
// sh, and reports whether that changed it.
func (s *holdStore) setLocked(key string, old storedHold, had bool, sh storedHold) bool {
	empty := sh.Reason == "" && sh.Pace == nil
	switch {
	case empty && !had:
		return false
	case empty:
		delete(s.holds, key)
		return true
	case had && old.Reason == sh.Reason && old.Until == sh.Until && old.Failures == sh.Failures && samePace(old.Pace, sh.Pace):
		return false
	}
	s.holds[key] = sh
	return true
}

func samePace(a, b *storedPace) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// writeLocked writes the record of every gate's hold and pace.
func (s *holdStore) writeLocked() {
	s.dirty, s.written = false, s.clock.Now()
	s.writes++
	data, err := json.Marshal(s.holds)
	if err == nil {
		err = s.client.Set(context.Background(), holdsKey, data)
	}
	if err != nil {
		s.warnLocked(err)
	}
}

// close writes a change of a pace not written yet and closes the storage
// client.
func (s *holdStore) close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.done != nil {
		close(s.done)
		s.done = nil
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	if s.dirty {
		s.writeLocked()
	}
	s.mu.Unlock()
	return s.client.Close(ctx)
}

// The lines of held partitions (lines.go) are kept next to the holds: each
// batch as the persistent queue stores it (payloadEncoding), under its
// key, and an index of the keys, since a storage client cannot list them.
const (
	parkedIndexKey  = "otlp_http_retry_parked"
	parkedKeyPrefix = "otlp_http_retry_parked/"
)

// park writes p to disk; false if it could not.
func (s *holdStore) park(p *payload) bool {
	data, err := payloadEncoding{}.Marshal(context.Background(), p)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := append(s.parkedKeysLocked(), p.key.String())
	index, err := json.Marshal(keys)
	if err == nil {
		err = s.client.Batch(context.Background(),
			storage.SetOperation(parkedKeyPrefix+p.key.String(), data),
			storage.SetOperation(parkedIndexKey, index))
	}
	if err != nil {
		s.warnLocked(err)
		return false
	}
	s.parked = keys
	return true
}

// unpark deletes p from disk, once it is back in the queue.
func (s *holdStore) unpark(p *payload) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.parkedKeysLocked()
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != p.key.String() {
			out = append(out, k)
		}
	}
	index, err := json.Marshal(out)
	if err == nil {
		err = s.client.Batch(context.Background(),
			storage.DeleteOperation(parkedKeyPrefix+p.key.String()),
			storage.SetOperation(parkedIndexKey, index))
	}
	if err != nil {
		s.warnLocked(err)
		return
	}
	s.parked = out
}

// parkedPayloads reads the payloads kept in lines by a previous process.
func (s *holdStore) parkedPayloads() []*payload {
	s.mu.Lock()
	keys := s.parkedKeysLocked()
	s.mu.Unlock()
	var out []*payload
	for _, k := range keys {
		data, err := s.client.Get(context.Background(), parkedKeyPrefix+k)
		if err != nil || data == nil {
			continue
		}
		_, r, err := payloadEncoding{}.Unmarshal(data)
		if err != nil {
			continue
		}
		out = append(out, r.(*payload))
	}
	return out
}

// parkedKeysLocked is the index, read from disk the first time.
func (s *holdStore) parkedKeysLocked() []string {
	if s.parked != nil {
		return s.parked
	}
	s.parked = []string{}
	data, err := s.client.Get(context.Background(), parkedIndexKey)
	if err == nil && len(data) > 0 {
		_ = json.Unmarshal(data, &s.parked)
	}
	return s.parked
}

func (s *holdStore) warnLocked(err error) {
	if !s.warned {
		s.warned = true
		s.logger.Warn("Could not keep a gate's hold or a held partition's batch in the storage extension; a restart may not know about it", zap.Error(err))
	}
}
