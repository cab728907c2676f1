// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// TestHostileRateLimitPolicies: a RateLimit header of 50 000 distinct
// policies (about 900 KB, under Go's 10 MB limit for response headers) on
// every 200. The exporter must go on delivering (at least 90 % of the
// requests offered within 20 s) and stop within 5 s of SIGTERM.
func TestHostileRateLimitPolicies(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var b strings.Builder
	for i := range 50_000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"p%d";r=1000;t=60`, i)
	}
	header := b.String()
	backend := newHostileBackend(t, func(w http.ResponseWriter, _ *http.Request, _ int) int {
		w.Header().Set("RateLimit", header)
		w.WriteHeader(http.StatusOK)
		return http.StatusOK
	})
	run := startHostile(ctx, t, backend.URL, "", "info")
	run.stopGrace = 35 * time.Second
	start := time.Now()
	load, err := demorun.Load{Batches: 200, SpansPerBatch: 2, Interval: 50 * time.Millisecond}.Send(ctx, run.receiver)
	if err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, accepted := backend.count(start, time.Time{}); accepted >= load.Batches {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, accepted := backend.count(start, deadline)
	took := run.stop()
	share := float64(accepted) / float64(load.Batches)
	figure(t, "delivered_share_20s", share, "of requests offered")
	figure(t, "shutdown_seconds", took.Seconds(), "s")
	if share < 0.9 {
		t.Errorf("%d of %d requests delivered within 20 s (%.0f %%), want at least 90 %%", accepted, load.Batches, 100*share)
	}
	if took > 5*time.Second {
		t.Errorf("the collector took %s to stop after SIGTERM, want at most 5 s", took)
	}
}
