// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package limiter holds the kinds of rate limiter that stand in front of
// real OTLP backends, so that the demo backend, the scenario benchmark and
// the retry loop's models in virtual time can put any of them in front of a
// backend: token buckets counted in items or in bytes, a request-rate
// leaky bucket (GCRA) with a burst, fixed and sliding windows, an in-flight
// (concurrency) limit, sporadic refusals with no limit at all, load
// shedding with 503, and a backend that flaps (everything refused for a
// few seconds of every few). Each refuses with or without hints: a bare
// 429, a Retry-After, or the IETF RateLimit-Policy / RateLimit fields.
//
// A Limiter is pure: it reads no clock (every call takes the time), draws
// its random refusals from a generator seeded by its Spec, and so decides
// the same way every time it is given the same requests at the same times.
// It is not safe for concurrent use: callers serialise their calls.
package limiter // import "github.com/otlphttpretry/otlphttpretry/internal/limiter"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Kind is what a limiter counts and how it refuses.
type Kind string

const (
	// Unlimited accepts every request: the reference a limited run is
	// compared with.
	Unlimited Kind = "unlimited"
	// TokenItems is a token bucket counted in items (spans, data points,
	// log records): Burst items, refilled at Rate items per second. A
	// request with more items than Burst is accepted only when the bucket
	// is full, and leaves it in debt (the demo backend's ModeQuota).
	TokenItems Kind = "token-items"
	// TokenBytes is the same bucket counted in the bytes of request bodies
	// as they came over the wire (compressed): the form managed endpoints
	// publish ("15 MB/s with a 30 MB burst").
	TokenBytes Kind = "token-bytes" //nolint:gosec // G101: a limiter's kind, not a credential
	// GCRA is a request-rate leaky bucket, as reverse proxies and API
	// gateways run it (nginx limit_req, Envoy's local rate limit): Rate
	// requests a second, of which Burst may come at once. Decided by the
	// generic cell rate algorithm: with the emission interval T = 1/Rate and
	// the tolerance (Burst-1)·T, a request is accepted when the theoretical
	// arrival time is at most the tolerance ahead of now.
	GCRA Kind = "gcra"
	// FixedWindow accepts Limit requests per Window, the windows aligned to
	// the clock (multiples of Window since the Unix epoch, moved by Offset),
	// the count starting afresh in each.
	FixedWindow Kind = "fixed-window"
	// SlidingWindow accepts a request when fewer than Limit were accepted
	// in the Window before it (a sliding log: exact, no estimate from the
	// previous window).
	SlidingWindow Kind = "sliding-window"
	// InFlight refuses a request when Limit accepted requests are still
	// open (Admit without its Done): a concurrency limit.
	InFlight Kind = "in-flight"
	// Sporadic has no limit but refuses a random Share of requests with
	// 429: a busy shard, a flaky gateway.
	Sporadic Kind = "sporadic"
	// Shed answers a random Share of requests (at most half) with 503 and
	// accepts the rest: load shedding by an overloaded gateway.
	Shed Kind = "shed"
	// Flapping refuses every request for Down of every Window (from Offset
	// past the clock's multiples of Window) and accepts every request the
	// rest of the time: a gateway whose circuit breaker opens and closes, a
	// backend a periodic job stalls. No rate brings a refusal on, and none
	// avoids one.
	Flapping Kind = "flapping"
)

// Kinds lists every kind.
var Kinds = []Kind{Unlimited, TokenItems, TokenBytes, GCRA, FixedWindow, SlidingWindow, InFlight, Sporadic, Shed, Flapping}

// Hint is what a refusal tells the client besides its status.
type Hint string

const (
	// HintNone refuses with a bare status: no Retry-After, no RateLimit
	// fields.
	HintNone Hint = "none"
	// HintRetryAfter adds Retry-After to a refusal: the whole seconds
	// until the request would have been accepted, rounded up, at least 1
	// (1 where nothing tells: in-flight, sporadic, shed).
	HintRetryAfter Hint = "retry-after"
	// HintRateLimit sends the IETF draft's RateLimit-Policy and RateLimit
	// fields (draft-ietf-httpapi-ratelimit-headers -08 and later, as
	// retry.ParseRateLimit reads them) on every answer, accepted or not,
	// and no Retry-After: the quota, what is left of it and when it is
	// whole again (see Limiter.Admit for each kind). The kinds without a
	// quota (unlimited, sporadic, shed) cannot take it.
	HintRateLimit Hint = "ratelimit"
)

// Hints lists every hint.
var Hints = []Hint{HintNone, HintRetryAfter, HintRateLimit}

