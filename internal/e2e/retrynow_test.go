// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// TestRetryNowIsNoFlood: a 20 s window of "429 Retry-After: 0" must get no
// more requests than a 20 s window of "429 Retry-After: 1": the first
// "retry now" may retry at once, further ones escalate along the backoff
// schedule. Both windows run at once, under the same load; nothing is lost.
func TestRetryNowIsNoFlood(t *testing.T) {
	t.Parallel()
	const window = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	refused := map[string]int{}
	var mu sync.Mutex
	// The two windows are parallel subtests of a group: t.Fatal in the
	// harness stops only its own subtest's goroutine, and the group returns
	// once both are done.
	t.Run("windows", func(t *testing.T) {
		for name, cfg := range map[string]demobackend.Config{
			"Retry-After: 0": {Mode: demobackend.ModeThrottle, ThrottleFor: window, RetryAfterZero: true},
			"Retry-After: 1": {Mode: demobackend.ModeThrottle, ThrottleFor: window, RetryAfter: 1},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, cfg, scenario{})
				h.start(ctx)
				defer h.stop()
				load, err := demorun.Load{Batches: 50, SpansPerBatch: 2, Interval: 400 * time.Millisecond}.Send(ctx, h.receiverURL())
				if err != nil {
					t.Fatal(err)
				}
				recs, ok := h.waitRecords(ctx, 60*time.Second, allAccepted(load.SpanIDs))
				d := checkDelivery(load.SpanIDs, recs)
				if !ok || d.Missing != 0 || d.Duplicated != 0 {
					t.Errorf("not exactly once: %+v", d)
				}
				n := countStatus(recs, http.StatusTooManyRequests)
				t.Logf("%d requests refused in the %s window, %d requests in all; delivery %+v", n, window, len(recs), d)
				mu.Lock()
				refused[name] = n
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	if refused["Retry-After: 0"] > refused["Retry-After: 1"] {
		t.Errorf("a window of Retry-After: 0 got %d requests, more than a window of Retry-After: 1 (%d)", refused["Retry-After: 0"], refused["Retry-After: 1"])
	}
}
