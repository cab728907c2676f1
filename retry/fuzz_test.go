// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// The seed corpora of these fuzz targets (the f.Add calls and the files
// under testdata/fuzz/<FuzzName>/) run in every `go test`; to fuzz:
//
//	go test -run XXX -fuzz FuzzParseRetryAfter -fuzztime 60s ./retry/
//	go test -run XXX -fuzz FuzzClassify -fuzztime 60s ./retry/

// FuzzParseRetryAfter feeds ParseRetryAfter one header of any name and
// value, any "now" and any non-negative cap, and checks what a caller relies on.
func FuzzParseRetryAfter(f *testing.F) {
	const maxDelay = int64(300 * time.Second)
	rfcDate := time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC).UnixNano()
	for _, seed := range []struct {
		name, value string
		now, max    int64
	}{
		{"Retry-After", "120", 0, maxDelay},
		{"retry-after", "0", 0, maxDelay},
		{"RETRY-AFTER", "  7  ", 0, maxDelay},
		{" Retry-After ", "301", 0, maxDelay},
		{"Retry-After", "300", 0, maxDelay},
		{"Retry-After", "-5", 0, maxDelay},
		{"Retry-After", "-0", 0, maxDelay},
		{"Retry-After", "", 0, maxDelay},
		{"Retry-After", "soon", 0, maxDelay},
		{"Retry-After", "1.5", 0, maxDelay},
		{"Retry-After", "+5", 0, maxDelay},
		{"Retry-After", "99999999999999999999999", 0, maxDelay},
		{"Retry-After", "9223372036854775807", 0, maxDelay},
		{"Retry-After", "9223372037", 0, maxDelay},
		{"Retry-After", "0000000000000000000000000000042", 0, maxDelay},
		{"Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT", rfcDate - int64(10*time.Second), maxDelay},
		{"Retry-After", "Sunday, 06-Nov-94 08:49:37 GMT", rfcDate - int64(10*time.Second), maxDelay},
		{"Retry-After", "Sun Nov  6 08:49:37 1994", rfcDate + int64(time.Minute), maxDelay},
		{"Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT", math.MinInt64, maxDelay},
		{"Retry-After", "Mon, 01 Jan 0001 00:00:00 GMT", math.MaxInt64, maxDelay},
		{"Retry-After", "5", 0, 0},
		{"Retry-After", "5", 0, math.MaxInt64},
		{"Retry-After", "9223372036854775807", 0, math.MaxInt64 - 1},
		{"Retry-Afte", "5", 0, maxDelay},
		{"X-Retry-After", "5", 0, maxDelay},
	} {
		f.Add(seed.name, seed.value, seed.now, seed.max)
	}

	f.Fuzz(func(t *testing.T, name, value string, nowNanos, maxNanos int64) {
		if maxNanos < 0 {
			maxNanos = ^maxNanos // every non-negative cap, up to the largest duration
		}
		maxD := time.Duration(maxNanos)
		now := time.Unix(0, nowNanos)
		h := http.Header{name: {value}} // the name as sent, in any case

		got := retry.ParseRetryAfter(h, now, maxD)
		again := retry.ParseRetryAfter(h, now, maxD)
		if got != again {
			t.Fatalf("not deterministic: %+v then %+v", got, again)
		}

		switch got.Result {
		case retry.ParsedSeconds, retry.ParsedDate, retry.ParsedMissing, retry.ParsedInvalid, retry.ParsedNegative:
		default:
			t.Fatalf("result %q is none of the defined results", got.Result)
		}
		if usable := got.Result == retry.ParsedSeconds || got.Result == retry.ParsedDate; got.Usable() != usable {
			t.Fatalf("Usable() = %v for result %q", got.Usable(), got.Result)
		}
		if got.Delay < 0 || got.Delay > maxD {
			t.Fatalf("delay %s outside [0, %s] for %q", got.Delay, maxD, value)
		}
		if got.Capped && got.Delay != maxD {
			t.Fatalf("capped with delay %s, not the cap %s", got.Delay, maxD)
		}
		if !got.Usable() && (got.Delay != 0 || got.Capped) {
			t.Fatalf("result %q carries delay %s capped %v", got.Result, got.Delay, got.Capped)
		}

		// The name: every case of Retry-After, with blanks around it, is
		// found; of any other name nothing is asserted but that it is found
		// as Retry-After or not at all (never half-read). The value's rules
		// below hold for the result under the canonical name.
		canonical := retry.ParseRetryAfter(http.Header{"Retry-After": {value}}, now, maxD)
		if got != canonical {
			if isRetryAfterVariant(name) {
				t.Fatalf("header %q is Retry-After in another case but parsed as %+v, not %+v", name, got, canonical)
			}
			if got != (retry.RetryAfter{Result: retry.ParsedMissing}) {
				t.Fatalf("header %q parsed as %+v: neither as Retry-After (%+v) nor missing", name, got, canonical)
			}
		}
		got = canonical
		trimmed := strings.TrimSpace(value)
		if got.Raw != trimmed {
			t.Fatalf("Raw %q, want the trimmed value %q", got.Raw, trimmed)
		}
		if trimmed == "" {
			if got.Result != retry.ParsedMissing {
				t.Fatalf("empty value parsed as %q", got.Result)
			}
			return
		}

		digits := strings.TrimPrefix(trimmed, "-")
		if digits != "" && strings.Trim(digits, "0123456789") == "" {
			if trimmed[0] == '-' {
				if got.Result != retry.ParsedNegative {
					t.Fatalf("%q parsed as %q, want negative", trimmed, got.Result)
				}
				return
			}
			if got.Result != retry.ParsedSeconds {
				t.Fatalf("%q parsed as %q, want seconds", trimmed, got.Result)
			}
			// An integer n within the cap parses to exactly n seconds.
			n, err := strconv.ParseInt(trimmed, 10, 64)
			capSeconds := int64(maxD / time.Second)
			if err == nil && n <= capSeconds {
				if want := time.Duration(n) * time.Second; got.Delay != want || got.Capped {
					t.Fatalf("%q with cap %s: delay %s capped %v, want exactly %s uncapped", trimmed, maxD, got.Delay, got.Capped, want)
				}
				return
			}
			// Above the cap: capped. (Not checked for a cap of the largest
			// duration itself, where a saturated value equals the cap: no
			// real configuration sets retry_after::max to 292 years.)
			if maxD != math.MaxInt64 && !got.Capped {
				t.Fatalf("%q is above the cap %s but not capped: %+v", trimmed, maxD, got)
			}
			return
		}

		if when, err := http.ParseTime(trimmed); err == nil {
			if got.Result != retry.ParsedDate {
				t.Fatalf("%q is an HTTP-date but parsed as %q", trimmed, got.Result)
			}
			want := max(when.Sub(now), 0)
			if want > maxD {
				if !got.Capped || got.Delay != maxD {
					t.Fatalf("%q at %s: %+v, want capped at %s", trimmed, now, got, maxD)
				}
			} else if got.Capped || got.Delay != want {
				t.Fatalf("%q at %s: %+v, want delay %s uncapped", trimmed, now, got, want)
			}
			return
		}
		if got.Result != retry.ParsedInvalid {
			t.Fatalf("%q is neither delay-seconds nor an HTTP-date but parsed as %q", trimmed, got.Result)
		}
	})
}

