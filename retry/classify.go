// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"syscall"
)

// Action is what the loop does with an attempt's result.
type Action int

const (
	// ActionSuccess: delivered.
	ActionSuccess Action = iota
	// ActionRetry: transient; retry on the rate-limit or the backoff path.
	ActionRetry
	// ActionDrop: permanent; never retried.
	ActionDrop
	// ActionUnauthorized: the credentials are wrong (401).
	ActionUnauthorized
)

func (a Action) String() string {
	switch a {
	case ActionSuccess:
		return "success"
	case ActionRetry:
		return "retry"
	case ActionDrop:
		return "drop"
	case ActionUnauthorized:
		return "unauthorized"
	}
	return "unknown"
}

// ClassifyStatus maps an HTTP status code to an action. Overrides win over
// the defaults for every code but 2xx:
//   - 2xx success; 3xx drop (redirects are never followed);
//   - 401 unauthorized;
//   - 408, 429 and every 5xx but 501, 505 and 511 retry;
//   - every other code drops.
func ClassifyStatus(code int, overrides map[int]Action) Action {
	if code >= 200 && code <= 299 {
		return ActionSuccess
	}
	if a, ok := overrides[code]; ok {
		return a
	}
	switch {
	case code == 401:
		return ActionUnauthorized
	case code == 408, code == 429:
		return ActionRetry
	case code == 501, code == 505, code == 511:
		return ActionDrop
	case code >= 500 && code <= 599:
		return ActionRetry
	}
	return ActionDrop
}

// Network error reasons, as reported in metrics and logs.
const (
	ReasonTimeout           = "timeout"
	ReasonConnectionRefused = "connection_refused"
	ReasonConnectionReset   = "connection_reset"
	ReasonDNS               = "dns"
	ReasonNetwork           = "network"
	ReasonTLS               = "tls"
	// ReasonConfig: the request could not leave the process (see
	// ConfigError).
	ReasonConfig = "config"
)

// retryReasons are the reasons a network error is retried for (a TLS
// failure is dropped, never retried).
var retryReasons = [...]string{ReasonTimeout, ReasonConnectionRefused, ReasonConnectionReset, ReasonDNS, ReasonNetwork}

// ConfigError wraps an error found before a request left the process,
// which no retry of the same request can change: a header name or value
// HTTP cannot carry (set by an auth extension or a middleware; validate
// refuses such headers: entries), a URL no request can be made for. It is
// a configuration error, not an outage: nothing reached the destination.
// An auth extension that fails to fetch a token returns its own error,
// which is not a ConfigError: that is transient, and retried.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string {
	return "configuration error, nothing was sent: " + e.Err.Error()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ClassifyError maps an error from sending a request (no response) to an
// action and a reason. Timeouts, refused or reset connections, DNS failures
// and other network errors retry; a TLS certificate the client refuses
// drops, since no retry can change it.
func ClassifyError(err error) (Action, string) {
	var (
		configErr   *ConfigError
		dnsErr      *net.DNSError
		certErr     *tls.CertificateVerificationError
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
	)
	switch {
	case errors.As(err, &configErr):
		return ActionDrop, ReasonConfig
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return ActionDrop, ReasonTLS
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT), isTimeout(err):
		return ActionRetry, ReasonTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ActionRetry, ReasonConnectionRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ActionRetry, ReasonConnectionReset
	case errors.As(err, &dnsErr):
		return ActionRetry, ReasonDNS
	}
	return ActionRetry, ReasonNetwork
}

// isTimeout reports whether any error in err's tree says it is a timeout.
// errors.As would stop at the first net.Error, and net/http wraps a read
// timeout in a *url.Error whose own Timeout cannot see through the plain
// wrappers between them.
func isTimeout(err error) bool {
	if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return isTimeout(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if isTimeout(e) {
				return true
			}
		}
	}
	return false
}
