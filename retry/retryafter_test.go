// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

func TestParseRetryAfter(t *testing.T) {
	// The RFC 9110 example date, Sun, 06 Nov 1994 08:49:37 GMT.
	date := time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC)
	const (
		imfFixdate = "Sun, 06 Nov 1994 08:49:37 GMT"
		rfc850     = "Sunday, 06-Nov-94 08:49:37 GMT"
		asctime    = "Sun Nov  6 08:49:37 1994"
	)
	const maxDelay = 300 * time.Second

	set := func(name, value string) http.Header {
		h := http.Header{}
		h.Set(name, value)
		return h
	}
	seconds := func(raw string, d time.Duration) retry.RetryAfter {
		return retry.RetryAfter{Result: retry.ParsedSeconds, Raw: raw, Delay: d}
	}
	fromDate := func(raw string, d time.Duration) retry.RetryAfter {
		return retry.RetryAfter{Result: retry.ParsedDate, Raw: raw, Delay: d, Reference: retry.ReferenceLocalClock}
	}

	tests := []struct {
		name       string
		header     http.Header
		now        time.Time
		want       retry.RetryAfter
		wantUsable bool
	}{
		// delay-seconds
		{name: "zero seconds", header: set("Retry-After", "0"), want: seconds("0", 0), wantUsable: true},
		{name: "five seconds", header: set("Retry-After", "5"), want: seconds("5", 5*time.Second), wantUsable: true},
		{name: "value with surrounding white space", header: http.Header{"Retry-After": {"  7  "}}, want: seconds("7", 7*time.Second), wantUsable: true},
		{name: "two minutes", header: set("Retry-After", "120"), want: seconds("120", 120*time.Second), wantUsable: true},
		{name: "exactly the cap is not capped", header: set("Retry-After", "300"), want: seconds("300", maxDelay), wantUsable: true},
		{name: "first of several values", header: http.Header{"Retry-After": {"3", "9"}}, want: seconds("3", 3*time.Second), wantUsable: true},

		// above the cap
		{
			name:       "one second above the cap",
			header:     set("Retry-After", "301"),
			want:       retry.RetryAfter{Result: retry.ParsedSeconds, Raw: "301", Delay: maxDelay, Capped: true},
			wantUsable: true,
		},
		{
			name:       "huge number does not overflow",
			header:     set("Retry-After", "99999999999999999999999"),
			want:       retry.RetryAfter{Result: retry.ParsedSeconds, Raw: "99999999999999999999999", Delay: maxDelay, Capped: true},
			wantUsable: true,
		},
		{
			name:       "largest int64",
			header:     set("Retry-After", "9223372036854775807"),
			want:       retry.RetryAfter{Result: retry.ParsedSeconds, Raw: "9223372036854775807", Delay: maxDelay, Capped: true},
			wantUsable: true,
		},
		{
			name:       "just past the largest duration in seconds",
			header:     set("Retry-After", "9223372037"),
			want:       retry.RetryAfter{Result: retry.ParsedSeconds, Raw: "9223372037", Delay: maxDelay, Capped: true},
			wantUsable: true,
		},

		// HTTP-date, relative to now
		{name: "IMF-fixdate in the future", header: set("Retry-After", imfFixdate), now: date.Add(-10 * time.Second), want: fromDate(imfFixdate, 10*time.Second), wantUsable: true},
		{name: "RFC 850 date in the future", header: set("Retry-After", rfc850), now: date.Add(-10 * time.Second), want: fromDate(rfc850, 10*time.Second), wantUsable: true},
		{name: "asctime date in the future", header: set("Retry-After", asctime), now: date.Add(-10 * time.Second), want: fromDate(asctime, 10*time.Second), wantUsable: true},
		{name: "IMF-fixdate in the past", header: set("Retry-After", imfFixdate), now: date.Add(time.Minute), want: fromDate(imfFixdate, 0), wantUsable: true},
		{name: "RFC 850 date in the past", header: set("Retry-After", rfc850), now: date.Add(time.Minute), want: fromDate(rfc850, 0), wantUsable: true},
		{name: "asctime date in the past", header: set("Retry-After", asctime), now: date.Add(time.Minute), want: fromDate(asctime, 0), wantUsable: true},
		{name: "date equal to now", header: set("Retry-After", imfFixdate), now: date, want: fromDate(imfFixdate, 0), wantUsable: true},
		{
			name:       "date beyond the cap",
			header:     set("Retry-After", imfFixdate),
			now:        date.Add(-time.Hour),
			want:       retry.RetryAfter{Result: retry.ParsedDate, Raw: imfFixdate, Delay: maxDelay, Capped: true, Reference: retry.ReferenceLocalClock},
			wantUsable: true,
		},

		// header name in any case
		{name: "lower-case name through Set", header: set("retry-after", "5"), want: seconds("5", 5*time.Second), wantUsable: true},
		{name: "upper-case name through Set", header: set("RETRY-AFTER", "5"), want: seconds("5", 5*time.Second), wantUsable: true},
		{name: "lower-case key put straight into the map", header: http.Header{"retry-after": {"5"}}, want: seconds("5", 5*time.Second), wantUsable: true},
		{name: "upper-case key put straight into the map", header: http.Header{"RETRY-AFTER": {"5"}}, want: seconds("5", 5*time.Second), wantUsable: true},
		{name: "mixed-case key put straight into the map", header: http.Header{"rEtRy-AfTeR": {"5"}}, want: seconds("5", 5*time.Second), wantUsable: true},
		{name: "key with surrounding spaces", header: http.Header{" Retry-After ": {"5"}}, want: seconds("5", 5*time.Second), wantUsable: true},

		// missing or unusable
		{name: "nil header", header: nil, want: retry.RetryAfter{Result: retry.ParsedMissing}},
		{name: "other headers only", header: set("Content-Type", "text/plain"), want: retry.RetryAfter{Result: retry.ParsedMissing}},
		{name: "key with no values", header: http.Header{"Retry-After": {}}, want: retry.RetryAfter{Result: retry.ParsedMissing}},
		{name: "empty value", header: set("Retry-After", ""), want: retry.RetryAfter{Result: retry.ParsedMissing}},
		{name: "blank value", header: set("Retry-After", "   "), want: retry.RetryAfter{Result: retry.ParsedMissing}},
		{name: "word", header: set("Retry-After", "soon"), want: retry.RetryAfter{Result: retry.ParsedInvalid, Raw: "soon"}},
		{name: "fraction", header: set("Retry-After", "5.5"), want: retry.RetryAfter{Result: retry.ParsedInvalid, Raw: "5.5"}},
		{name: "unit suffix", header: set("Retry-After", "5s"), want: retry.RetryAfter{Result: retry.ParsedInvalid, Raw: "5s"}},
		{name: "plus sign", header: set("Retry-After", "+5"), want: retry.RetryAfter{Result: retry.ParsedInvalid, Raw: "+5"}},
		{name: "date in another layout", header: set("Retry-After", "1994-11-06T08:49:37Z"), want: retry.RetryAfter{Result: retry.ParsedInvalid, Raw: "1994-11-06T08:49:37Z"}},
		{name: "negative", header: set("Retry-After", "-1"), want: retry.RetryAfter{Result: retry.ParsedNegative, Raw: "-1"}},
		{name: "huge negative", header: set("Retry-After", "-99999999999999999999999"), want: retry.RetryAfter{Result: retry.ParsedNegative, Raw: "-99999999999999999999999"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.now
			if now.IsZero() {
				now = t0
			}
			got := retry.ParseRetryAfter(tt.header, now, maxDelay)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantUsable, got.Usable(), "Usable")
			if got.Usable() {
				assert.LessOrEqual(t, got.Delay, maxDelay, "a delay never exceeds the cap")
				assert.GreaterOrEqual(t, got.Delay, time.Duration(0), "a delay is never negative")
			}
		})
	}
}

