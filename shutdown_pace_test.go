// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// TestShutdownGivesAPacedPayloadItsAttempt: with the memory queue, a
// payload the shutdown finds waiting for its paced slot (here: RateLimit
// headers that say the quota is spent) gets the one attempt the README
// promises every waiting payload, instead of being lost (issue 19).
func TestShutdownGivesAPacedPayloadItsAttempt(t *testing.T) {
	srv := newBackend(t, reply(200, "RateLimit-Policy", `"default";q=100;w=86400`, "RateLimit", `"default";r=0;t=86400`))
	cfg := testConfig(srv.URL)
	withMemoryQueue(cfg, 10)
	clock := retrytest.NewClock(start)
	h := startTracesWithID(t, cfg, clock)

	require.NoError(t, h.consume(3))
	// The first goes: nothing is known yet. Wait until its attempt is
	// recorded, which comes after the pacer read its answer's headers, not
	// only until the backend got it.
	require.Eventually(t, func() bool {
		m, err := h.tel.GetMetric(mAttempts)
		return err == nil && len(m.Data.(metricdata.Sum[int64]).DataPoints) == 1
	}, 10*time.Second, time.Millisecond, "the first attempt is recorded")
	require.Len(t, srv.got(), 1)
	require.NoError(t, h.consume(4))
	require.True(t, clock.WaitForTimers(1, 10*time.Second), "the second waits: the headers say the quota is spent")

	require.NoError(t, h.exp.Shutdown(context.Background()))
	assert.Len(t, srv.got(), 2, "the waiting payload got its attempt at shutdown")
	assert.Empty(t, h.logs.FilterMessageSnippet("lost with the memory queue").All(), "nothing lost")
	requireNoMetric(t, h, mDropped)
}
