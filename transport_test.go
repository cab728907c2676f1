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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
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
	core, logs := observer.New(zapcore.DebugLevel)
	h := &harness{clock: clock, tel: componenttest.NewTelemetry(), logs: logs,
		host: &statusHost{Host: extHost{Host: componenttest.NewNopHost(), ext: ext}}}
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	require.NoError(t, cfg.Validate())
	exp, err := newFactory(clock).CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), h.host))
	h.exp, h.id = exp, set.ID.String()
	t.Cleanup(func() {
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
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, body)
			})
			h := startTraces(t, testConfig(srv.URL), retrytest.NewAutoClock(start))
			for range 3 {
				err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
				require.Error(t, err)
				assert.Contains(t, err.Error(), "retries_exhausted")
			}
			assert.EqualValues(t, 15, requests.Load(), "3 batches, 5 attempts each")
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
		w.WriteHeader(http.StatusServiceUnavailable)
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

	err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "retries_exhausted")

	read := counter.closed()
	require.Len(t, read, 5, "every attempt's response was closed")
	for i, n := range read {
		assert.EqualValues(t, maxDrainBytes, n, "attempt %d read exactly the drain bound, then gave the body up", i+1)
	}
	assert.EqualValues(t, 5, requests.Load())
	assert.EqualValues(t, 5, conns.Load(), "a connection whose body was given up is not reused")
}
