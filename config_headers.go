// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// ownedHeader is a header the exporter sets on every request.
type ownedHeader struct {
	name string // as the exporter writes it
	why  string
}

// ownedHeaders lists the headers the exporter sets on every request. A
// headers: entry of the same name (any case) would replace it: confighttp
// sets headers: in its round-tripper, after the exporter's own.
func (cfg *Config) ownedHeaders() []ownedHeader {
	var owned []ownedHeader
	if cfg.IdempotencyHeader != "" {
		owned = append(owned, ownedHeader{cfg.IdempotencyHeader,
			"it carries the payload's identity (idempotency_header: one key per payload, the same on every retry), " +
				"and a fixed value would make every payload look like a duplicate of the first"})
	}
	if cfg.AttemptHeader != "" {
		owned = append(owned, ownedHeader{cfg.AttemptHeader,
			"it carries the attempt number (attempt_header)"})
	}
	owned = append(owned,
		ownedHeader{"Content-Type", "it describes the body (its encoding, from encoding:)"},
		ownedHeader{"Content-Encoding", "it describes the body (its compression, from compression:)"},
		ownedHeader{"Content-Length", "it describes the body (its size)"},
	)
	return owned
}

// headerErrors refuses headers: entries that can never be sent (a name
// that is not an HTTP token, a value with CR, LF or another control
// character) or that would replace a header the exporter sets, in the
// order of headers:. No message shows a value.
func (cfg *Config) headerErrors() []error {
	owned := cfg.ownedHeaders()
	var errs []error
	for _, pair := range cfg.ClientConfig.Headers {
		if !httpguts.ValidHeaderFieldName(pair.Name) {
			errs = append(errs, fmt.Errorf("headers: %q is not a valid HTTP header name: a name is one token of letters, digits and !#$%%&'*+-.^_`|~, "+
				"without spaces or colons (e.g. X-Api-Key); no request could carry it", pair.Name))
			continue
		}
		if !httpguts.ValidHeaderFieldValue(string(pair.Value)) {
			errs = append(errs, fmt.Errorf("headers: %q: the value holds a CR, LF or another control character, which no request can carry "+
				"(a line break would end the header); remove it (a trailing newline from a file or an environment variable is the usual cause)", pair.Name))
			continue
		}
		for _, o := range owned {
			if strings.EqualFold(pair.Name, o.name) {
				errs = append(errs, fmt.Errorf("headers: %q: the exporter sets %s on every request: %s; remove it from headers", pair.Name, o.name, o.why))
				break
			}
		}
	}
	return errs
}

// reservedHeaders are names idempotency_header and attempt_header must not
// take, because the request already uses them for something else.
var reservedHeaders = map[string]string{
	"Content-Type":        "it describes the body",
	"Content-Encoding":    "it describes the body",
	"Content-Length":      "it describes the body",
	"Transfer-Encoding":   "it describes the body",
	"Host":                "it names the destination",
	"User-Agent":          "the exporter sets it to the collector's name and version",
	"Authorization":       "it carries credentials",
	"Proxy-Authorization": "it carries credentials",
	"Cookie":              "it carries credentials",
	"Connection":          "it is a hop-by-hop header the HTTP client manages",
	"Keep-Alive":          "it is a hop-by-hop header the HTTP client manages",
	"Proxy-Connection":    "it is a hop-by-hop header the HTTP client manages",
	"Te":                  "it is a hop-by-hop header the HTTP client manages",
	"Trailer":             "it is a hop-by-hop header the HTTP client manages",
	"Upgrade":             "it is a hop-by-hop header the HTTP client manages",
	"Expect":              "the HTTP client manages it",
	// What HTTP gives a meaning to in a request (RFC 9110, 9111, 7239,
	// 9218): a proxy or the backend would act on it.
	"Date":                "HTTP gives it a meaning (the message's date)",
	"Accept":              "HTTP gives it a meaning (content negotiation)",
	"Accept-Encoding":     "HTTP gives it a meaning (content negotiation)",
	"Accept-Language":     "HTTP gives it a meaning (content negotiation)",
	"Accept-Charset":      "HTTP gives it a meaning (content negotiation)",
	"Range":               "HTTP gives it a meaning (a partial request)",
	"If-Match":            "HTTP gives it a meaning (a conditional request)",
	"If-None-Match":       "HTTP gives it a meaning (a conditional request)",
	"If-Modified-Since":   "HTTP gives it a meaning (a conditional request)",
	"If-Unmodified-Since": "HTTP gives it a meaning (a conditional request)",
	"If-Range":            "HTTP gives it a meaning (a conditional request)",
	"Cache-Control":       "HTTP gives it a meaning (caching)",
	"Pragma":              "HTTP gives it a meaning (caching)",
	"Via":                 "proxies set it",
	"Forwarded":           "proxies set it",
	"X-Forwarded-For":     "proxies set it",
	"X-Forwarded-Host":    "proxies set it",
	"X-Forwarded-Proto":   "proxies set it",
	"Max-Forwards":        "HTTP gives it a meaning (a hop limit)",
	"Origin":              "HTTP gives it a meaning (the request's origin)",
	"Referer":             "HTTP gives it a meaning (the referring resource)",
	"From":                "HTTP gives it a meaning (the user's mailbox)",
	"Priority":            "HTTP gives it a meaning (RFC 9218)",
	// What tracing gives a meaning to: the collector's own client spans
	// (otelhttp) propagate context in these.
	"Traceparent":           "trace context propagation uses it",
	"Tracestate":            "trace context propagation uses it",
	"Baggage":               "trace context propagation uses it",
	"B3":                    "B3 trace propagation uses it",
	"X-B3-Traceid":          "B3 trace propagation uses it",
	"X-B3-Spanid":           "B3 trace propagation uses it",
	"X-B3-Parentspanid":     "B3 trace propagation uses it",
	"X-B3-Sampled":          "B3 trace propagation uses it",
	"X-B3-Flags":            "B3 trace propagation uses it",
	"Uber-Trace-Id":         "Jaeger trace propagation uses it",
	"X-Amzn-Trace-Id":       "AWS X-Ray trace propagation uses it",
	"X-Cloud-Trace-Context": "Google Cloud trace propagation uses it",
	"Grpc-Trace-Bin":        "gRPC trace propagation uses it",
	"Sw8":                   "SkyWalking trace propagation uses it",
}

// reservedHeaderError refuses a header name for key that already has a job.
func reservedHeaderError(key, name, example string) error {
	canonical := http.CanonicalHeaderKey(name)
	why, ok := reservedHeaders[canonical]
	if !ok && strings.HasPrefix(canonical, "Content-") {
		why, ok = "it describes the body", true
	}
	if !ok {
		return nil
	}
	return fmt.Errorf("%s: %q names a header that already has a job (%s); pick a header of its own, e.g. %s", key, name, why, example)
}
