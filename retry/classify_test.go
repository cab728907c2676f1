// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

func TestClassifyStatusDefaults(t *testing.T) {
	tests := []struct {
		codes []int
		want  retry.Action
	}{
		{codes: []int{200, 201, 202, 204, 299}, want: retry.ActionSuccess},
		{codes: []int{300, 301, 302, 304, 307, 308}, want: retry.ActionDrop},
		{codes: []int{400, 403, 404, 405, 409, 413, 415, 422}, want: retry.ActionDrop},
		{codes: []int{401}, want: retry.ActionUnauthorized},
		{codes: []int{408, 429, 500, 502, 503, 504, 529, 599}, want: retry.ActionRetry},
		{codes: []int{501, 505, 511}, want: retry.ActionDrop},
		{codes: []int{0, 100, 199, 600, 999}, want: retry.ActionDrop},
	}
	for _, tt := range tests {
		for _, code := range tt.codes {
			t.Run(fmt.Sprintf("%d", code), func(t *testing.T) {
				assert.Equal(t, tt.want, retry.ClassifyStatus(code, nil))
			})
		}
	}
}

func TestClassifyStatusOverrides(t *testing.T) {
	tests := []struct {
		name      string
		overrides map[int]retry.Action
		want      map[int]retry.Action // codes checked under these overrides
	}{
		{
			name:      "503 drops",
			overrides: map[int]retry.Action{503: retry.ActionDrop},
			want:      map[int]retry.Action{503: retry.ActionDrop, 502: retry.ActionRetry, 504: retry.ActionRetry, 429: retry.ActionRetry, 400: retry.ActionDrop, 401: retry.ActionUnauthorized},
		},
		{
			name:      "400 retries",
			overrides: map[int]retry.Action{400: retry.ActionRetry},
			want:      map[int]retry.Action{400: retry.ActionRetry, 403: retry.ActionDrop, 404: retry.ActionDrop, 503: retry.ActionRetry, 401: retry.ActionUnauthorized},
		},
		{
			name:      "401 drops",
			overrides: map[int]retry.Action{401: retry.ActionDrop},
			want:      map[int]retry.Action{401: retry.ActionDrop, 403: retry.ActionDrop, 429: retry.ActionRetry, 500: retry.ActionRetry},
		},
		{
			name:      "501 retries",
			overrides: map[int]retry.Action{501: retry.ActionRetry},
			want:      map[int]retry.Action{501: retry.ActionRetry, 505: retry.ActionDrop, 511: retry.ActionDrop},
		},
		{
			name:      "2xx cannot be overridden",
			overrides: map[int]retry.Action{200: retry.ActionDrop, 204: retry.ActionRetry},
			want:      map[int]retry.Action{200: retry.ActionSuccess, 204: retry.ActionSuccess},
		},
		{
			name:      "empty overrides keep the defaults",
			overrides: map[int]retry.Action{},
			want:      map[int]retry.Action{200: retry.ActionSuccess, 400: retry.ActionDrop, 401: retry.ActionUnauthorized, 503: retry.ActionRetry},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for code, want := range tt.want {
				assert.Equal(t, want, retry.ClassifyStatus(code, tt.overrides), "status %d", code)
			}
		})
	}
}

func TestActionString(t *testing.T) {
	tests := map[retry.Action]string{
		retry.ActionSuccess:      "success",
		retry.ActionRetry:        "retry",
		retry.ActionDrop:         "drop",
		retry.ActionUnauthorized: "unauthorized",
		retry.Action(42):         "unknown",
	}
	for a, want := range tests {
		assert.Equal(t, want, a.String())
	}
}

// timeoutError is a net.Error that reports a timeout.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// realConnectionRefused posts to a localhost port nobody listens on.
func realConnectionRefused(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	res, err := (&http.Client{}).Post("http://"+addr+"/v1/traces", "application/x-protobuf", nil)
	if err == nil {
		res.Body.Close()
		t.Skipf("something answered on the closed port %s", addr)
	}
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "the test needs a real refused connection")
	return err
}

// realUnknownAuthority calls a TLS server whose certificate the client does
// not trust.
func realUnknownAuthority(t *testing.T) error {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	res, err := (&http.Client{}).Get(srv.URL)
	if err == nil {
		res.Body.Close()
	}
	require.ErrorAs(t, err, new(x509.UnknownAuthorityError), "the test needs a real untrusted certificate")
	return err
}

// realReadTimeout reads from a connection whose deadline has passed.
func realReadTimeout(t *testing.T) error {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	require.NoError(t, a.SetReadDeadline(time.Now().Add(-time.Second)))
	_, err := a.Read(make([]byte, 1))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	return err
}

