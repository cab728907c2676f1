// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"context"
	"slices"
	"time"
)

// OutcomeKind is how a payload's run ended.
type OutcomeKind int

const (
	// Delivered: a 2xx arrived.
	Delivered OutcomeKind = iota
	// Dropped: permanent failure or a spent budget; never to be retried.
	Dropped
	// Interrupted: the exporter stopped (or the caller's context ended)
	// before the payload was delivered or dropped; it may be sent again.
	Interrupted
)

var outcomeKindNames = [...]string{"success", "dropped", "interrupted"}

func (k OutcomeKind) String() string { return outcomeKindNames[k] }

// DropReason is why a payload was dropped, as the dropped_items metric
// names it.
type DropReason int

const (
	DropNone DropReason = iota
	DropRetriesExhausted
	DropThrottleBudgetExhausted
	DropOutageExhausted
	DropPermanentStatus
	DropPermanentError
	DropUnauthorized
	// DropConfigError: the request could not leave the process
	// (ConfigError).
	DropConfigError
)

var dropNames = [...]string{"", "retries_exhausted", "throttle_budget_exhausted", "outage_exhausted", "permanent_status", "permanent_error", "unauthorized", "config_error"}

func (r DropReason) String() string { return dropNames[r] }

// Outcome is the end of one payload's run.
type Outcome struct {
	Kind OutcomeKind
	// Reason says why, when Kind is Dropped.
	Reason DropReason
	// Attempts is how many requests were sent.
	Attempts int
	// Last is the last attempt's response.
	Last Response
	// Err says why the payload was dropped or interrupted.
	Err error
	// Shutdown is set when the run was interrupted because the loop was
	// stopped (not because the caller's context ended).
	Shutdown bool
}

// Path is the retry path a scheduled retry takes.
type Path int

const (
	// PathNone: no retry follows.
	PathNone Path = iota
	// PathRateLimit: the server's Retry-After (or the default), at the gate.
	PathRateLimit
	// PathBackoff: counted exponential backoff, on the payload's own.
	PathBackoff
	// PathOutage: the destination is down; wait at the gate for the probe.
	PathOutage
	// PathUnauthorized: the destination answered 401; wait at the gate.
	PathUnauthorized
	// PathPace: an answer without a hint that speaks about the backend
	// (a bare 429, or a 502, 503 or 504 while others are accepted); the
	// pace slows and the payload leaves again at it.
	PathPace
)

var pathNames = [...]string{"", "rate_limit", "backoff", "outage", "unauthorized", "pace"}

func (p Path) String() string { return pathNames[p] }

// DelaySource is where an applied rate-limit wait came from.
type DelaySource int

const (
	SourceNone DelaySource = iota
	SourceHeader
	SourceDefault
	SourceCapped
	// SourceFloor: the server asked to retry at once again; the wait
	// escalated along the backoff schedule instead.
	SourceFloor
	// SourceFirst: a 429 without a usable Retry-After while nothing was
	// known of the destination; the wait is the pacer's first hold
	// (1 s), shorter than retry_after::default.
	SourceFirst
	// SourceWindow: a 429 without a usable Retry-After at a destination
	// seen to reset at a multiple of 10 s on the clock (a fixed window;
	// moved by the phase its rows showed, windowphase.go), held until just
	// after the next one; or a hold of retry_after::default after a row
	// that looks like a window's end, ended just after the next one to
	// probe it (windowRowProbes).
	SourceWindow
)

var sourceNames = [...]string{"", "header", "default", "capped", "floor", "first", "window"}

func (s DelaySource) String() string { return sourceNames[s] }

// EventKind says what an Event reports.
type EventKind int

const (
	// EventAttempt: one attempt finished and was decided on.
	EventAttempt EventKind = iota
	// EventHoldStart: the destination's gate began holding (Held says why;
	// Decision is the attempt's that caused it).
	EventHoldStart
	// EventHoldEnd: the destination's gate opened after a hold (Held says
	// which).
	EventHoldEnd
	// EventPaced: the pacer held a request back for Delay (Paced says why).
	EventPaced
)

// Event is what the loop reports to its Observer.
type Event struct {
	Kind EventKind
	// Attempt is the 1-based attempt number; MaxAttempts is the backoff
	// path's limit.
	Attempt, MaxAttempts int
	Response             Response
	// Duration is how long the attempt took.
	Duration time.Duration
	// Decision is what the policy made of an attempt.
	Decision
	// RetryAfter is the parsed header when the decision examined it, with
	// the time parsing took.
	RetryAfter    *RetryAfter
	ParseDuration time.Duration
	// Held is the reason of a hold that started or ended.
	Held HoldReason
	// Probe is set on an attempt made as the probe of a holding gate.
	Probe bool
	// Paced says why a request was held back (EventPaced).
	Paced PaceSource
	// RateLimit is what the answer's RateLimit headers said, when they
	// were read.
	RateLimit *RateLimit
	// QuotaDistrusted is set on the accepted answer to a request sent
	// against the RateLimit headers after QuotaHoldBound: the headers are
	// wrong, and ignored until the backend refuses a request.
	QuotaDistrusted bool
}

// The names Event.Outcome gives an attempt.
const (
	outcomeSuccess      = "success"
	outcomeRetryable    = "retryable"
	outcomeThrottled    = "throttled"
	outcomePermanent    = "permanent"
	outcomeNetworkError = "network_error"
	outcomeUnauthorized = "unauthorized"
)

var attemptOutcomes = [...]string{outcomeSuccess, outcomeRetryable, outcomeThrottled, outcomePermanent, outcomeNetworkError, outcomeUnauthorized}

// Outcome names the attempt's outcome as the attempts metric does.
func (e Event) Outcome() string {
	switch {
	case e.Action == ActionSuccess:
		return outcomeSuccess
	case e.Action == ActionUnauthorized:
		return outcomeUnauthorized
	case e.Action == ActionDrop:
		return outcomePermanent
	case e.Response.Status == 0:
		return outcomeNetworkError
	case e.Throttled:
		return outcomeThrottled
	}
	return outcomeRetryable
}

// rateLimitRejects lists every RateLimitReject.
var rateLimitRejects = [...]RateLimitReject{RejectMalformed, RejectNegative, RejectHuge, RejectExcess, RejectContradicted}

// AttributeValues lists the name of every value of the enumerations the
// loop's events carry, keyed by the metric attribute that records them
// (metadata.yaml's attribute names): the one source of those names. The
// exporter adds its own drop reasons and Retry-After result; a test holds
// metadata.yaml, documentation.md and the README's metric table to the
// whole. "retry_reason" also takes the status code, which is not listed.
func AttributeValues() map[string][]string {
	return map[string][]string{
		"outcome":          slices.Clone(attemptOutcomes[:]),
		"final_outcome":    slices.Clone(outcomeKindNames[:]),
		"path":             slices.Clone(pathNames[1:]),
		"source":           slices.Clone(sourceNames[1:]),
		"drop_reason":      slices.Clone(dropNames[1:]),
		"hold_reason":      slices.Clone(holdNames[1:]),
		"retry_reason":     slices.Clone(retryReasons[:]),
		"result":           strs(parseResults[:]),
		"pacer":            slices.Clone(paceNames[1:]),
		"ratelimit_reason": strs(rateLimitRejects[:]),
	}
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// Observer receives the loop's events; ctx is the payload's.
type Observer func(ctx context.Context, e Event)