// An HTTP-date in Retry-After is read against the response's own Date header
// when it has a valid one: a server whose clock runs ahead of or behind ours
// still gets exactly the wait it asked for.
func TestParseRetryAfterDateHeaderReference(t *testing.T) {
	const maxDelay = 300 * time.Second
	// Our clock reads t0. The server means "retry in 30 s" by its own clock.
	intended := 30 * time.Second
	header := func(serverNow time.Time, extra ...string) http.Header {
		h := http.Header{}
		h.Set("Retry-After", serverNow.Add(intended).Format(http.TimeFormat))
		h.Set("Date", serverNow.Format(http.TimeFormat))
		for i := 0; i+1 < len(extra); i += 2 {
			h.Set(extra[i], extra[i+1])
		}
		return h
	}
	tests := []struct {
		name      string
		header    http.Header
		wantDelay time.Duration
		wantRef   retry.Reference
		wantCap   bool
	}{
		{name: "server clock in step", header: header(t0), wantDelay: intended, wantRef: retry.ReferenceDateHeader},
		// With the local clock the wait would be 1 h 30 s (capped at 300 s).
		{name: "server clock one hour ahead", header: header(t0.Add(time.Hour)), wantDelay: intended, wantRef: retry.ReferenceDateHeader},
		// With the local clock the date would be in the past: no wait at all.
		{name: "server clock one hour behind", header: header(t0.Add(-time.Hour)), wantDelay: intended, wantRef: retry.ReferenceDateHeader},
		{name: "server clock a year behind", header: header(t0.AddDate(-1, 0, 0)), wantDelay: intended, wantRef: retry.ReferenceDateHeader},
		{
			name:      "Date header in RFC 850 form",
			header:    http.Header{"Retry-After": {"Sun, 06 Nov 1994 08:50:07 GMT"}, "Date": {"Sunday, 06-Nov-94 08:49:37 GMT"}},
			wantDelay: intended, wantRef: retry.ReferenceDateHeader,
		},
		{
			name:      "lower-case date key put straight into the map",
			header:    http.Header{"Retry-After": {"Sun, 06 Nov 1994 08:50:07 GMT"}, "date": {" Sun, 06 Nov 1994 08:49:37 GMT "}},
			wantDelay: intended, wantRef: retry.ReferenceDateHeader,
		},
		{
			name:      "retry date before the server's Date gives no wait",
			header:    http.Header{"Retry-After": {"Sun, 06 Nov 1994 08:49:07 GMT"}, "Date": {"Sun, 06 Nov 1994 08:49:37 GMT"}},
			wantDelay: 0, wantRef: retry.ReferenceDateHeader,
		},
		{
			name:      "a wait beyond the cap by the server's clock is capped",
			header:    http.Header{"Retry-After": {"Sun, 06 Nov 1994 09:49:37 GMT"}, "Date": {"Sun, 06 Nov 1994 08:49:37 GMT"}},
			wantDelay: maxDelay, wantRef: retry.ReferenceDateHeader, wantCap: true,
		},
		// No usable Date: the local clock, as before. The server is one hour
		// behind, so against our clock its date lies in the past.
		{name: "no Date header", header: http.Header{"Retry-After": {t0.Add(-time.Hour + intended).Format(http.TimeFormat)}}, wantDelay: 0, wantRef: retry.ReferenceLocalClock},
		{name: "Date header is not a date", header: header(t0.Add(-time.Hour), "Date", "yesterday"), wantDelay: 0, wantRef: retry.ReferenceLocalClock},
		{name: "Date header in ISO 8601", header: header(t0.Add(-time.Hour), "Date", "2025-03-01T11:00:00Z"), wantDelay: 0, wantRef: retry.ReferenceLocalClock},
		{name: "Date header empty", header: header(t0.Add(-time.Hour), "Date", ""), wantDelay: 0, wantRef: retry.ReferenceLocalClock},
		{name: "Date header is delay-seconds", header: header(t0.Add(-time.Hour), "Date", "30"), wantDelay: 0, wantRef: retry.ReferenceLocalClock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := retry.ParseRetryAfter(tt.header, t0, maxDelay)
			assert.Equal(t, retry.ParsedDate, got.Result)
			assert.Equal(t, tt.wantDelay, got.Delay)
			assert.Equal(t, tt.wantRef, got.Reference)
			assert.Equal(t, tt.wantCap, got.Capped)
		})
	}
}

