// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otlphttpretry/otlphttpretry/internal/metadatatest"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// TestUnsendableHeaderIsAConfigurationError: an auth extension that sets a
// header no request can carry (here a token read with its trailing
// newline). Before, net/http's refusal was taken for a network outage: the
// destination was held for good, nothing reached the backend and the log
// said it was failing. Now it is a configuration error: the batch is
// dropped (config_error) with an error that says what to fix, the status
// says so, and nothing is held.
func TestUnsendableHeaderIsAConfigurationError(t *testing.T) {
	const token = "tok-0123456789abcdef"
	srv := newBackend(t, reply(200))
	authID := component.MustNewID("header_auth")
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	h := &telHarness{harness: startTracesWithExtensions(t, cfg, retrytest.NewAutoClock(start), map[component.ID]component.Component{
		authID: &headerAuth{headers: map[string]string{"Authorization": "Bearer " + token + "\n"}},
	})}

	err := h.exp.ConsumeTraces(context.Background(), spans("a", 3))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "configuration error, nothing was sent")
	assert.Contains(t, err.Error(), `the value of header "Authorization"`)
	assert.NotContains(t, err.Error(), token)
	assert.Empty(t, srv.got(), "nothing reached the backend")
	metadatatest.AssertEqualOtlpHTTPRetryDroppedItems(t, h.tel, []metricdata.DataPoint[int64]{
		h.sum(3, attrReason("config_error")),
	}, telOpts...)
	assert.Empty(t, h.logs.FilterMessageSnippet("Holding").All(), "no hold: the destination was never asked")
	drops := h.logs.FilterMessageSnippet("Dropped a batch").All()
	require.Len(t, drops, 1)
	assert.Equal(t, "config_error", drops[0].ContextMap()["reason"])
	errs := h.host.errors()
	require.NotEmpty(t, errs, "the status says so")
	assert.Contains(t, errs[len(errs)-1].Error(), "configuration error")
}

// failingAuth is an auth extension whose token fetch fails the first
// failures times: a transient error, which must not drop data.
type failingAuth struct {
	component.StartFunc
	component.ShutdownFunc
	failures atomic.Int32
}

var _ extensionauth.HTTPClient = (*failingAuth)(nil)

func (a *failingAuth) RoundTripper(next http.RoundTripper) (http.RoundTripper, error) {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if a.failures.Add(-1) >= 0 {
			return nil, errors.New("oauth2: cannot fetch token: Post \"https://idp.example.com/token\": connection refused")
		}
		return next.RoundTrip(r)
	}), nil
}

// TestTokenFetchFailureIsNotAConfigurationError: an auth extension that
// cannot fetch a token is transient: the payload waits and is delivered
// once the extension recovers, nothing is dropped.
func TestTokenFetchFailureIsNotAConfigurationError(t *testing.T) {
	srv := newBackend(t, reply(200))
	authID := component.MustNewID("failing_auth")
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	auth := &failingAuth{}
	auth.failures.Store(2)
	h := &telHarness{harness: startTracesWithExtensions(t, cfg, retrytest.NewAutoClock(start), map[component.ID]component.Component{authID: auth})}

	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 3)))
	assert.Len(t, srv.got(), 1, "delivered after the extension recovered")
	assert.Empty(t, h.logs.FilterMessageSnippet("Dropped a batch").All())
}
