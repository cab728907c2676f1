// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

func TestOneSpanPerPayloadWithAnEventPerAttempt(t *testing.T) {
	srv := newBackend(t, reply(429, "Retry-After", "3"), reply(503), reply(200))
	h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 2)))

	var exports []string
	for _, s := range h.tel.SpanRecorder.Ended() {
		if s.Name() != "otlp_http_retry/export" {
			continue
		}
		exports = append(exports, s.Name())
		attrs := attribute.NewSet(s.Attributes()...)
		final, _ := attrs.Value("final_outcome")
		attempts, _ := attrs.Value("attempts")
		items, _ := attrs.Value("items")
		assert.Equal(t, "success", final.AsString())
		assert.EqualValues(t, 3, attempts.AsInt64())
		assert.EqualValues(t, 2, items.AsInt64())
		assert.NotEqual(t, codes.Error, s.Status().Code)

		require.Len(t, s.Events(), 3, "one event per attempt")
		want := []map[string]string{
			{"status_code": "429", "outcome": "throttled", "path": "rate_limit", "delay": "3s"},
			{"status_code": "503", "outcome": "retryable", "path": "outage", "delay": "1s"},
			{"status_code": "200", "outcome": "success"},
		}
		for i, ev := range s.Events() {
			assert.Equal(t, "attempt", ev.Name)
			got := map[string]string{}
			for _, kv := range ev.Attributes {
				if kv.Key != "attempt" {
					got[string(kv.Key)] = kv.Value.String()
				} else {
					assert.EqualValues(t, i+1, kv.Value.AsInt64())
				}
			}
			assert.Equal(t, want[i], got, "event %d", i+1)
		}
	}
	assert.Len(t, exports, 1, "exactly one export span for one payload")
}
