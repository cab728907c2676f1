// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// TestConfigErrorIsDroppedNotHeld: an error found before the request left
// the process is a configuration error, under any wrapping net/http adds:
// the payload is dropped as config_error, and the gate is not held.
func TestConfigErrorIsDroppedNotHeld(t *testing.T) {
	cause := &retry.ConfigError{Err: errors.New(`header name "X Api Key" is not an HTTP token`)}
	wrapped := &url.Error{Op: "Post", URL: "https://backend.example.com/v1/traces", Err: fmt.Errorf("round trip: %w", cause)}
	action, reason := retry.ClassifyError(wrapped)
	assert.Equal(t, retry.ActionDrop, action)
	assert.Equal(t, retry.ReasonConfig, reason)

	_, d := defaultPolicy().Decide(retry.State{}, retry.Attempt{Response: retry.Response{Err: wrapped}, Now: t0})
	assert.Equal(t, retry.NextDrop, d.Next)
	assert.Equal(t, retry.DropConfigError, d.Drop)
	assert.Equal(t, "config_error", d.Drop.String())
	assert.Equal(t, retry.HoldNone, d.Hold)
	assert.Contains(t, cause.Error(), "configuration error, nothing was sent")

	action, _ = retry.ClassifyError(errors.New("oauth2: cannot fetch token"))
	assert.Equal(t, retry.ActionRetry, action, "an auth extension's own failure is transient")
}
