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

// TestOutageConnectionRefused: the backend goes away for 60 s (its port
// refuses connections) under a steady load, then comes back. An outage
// holds every payload at the gate with one probe per backoff interval
// (1 s, 2 s, 4 s, … capped at 30 s): nothing is dropped and at most 12
// connection attempts are made during the outage, with the memory queue
// and with file_storage alike.
func TestOutageConnectionRefused(t *testing.T) {
	t.Parallel()
	for _, storage := range []bool{false, true} {
		name := "memory_queue"
		if storage {
			name = "file_storage"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const (
				outage      = 60 * time.Second
				maxAttempts = 12
			)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			h := newHarness(t, demobackend.Config{}, scenario{Storage: storage})
			h.start(ctx)

			// Load for 5 s before, through, and 5 s after the outage.
			wait := sendAsync(ctx, demorun.Load{Batches: 140, SpansPerBatch: 2, Interval: 500 * time.Millisecond}, h.receiverURL())
			if recs, ok := h.waitRecords(ctx, 30*time.Second, func(r []demobackend.Record) bool { return countStatus(r, http.StatusOK) >= 5 }); !ok {
				t.Fatalf("load not flowing before the outage: %s", statusLine(recs))
			}
			if err := h.Backend.Down(outage); err != nil {
				t.Fatal(err)
			}
			select {
			case <-h.Backend.Serving():
			case <-time.After(outage + 30*time.Second):
				t.Fatalf("the backend did not come back: %v", h.Backend.UpErr())
			}
			if err := h.Backend.UpErr(); err != nil {
				t.Fatal(err)
			}
			load, err := wait()
			if err != nil {
				t.Fatalf("the collector stopped taking load during the outage: %v", err)
			}
			// After the outage: the next probe (at most backoff::max_interval
			// after the previous one) succeeds, then everything held goes out.
			recs, ok := h.waitRecords(ctx, 60*time.Second, allAccepted(load.SpanIDs))
			d := checkDelivery(load.SpanIDs, recs)
			if !ok {
				t.Errorf("%d of %d spans not delivered within 60 s after the load ended (e.g. %v)", d.Missing, d.Sent, d.MissingIDs)
			}
			m := h.scrape(ctx)
			h.stop()

			out := h.Backend.Outages()
			refused := m.Sum(prefix+"attempts", with("outcome", "network_error"))
			t.Logf("outage %s → %s; %d spans in %d batches; backend: %d requests; delivery %+v; attempts{outcome=network_error} = %v",
				out[0].Start.Format("15:04:05.000"), out[0].End.Format("15:04:05.000"), len(load.SpanIDs), load.Batches, len(recs), d, refused)
			if d.Missing != 0 || d.Unexpected != 0 {
				t.Errorf("lost in the outage: %+v", d)
			}
			if d.Duplicated != 0 {
				// A request cut off by the backend going down may have been
				// recorded as accepted and retried under the same key.
				t.Logf("%d spans accepted twice (a retry of a request cut off when the backend went down, same key)", d.Duplicated)
			}
			if sum := demobackend.Summarize(recs); sum.KeysWithChangedBody != 0 || sum.MissingKeys != 0 {
				t.Errorf("keys: %d resent with other bytes, %d requests without a key", sum.KeysWithChangedBody, sum.MissingKeys)
			}
			if got := m.Sum(prefix+"dropped_items", nil); got != 0 {
				t.Errorf("dropped_items = %v, want 0: %s", got, droppedLines(m))
			}
			if refused == 0 {
				t.Errorf("attempts{outcome=network_error} = 0: the exporter never met the outage")
			}
			if refused > maxAttempts {
				t.Errorf("attempts{outcome=network_error} = %v during a %s outage, want at most %d (one probe per backoff interval)", refused, outage, maxAttempts)
			}
		})
	}
}

// TestUnavailableStorm: for 15 s the backend answers 503 without
// Retry-After to everything, under a steady load. The outage hold lets at
// most 8 requests reach the backend during the storm, and nothing is lost.
func TestUnavailableStorm(t *testing.T) {
	t.Parallel()
	const (
		storm       = 15 * time.Second
		maxRequests = 8
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := newHarness(t, demobackend.Config{Mode: demobackend.ModeUnavailable, FailFor: storm}, scenario{})
	h.start(ctx)
	load, err := demorun.Load{Batches: 40, SpansPerBatch: 2, Interval: 500 * time.Millisecond}.Send(ctx, h.receiverURL())
	if err != nil {
		t.Fatal(err)
	}
	recs, ok := h.waitRecords(ctx, 60*time.Second, allAccepted(load.SpanIDs))
	d := checkDelivery(load.SpanIDs, recs)
	if !ok {
		t.Errorf("%d of %d spans not delivered within 60 s after the load ended (e.g. %v)", d.Missing, d.Sent, d.MissingIDs)
	}
	m := h.scrape(ctx)
	h.stop()

	unavailable := countStatus(recs, http.StatusServiceUnavailable)
	sum := demobackend.Summarize(recs)
	t.Logf("%d spans in %d batches; backend: %d requests, %d answered 503; delivery %+v", len(load.SpanIDs), load.Batches, len(recs), unavailable, d)
	t.Logf("requests: %s", statusLine(recs))
	if unavailable > maxRequests {
		t.Errorf("%d requests reached the backend during the %s storm of 503s, want at most %d", unavailable, storm, maxRequests)
	}
	if d.Missing != 0 || d.Duplicated != 0 || d.Unexpected != 0 {
		t.Errorf("not exactly once: %+v", d)
	}
	if sum.DuplicateKeysAccepted != 0 || sum.KeysWithChangedBody != 0 || sum.MissingKeys != 0 {
		t.Errorf("keys: %d accepted twice, %d resent with other bytes, %d requests without a key", sum.DuplicateKeysAccepted, sum.KeysWithChangedBody, sum.MissingKeys)
	}
	if got := m.Sum(prefix+"dropped_items", nil); got != 0 {
		t.Errorf("dropped_items = %v, want 0: %s", got, droppedLines(m))
	}
	if got := m.Sum(prefix+"attempts", with("outcome", "retryable", "status_code", "503")); int(got) != unavailable {
		t.Errorf("attempts{outcome=retryable,status_code=503} = %v, want %d (the backend's 503s)", got, unavailable)
	}
}
