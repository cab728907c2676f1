// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// t0 is where every fake clock starts.
var t0 = time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)

// resp builds a response with the given status and header name/value pairs.
// Like the exporter's send, it describes every non-2xx answer in Err.
func resp(code int, header ...string) retry.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	r := retry.Response{Status: code, Header: h}
	if code < 200 || code > 299 {
		r.Err = fmt.Errorf("collector answered %d %s", code, http.StatusText(code))
	}
	return r
}

// withRetryAfter builds a response carrying a Retry-After header.
func withRetryAfter(code int, value string) retry.Response {
	return resp(code, "Retry-After", value)
}

// transportErr builds the response of an attempt that got no answer.
func transportErr(err error) retry.Response { return retry.Response{Err: err} }

// withTuning runs f with the pacer's tuning set as set names it
// (retry.SetTuning), and the default again after.
func withTuning(t *testing.T, set map[string]float64, f func()) {
	t.Helper()
	restore, err := retry.SetTuning(set)
	require.NoError(t, err)
	defer restore()
	f()
}

// times repeats r n times.
func times(n int, r retry.Response) []retry.Response {
	out := make([]retry.Response, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// concat joins response lists.
func concat(parts ...[]retry.Response) []retry.Response {
	var out []retry.Response
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// repeatDur repeats d n times.
func repeatDur(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// script is a fake send: it answers with its responses in order and repeats
// the last one forever. It records every attempt number it was given.
type script struct {
	mu        sync.Mutex
	responses []retry.Response
	attempts  []int
}

func newScript(rs ...retry.Response) *script { return &script{responses: rs} }

func (s *script) send(_ context.Context, attempt int) retry.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts = append(s.attempts, attempt)
	return s.responses[min(len(s.attempts), len(s.responses))-1]
}

// calls returns how many requests were sent.
func (s *script) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.attempts)
}

func (s *script) attemptNumbers() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.attempts...)
}

// recorder is an Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []retry.Event
}

func (r *recorder) observe(_ context.Context, e retry.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// of returns the events of one kind, in order.
func (r *recorder) of(kind retry.EventKind) []retry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []retry.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// outcomes returns Event.Outcome of every attempt event, in order.
func (r *recorder) outcomes() []string {
	var out []string
	for _, e := range r.of(retry.EventAttempt) {
		out = append(out, e.Outcome())
	}
	return out
}

// defaultPolicy is the documented configuration: hold on 401.
func defaultPolicy() retry.Policy {
	return retry.Policy{
		Backoff:            retry.NewDefaultBackoffConfig(),
		RetryAfter:         retry.NewDefaultRetryAfterConfig(),
		Unauthorized:       retry.NewDefaultUnauthorizedConfig(),
		Outage:             retry.NewDefaultOutageConfig(),
		HoldOnUnauthorized: true,
	}
}

// othersSucceed wraps send so that, while each attempt is in flight, a
// request of another sender to the same destination succeeds: the
// destination is shown to be up, and a failure is the payload's own.
func othersSucceed(g *retry.Gate, send retry.SendFunc) retry.SendFunc {
	return func(ctx context.Context, attempt int) retry.Response {
		g.Report(retry.Pass{}, true, retry.HoldNone, time.Time{})
		return send(ctx, attempt)
	}
}

// harness is a loop wired to a fake clock, its own gate and a recorder.
type harness struct {
	clock  *retrytest.Clock
	gate   *retry.Gate
	loop   *retry.Loop
	events *recorder
}

// newHarness builds a loop whose jitter source always returns random.
func newHarness(clock *retrytest.Clock, policy retry.Policy, random float64) *harness {
	h := &harness{clock: clock, gate: retry.NewGate(clock), events: &recorder{}}
	h.loop = retry.NewLoop(policy, clock, h.gate, h.events.observe)
	h.loop.SetRandom(func() float64 { return random })
	return h
}

// writeStoredRun writes a model test's stored run v as indented JSON to
// path, the file the developer named in the test's *_JSON variable
// (relative to the repository's root, where the command runs).
func writeStoredRun(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", path)
	}
	require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o600)) //nolint:gosec // G703: the file the developer named
}
