// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"net/http"
	"strings"
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
		owned = append(owned, ownedHeader{http.CanonicalHeaderKey(cfg.IdempotencyHeader),
			"it carries the payload's identity (idempotency_header: one key per payload, the same on every retry), " +
				"and a fixed value would make every payload look like a duplicate of the first"})
	}
	if cfg.AttemptHeader != "" {
		owned = append(owned, ownedHeader{http.CanonicalHeaderKey(cfg.AttemptHeader),
			"it carries the attempt number (attempt_header)"})
	}
	owned = append(owned,
		ownedHeader{"Content-Type", "it describes the body (its encoding, from encoding:)"},
		ownedHeader{"Content-Encoding", "it describes the body (its compression, from compression:)"},
		ownedHeader{"Content-Length", "it describes the body (its size)"},
	)
	return owned
}

// headerErrors refuses headers: entries that would replace a header the
// exporter sets, in the order of headers:.
func (cfg *Config) headerErrors() []error {
	owned := cfg.ownedHeaders()
	var errs []error
	for _, pair := range cfg.ClientConfig.Headers {
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
}

// reservedHeaderError refuses a header name for key that already has a job.
func reservedHeaderError(key, name, example string) error {
	why, ok := reservedHeaders[http.CanonicalHeaderKey(name)]
	if !ok {
		return nil
	}
	return fmt.Errorf("%s: %q names a header that already has a job (%s); pick a header of its own, e.g. %s", key, name, why, example)
}
