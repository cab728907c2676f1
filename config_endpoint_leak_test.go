// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateNeverRepeatsACredential: an endpoint that does not parse,
// or has the wrong scheme, is named in the error without its user info
// and query (issue 19: they once came out whole).
func TestValidateNeverRepeatsACredential(t *testing.T) {
	const secret = "S3cretPassw0rd"
	for _, tc := range []struct{ endpoint, want string }{
		{"htps://admin:" + secret + "@example.com:4318", `"htps://(user info not shown)@example.com:4318" must start with http:// or https://`},
		{"http://admin:" + secret + "@[::1", `"http://(user info not shown)@[::1" is not a valid URL: missing ']' in host`},
		{"http://example.com/%zz?api_key=" + secret, `"http://example.com/%zz?(query not shown)" is not a valid URL: invalid URL escape "%zz"`},
		{"http://example.com/%zz#" + secret, `"http://example.com/%zz?(query not shown)" is not a valid URL`},
		{"admin:" + secret + "@example.com", `"(user info not shown)@example.com" must start with http:// or https://`},
		{"http://admin:" + secret + "@example.com/%zz", `"http://(user info not shown)@example.com/%zz" is not a valid URL`},
	} {
		cfg := createDefaultConfig().(*Config)
		cfg.TracesEndpoint = tc.endpoint
		err := cfg.Validate()
		require.Error(t, err, tc.endpoint)
		assert.Contains(t, err.Error(), "traces_endpoint: "+tc.want)
		assert.NotContains(t, err.Error(), secret)
		assert.NotContains(t, err.Error(), "admin")
	}
}

// TestCredentialLikeQueryNames: the names issue 19 found missing are
// refused; ordinary ones pass.
func TestCredentialLikeQueryNames(t *testing.T) {
	for _, name := range []string{
		"jwt", "credential", "credentials", "sessionid", "session_id", "license", "license_key", "licence", "pass",
		"private", "private_key", "dsn", "sentry_dsn", "ingestkey", "ingestKey", "code", "accessKey", "x-auth-token",
	} {
		assert.True(t, looksLikeCredential(name), name)
	}
	for _, name := range []string{"tenant", "region", "monkey", "keyboard", "codec", "passage", "author", "format"} {
		assert.False(t, looksLikeCredential(name), name)
	}
}
