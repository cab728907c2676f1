// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"testing"
	"time"

	bench "github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// TestQuotaPacing offers a token-bucket quota of 2000 spans/s twice its rate
// for 20 s, with and without RateLimit headers on every answer, and counts
// what the backend saw: nothing lost, no duplicate without a key, at most
// 5 % of the requests refused without headers and 2 % with them (the core
// exporter: about a third), and at least 85 % of the quota used from the
// first request to the last delivery (docs/benchmarks.md has the medians,
// over 90 %, next to the core exporter's; the margin here is for a machine
// shared with the other end-to-end tests). The two run one after the other,
// so that they do not share the machine's two cores with each other.
func TestQuotaPacing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		maxRefused float64
	}{
		{name: bench.QuotaBucket, maxRefused: 0.05},
		{name: bench.QuotaHeaders, maxRefused: 0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Issue 7's setting: the quota offered for 20 s (the scenario
			// benchmark's default is shorter, to fit its time budget).
			p := bench.DefaultParams()
			p.QuotaFor = 20 * time.Second
			f := runOurs(t, p, tc.name, 4*time.Minute)
			t.Logf("%s: %d spans, %d delivered, %d lost; %d requests, %d refused (%.1f %%); quota used %.1f %%",
				tc.name, f.Spans, f.Delivered, f.Lost, f.Requests, f.Refused, 100*share(f.RefusedShare), 100*share(f.QuotaUsed))
			checkPaced(t, f, tc.maxRefused, f.QuotaUsed, 0.85, "of the quota used")
		})
	}
}
