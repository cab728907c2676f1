// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// TestHostileHeaderConfigs: headers that can never be sent are refused by
// validate, naming the key; and so is an idempotency_header that HTTP or
// tracing gives a meaning to.
func TestHostileHeaderConfigs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"name with spaces", "    headers: {\"X Api Key\": \"s3cr3t-value-0001\"}", `headers: "X Api Key"`},
		{"value with CR LF", "    headers: {\"X-Api-Key\": \"abc\\r\\nX-Evil: 1\"}", `headers: "X-Api-Key"`},
		{"idempotency_header Date", "    idempotency_header: Date", "idempotency_header"},
		{"idempotency_header Traceparent", "    idempotency_header: Traceparent", "idempotency_header"},
		{"idempotency_header Accept-Encoding", "    idempotency_header: Accept-Encoding", "idempotency_header"},
		{"idempotency_header Range", "    idempotency_header: Range", "idempotency_header"},
		{"idempotency_header Via", "    idempotency_header: Via", "idempotency_header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, code := runValidate(t, tc.extra)
			figure(t, "validate_exit_code", float64(code), "")
			if code == 0 || !strings.Contains(out, tc.want) {
				t.Errorf("validate exited %d, want a refusal naming %s:\n%s", code, tc.want, out)
			}
			if strings.Contains(out, "s3cr3t-value-0001") {
				t.Errorf("validate printed the header's value:\n%s", out)
			}
		})
	}
}

// TestHostileUnsendableHeaderReachesNothing measures the earlier behaviour
// of a header name that is not an HTTP token: when validate accepts it, the
// collector runs, and the test counts the requests that reach the backend
// in 10 s and what the log calls it.
func TestHostileUnsendableHeaderReachesNothing(t *testing.T) {
	t.Parallel()
	const extra = "    headers: {\"X Api Key\": \"s3cr3t-value-0001\"}"
	if _, code := runValidate(t, extra); code != 0 {
		figure(t, "refused_by_validate", 1, "")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	backend := newHostileBackend(t, func(http.ResponseWriter, *http.Request, int) int { return http.StatusOK })
	run := startHostile(ctx, t, backend.URL, extra, "info")
	start := time.Now()
	if _, err := (demorun.Load{Batches: 10, SpansPerBatch: 1, Interval: 100 * time.Millisecond}).Send(ctx, run.receiver); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(start.Add(10 * time.Second)))
	n, _ := backend.count(start, time.Time{})
	run.stop()
	log := run.log()
	figure(t, "requests_in_10s", float64(n), "requests")
	figure(t, "log_lines_calling_it_failing", float64(strings.Count(log, "destination is failing")), "lines")
	t.Errorf("validate accepted a header name with spaces: %d requests reached the backend in 10 s", n)
}
