// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
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
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			// Issue 7's setting: the quota offered for 20 s (the scenario
			// benchmark's default is shorter, to fit its time budget).
			p := bench.DefaultParams()
			p.QuotaFor = 20 * time.Second
			sc, err := p.Build(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := sc.Run(ctx, bench.Ours, collectorBin(t), bench.DefaultSetup(), t.TempDir(), bench.NewBodies())
			if err != nil {
				t.Fatal(err)
			}
			f := res.Figures
			used, refused := -1.0, -1.0
			if f.QuotaUsed != nil {
				used = *f.QuotaUsed
			}
			if f.RefusedShare != nil {
				refused = *f.RefusedShare
			}
			t.Logf("%s: %d spans, %d delivered, %d lost; %d requests, %d refused (%.1f %%); quota used %.1f %%",
				tc.name, f.Spans, f.Delivered, f.Lost, f.Requests, f.Refused, 100*refused, 100*used)
			if f.Err != "" {
				t.Errorf("run fell short: %s", f.Err)
			}
			if f.Lost != 0 || f.UncoveredDuplicates != 0 {
				t.Errorf("%d spans lost, %d duplicates not covered by a key", f.Lost, f.UncoveredDuplicates)
			}
			if refused < 0 || refused > tc.maxRefused {
				t.Errorf("%.1f %% of the requests refused, want at most %.0f %%", 100*refused, 100*tc.maxRefused)
			}
			if used < 0.85 {
				t.Errorf("%.1f %% of the quota used, want at least 85 %%", 100*used)
			}
		})
	}
}
