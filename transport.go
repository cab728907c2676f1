// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// idleCloserID names the in-process middleware below; it never appears in
// a user's config.
var idleCloserID = component.MustNewID("otlp_http_retry_idle_closer")

// idleCloser is the innermost client middleware. It keeps confighttp's
// bare transport, so that Shutdown can close its idle keep-alive
// connections (the client confighttp builds wraps that transport in layers,
// otelhttp, that do not pass CloseIdleConnections on), and it wraps that
// transport in lastHop, which sees each request as it goes on the wire.
type idleCloser struct {
	component.StartFunc
	component.ShutdownFunc
	base  http.RoundTripper
	scrub *scrubber
}

var _ extensionmiddleware.HTTPClient = (*idleCloser)(nil)

func (c *idleCloser) GetHTTPRoundTripper(context.Context) (extensionmiddleware.WrapHTTPRoundTripperFunc, error) {
	return func(_ context.Context, rt http.RoundTripper) (http.RoundTripper, error) {
		c.base = rt
		return &lastHop{next: rt, scrub: c.scrub}, nil
	}, nil
}

func (c *idleCloser) closeIdle() {
	if ci, ok := c.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// lastHop runs after every other layer of the client: confighttp's
// headers, the auth extension and the user's middlewares. It puts back the
// headers the exporter owns, so that what goes on the wire is the
// exporter's whatever an earlier layer set; it tells the scrubber the
// credentials the request carries (an auth extension's Authorization and
// Proxy-Authorization, user info turned into Basic auth by net/http); and
// it scrubs transport errors, so that otelhttp's span records them
// scrubbed too.
type lastHop struct {
	next  http.RoundTripper
	scrub *scrubber
}

func (h *lastHop) RoundTrip(req *http.Request) (*http.Response, error) {
	if owned, ok := req.Context().Value(ownedHeadersKey{}).(*ownedHeaders); ok && !owned.hold(req) {
		req = req.Clone(req.Context())
		owned.apply(req)
	}
	if err := unsendable(req.Header); err != nil {
		// net/http would refuse it too, as if the network had failed:
		// say what it is.
		return nil, &retry.ConfigError{Err: err}
	}
	h.scrub.learn(append(req.Header.Values("Authorization"), req.Header.Values("Proxy-Authorization")...)...)
	resp, err := h.next.RoundTrip(req)
	if err != nil {
		return resp, h.scrub.scrubError(err)
	}
	return resp, nil
}

// unsendable reports a header that no request can carry, as it goes on
// the wire: whatever set it (headers: is checked by Validate; an auth
// extension or a middleware may still set one). The error names the header
// and its setter, never the value.
func unsendable(h http.Header) error {
	for name, values := range h {
		if !httpguts.ValidHeaderFieldName(name) {
			return fmt.Errorf("header name %q is not an HTTP token: fix the exporter's headers, or the auth extension or middleware that set it", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("the value of header %q holds a CR, LF or another control character (value not shown): "+
					"fix the exporter's headers, or the auth extension or middleware that set it", name)
			}
		}
	}
	return nil
}

type ownedHeadersKey struct{}

// ownedHeaders are the headers the exporter owns on the wire (the
// idempotency and attempt headers, Content-Type, Content-Encoding) and the
// body's length. send sets them on its request and carries them to
// lastHop in the request's context.
type ownedHeaders struct {
	names, values [4]string // an empty value: the header must be absent
	n             int
	length        int64
}

func (o *ownedHeaders) add(name, value string) {
	o.names[o.n], o.values[o.n] = http.CanonicalHeaderKey(name), value
	o.n++
}

// hold reports whether req already carries exactly the owned headers and
// length, under their canonical names only: then nothing earlier in the
// chain changed them, and the request goes on as it is (no clone).
func (o *ownedHeaders) hold(req *http.Request) bool {
	if req.ContentLength != o.length {
		return false
	}
	if _, ok := req.Header["Content-Length"]; ok {
		return false
	}
	for i, name := range o.names[:o.n] {
		v := req.Header[name]
		switch {
		case o.values[i] == "" && len(v) != 0, o.values[i] != "" && (len(v) != 1 || v[0] != o.values[i]):
			return false
		}
	}
	// A middleware may have written another spelling through the map.
	for k := range req.Header {
		if http.CanonicalHeaderKey(k) != k {
			return false
		}
	}
	return true
}

// apply sets the owned headers on req, replacing every header of the same
// name whatever its case, and sets the body's length (the transport
// writes Content-Length from it).
func (o *ownedHeaders) apply(req *http.Request) {
	for i, name := range o.names[:o.n] {
		deleteHeader(req.Header, name)
		if o.values[i] != "" {
			req.Header.Set(name, o.values[i])
		}
	}
	deleteHeader(req.Header, "Content-Length")
	req.ContentLength = o.length
}

// deleteHeader deletes name from h, also under non-canonical spellings
// that a middleware may have set through the map.
func deleteHeader(h http.Header, name string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

func withOwnedHeaders(ctx context.Context, o *ownedHeaders) context.Context {
	return context.WithValue(ctx, ownedHeadersKey{}, o)
}

// newClient builds the HTTP client from confighttp with compression off
// (payloads are compressed once, at the door) and redirects never followed.
// idlePerHost is how many idle connections to the destination the
// transport keeps when the config does not say (max_idle_conns_per_host):
// Go's default of 2 against a queue's 10 consumers would open a new
// connection for most requests.
func newClient(ctx context.Context, cfg confighttp.ClientConfig, host component.Host, set component.TelemetrySettings, scrub *scrubber, idlePerHost int) (*http.Client, *idleCloser, error) {
	cfg.Compression = ""
	closer := &idleCloser{scrub: scrub}
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
	if t, ok := closer.base.(*http.Transport); ok && t.MaxIdleConnsPerHost == 0 && idlePerHost > 0 {
		t.MaxIdleConnsPerHost = idlePerHost
	}
	return client, closer, nil
}
