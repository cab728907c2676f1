// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseResult says how a Retry-After header parsed.
type ParseResult string

const (
	ParsedSeconds  ParseResult = "seconds"
	ParsedDate     ParseResult = "date"
	ParsedMissing  ParseResult = "missing"
	ParsedInvalid  ParseResult = "invalid"
	ParsedNegative ParseResult = "negative"
)

// parseResults lists every ParseResult.
var parseResults = [...]ParseResult{ParsedSeconds, ParsedDate, ParsedMissing, ParsedInvalid, ParsedNegative}

// Reference names the clock an HTTP-date was compared with.
type Reference string

const (
	// ReferenceDateHeader: the response's own Date header, the server's
	// notion of now. A server clock that runs ahead or behind ours then
	// neither lengthens nor shortens the wait.
	ReferenceDateHeader Reference = "date_header"
	// ReferenceLocalClock: our clock, when the response has no valid Date.
	ReferenceLocalClock Reference = "local_clock"
)

// RetryAfter is the outcome of reading a Retry-After header.
type RetryAfter struct {
	// Result is how the header parsed.
	Result ParseResult
	// Raw is the header value as received, trimmed.
	Raw string
	// Delay is the server's delay, capped; meaningful only when Usable.
	Delay time.Duration
	// Capped is set when the server asked for more than the cap.
	Capped bool
	// Reference is the clock an HTTP-date was compared with; empty for
	// every other result.
	Reference Reference
}

// Usable reports whether the header gave a delay (seconds or a date).
func (r RetryAfter) Usable() bool {
	return r.Result == ParsedSeconds || r.Result == ParsedDate
}

// parseRetryAfter reads the Retry-After header from h, whatever the case of
// its name, and turns it into a delay, no longer than maxDelay.
// It accepts delay-seconds and the three HTTP-date forms of RFC 9110
// (IMF-fixdate, RFC 850, asctime). An HTTP-date is compared with the
// response's Date header when that holds a valid HTTP-date (the server's
// own notion of now, so a server clock running ahead or behind ours does not
// lengthen or shorten the wait), else with now; Reference says which.
// Zero and dates in the past give a zero delay; a value too large for any
// integer type is capped like any other.
func parseRetryAfter(h http.Header, now time.Time, maxDelay time.Duration) RetryAfter {
	raw, ok := headerValue(h, "Retry-After")
	if !ok || raw == "" {
		return RetryAfter{Result: ParsedMissing, Raw: raw}
	}
	if isDigits(strings.TrimPrefix(raw, "-")) {
		if raw[0] == '-' {
			return RetryAfter{Result: ParsedNegative, Raw: raw}
		}
		return capped(RetryAfter{Result: ParsedSeconds, Raw: raw}, secondsToDuration(raw), maxDelay)
	}
	if t, err := http.ParseTime(raw); err == nil {
		ref, reference := serverNow(h, now)
		return capped(RetryAfter{Result: ParsedDate, Raw: raw, Reference: reference}, max(t.Sub(ref), 0), maxDelay)
	}
	return RetryAfter{Result: ParsedInvalid, Raw: raw}
}

// serverNow is the time the response was sent by the server's clock: its
// Date header when that is a valid HTTP-date, else now by ours.
func serverNow(h http.Header, now time.Time) (time.Time, Reference) {
	if raw, ok := headerValue(h, "Date"); ok && raw != "" {
		if t, err := http.ParseTime(raw); err == nil {
			return t, ReferenceDateHeader
		}
	}
	return now, ReferenceLocalClock
}

func capped(r RetryAfter, d, maxDelay time.Duration) RetryAfter {
	if d > maxDelay {
		r.Delay, r.Capped = maxDelay, true
		return r
	}
	r.Delay = d
	return r
}

// secondsToDuration converts a string of digits to a duration, saturating at
// the largest duration instead of overflowing.
func secondsToDuration(digits string) time.Duration {
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > uint64(time.Duration(1<<63-1)/time.Second) {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(n) * time.Second
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// headerValue finds a header by name in any case, with surrounding white
// space in the name or the value, and returns the first value trimmed.
func headerValue(h http.Header, name string) (string, bool) {
	if v, ok := h[http.CanonicalHeaderKey(name)]; ok && len(v) > 0 {
		return strings.TrimSpace(v[0]), true
	}
	for k, v := range h {
		if strings.EqualFold(strings.TrimSpace(k), name) && len(v) > 0 {
			return strings.TrimSpace(v[0]), true
		}
	}
	return "", false
}