// Spec describes one limiter. The fields a Kind does not use must be zero.
type Spec struct {
	Kind Kind
	Hint Hint
	// Rate is the refill rate of TokenItems (items per second) and of
	// TokenBytes (bytes per second), and the request rate of GCRA.
	Rate float64
	// Burst is the bucket's size of TokenItems and TokenBytes (in their
	// unit; 0 means Rate, one second's worth) and the requests GCRA
	// accepts at once (0 means 1: no burst).
	Burst float64
	// Limit is the requests per Window of FixedWindow and SlidingWindow,
	// and the open requests InFlight allows.
	Limit int
	// Window is the window of FixedWindow and SlidingWindow, and the
	// period of Flapping.
	Window time.Duration
	// Offset moves FixedWindow's windows (and Flapping's periods) that far
	// past the multiples of Window on the clock, in [0, Window): a limiter
	// whose clock is off from the sender's, or one that starts its windows
	// where it pleases (at a key's first request, say). 0: at the
	// multiples.
	Offset time.Duration
	// Down is how long Flapping refuses everything at the start of each of
	// its periods, in (0, Window).
	Down time.Duration
	// Share is the share of requests Sporadic refuses and Shed answers
	// with 503, in (0, 1) and (0, 0.5].
	Share float64
	// Seed seeds the random refusals of Sporadic and Shed.
	Seed uint64
}

// Validate reports a spec no limiter can follow, saying what to change.
func (s Spec) Validate() error {
	if !s.Kind.valid() {
		return fmt.Errorf("limiter: kind %q: use one of %s", s.Kind, joinKinds())
	}
	if s.Hint != HintNone && s.Hint != HintRetryAfter && s.Hint != HintRateLimit {
		return fmt.Errorf("limiter: hint %q: use none, retry-after or ratelimit", s.Hint)
	}
	if s.Hint == HintRateLimit && !s.Kind.HasQuota() {
		return fmt.Errorf("limiter: the %s limiter has no quota to announce in RateLimit fields: use hint none or retry-after", s.Kind)
	}
	rate := s.Kind == TokenItems || s.Kind == TokenBytes || s.Kind == GCRA
	window := s.Kind == FixedWindow || s.Kind == SlidingWindow
	periodic := window || s.Kind == Flapping
	random := s.Kind == Sporadic || s.Kind == Shed
	var errs []error
	switch {
	case rate && (!(s.Rate > 0) || math.IsInf(s.Rate, 0)):
		errs = append(errs, fmt.Errorf("limiter: %s rate %v must be a positive number per second", s.Kind, s.Rate))
	case !rate && s.Rate != 0:
		errs = append(errs, fmt.Errorf("limiter: the %s limiter has no rate (%v): leave it 0", s.Kind, s.Rate))
	}
	switch {
	case rate && (math.IsNaN(s.Burst) || math.IsInf(s.Burst, 0) || s.Burst < 0):
		errs = append(errs, fmt.Errorf("limiter: %s burst %v must be 0 (the default) or a positive number", s.Kind, s.Burst))
	case !rate && s.Burst != 0:
		errs = append(errs, fmt.Errorf("limiter: the %s limiter has no burst (%v): leave it 0", s.Kind, s.Burst))
	}
	switch {
	case (window || s.Kind == InFlight) && s.Limit < 1:
		errs = append(errs, fmt.Errorf("limiter: %s limit %d must be at least 1", s.Kind, s.Limit))
	case !window && s.Kind != InFlight && s.Limit != 0:
		errs = append(errs, fmt.Errorf("limiter: the %s limiter has no limit (%d): leave it 0", s.Kind, s.Limit))
	}
	switch {
	case periodic && s.Window <= 0:
		errs = append(errs, fmt.Errorf("limiter: %s window %s must be positive", s.Kind, s.Window))
	case !periodic && s.Window != 0:
		errs = append(errs, fmt.Errorf("limiter: the %s limiter has no window (%s): leave it 0", s.Kind, s.Window))
	}
	switch {
	case (s.Kind == FixedWindow || s.Kind == Flapping) && (s.Offset < 0 || s.Window > 0 && s.Offset >= s.Window):
		errs = append(errs, fmt.Errorf("limiter: %s offset %s must be at least 0 and below its window %s", s.Kind, s.Offset, s.Window))
	case s.Kind != FixedWindow && s.Kind != Flapping && s.Offset != 0:
		errs = append(errs, fmt.Errorf("limiter: the %s limiter has no window offset (%s): leave it 0", s.Kind, s.Offset))
	}
	switch {
	case s.Kind == Flapping && (s.Down <= 0 || s.Window > 0 && s.Down >= s.Window):
		errs = append(errs, fmt.Errorf("limiter: flapping down %s must be above 0 and below its window %s", s.Down, s.Window))
	case s.Kind != Flapping && s.Down != 0:
		errs = append(errs, fmt.Errorf("limiter: the %s limiter is never down on a schedule (%s): leave down 0", s.Kind, s.Down))
	}
	switch {
	case s.Kind == Sporadic && !(s.Share > 0 && s.Share < 1):
		errs = append(errs, fmt.Errorf("limiter: sporadic share %v must be above 0 and below 1", s.Share))
	case s.Kind == Shed && !(s.Share > 0 && s.Share <= 0.5):
		errs = append(errs, fmt.Errorf("limiter: shed share %v must be above 0 and at most 0.5", s.Share))
	case !random && s.Share != 0:
		errs = append(errs, fmt.Errorf("limiter: the %s limiter refuses no random share (%v): leave it 0", s.Kind, s.Share))
	}
	return errors.Join(errs...)
}

