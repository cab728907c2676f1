// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
)

// TestConfigRefusesHeadersThatCannotBeSent: a header no request can carry
// once passed validate and held the exporter forever as if the backend
// were down (issue 19). Now validate refuses it, naming the header and
// never showing the value; and an idempotency_header that HTTP or tracing
// gives a meaning to is refused too.
func TestConfigRefusesHeadersThatCannotBeSent(t *testing.T) {
	const secret = "s3cr3t-value-0001"
	for _, tc := range []struct {
		name, header, value, want string
	}{
		{"name with spaces", "X Api Key", secret, `headers: "X Api Key" is not a valid HTTP header name`},
		{"name with a colon", "X-Api-Key:", secret, `headers: "X-Api-Key:" is not a valid HTTP header name`},
		{"empty name", "", secret, `headers: "" is not a valid HTTP header name`},
		{"value with CR LF", "X-Api-Key", secret + "\r\nX-Evil: 1", `headers: "X-Api-Key": the value holds a CR, LF or another control character`},
		{"value with a trailing LF", "X-Api-Key", secret + "\n", `headers: "X-Api-Key": the value holds a CR, LF`},
		{"value with NUL", "X-Api-Key", secret + "\x00", `headers: "X-Api-Key": the value holds a CR, LF or another control character`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.ClientConfig.Endpoint = "https://backend.example.com"
			cfg.ClientConfig.Headers.Set(tc.header, configopaque.String(tc.value))
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), secret, "the message never shows the value")
		})
	}
	t.Run("a tab in a value is fine", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		cfg.ClientConfig.Endpoint = "https://backend.example.com"
		cfg.ClientConfig.Headers.Set("X-Api-Key", "a\tb")
		assert.NoError(t, cfg.Validate())
	})
	for _, name := range []string{
		"Date", "date", "Traceparent", "tracestate", "Baggage", "Accept-Encoding", "Range", "Via", "Forwarded",
		"X-Forwarded-For", "If-Match", "Cache-Control", "X-B3-TraceId", "Uber-Trace-Id", "Content-Language",
	} {
		t.Run("idempotency_header "+name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.ClientConfig.Endpoint = "https://backend.example.com"
			cfg.IdempotencyHeader = name
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), `idempotency_header: "`+name+`" names a header that already has a job`)
		})
	}
}

// TestConfigHeaderMessagesKeepTheNameAsWritten: a message about a header
// spells it as the config does (X-Scope-OrgID, not X-Scope-Orgid).
func TestConfigHeaderMessagesKeepTheNameAsWritten(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.ClientConfig.Endpoint = "https://backend.example.com"
	cfg.IdempotencyHeader = "X-Scope-OrgID"
	cfg.ClientConfig.Headers.Set("x-scope-orgid", "tenant-1")
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `headers: "x-scope-orgid": the exporter sets X-Scope-OrgID on every request`)
	assert.NotContains(t, err.Error(), "X-Scope-Orgid")
}
