// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// TestHealthUnauthorizedReportsRecoverableError: a 401 is a recoverable
// error naming the fix, reported once for the hold, and OK once a probe is
// accepted.
func TestHealthUnauthorizedReportsRecoverableError(t *testing.T) {
	srv := newBackend(t, reply(401), reply(401), reply(401), reply(200))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Equal(t, []string{"StatusRecoverableError", "StatusOK"}, h.host.statuses(), "reported once at the hold, once at the recovery")
	err := h.host.errors()[0]
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401 Unauthorized")
	assert.Contains(t, err.Error(), "fix the credentials (headers or auth)")
}

func TestHealthUnauthorizedDropModeReportsNothing(t *testing.T) {
	srv := newBackend(t, reply(401), reply(200))
	cfg := testConfig(srv.URL)
	cfg.OnUnauthorized = UnauthorizedDrop
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	require.Error(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Empty(t, h.host.statuses())
}

func TestHealthOutageThenRecoveryReportsOKOnce(t *testing.T) {
	srv := newBackend(t, reply(200), reply(503), reply(503), reply(503), reply(503), reply(503), reply(200))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Empty(t, h.host.statuses(), "success while healthy reports nothing")

	// Later than the 2 s within which a 503 speaks of a backend that
	// takes others (load shedding) rather than of one that is down.
	h.clock.Advance(3 * time.Second)
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)), "held through the outage, then delivered")
	assert.Equal(t, []string{"StatusRecoverableError", "StatusOK"}, h.host.statuses())
	assert.Contains(t, h.host.errors()[0].Error(), "is failing; holding all payloads")

	for range 3 {
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	}
	assert.Equal(t, []string{"StatusRecoverableError", "StatusOK"}, h.host.statuses(), "OK once, not on every success")
	require.Len(t, srv.got(), 1+6+3)
}

func TestHealthThrottleBudgetExhaustedThenSuccess(t *testing.T) {
	srv := newBackend(t, reply(429, "Retry-After", "300"), reply(429, "Retry-After", "300"),
		reply(429, "Retry-After", "300"), reply(429, "Retry-After", "300"), reply(200))
	cfg := testConfig(srv.URL)
	cfg.RetryAfter.MaxElapsed = 900 * time.Second
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))

	require.Error(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Equal(t, []string{"StatusRecoverableError"}, h.host.statuses())

	// the gate stays closed for the last 429's 300 s; then the probe succeeds
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Equal(t, []string{"StatusRecoverableError", "StatusOK"}, h.host.statuses())
}

func TestHealthPermanentStatusReportsNothing(t *testing.T) {
	srv := newBackend(t, reply(400), reply(200))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.Error(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Empty(t, h.host.statuses())
}
