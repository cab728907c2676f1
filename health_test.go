package otlphttpretry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

func TestHealthUnauthorizedReportsPermanentError(t *testing.T) {
	srv := newBackend(t, reply(401))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	for range 3 {
		require.Error(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	}
	assert.Equal(t, []string{"StatusPermanentError"}, h.host.statuses(), "reported once, at the halt")
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

func TestHealthRetriesExhaustedThenSuccessReportsOKOnce(t *testing.T) {
	srv := newBackend(t, reply(200), reply(503), reply(503), reply(503), reply(503), reply(503), reply(200))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Empty(t, h.host.statuses(), "success while healthy reports nothing")

	require.Error(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	assert.Equal(t, []string{"StatusRecoverableError"}, h.host.statuses())

	for range 3 {
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	}
	assert.Equal(t, []string{"StatusRecoverableError", "StatusOK"}, h.host.statuses(), "OK once, not on every success")
	require.Len(t, srv.got(), 1+5+3)
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
