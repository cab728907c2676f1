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

// storedHold is one gate's hold as written.
type storedHold struct {
	Reason   string `json:"reason"`
	Until    int64  `json:"until_unix_nano"`
	Failures int    `json:"failures"`
}

// holdStore keeps an exporter's holds, by gate key (a hash: no credential
// or tenant value is written).
type holdStore struct {
	client storage.Client
	logger *zap.Logger

	mu       sync.Mutex
	holds    map[string]storedHold
	versions map[string]uint64
	parked   []string // keys of the batches in lines, nil until read
	warned   bool
}

// openHoldStore opens the holds' storage client on the queue's storage
// extension and reads what a previous process kept. It returns nil
// without a persistent queue.
func openHoldStore(ctx context.Context, host component.Host, cfg *Config, id component.ID, signal string, logger *zap.Logger, now time.Time) (*holdStore, error) {
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
	s := &holdStore{client: client, logger: logger, holds: map[string]storedHold{}, versions: map[string]uint64{}}
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
	for k, h := range s.holds {
		if now.Sub(time.Unix(0, h.Until)) > holdsKeptFor {
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
	if !ok {
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
	if h.Reason == retry.HoldNone {
		if !had {
			return
		}
		delete(s.holds, key)
	} else {
		sh := storedHold{Reason: h.Reason.String(), Until: h.Until.UnixNano(), Failures: h.Failures}
		if had && old == sh {
			return
		}
		s.holds[key] = sh
	}
	data, err := json.Marshal(s.holds)
	if err == nil {
		err = s.client.Set(context.Background(), holdsKey, data)
	}
	if err != nil {
		s.warnLocked(err)
	}
}

// close closes the storage client.
func (s *holdStore) close(ctx context.Context) error {
	if s == nil {
		return nil
	}
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