// isRetryAfterVariant reports whether name is Retry-After in any ASCII
// case with spaces or tabs around it, the forms ParseRetryAfter promises
// to find.
func isRetryAfterVariant(name string) bool {
	return strings.EqualFold(strings.Trim(name, " \t"), "Retry-After")
}

var definedActions = []retry.Action{retry.ActionSuccess, retry.ActionRetry, retry.ActionDrop, retry.ActionUnauthorized}

func defined(a retry.Action) bool {
	for _, d := range definedActions {
		if a == d {
			return true
		}
	}
	return false
}

// Error shapes FuzzClassify builds for ClassifyError.
const (
	errNil = iota
	errErrno
	errDeadline
	errDNS
	errTLS
	errText
	errShapes
)

// FuzzClassify feeds ClassifyStatus any status code with an override of any
// code to any defined action, and ClassifyError syscall errors (any errno)
// wrapped as net/http wraps them, plus the other shapes it meets.
func FuzzClassify(f *testing.F) {
	for _, seed := range []struct {
		code, overrideCode int
		overrideAction     uint8
		shape              uint8
		errno              uint16
		wraps              uint8
		text               string
	}{
		{200, 500, 2, errErrno, uint16(syscall.ECONNREFUSED), 0, ""},
		{204, 204, 2, errErrno, uint16(syscall.ECONNRESET), 1, ""},
		{299, 299, 3, errErrno, uint16(syscall.EPIPE), 2, ""},
		{401, 0, 0, errErrno, uint16(syscall.ETIMEDOUT), 1, ""},
		{401, 401, 1, errDeadline, 0, 1, ""},
		{429, 429, 2, errDNS, 0, 0, ""},
		{503, 0, 0, errDNS, 1, 1, ""},
		{501, 501, 1, errTLS, 0, 2, ""},
		{404, 404, 1, errText, 0, 0, "connection refused"},
		{302, 0, 0, errNil, 0, 0, ""},
		{0, 0, 0, errErrno, 0, 0, ""},
		{-1, -1, 1, errErrno, uint16(syscall.EAGAIN), 4, ""},
		{math.MaxInt32 + 1, 0, 0, errErrno, math.MaxUint16, 0, ""},
		{math.MinInt64, math.MinInt64, 3, errText, 0, 7, ""},
	} {
		f.Add(seed.code, seed.overrideCode, seed.overrideAction, seed.shape, seed.errno, seed.wraps, seed.text)
	}

	f.Fuzz(func(t *testing.T, code, overrideCode int, overrideAction, shape uint8, errno uint16, wraps uint8, text string) {
		// ClassifyStatus.
		override := definedActions[int(overrideAction)%len(definedActions)]
		for _, overrides := range []map[int]retry.Action{nil, {}, {overrideCode: override}} {
			got := retry.ClassifyStatus(code, overrides)
			if !defined(got) || got.String() == "unknown" {
				t.Fatalf("ClassifyStatus(%d, %v) = %d, none of the defined actions", code, overrides, got)
			}
			if retry.ClassifyStatus(code, overrides) != got {
				t.Fatalf("ClassifyStatus(%d, %v) not deterministic", code, overrides)
			}
			is2xx := code >= 200 && code <= 299
			want, overridden := overrides[code]
			switch {
			case is2xx && got != retry.ActionSuccess:
				t.Fatalf("ClassifyStatus(%d, %v) = %s, want success: 2xx always succeeds", code, overrides, got)
			case is2xx:
			case overridden && got != want:
				t.Fatalf("ClassifyStatus(%d, %v) = %s, want the override %s", code, overrides, got, want)
			case !overridden && got == retry.ActionSuccess:
				t.Fatalf("ClassifyStatus(%d) = success by default for a non-2xx code", code)
			case !overridden && code == 401 && got != retry.ActionUnauthorized:
				t.Fatalf("ClassifyStatus(401) = %s, want unauthorized", got)
			case !overridden && (code < 100 || code > 599) && got != retry.ActionDrop:
				t.Fatalf("ClassifyStatus(%d) = %s for a code outside HTTP's range, want drop", code, got)
			}
		}

		// ClassifyError, on the error wrapped as net/http and the exporter
		// wrap it: wrappers that are not net.Errors (fmt.Errorf, net/http's
		// transportReadFromServerError), then *url.Error outermost.
		wantAction, wantReason, err := buildError(shape%errShapes, syscall.Errno(errno), text)
		if err != nil {
			for i := range int(wraps>>1) % 4 {
				if i%2 == 0 {
					err = fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", err)
				} else {
					err = readFromServerError{err}
				}
			}
			if wraps&1 == 1 {
				err = &url.Error{Op: "Post", URL: "http://127.0.0.1:4318/v1/traces", Err: err}
			}
		}
		action, reason := retry.ClassifyError(err)
		switch reason {
		case retry.ReasonTimeout, retry.ReasonConnectionRefused, retry.ReasonConnectionReset, retry.ReasonDNS, retry.ReasonNetwork, retry.ReasonTLS:
		default:
			t.Fatalf("ClassifyError(%v) reason %q is none of the defined reasons", err, reason)
		}
		if (action == retry.ActionDrop) != (reason == retry.ReasonTLS) || (action != retry.ActionDrop && action != retry.ActionRetry) {
			t.Fatalf("ClassifyError(%v) = %s %s: only a refused certificate drops, everything else retries", err, action, reason)
		}
		if wantReason != "" && (action != wantAction || reason != wantReason) {
			t.Fatalf("ClassifyError(%T %q) = %s %s, want %s %s", err, err, action, reason, wantAction, wantReason)
		}
	})
}

