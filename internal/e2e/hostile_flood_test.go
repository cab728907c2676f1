// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// floodBudget is the most requests any accepted config may send to a
// refusing destination in floodWindow (issue 19's bar).
const (
	floodBudget = 16
	floodWindow = 15 * time.Second
)

// TestHostileFloodConfigs: configs that earlier validated and flooded a
// refusing backend. Each is refused by validate with a message that names
// the key and the floor, or sends at most 16 requests in 15 s.
func TestHostileFloodConfigs(t *testing.T) {
	t.Parallel()
	bare429 := func(w http.ResponseWriter, _ *http.Request, _ int) int {
		w.WriteHeader(http.StatusTooManyRequests)
		return http.StatusTooManyRequests
	}
	for _, tc := range []struct {
		name, extra string
		answer      func(w http.ResponseWriter, r *http.Request, n int) int
		key         string // the key validate must name when it refuses
	}{
		{"default 0 jitter 0, bare 429", "    retry_after: {default: 0s, jitter: 0s}", bare429, "retry_after::default"},
		{"max 1ms, Retry-After 60", "    retry_after: {max: 1ms, default: 0s, jitter: 0s}", func(w http.ResponseWriter, _ *http.Request, _ int) int {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return http.StatusTooManyRequests
		}, "retry_after::max"},
		{"backoff 1ns, 503", "    backoff: {initial_interval: 1ns, max_interval: 1ns, jitter: 0s}", func(w http.ResponseWriter, _ *http.Request, _ int) int {
			w.WriteHeader(http.StatusServiceUnavailable)
			return http.StatusServiceUnavailable
		}, "backoff::initial_interval"},
		{"default 0 alone, bare 429", "    retry_after: {default: 0s}", bare429, "retry_after::default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if out, code := runValidate(t, tc.extra); code != 0 {
				figure(t, "refused_by_validate", 1, "")
				if !strings.Contains(out, tc.key) || !strings.Contains(out, "at least") {
					t.Errorf("validate refused the config without naming %s and its floor:\n%s", tc.key, out)
				}
				return
			}
			backend := newHostileBackend(t, tc.answer)
			run := startHostile(ctx, t, backend.URL, tc.extra, "info")
			start := time.Now()
			if _, err := (demorun.Load{Batches: 4, SpansPerBatch: 1, Interval: 10 * time.Millisecond}).Send(ctx, run.receiver); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(start.Add(floodWindow)))
			n, _ := backend.count(start, start.Add(floodWindow))
			figure(t, "requests_in_15s", float64(n), "requests")
			if n > floodBudget {
				t.Errorf("%d requests in %s to a refusing backend, want at most %d", n, floodWindow, floodBudget)
			}
		})
	}
}
