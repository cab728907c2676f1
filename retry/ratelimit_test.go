// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// hdr builds a header from name/value pairs, each value its own field line,
// the names kept exactly as written (not canonicalised).
func hdr(pairs ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(pairs); i += 2 {
		h[pairs[i]] = append(h[pairs[i]], pairs[i+1])
	}
	return h
}

// pol builds an expected policy. Fields: name, then optional settings.
type polOpt func(*retry.RateLimitPolicy)

func pol(name string, opts ...polOpt) retry.RateLimitPolicy {
	p := retry.RateLimitPolicy{Name: name, QuotaUnit: "requests"}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func quota(n int64) polOpt { return func(p *retry.RateLimitPolicy) { p.Quota, p.HasQuota = n, true } }
func left(n int64) polOpt {
	return func(p *retry.RateLimitPolicy) { p.Remaining, p.HasRemaining = n, true }
}
func reset(d time.Duration) polOpt {
	return func(p *retry.RateLimitPolicy) { p.Reset, p.HasReset = d, true }
}
func window(d time.Duration) polOpt { return func(p *retry.RateLimitPolicy) { p.Window = d } }
func unit(u string) polOpt          { return func(p *retry.RateLimitPolicy) { p.QuotaUnit = u } }
func key(k string) polOpt           { return func(p *retry.RateLimitPolicy) { p.PartitionKey = k } }

func rej(field, param string, reason retry.RateLimitReject) retry.RateLimitRejection {
	return retry.RateLimitRejection{Field: field, Param: param, Reason: reason}
}

func epoch(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }

func TestParseRateLimit(t *testing.T) {
	const (
		sf     = retry.SourceRateLimit
		draft7 = retry.SourceRateLimitDraft7
		triple = retry.SourceRateLimitTriple
		x      = retry.SourceXRateLimit
		mal    = retry.RejectMalformed
		neg    = retry.RejectNegative
		huge   = retry.RejectHuge
	)
	sec := time.Second
	tests := []struct {
		name     string
		header   http.Header
		source   retry.RateLimitSource
		policies []retry.RateLimitPolicy
		ref      retry.Reference
		rejected []retry.RateLimitRejection
	}{
		// Current draft: RateLimit-Policy and RateLimit.
		{
			name:     "the backend's headers",
			header:   hdr("RateLimit-Policy", `"default";q=2000;w=1`, "RateLimit", `"default";r=1500;t=1`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("default", quota(2000), window(sec), left(1500), reset(sec))},
		},
		{
			name:     "names as tokens",
			header:   hdr("RateLimit-Policy", `default;q=2000;w=1`, "RateLimit", `default;r=0;t=1`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("default", quota(2000), window(sec), left(0), reset(sec))},
		},
		{
			name:     "parameters in any order",
			header:   hdr("RateLimit-Policy", `"default";w=1;q=2000`, "RateLimit", `"default";t=1;r=7`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("default", quota(2000), window(sec), left(7), reset(sec))},
		},
		{
			name:     "unknown parameters ignored",
			header:   hdr("RateLimit-Policy", `"default";q=2000;burst=10;w=1;x="y";z`, "RateLimit", `"default";r=7;t=1;f=?1;g=:AA==:`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("default", quota(2000), window(sec), left(7), reset(sec))},
		},
		{
			name:     "white space around members, before ; and around =",
			header:   hdr("RateLimit-Policy", "  \"a\" ; q = 10 ;w=1 ,\t\"b\";q=20;w=2  ", "RateLimit", ` "a";r=1;t=1 ,   "b"; r=2; t=2`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("a", quota(10), window(sec), left(1), reset(sec)), pol("b", quota(20), window(2*sec), left(2), reset(2*sec))},
		},
		{
			name: "several field lines and several policies",
			header: hdr(
				"RateLimit-Policy", `"burst";q=100;w=1`, "RateLimit-Policy", `"daily";q=10000;w=86400`,
				"RateLimit", `"burst";r=0;t=1`, "RateLimit", `"daily";r=5000;t=3600`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("burst", left(0), reset(sec), quota(100), window(sec)), pol("daily", left(5000), reset(time.Hour), quota(10000), window(24*time.Hour))},
		},
		{
			// net/http's canonical key, "Ratelimit", comes first, then the
			// other spellings in sorted order: the result does not depend
			// on map order.
			name:     "names in any case, several spellings in one header",
			header:   hdr("ratelimit-policy", `"a";q=10`, "RATELIMIT", `"a";r=4`, "Ratelimit", `"b";r=3`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("b", left(3)), pol("a", left(4), quota(10))},
		},
		{
			name:     "quota unit and partition key",
			header:   hdr("RateLimit-Policy", `"bytes";q=1000000;qu="content-bytes";w=10;pk=:cHJvamVjdA==:`, "RateLimit", `"bytes";r=4000;t=3;pk=:cHJvamVjdA==:`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("bytes", left(4000), reset(3*sec), key("project"), quota(1000000), unit("content-bytes"), window(10*sec))},
		},
		{
			name:     "RateLimit alone",
			header:   hdr("RateLimit", `"default";r=5;t=2`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("default", left(5), reset(2*sec))},
		},
		{
			name:     "RateLimit-Policy alone",
			header:   hdr("RateLimit-Policy", `"default";q=100;w=60`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("default", quota(100), window(time.Minute))},
		},
		{
			name:     "no reset",
			header:   hdr("RateLimit", `"default";r=5`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("default", left(5))},
		},
		{
			name:     "decimal reset and window",
			header:   hdr("RateLimit-Policy", `"d";q=10;w=0.5`, "RateLimit", `"d";r=1;t=1.25`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(1), reset(1250*time.Millisecond), quota(10), window(500*time.Millisecond))},
		},
		{
			name:     "limits at the bounds",
			header:   hdr("RateLimit-Policy", `"d";q=999999999999999;w=86400`, "RateLimit", `"d";r=999999999999999;t=86400`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(999999999999999), reset(24*time.Hour), quota(999999999999999), window(24*time.Hour))},
		},
		{
			name:     "a reset of zero",
			header:   hdr("RateLimit", `"d";r=0;t=0`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(0), reset(0))},
		},
		{
			name:     "remaining twice the quota is accepted",
			header:   hdr("RateLimit-Policy", `"d";q=100`, "RateLimit", `"d";r=200`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(200), quota(100))},
		},
		{
			name:     "a name given twice keeps the more cautious values",
			header:   hdr("RateLimit-Policy", `"d";q=100;w=1, "d";q=50;w=2`, "RateLimit", `"d";r=10;t=1`, "RateLimit", `"d";r=3;t=2`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(3), reset(2*sec), quota(50), window(2*sec))},
		},
		{
			name:     "a later duplicate parameter replaces the earlier one",
			header:   hdr("RateLimit", `"d";r=1;r=9`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(9))},
		},
		{
			name:     "empty name",
			header:   hdr("RateLimit", `"";r=2`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("", left(2))},
		},

		// Current draft: garbage.
		{
			name:     "remaining is a word",
			header:   hdr("RateLimit", `"d";r=abc;t=1`),
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", mal)},
		},
		{
			name:     "reset is negative: the remaining count still holds",
			header:   hdr("RateLimit", `"d";r=5;t=-5`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(5))},
			rejected: []retry.RateLimitRejection{rej("RateLimit", "t", neg)},
		},
		{
			name:     "quota in exponent notation fails its field, not the other",
			header:   hdr("RateLimit-Policy", `"d";q=1e99;w=1`, "RateLimit", `"d";r=5;t=1`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(5), reset(sec))},
			rejected: []retry.RateLimitRejection{rej("RateLimit-Policy", "", mal)},
		},
		{
			name:     "quota of sixteen digits",
			header:   hdr("RateLimit-Policy", `"d";q=1000000000000000;w=1`, "RateLimit", `"d";r=5`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(5), window(sec))},
			rejected: []retry.RateLimitRejection{rej("RateLimit-Policy", "q", huge)},
		},
		{
			name:     "remaining beyond int64",
			header:   hdr("RateLimit", `"d";r=99999999999999999999999;t=1`),
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", huge)},
		},
		{
			// 2^64+5 would wrap to 5 in int64 arithmetic.
			name:     "remaining that would wrap to a small number",
			header:   hdr("RateLimit", `"d";r=18446744073709551621;t=1`),
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", huge)},
		},
		{
			name:     "negative remaining",
			header:   hdr("RateLimit", `"d";r=-1;t=1`),
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", neg)},
		},
		{
			name:     "reset over a day",
			header:   hdr("RateLimit", `"d";r=1;t=86401`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(1))},
			rejected: []retry.RateLimitRejection{rej("RateLimit", "t", huge)},
		},
		{
			name:     "reset beyond int64",
			header:   hdr("RateLimit", `"d";r=1;t=99999999999999999999`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(1))},
			rejected: []retry.RateLimitRejection{rej("RateLimit", "t", huge)},
		},
		{
			name:     "remaining far above the quota",
			header:   hdr("RateLimit-Policy", `"d";q=100;w=1`, "RateLimit", `"d";r=201;t=1`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", reset(sec), quota(100), window(sec))},
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", huge)},
		},
		{
			name:     "remaining and reset of the wrong types",
			header:   hdr("RateLimit", `"d";r="5";t=?1, "e";r=5.5;t="1"`),
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", mal), rej("RateLimit", "t", mal), rej("RateLimit", "r", mal), rej("RateLimit", "t", mal)},
		},
		{
			name:     "missing remaining and missing quota",
			header:   hdr("RateLimit-Policy", `"d";w=1`, "RateLimit", `"d";t=5`),
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", mal), rej("RateLimit-Policy", "q", mal)},
		},
		{
			name:     "zero and negative windows",
			header:   hdr("RateLimit-Policy", `"a";q=1;w=0, "b";q=2;w=-1`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("a", quota(1)), pol("b", quota(2))},
			rejected: []retry.RateLimitRejection{rej("RateLimit-Policy", "w", mal), rej("RateLimit-Policy", "w", neg)},
		},
		{
			name:     "unit and partition key of the wrong types",
			header:   hdr("RateLimit-Policy", `"d";q=1;qu=5;pk=abc`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", quota(1))},
			rejected: []retry.RateLimitRejection{rej("RateLimit-Policy", "qu", mal), rej("RateLimit-Policy", "pk", mal)},
		},
		{
			name:     "items that are not names",
			header:   hdr("RateLimit", `5;r=1, ("a" "b");r=2, ?1;r=3, "ok";r=4`),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("ok", left(4))},
			rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal), rej("RateLimit", "", mal), rej("RateLimit", "", mal)},
		},
		{name: "trailing comma", header: hdr("RateLimit", `"d";r=1,`), rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal)}},
		{name: "upper-case parameter", header: hdr("RateLimit", `"d";R=1`), rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal)}},
		{name: "unterminated string", header: hdr("RateLimit", `"d;r=1`), rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal)}},
		{name: "non-ASCII", header: hdr("RateLimit", `"dé";r=1`), rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal)}},
		{name: "space inside a number", header: hdr("RateLimit", `"d";r=1 0`), rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal)}},
		{name: "plain number, no name", header: hdr("RateLimit", `42`), rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal)}},
		{name: "empty fields", header: hdr("RateLimit", "", "RateLimit-Policy", "  ")},
		{name: "one bad line fails the whole field", header: hdr("RateLimit", `"a";r=1`, "RateLimit", `"b";r=`), rejected: []retry.RateLimitRejection{rej("RateLimit", "", mal)}},

		// Draft -07: RateLimit as a Dictionary.
		{
			name:     "draft 7",
			header:   hdr("RateLimit", "limit=100, remaining=25, reset=5", "RateLimit-Policy", "100;w=60"),
			source:   draft7,
			policies: []retry.RateLimitPolicy{pol("", quota(100), left(25), reset(5*sec), window(time.Minute))},
		},
		{
			name:     "draft 7, the policy matching the limit gives the window",
			header:   hdr("RateLimit", "limit=10, remaining=2, reset=1", "RateLimit-Policy", "100;w=60, 10;w=1"),
			source:   draft7,
			policies: []retry.RateLimitPolicy{pol("", quota(10), left(2), reset(sec), window(sec))},
		},
		{
			name:     "draft 7 garbage",
			header:   hdr("RateLimit", "limit=100, remaining=-2, reset=abc"),
			source:   draft7,
			policies: []retry.RateLimitPolicy{pol("", quota(100))},
			rejected: []retry.RateLimitRejection{rej("RateLimit", "remaining", neg), rej("RateLimit", "reset", mal)},
		},

		// Drafts -00 to -06: the triple.
		{
			name:     "triple",
			header:   hdr("RateLimit-Limit", "100", "RateLimit-Remaining", "50", "RateLimit-Reset", "30"),
			source:   triple,
			policies: []retry.RateLimitPolicy{pol("", quota(100), left(50), reset(30*sec))},
		},
		{
			name:     "triple with policies after the limit",
			header:   hdr("RateLimit-Limit", "10, 10;w=1, 50;w=60", "RateLimit-Remaining", "9", "RateLimit-Reset", "1"),
			source:   triple,
			policies: []retry.RateLimitPolicy{pol("", quota(10), left(9), reset(sec))},
		},
		{
			name:     "triple with a window",
			header:   hdr("ratelimit-limit", "100;w=60", "ratelimit-remaining", "0", "ratelimit-reset", "59"),
			source:   triple,
			policies: []retry.RateLimitPolicy{pol("", quota(100), window(time.Minute), left(0), reset(59*sec))},
		},
		{
			name:     "triple reset as a Unix time",
			header:   hdr("RateLimit-Remaining", "0", "RateLimit-Reset", epoch(30*sec)),
			source:   triple,
			policies: []retry.RateLimitPolicy{pol("", left(0), reset(30*sec))},
			ref:      retry.ReferenceLocalClock,
		},
		{
			name:     "triple garbage",
			header:   hdr("RateLimit-Limit", "lots", "RateLimit-Remaining", "-5", "RateLimit-Reset", "99999999999999999999"),
			rejected: []retry.RateLimitRejection{rej("RateLimit-Limit", "", mal), rej("RateLimit-Remaining", "", neg), rej("RateLimit-Reset", "", huge)},
		},

		// X-RateLimit-*.
		{
			name:     "delta seconds",
			header:   hdr("X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "59", "X-RateLimit-Reset", "60"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", quota(60), left(59), reset(time.Minute))},
		},
		{
			name:     "delta seconds with a fraction",
			header:   hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1.5"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0), reset(1500*time.Millisecond))},
		},
		{
			name:     "the largest delta, 1e9 seconds, is huge",
			header:   hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1000000000"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0))},
			rejected: []retry.RateLimitRejection{rej("X-RateLimit-Reset", "", huge)},
		},
		{
			name:     "Unix time in seconds, GitHub style",
			header:   hdr("X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "4999", "X-RateLimit-Reset", epoch(time.Hour)),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", quota(5000), left(4999), reset(time.Hour))},
			ref:      retry.ReferenceLocalClock,
		},
		{
			name:     "Unix time in milliseconds",
			header:   hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(t0.Add(1500*time.Millisecond).UnixMilli(), 10)),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0), reset(1500*time.Millisecond))},
			ref:      retry.ReferenceLocalClock,
		},
		{
			name:     "Unix time with a fraction",
			header:   hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(2*sec)+".25"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0), reset(2250*time.Millisecond))},
			ref:      retry.ReferenceLocalClock,
		},
		{
			name:     "Unix time read against the Date header of a server one hour ahead",
			header:   hdr("Date", t0.Add(time.Hour).Format(http.TimeFormat), "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(time.Hour+30*sec)),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0), reset(30*sec))},
			ref:      retry.ReferenceDateHeader,
		},
		{
			name:     "Unix time read against the Date header of a server one hour behind",
			header:   hdr("Date", t0.Add(-time.Hour).Format(http.TimeFormat), "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(-time.Hour+30*sec)),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0), reset(30*sec))},
			ref:      retry.ReferenceDateHeader,
		},
		{
			name:     "Unix time in the past: the reset has happened",
			header:   hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(-time.Minute)),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0), reset(0))},
			ref:      retry.ReferenceLocalClock,
		},
		{
			name:     "Unix time more than a day ahead",
			header:   hdr("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(25*time.Hour)),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(0))},
			ref:      retry.ReferenceLocalClock,
			rejected: []retry.RateLimitRejection{rej("X-RateLimit-Reset", "", huge)},
		},
		{
			name:     "lower-case names and several lines: the first counts",
			header:   hdr("x-ratelimit-remaining", "7", "x-ratelimit-remaining", "3"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(7))},
		},
		{
			name:     "remaining is a word, the limit still holds",
			header:   hdr("X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "abc"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", quota(100))},
			rejected: []retry.RateLimitRejection{rej("X-RateLimit-Remaining", "", mal)},
		},
		{
			name: "garbage of every kind",
			header: hdr("X-RateLimit-Limit", "+5", "X-RateLimit-Remaining", "99999999999999999999",
				"X-RateLimit-Reset", "-3"),
			rejected: []retry.RateLimitRejection{rej("X-RateLimit-Limit", "", mal), rej("X-RateLimit-Remaining", "", huge), rej("X-RateLimit-Reset", "", neg)},
		},
		{
			name:     "X-RateLimit-Remaining that would wrap to a small number",
			header:   hdr("X-RateLimit-Remaining", "18446744073709551621"),
			rejected: []retry.RateLimitRejection{rej("X-RateLimit-Remaining", "", huge)},
		},
		{
			name:     "leading zeros are no reason to reject",
			header:   hdr("X-RateLimit-Remaining", "00000000000000000000007"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(7))},
		},
		{
			name:     "a fraction in a count",
			header:   hdr("X-RateLimit-Remaining", "4.0"),
			rejected: []retry.RateLimitRejection{rej("X-RateLimit-Remaining", "", mal)},
		},
		{
			name:     "remaining far above the limit",
			header:   hdr("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "1000", "X-RateLimit-Reset", "5"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", quota(10), reset(5*sec))},
			rejected: []retry.RateLimitRejection{rej("X-RateLimit-Remaining", "", huge)},
		},
		{name: "a reset alone is no policy", header: hdr("X-RateLimit-Reset", "5")},

		// Which form wins.
		{
			name:     "current draft before X-RateLimit, whose garbage is not read",
			header:   hdr("RateLimit", `"d";r=1;t=1`, "X-RateLimit-Remaining", "abc"),
			source:   sf,
			policies: []retry.RateLimitPolicy{pol("d", left(1), reset(sec))},
		},
		{
			name:     "a broken current draft falls back, and counts",
			header:   hdr("RateLimit", `"d";r=x;t=1`, "X-RateLimit-Remaining", "3"),
			source:   x,
			policies: []retry.RateLimitPolicy{pol("", left(3))},
			rejected: []retry.RateLimitRejection{rej("RateLimit", "r", mal)},
		},
		{
			name:     "triple before X-RateLimit",
			header:   hdr("X-RateLimit-Remaining", "3", "RateLimit-Remaining", "4"),
			source:   triple,
			policies: []retry.RateLimitPolicy{pol("", left(4))},
		},

		// Nothing.
		{name: "nil header", header: nil},
		{name: "other headers only", header: hdr("Content-Type", "application/x-protobuf", "Retry-After", "5")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := retry.ParseRateLimit(tt.header, t0)
			want := retry.RateLimit{
				Present:   len(tt.policies) > 0,
				Source:    tt.source,
				Policies:  tt.policies,
				Observed:  t0,
				Reference: tt.ref,
				Rejected:  tt.rejected,
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestRateLimitBinding(t *testing.T) {
	rl := retry.ParseRateLimit(hdr("RateLimit", `"burst";r=40;t=1, "daily";r=5000;t=3600, "hourly";r=40;t=60`), t0)
	p, ok := rl.Binding(nil)
	assert.True(t, ok)
	assert.Equal(t, "hourly", p.Name, "fewest left; of two equal, the later reset")

	_, ok = retry.ParseRateLimit(hdr("RateLimit-Policy", `"d";q=10`), t0).Binding(nil)
	assert.False(t, ok, "no remaining count, no binding policy")
	_, ok = retry.ParseRateLimit(nil, t0).Binding(nil)
	assert.False(t, ok)
}

// TestRateLimitBindingCountsRequestsLeft: of policies in different units,
// the binding one is the one with the fewest requests left at what a
// request costs of each, not the one with the smallest count.
func TestRateLimitBindingCountsRequestsLeft(t *testing.T) {
	rl := retry.ParseRateLimit(hdr(
		"RateLimit-Policy", `"bytes";q=100000;qu="content-bytes";w=10, "reqs";q=100;w=10`,
		"RateLimit", `"bytes";r=1000;t=4, "reqs";r=5;t=9`), t0)
	cost := func(bytes float64) func(retry.RateLimitPolicy) float64 {
		return func(p retry.RateLimitPolicy) float64 {
			if p.QuotaUnit == "content-bytes" {
				return bytes
			}
			return 1
		}
	}
	for _, tt := range []struct {
		cost func(retry.RateLimitPolicy) float64
		want string
	}{
		{nil, "reqs"},        // 5 units left against 1 000
		{cost(100), "reqs"},  // 5 requests left against 10
		{cost(500), "bytes"}, // 2 requests left against 5
		{cost(-1), "reqs"},   // a cost that is not positive counts one unit
	} {
		p, ok := rl.Binding(tt.cost)
		assert.True(t, ok)
		assert.Equal(t, tt.want, p.Name)
	}
}