// readFromServerError wraps like net/http's transportReadFromServerError:
// it unwraps but is not a net.Error.
type readFromServerError struct{ err error }

func (e readFromServerError) Error() string { return "read from server: " + e.err.Error() }
func (e readFromServerError) Unwrap() error { return e.err }

// buildError returns an error of the given shape as net/http returns it,
// and what ClassifyError must make of it ("" when any retryable reason will do).
func buildError(shape uint8, errno syscall.Errno, text string) (retry.Action, string, error) {
	switch shape {
	case errNil:
		return retry.ActionRetry, retry.ReasonNetwork, nil
	case errErrno:
		err := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
		switch {
		case errno.Timeout():
			return retry.ActionRetry, retry.ReasonTimeout, err
		case errno == syscall.ECONNREFUSED:
			return retry.ActionRetry, retry.ReasonConnectionRefused, err
		case errno == syscall.ECONNRESET, errno == syscall.EPIPE:
			return retry.ActionRetry, retry.ReasonConnectionReset, err
		}
		return retry.ActionRetry, retry.ReasonNetwork, err
	case errDeadline:
		return retry.ActionRetry, retry.ReasonTimeout, fmt.Errorf("waiting for the response: %w", context.DeadlineExceeded)
	case errDNS:
		timeout := errno%2 == 1
		err := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "backend.invalid", IsTimeout: timeout, IsNotFound: !timeout}}
		if timeout {
			return retry.ActionRetry, retry.ReasonTimeout, err
		}
		return retry.ActionRetry, retry.ReasonDNS, err
	case errTLS:
		return retry.ActionDrop, retry.ReasonTLS, x509.UnknownAuthorityError{}
	}
	// A message alone says nothing: whatever it reads, it is a plain network error.
	return retry.ActionRetry, retry.ReasonNetwork, errors.New(text)
}
