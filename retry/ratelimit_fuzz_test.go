// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// The seed corpus (the f.Add calls and the files under
// testdata/fuzz/FuzzParseRateLimit/) runs in every `go test`; to fuzz:
//
//	go test -run XXX -fuzz FuzzParseRateLimit -fuzztime 60s ./retry/

// FuzzParseRateLimit feeds ParseRateLimit every rate-limit header of every
// form at once, each value split on "\n" into several field lines, names in
// the drafts' case or in lower case, with any Date header and any now, and
// checks what the pacing relies on.
func FuzzParseRateLimit(f *testing.F) {
	type seed struct {
		policy, limit, tLimit, tRemaining, tReset, xLimit, xRemaining, xReset, date string
		now                                                                         int64
		cost                                                                        float64
		lower                                                                       bool
	}
	now := t0.Unix()
	for _, s := range []seed{
		{policy: `"default";q=2000;w=1`, limit: `"default";r=1500;t=1`, now: now, cost: 1},
		{policy: "default;w=1;q=2000", limit: "default;t=1;r=0", now: now, cost: 40, lower: true},
		{policy: `"burst";q=100;w=1` + "\n" + `"daily";q=10000;w=86400`, limit: `"burst";r=0;t=1, "daily";r=0;t=3600`, now: now, cost: 1},
		{policy: `"b";q=1000000;qu="content-bytes";w=10;pk=:cHJvamVjdA==:`, limit: `"b";r=4000;t=3`, now: now, cost: 4096},
		{limit: `"d";r=abc;t=-5`, policy: `"d";q=1e99;w=1`, now: now, cost: 1},
		{limit: `"d";r=99999999999999999999;t=99999999999999999999`, now: now, cost: 1},
		{limit: `"d";r=201`, policy: `"d";q=100`, now: now, cost: 1},
		{limit: "limit=100, remaining=25, reset=5", policy: "100;w=60", now: now, cost: 1},
		{limit: `("a" "b");r=1, ?1;r=2, @1;r=3, %"x";r=4, :AA==:;r=5, 1.5;r=6`, now: now, cost: 1},
		{tLimit: "10, 10;w=1, 50;w=60", tRemaining: "0", tReset: "1", now: now, cost: 1},
		{tLimit: "100;window=60", tRemaining: "-5", tReset: "1000000000", now: now, cost: 1},
		{xLimit: "5000", xRemaining: "0", xReset: "1740830400", now: now, cost: 1},
		{xRemaining: "0", xReset: "1740830401500", now: now, cost: 1},
		{xRemaining: "0", xReset: "1740834000", date: "Sat, 01 Mar 2025 13:00:00 GMT", now: now, cost: 1},
		{xRemaining: "0", xReset: "99999999999999999999", date: "garbage", now: now, cost: math.NaN()},
		{xRemaining: "4.0", xLimit: "+5", xReset: "1.5", now: now, cost: -1},
		{xRemaining: "3\n7", now: math.MinInt64, cost: math.Inf(1)},
		{xReset: "1740830400.999999999999", xRemaining: "0", now: math.MaxInt64, cost: 0},
		{limit: `"d";r=1,`, xRemaining: "1", now: 0, cost: 1},
		{limit: "", policy: "", now: now, cost: 1},
	} {
		f.Add(s.policy, s.limit, s.tLimit, s.tRemaining, s.tReset, s.xLimit, s.xRemaining, s.xReset, s.date, s.now, s.cost, s.lower)
	}

	sources := []retry.RateLimitSource{retry.SourceRateLimit, retry.SourceRateLimitDraft7, retry.SourceRateLimitTriple, retry.SourceXRateLimit}
	reasons := []retry.RateLimitReject{retry.RejectMalformed, retry.RejectNegative, retry.RejectHuge, retry.RejectExcess}
	f.Fuzz(func(t *testing.T, policy, limit, tLimit, tRemaining, tReset, xLimit, xRemaining, xReset, date string, nowUnix int64, cost float64, lower bool) {
		h := http.Header{}
		for _, kv := range [][2]string{
			{"RateLimit-Policy", policy}, {"RateLimit", limit},
			{"RateLimit-Limit", tLimit}, {"RateLimit-Remaining", tRemaining}, {"RateLimit-Reset", tReset},
			{"X-RateLimit-Limit", xLimit}, {"X-RateLimit-Remaining", xRemaining}, {"X-RateLimit-Reset", xReset},
			{"Date", date},
		} {
			name := kv[0]
			if lower {
				name = strings.ToLower(name)
			}
			if kv[1] != "" {
				h[name] = strings.Split(kv[1], "\n")
			}
		}
		now := time.Unix(nowUnix, 0)

		got := retry.ParseRateLimit(h, now)
		if again := retry.ParseRateLimit(h, now); !reflect.DeepEqual(got, again) {
			t.Fatalf("not deterministic: %+v then %+v", got, again)
		}
		if !got.Observed.Equal(now) {
			t.Fatalf("Observed %s, want %s", got.Observed, now)
		}
		if got.Present != (len(got.Policies) > 0) || got.Present != (got.Source != "") {
			t.Fatalf("Present %v with %d policies from %q", got.Present, len(got.Policies), got.Source)
		}
		if got.Present && !contains(sources, got.Source) {
			t.Fatalf("source %q is none of the defined sources", got.Source)
		}
		if got.Reference != "" && got.Reference != retry.ReferenceDateHeader && got.Reference != retry.ReferenceLocalClock {
			t.Fatalf("reference %q", got.Reference)
		}
		for _, x := range got.Rejected {
			if !contains(reasons, x.Reason) || x.Field == "" {
				t.Fatalf("rejection %+v", x)
			}
		}
		if len(got.Policies) > retry.MaxRateLimitPolicies {
			t.Fatalf("%d policies, more than the cap of %d", len(got.Policies), retry.MaxRateLimitPolicies)
		}
		for _, p := range got.Policies {
			if !p.HasQuota && !p.HasRemaining {
				t.Fatalf("policy with neither quota nor remaining: %+v", p)
			}
			if p.Quota < 0 || p.Quota > retry.MaxRateLimitCount || (!p.HasQuota && p.Quota != 0) {
				t.Fatalf("quota out of bounds: %+v", p)
			}
			if p.Remaining < 0 || p.Remaining > retry.MaxRateLimitCount || (!p.HasRemaining && p.Remaining != 0) {
				t.Fatalf("remaining out of bounds: %+v", p)
			}
			if p.HasQuota && p.HasRemaining && p.Remaining > 2*p.Quota {
				t.Fatalf("remaining far above the quota: %+v", p)
			}
			if p.Reset < 0 || p.Reset > retry.MaxRateLimitReset || (!p.HasReset && p.Reset != 0) {
				t.Fatalf("reset out of bounds: %+v", p)
			}
			if p.Window < 0 || p.Window > retry.MaxRateLimitReset {
				t.Fatalf("window out of bounds: %+v", p)
			}
			if p.QuotaUnit == "" {
				t.Fatalf("no quota unit: %+v", p)
			}
		}

		if b, ok := got.Binding(func(retry.RateLimitPolicy) float64 { return cost }); ok && !b.HasRemaining {
			t.Fatalf("binding policy without remaining: %+v", b)
		}
	})
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
