package retry

import (
	"context"
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

func (k OutcomeKind) String() string {
	switch k {
	case Delivered:
		return "success"
	case Dropped:
		return "dropped"
	}
	return "interrupted"
}

// Outcome is the end of one payload's run.
type Outcome struct {
	Kind OutcomeKind
	// Reason is one of the Drop* constants when Kind is Dropped.
	Reason string
	// Attempts is how many requests were sent.
	Attempts int
	// Last is the last attempt's response.
	Last Response
	// Err says why the payload was dropped or interrupted.
	Err error
}

func dropped(reason string, attempts int, last Response, err error) Outcome {
	return Outcome{Kind: Dropped, Reason: reason, Attempts: attempts, Last: last, Err: err}
}

func interrupted(attempts int, last Response, err error) Outcome {
	return Outcome{Kind: Interrupted, Attempts: attempts, Last: last, Err: err}
}

// EventKind says what an Event reports.
type EventKind int

const (
	// EventAttempt: one attempt finished and was classified; Path and
	// Delay say what comes next (Path is empty when nothing does).
	EventAttempt EventKind = iota
	// EventWindowStart: a throttle window began at the destination.
	EventWindowStart
	// EventWindowEnd: the probe after a throttle window succeeded.
	EventWindowEnd
	// EventHalt: a 401 stopped all sending.
	EventHalt
)

// Sources of an applied Retry-After wait.
const (
	SourceHeader  = "header"
	SourceDefault = "default"
	SourceCapped  = "capped"
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
	Action   Action
	// Reason is the status code, or the network error's reason.
	Reason string
	// Throttled is set when the response took the rate-limit path (a
	// usable Retry-After, or a 429), whether or not a retry follows.
	Throttled bool
	// Path is PathRateLimit or PathBackoff when a retry was scheduled.
	Path string
	// Delay is the wait before the next attempt (jitter included), and
	// Until the time it ends.
	Delay time.Duration
	Until time.Time
	// RetryAfter is the parsed header of a retryable response, with the
	// time parsing took; DelaySource says where a rate-limit Delay came from.
	RetryAfter    *RetryAfter
	ParseDuration time.Duration
	DelaySource   string
}

// Outcome names the attempt's outcome as the attempts metric does.
func (e Event) Outcome() string {
	switch {
	case e.Action == ActionSuccess:
		return "success"
	case e.Action == ActionUnauthorized:
		return "unauthorized"
	case e.Action == ActionDrop:
		return "permanent"
	case e.Response.Status == 0:
		return "network_error"
	case e.Throttled:
		return "throttled"
	}
	return "retryable"
}

// Observer receives the loop's events; ctx is the payload's.
type Observer func(ctx context.Context, e Event)
