// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var boundsNow = time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)

// distinctPolicies is a RateLimit field of n policies with distinct names,
// the header that once took seconds to parse (quadratic in n).
func distinctPolicies(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"p%d";r=1000;t=60`, i)
	}
	return b.String()
}

// TestRateLimitCaps: a field longer than MaxRateLimitFieldBytes is not
// parsed, the policies beyond MaxRateLimitPolicies are ignored, and both
// are counted as excess; what is within the caps still counts.
func TestRateLimitCaps(t *testing.T) {
	excess := func(field string) RateLimitRejection {
		return RateLimitRejection{Field: field, Reason: RejectExcess}
	}
	t.Run("the 50 000-policy header is ignored whole", func(t *testing.T) {
		got := ParseRateLimit(http.Header{"Ratelimit": {distinctPolicies(50_000)}}, boundsNow)
		assert.False(t, got.Present)
		assert.Equal(t, []RateLimitRejection{excess("RateLimit")}, got.Rejected)
	})
	t.Run("a field at the cap is read, one byte more is not", func(t *testing.T) {
		prefix := `"d";r=5;t=1;x="`
		field := prefix + strings.Repeat("a", maxRateLimitFieldBytes-len(prefix)-1) + `"`
		require.Len(t, field, maxRateLimitFieldBytes)
		got := ParseRateLimit(http.Header{"Ratelimit": {field}}, boundsNow)
		assert.True(t, got.Present, "a field of exactly %d bytes is read", maxRateLimitFieldBytes)
		got = ParseRateLimit(http.Header{"Ratelimit": {field + ";y"}}, boundsNow)
		assert.False(t, got.Present)
		assert.Equal(t, []RateLimitRejection{excess("RateLimit")}, got.Rejected)
	})
	t.Run("field lines count together", func(t *testing.T) {
		lines := make([]string, 2000)
		for i := range lines {
			lines[i] = "0"
		}
		got := ParseRateLimit(http.Header{"X-Ratelimit-Remaining": lines, "X-Ratelimit-Limit": {"10"}}, boundsNow)
		assert.Equal(t, []RateLimitRejection{excess("X-RateLimit-Remaining")}, got.Rejected)
		assert.Equal(t, []RateLimitPolicy{{Quota: 10, HasQuota: true, QuotaUnit: "requests"}}, got.Policies, "the other fields still count")
	})
	t.Run("policies beyond the cap", func(t *testing.T) {
		got := ParseRateLimit(http.Header{"Ratelimit": {distinctPolicies(maxRateLimitPolicies+5) + `, "p0";r=1`}}, boundsNow)
		require.Len(t, got.Policies, maxRateLimitPolicies)
		assert.Equal(t, int64(1), got.Policies[0].Remaining, "a name within the cap is still merged, wherever it comes")
		assert.Equal(t, []RateLimitRejection{excess("RateLimit")}, got.Rejected, "counted once per field")
	})
	t.Run("a draft -07 dictionary of duplicate keys: the last wins", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("limit=100")
		for i := range 200 {
			fmt.Fprintf(&b, ", remaining=%d", i)
		}
		got := ParseRateLimit(http.Header{"Ratelimit": {b.String()}}, boundsNow)
		require.Len(t, got.Policies, 1)
		assert.Equal(t, int64(199), got.Policies[0].Remaining)
	})
}

// maxNanosPerByte and maxFixedCost bound the time of one parse: linear
// code takes tens of nanoseconds a byte (more under the race detector);
// quadratic code on the sizes below takes seconds.
const (
	maxNanosPerByte = 1000
	maxFixedCost    = 5 * time.Millisecond
)

// timeOf returns the least time of three runs of f, so that one pause of
// a shared machine does not count.
func timeOf(f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}

// FuzzRateLimitTimePerByte builds fields of up to 256 KiB from a fuzzed
// unit (with "%d" numbered in each repeat, so that names can be distinct
// or all the same) and asserts that the structured-field parser, without
// the caps, and ParseRateLimit take at most maxNanosPerByte per byte of
// header, plus maxFixedCost. Its seeds run in every `go test`; to fuzz:
//
//	go test -run XXX -fuzz FuzzRateLimitTimePerByte -fuzztime 60s ./retry/
func FuzzRateLimitTimePerByte(f *testing.F) {
	for _, s := range []string{
		`"p%d";r=1000;t=60`, // distinct names: once quadratic
		`"p";r=%d;t=60`,     // one name again and again
		`k%d=1`,             // distinct dictionary keys
		`k=%d`,              // one dictionary key again and again
		`limit=100, remaining=%d, reset=5`,
		`"d";q=%d;w=1;qu="requests";pk=:cHJvamVjdA==:`,
		`("a" "b" %d);r=1`,
		`"` + strings.Repeat(`\"`, 50) + `%d"`,
		`%%"%d%%e2%%82%%ac"`,
		`%d`,
	} {
		f.Add(s, uint32(256<<10))
	}
	f.Fuzz(func(t *testing.T, unit string, size uint32) {
		if unit == "" {
			return
		}
		size = min(size, 256<<10)
		var b strings.Builder
		for i := 0; b.Len() < int(size); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strings.ReplaceAll(unit, "%d", fmt.Sprint(i)))
		}
		field := b.String()
		check := func(what string, d time.Duration) {
			t.Helper()
			if limit := maxFixedCost + time.Duration(len(field))*maxNanosPerByte; d > limit {
				t.Fatalf("%s of %d bytes took %s, more than %s (%d ns a byte plus %s)", what, len(field), d, limit, maxNanosPerByte, maxFixedCost)
			}
		}
		check("parseSFList", timeOf(func() { _, _ = parseSFList(field) }))
		check("parseSFDictionary", timeOf(func() { _, _ = parseSFDictionary(field) }))
		h := http.Header{"Ratelimit": {field}, "Ratelimit-Policy": {field}, "X-Ratelimit-Remaining": {field}}
		check("ParseRateLimit", timeOf(func() { ParseRateLimit(h, boundsNow) }))
		// Within the cap, the policies' merge runs too.
		if capped := field[:min(len(field), maxRateLimitFieldBytes)]; true {
			h := http.Header{"Ratelimit": {capped}, "Ratelimit-Policy": {capped}}
			check("ParseRateLimit within the cap", timeOf(func() { ParseRateLimit(h, boundsNow) }))
		}
	})
}