// realExpiredContext sends a request whose context deadline has passed.
func realExpiredContext(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/v1/traces", http.NoBody)
	require.NoError(t, err)
	res, err := (&http.Client{}).Do(req)
	if err == nil {
		res.Body.Close()
	}
	require.ErrorIs(t, err, context.DeadlineExceeded)
	return err
}

// is returns a constant error for a table entry.
func is(err error) func(*testing.T) error { return func(*testing.T) error { return err } }

// opErr wraps err the way http.Client reports a failed request.
func opErr(op string, err error) error {
	return &url.Error{Op: "Post", URL: "http://collector:4318/v1/traces", Err: &net.OpError{Op: op, Net: "tcp", Err: err}}
}

func TestClassifyError(t *testing.T) {
	dnsNotFound := &net.DNSError{Err: "no such host", Name: "collector.invalid", IsNotFound: true}
	dnsTimeout := &net.DNSError{Err: "i/o timeout", Name: "collector", IsTimeout: true}

	tests := []struct {
		name       string
		err        func(t *testing.T) error
		wantAction retry.Action
		wantReason string
	}{
		// timeouts
		{name: "context.DeadlineExceeded", err: is(context.DeadlineExceeded), wantAction: retry.ActionRetry, wantReason: retry.ReasonTimeout},
		{name: "wrapped context.DeadlineExceeded", err: is(fmt.Errorf("send: %w", context.DeadlineExceeded)), wantAction: retry.ActionRetry, wantReason: retry.ReasonTimeout},
		{name: "net.Error timeout in url.Error", err: is(opErr("read", timeoutError{})), wantAction: retry.ActionRetry, wantReason: retry.ReasonTimeout},
		{name: "real read deadline", err: realReadTimeout, wantAction: retry.ActionRetry, wantReason: retry.ReasonTimeout},
		{name: "real expired request context", err: realExpiredContext, wantAction: retry.ActionRetry, wantReason: retry.ReasonTimeout},
		{name: "DNS timeout counts as a timeout", err: is(opErr("dial", dnsTimeout)), wantAction: retry.ActionRetry, wantReason: retry.ReasonTimeout},

		// refused and reset connections
		{name: "real connection refused", err: realConnectionRefused, wantAction: retry.ActionRetry, wantReason: retry.ReasonConnectionRefused},
		{name: "ECONNREFUSED in OpError in url.Error", err: is(opErr("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED))), wantAction: retry.ActionRetry, wantReason: retry.ReasonConnectionRefused},
		{name: "ECONNRESET in OpError in url.Error", err: is(opErr("read", os.NewSyscallError("read", syscall.ECONNRESET))), wantAction: retry.ActionRetry, wantReason: retry.ReasonConnectionReset},
		{name: "bare ECONNRESET", err: is(syscall.ECONNRESET), wantAction: retry.ActionRetry, wantReason: retry.ReasonConnectionReset},
		{name: "EPIPE counts as a reset", err: is(opErr("write", os.NewSyscallError("write", syscall.EPIPE))), wantAction: retry.ActionRetry, wantReason: retry.ReasonConnectionReset},

		// DNS
		{name: "DNSError in OpError in url.Error", err: is(opErr("dial", dnsNotFound)), wantAction: retry.ActionRetry, wantReason: retry.ReasonDNS},
		{name: "bare DNSError", err: is(dnsNotFound), wantAction: retry.ActionRetry, wantReason: retry.ReasonDNS},

		// anything else
		{name: "plain error", err: is(errors.New("boom")), wantAction: retry.ActionRetry, wantReason: retry.ReasonNetwork},
		{name: "unexpected EOF", err: is(&url.Error{Op: "Post", URL: "http://x", Err: io.ErrUnexpectedEOF}), wantAction: retry.ActionRetry, wantReason: retry.ReasonNetwork},

		// TLS certificate refused: no retry can fix it
		{name: "real unknown authority", err: realUnknownAuthority, wantAction: retry.ActionDrop, wantReason: retry.ReasonTLS},
		{name: "x509.UnknownAuthorityError", err: is(x509.UnknownAuthorityError{}), wantAction: retry.ActionDrop, wantReason: retry.ReasonTLS},
		{name: "wrapped x509.UnknownAuthorityError", err: is(&url.Error{Op: "Post", URL: "https://x", Err: x509.UnknownAuthorityError{}}), wantAction: retry.ActionDrop, wantReason: retry.ReasonTLS},
		{name: "x509.HostnameError", err: is(fmt.Errorf("tls: %w", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "x"})), wantAction: retry.ActionDrop, wantReason: retry.ReasonTLS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			action, reason := retry.ClassifyError(err)
			assert.Equal(t, tt.wantAction, action, "action for %v", err)
			assert.Equal(t, tt.wantReason, reason, "reason for %v", err)
		})
	}
}
