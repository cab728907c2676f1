package retry_test

import (
	"net/http"
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
		return retry.RetryAfter{Result: retry.ParsedDate, Raw: raw, Delay: d}
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
			want:       retry.RetryAfter{Result: retry.ParsedDate, Raw: imfFixdate, Delay: maxDelay, Capped: true},
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