// delay-seconds need no reference clock, with or without a Date header.
func TestParseRetryAfterSecondsIgnoreDateHeader(t *testing.T) {
	h := http.Header{"Retry-After": {"5"}, "Date": {t0.Add(time.Hour).Format(http.TimeFormat)}}
	got := retry.ParseRetryAfter(h, t0, time.Minute)
	assert.Equal(t, retry.RetryAfter{Result: retry.ParsedSeconds, Raw: "5", Delay: 5 * time.Second}, got)
}

// FuzzParseRetryAfterDate feeds ParseRetryAfter a Retry-After value and a
// Date value of any shape: with a valid Date the delay is the difference of
// the two dates (clamped to [0, cap]) whatever the local clock says; with an
// invalid or missing Date the result is what it was without one.
func FuzzParseRetryAfterDate(f *testing.F) {
	f.Add("Sun, 06 Nov 1994 08:50:07 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", int64(0))
	f.Add("Sun, 06 Nov 1994 08:50:07 GMT", "", int64(784111777))
	f.Add("Sun, 06 Nov 1994 08:50:07 GMT", "garbage", int64(784111777))
	f.Add("Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT", int64(0))
	f.Add("Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", int64(0))
	f.Add("30", "Sun, 06 Nov 1994 08:49:37 GMT", int64(0))
	f.Add("Sun Nov  6 08:50:07 1994", "Sunday, 06-Nov-94 08:49:37 GMT", int64(-1))
	f.Fuzz(func(t *testing.T, retryAfter, date string, nowUnix int64) {
		const maxDelay = 300 * time.Second
		now := time.Unix(nowUnix, 0)
		h := http.Header{"Retry-After": {retryAfter}, "Date": {date}}
		got := retry.ParseRetryAfter(h, now, maxDelay)
		without := retry.ParseRetryAfter(http.Header{"Retry-After": {retryAfter}}, now, maxDelay)
		if got.Delay < 0 || got.Delay > maxDelay {
			t.Fatalf("delay %s outside [0, %s]", got.Delay, maxDelay)
		}
		if got.Result != retry.ParsedDate {
			if got != without {
				t.Fatalf("a %q result depends on the Date header: %+v vs %+v", got.Result, got, without)
			}
			if got.Reference != "" {
				t.Fatalf("a %q result names reference %q", got.Result, got.Reference)
			}
			return
		}
		serverNow, err := http.ParseTime(strings.TrimSpace(date))
		if err != nil {
			if got != without || got.Reference != retry.ReferenceLocalClock {
				t.Fatalf("invalid Date %q: %+v, want %+v on the local clock", date, got, without)
			}
			return
		}
		if got.Reference != retry.ReferenceDateHeader {
			t.Fatalf("valid Date %q: reference %q", date, got.Reference)
		}
		when, _ := http.ParseTime(strings.TrimSpace(retryAfter))
		want := min(max(when.Sub(serverNow), 0), maxDelay)
		if got.Delay != want || got.Capped != (when.Sub(serverNow) > maxDelay) {
			t.Fatalf("Retry-After %q Date %q: %+v, want delay %s", retryAfter, date, got, want)
		}
		// The local clock plays no part.
		if other := retry.ParseRetryAfter(h, now.Add(97*time.Hour), maxDelay); other != got {
			t.Fatalf("result moved with the local clock: %+v vs %+v", got, other)
		}
	})
}
