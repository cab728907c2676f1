// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// extHost is a host that offers extensions (auth, middlewares) to the
// exporter, as the collector's host does.
type extHost struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h extHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// startTracesWithExtensions is startTraces on a host that offers ext.
func startTracesWithExtensions(t *testing.T, cfg *Config, clock *retrytest.Clock, ext map[component.ID]component.Component) *harness {
	t.Helper()
	host := &statusHost{Host: extHost{Host: componenttest.NewNopHost(), ext: ext}}
	require.NoError(t, cfg.Validate())
	h := startTracesOnHost(t, cfg, clock, host)
	h.host = host
	return h
}

// startTracesOnHost is startTracesUnvalidated on the given host.
func startTracesOnHost(t *testing.T, cfg *Config, clock *retrytest.Clock, host component.Host) *harness {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	h := &harness{clock: clock, tel: componenttest.NewTelemetry(), logs: logs}
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	exp, err := newFactory(clock).CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), host))
	h.exp, h.id = exp, set.ID.String()
	t.Cleanup(func() {
		assertEmittedAttributesDocumented(t, h.tel)
		_ = exp.Shutdown(context.Background())
		_ = h.tel.Shutdown(context.Background())
	})
	return h
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// bodyCounter is a client middleware that records how many bytes of each
// response body the exporter read before closing it.
type bodyCounter struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	read []int64
}

var _ extensionmiddleware.HTTPClient = (*bodyCounter)(nil)

func (c *bodyCounter) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, next http.RoundTripper) (http.RoundTripper, error) {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(r)
			if err == nil {
				resp.Body = &countingBody{ReadCloser: resp.Body, c: c}
			}
			return resp, err
		}), nil
	}, nil
}

func (c *bodyCounter) closed() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.read...)
}

type countingBody struct {
	io.ReadCloser
	c    *bodyCounter
	n    int64
	once sync.Once
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *countingBody) Close() error {
	b.once.Do(func() {
		b.c.mu.Lock()
		b.c.read = append(b.c.read, b.n)
		b.c.mu.Unlock()
	})
	return b.ReadCloser.Close()
}

// connCountingServer is an httptest server that counts the TCP
// connections it accepted.
func connCountingServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestErrorBodyIsDrainedSoTheConnectionIsReused(t *testing.T) {
	for _, size := range []int{100 << 10, 512 << 10} {
		t.Run(strconv.Itoa(size>>10)+"KiB", func(t *testing.T) {
			var requests atomic.Int32
			body := strings.Repeat("x", size)
			srv, conns := connCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				requests.Add(1)
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, body)
			})
			h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
			for range 15 {
				err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
				require.Error(t, err)
				assert.Contains(t, err.Error(), "permanent_status")
			}
			assert.EqualValues(t, 15, requests.Load(), "15 batches, one attempt each")
			assert.EqualValues(t, 1, conns.Load(), "every attempt reused the first connection")
		})
	}
}

func TestEndlessErrorBodyIsAbandonedAtTheDrainBound(t *testing.T) {
	var requests atomic.Int32
	srv, conns := connCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		requests.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		chunk := []byte(strings.Repeat("y", 32<<10))
		// "Endless" for the client: far beyond any bound it may read. The
		// loop ends when the client closes the connection (or at 256 MiB).
		for range 8192 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	counter := &bodyCounter{}
	counterID := component.MustNewID("body_counter")
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Middlewares = []configmiddleware.Config{{ID: counterID}}
	h := startTracesWithExtensions(t, cfg, retrytest.NewAutoClock(start), map[component.ID]component.Component{counterID: counter})

	for range 5 {
		err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "permanent_status")
	}

	read := counter.closed()
	require.Len(t, read, 5, "every attempt's response was closed")
	for i, n := range read {
		assert.EqualValues(t, maxDrainBytes, n, "attempt %d read exactly the drain bound, then gave the body up", i+1)
	}
	assert.EqualValues(t, 5, requests.Load())
	assert.EqualValues(t, 5, conns.Load(), "a connection whose body was given up is not reused")
}

// headerAuth is an auth extension (extensionauth.HTTPClient) that writes
// the given headers on every request, as a real one would write
// Authorization.
type headerAuth struct {
	component.StartFunc
	component.ShutdownFunc
	headers map[string]string
}

var _ extensionauth.HTTPClient = (*headerAuth)(nil)

func (a *headerAuth) RoundTripper(next http.RoundTripper) (http.RoundTripper, error) {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for k, v := range a.headers {
			r.Header.Set(k, v)
		}
		return next.RoundTrip(r)
	}), nil
}

// headerMiddleware is a client middleware that rewrites a request the way
// a careless one could: its own Content-Type, a second idempotency key
// under a non-canonical name, and a Content-Length it does not know.
type headerMiddleware struct {
	component.StartFunc
	component.ShutdownFunc
}

var _ extensionmiddleware.HTTPClient = (*headerMiddleware)(nil)