func (k Kind) valid() bool {
	for _, x := range Kinds {
		if k == x {
			return true
		}
	}
	return false
}

func joinKinds() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// HasQuota reports whether the kind has a limit a client can use up:
// every kind but Unlimited, Sporadic, Shed and Flapping.
func (k Kind) HasQuota() bool { return k != Unlimited && k != Sporadic && k != Shed && k != Flapping }

// burst is the bucket's size (token kinds) or the requests accepted at
// once (GCRA), with the defaults applied.
func (s Spec) burst() float64 {
	switch {
	case s.Burst > 0:
		return s.Burst
	case s.Kind == GCRA:
		return 1
	}
	return s.Rate
}

// Unit is what the limit counts, as Used measures it: "items", "bytes",
// "requests", or "request-seconds" (in-flight: requests open × time).
// Empty for the kinds without a quota.
func (s Spec) Unit() string {
	switch s.Kind {
	case TokenItems:
		return "items"
	case TokenBytes:
		return "bytes"
	case GCRA, FixedWindow, SlidingWindow:
		return "requests"
	case InFlight:
		return "request-seconds"
	}
	return ""
}

// RequestRate is the limit in requests per second when every request
// carries items items in bytes bytes and an accepted request stays open
// for latency (InFlight); 0 for the kinds without a quota, and for
// InFlight without a latency.
func (s Spec) RequestRate(items, bytes int, latency time.Duration) float64 {
	switch s.Kind {
	case TokenItems:
		return s.Rate / float64(max(items, 1))
	case TokenBytes:
		return s.Rate / float64(max(bytes, 1))
	case GCRA:
		return s.Rate
	case FixedWindow, SlidingWindow:
		return float64(s.Limit) / s.Window.Seconds()
	case InFlight:
		if latency <= 0 {
			return 0
		}
		return float64(s.Limit) / latency.Seconds()
	}
	return 0
}

// String describes the limiter in a few words, for tables and logs.
func (s Spec) String() string {
	var b strings.Builder
	switch s.Kind {
	case Unlimited:
		b.WriteString("no limit")
	case TokenItems:
		fmt.Fprintf(&b, "token bucket of %s items/s (burst %s)", num(s.Rate), num(s.burst()))
	case TokenBytes:
		fmt.Fprintf(&b, "token bucket of %s bytes/s (burst %s)", num(s.Rate), num(s.burst()))
	case GCRA:
		fmt.Fprintf(&b, "GCRA of %s requests/s (burst %s)", num(s.Rate), num(s.burst()))
	case FixedWindow:
		fmt.Fprintf(&b, "fixed window of %d requests per %s", s.Limit, s.Window)
		if s.Offset != 0 {
			fmt.Fprintf(&b, " (starting %s past the clock's multiples)", s.Offset)
		}
	case SlidingWindow:
		fmt.Fprintf(&b, "sliding window of %d requests per %s", s.Limit, s.Window)
	case InFlight:
		fmt.Fprintf(&b, "at most %d requests in flight", s.Limit)
	case Sporadic:
		fmt.Fprintf(&b, "no limit, %s%% of requests refused at random", num(100*s.Share))
	case Shed:
		fmt.Fprintf(&b, "load shedding: %s%% of requests answered 503", num(100*s.Share))
	case Flapping:
		fmt.Fprintf(&b, "no limit, every request refused for %s of every %s", s.Down, s.Window)
		if s.Offset != 0 {
			fmt.Fprintf(&b, " (starting %s past the clock's multiples)", s.Offset)
		}
	default:
		return string(s.Kind)
	}
	switch {
	case s.Kind == Unlimited:
	case s.Hint == HintRetryAfter:
		b.WriteString(", Retry-After")
	case s.Hint == HintRateLimit:
		b.WriteString(", RateLimit fields")
	case s.Kind == Shed:
		b.WriteString(", no Retry-After")
	default:
		b.WriteString(", bare 429")
	}
	return b.String()
}

// num prints a number without a needless fraction.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.3g", v)
}

// WindowStart is the start of FixedWindow's window (Flapping's period)
// that holds t: the multiple of Window at or before t, moved by Offset.
func (s Spec) WindowStart(t time.Time) time.Time {
	return t.Add(-s.Offset).Truncate(s.Window).Add(s.Offset)
}
