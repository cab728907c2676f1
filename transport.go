package otlphttpretry

import (
	"context"
	"maps"
	"net/http"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
)

// idleCloserID names the in-process middleware below; it never appears in
// a user's config.
var idleCloserID = component.MustNewID("otlp_http_retry_idle_closer")

// idleCloser is a client middleware that keeps confighttp's innermost
// transport, so that Shutdown can close its idle keep-alive connections:
// the client confighttp builds wraps that transport in layers (otelhttp)
// that do not pass CloseIdleConnections on.
type idleCloser struct {
	component.StartFunc
	component.ShutdownFunc
	base http.RoundTripper
}

var _ extensionmiddleware.HTTPClient = (*idleCloser)(nil)

func (c *idleCloser) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, rt http.RoundTripper) (http.RoundTripper, error) {
		c.base = rt
		return rt, nil
	}, nil
}

func (c *idleCloser) closeIdle() {
	if ci, ok := c.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// newClient builds the HTTP client from confighttp with compression off
// (payloads are compressed once, at the door) and redirects never followed.
func newClient(ctx context.Context, cfg confighttp.ClientConfig, host component.Host, set component.TelemetrySettings) (*http.Client, *idleCloser, error) {
	cfg.Compression = ""
	closer := &idleCloser{}
	// Middlewares apply in reverse, so the last one wraps the bare transport.
	cfg.Middlewares = append(append([]configmiddleware.Config(nil), cfg.Middlewares...), configmiddleware.Config{ID: idleCloserID})
	extensions := maps.Clone(host.GetExtensions())
	if extensions == nil {
		extensions = map[component.ID]component.Component{}
	}
	extensions[idleCloserID] = closer
	client, err := cfg.ToClient(ctx, extensions, set)
	if err != nil {
		return nil, nil, err
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return client, closer, nil
}