func (*headerMiddleware) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, next http.RoundTripper) (http.RoundTripper, error) {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Content-Type", "text/plain")
			r.Header["idempotency-key"] = []string{"from-middleware"}
			r.Header.Set("X-Attempt", "99")
			r.ContentLength = -1 // unknown: would go out chunked
			return next.RoundTrip(r)
		}), nil
	}, nil
}

func TestExporterOwnsItsHeadersOnTheWire(t *testing.T) {
	srv := newBackend(t, reply(503), reply(200))
	authID := component.MustNewID("header_auth")
	mwID := component.MustNewID("header_middleware")
	cfg := testConfig(srv.URL)
	cfg.AttemptHeader = "X-Attempt"
	cfg.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	cfg.ClientConfig.Middlewares = []configmiddleware.Config{{ID: mwID}}
	h := startTracesWithExtensions(t, cfg, retrytest.NewAutoClock(start), map[component.ID]component.Component{
		authID: &headerAuth{headers: map[string]string{
			"Idempotency-Key":  "static",
			"Content-Encoding": "identity",
			"Authorization":    "Bearer from-auth-extension",
		}},
		mwID: &headerMiddleware{},
	})

	for range 3 {
		require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 2)))
	}
	got := srv.got()
	require.Len(t, got, 4, "the first batch was retried once")
	keys := map[string]bool{}
	for i, r := range got {
		assert.Equal(t, []string{"gzip"}, r.Header.Values("Content-Encoding"), "request %d", i)
		assert.Equal(t, []string{"application/x-protobuf"}, r.Header.Values("Content-Type"), "request %d", i)
		assert.Equal(t, []string{strconv.Itoa(len(r.Body))}, r.Header.Values("Content-Length"), "request %d", i)
		assert.Equal(t, "Bearer from-auth-extension", r.Header.Get("Authorization"), "request %d: the auth extension's credentials still arrive", i)
		key := r.Header.Values("Idempotency-Key")
		require.Len(t, key, 1, "request %d carries one key", i)
		_, err := uuid.Parse(key[0])
		require.NoError(t, err, "request %d: the payload's key, not %q", i, key[0])
		keys[key[0]] = true
		req := ptraceotlp.NewExportRequest()
		require.NoError(t, req.UnmarshalProto(gunzip(t, r.Body)), "request %d is the gzip-compressed payload", i)
		assert.Equal(t, 2, req.Traces().SpanCount())
	}
	assert.Equal(t, []string{"1"}, got[0].Header.Values("X-Attempt"))
	assert.Equal(t, []string{"2"}, got[1].Header.Values("X-Attempt"))
	assert.Equal(t, got[0].Header.Get("Idempotency-Key"), got[1].Header.Get("Idempotency-Key"), "a retry carries its payload's key")
	assert.Len(t, keys, 3, "one key per payload")
}

func TestExporterOwnsContentEncodingWhenUncompressed(t *testing.T) {
	srv := newBackend(t)
	authID := component.MustNewID("header_auth")
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Compression = "none"
	cfg.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	h := startTracesWithExtensions(t, cfg, retrytest.NewAutoClock(start), map[component.ID]component.Component{
		authID: &headerAuth{headers: map[string]string{"Content-Encoding": "gzip"}},
	})
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))
	got := srv.got()
	require.Len(t, got, 1)
	assert.Empty(t, got[0].Header.Values("Content-Encoding"), "an uncompressed payload goes out without Content-Encoding")
	req := ptraceotlp.NewExportRequest()
	require.NoError(t, req.UnmarshalProto(got[0].Body))
}

// TestIdleConnectionsPerHostFollowTheConsumers: with the queue's 10
// consumers sending at once, connections are kept for reuse, not closed
// after each request (Go's default keeps 2 idle per host), unless the
// config sets max_idle_conns_per_host.
func TestIdleConnectionsPerHostFollowTheConsumers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		queue     bool
		configure int
		want      int
	}{
		{name: "queue of 10 consumers", queue: true, want: 10},
		{name: "no queue", want: 1},
		{name: "configured", queue: true, configure: 3, want: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t)
			cfg := testConfig(srv.URL)
			if tc.queue {
				withMemoryQueue(cfg, 10)
			}
			if tc.configure > 0 {
				ka := confighttp.NewDefaultKeepaliveClientConfig()
				ka.MaxIdleConnsPerHost = tc.configure
				cfg.ClientConfig.Keepalive = configoptional.Some(ka)
			}
			require.NoError(t, cfg.Validate())
			e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type), tracesSignal, retrytest.NewAutoClock(start))
			require.NoError(t, err)
			require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
			defer func() { _ = e.shutdown(context.Background()) }()
			tr, ok := e.idleCloser.base.(*http.Transport)
			require.True(t, ok, "the innermost round tripper is the transport")
			assert.Equal(t, tc.want, tr.MaxIdleConnsPerHost)
		})
	}
}
