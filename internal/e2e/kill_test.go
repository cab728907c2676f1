// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// TestPersistentQueueSurvivesKill9: with file_storage, payloads waiting at
// a held gate (the backend answers 503 to everything: an outage) and
// payloads still queued are kept on disk when the collector is killed with
// SIGKILL, twice, and the third process delivers every span exactly once
// when the backend is back, under the keys and with the bytes the first
// process sent them with.
func TestPersistentQueueSurvivesKill9(t *testing.T) {
	t.Parallel()
	const consumers = 4
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// No batch processor: the receiver's answer then means the batch is on
	// disk (a batch processor holds up to its timeout's worth in memory,
	// which a kill -9 loses).
	h := newHarness(t, demobackend.Config{Mode: demobackend.ModeUnavailable}, scenario{Storage: true, NumConsumers: consumers, NoBatchProcessor: true})

	h.start(ctx)
	load, err := demorun.Load{Batches: 10, SpansPerBatch: 5, Interval: 300 * time.Millisecond}.Send(ctx, h.receiverURL())
	if err != nil {
		t.Fatal(err)
	}
	// Every batch the receiver accepted is in the queue; wait until
	// payloads are in flight at the held gate (probes refused).
	refusedKeys := func(recs []demobackend.Record) map[string]bool {
		keys := map[string]bool{}
		for _, r := range recs {
			if r.Status == http.StatusServiceUnavailable {
				keys[r.Key] = true
			}
		}
		return keys
	}
	if recs, ok := h.waitRecords(ctx, 30*time.Second, func(recs []demobackend.Record) bool { return countStatus(recs, http.StatusServiceUnavailable) >= 2 }); !ok {
		t.Fatalf("no second probe reached the failing backend: %s", statusLine(recs))
	}
	kill := func(which string) {
		t.Helper()
		if err := h.Collector.Kill(); err != nil {
			t.Fatalf("kill -9 of the %s process: %v", which, err)
		}
	}
	kill("first")
	before := refusedKeys(h.Backend.Records())

	// A second process meets the outage again and is killed as well.
	killedFirst := time.Now()
	h.start(ctx)
	if recs, ok := h.waitRecords(ctx, 30*time.Second, func(recs []demobackend.Record) bool {
		return countStatus(between(recs, killedFirst, time.Time{}), http.StatusServiceUnavailable) >= 1
	}); !ok {
		t.Fatalf("the second process sent nothing from the persistent queue: %s", statusLine(between(recs, killedFirst, time.Time{})))
	}
	kill("second")

	// The third process delivers once the backend is back.
	h.start(ctx)
	h.Backend.Recover()
	recs, ok := h.waitRecords(ctx, 60*time.Second, allAccepted(load.SpanIDs))
	d := checkDelivery(load.SpanIDs, recs)
	if !ok || d.Missing != 0 || d.Duplicated != 0 || d.Unexpected != 0 {
		t.Fatalf("not exactly once after two kill -9: %+v; backend: %s", d, statusLine(recs))
	}
	sum := demobackend.Summarize(recs)
	if sum.KeysWithChangedBody != 0 || sum.MissingKeys != 0 || sum.DuplicateKeysAccepted != 0 {
		t.Errorf("keys: %d with changed bytes, %d requests without a key, %d accepted twice (%d bodies cut off by a kill, left out)", sum.KeysWithChangedBody, sum.MissingKeys, sum.DuplicateKeysAccepted, sum.TruncatedBodies)
	}
	accepted := map[string]bool{}
	for _, r := range recs {
		if r.Status == http.StatusOK {
			accepted[r.Key] = true
		}
	}
	for key := range before {
		if !accepted[key] {
			t.Errorf("payload %s, in flight at the first kill, was not delivered under its key", key)
		}
	}
	h.stop()
	t.Logf("%d spans in %d batches; %d payloads in flight at the first kill; backend: %s", len(load.SpanIDs), load.Batches, len(before), statusLine(recs))
}
