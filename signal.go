// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"net/url"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

const (
	protobufContentType = "application/x-protobuf"
	jsonContentType     = "application/json"
)

// signal is what differs between traces, metrics and logs.
type signal struct {
	name string // data_type attribute and URL path element
	// items names what the signal counts ("spans"), rejectedField the
	// partial success field that counts the rejected ones.
	items, rejectedField string
	// endpoint returns the per-signal endpoint override from the config.
	endpoint func(*Config) string
	// rejected parses an OTLP export response and returns how many items
	// the backend rejected in a partial success, and its message.
	rejected func(body []byte, contentType string) (int64, string, error)
	// codec splits and re-encodes the signal's requests for the batcher.
	codec batchCodec
}

var (
	tracesSignal = signal{
		name:          "traces",
		items:         "spans",
		rejectedField: "rejected_spans",
		endpoint:      func(c *Config) string { return c.TracesEndpoint },
		codec:         tracesCodec,
		rejected: func(body []byte, ct string) (int64, string, error) {
			r := ptraceotlp.NewExportResponse()
			err := unmarshalResponse(body, ct, r.UnmarshalProto, r.UnmarshalJSON)
			return r.PartialSuccess().RejectedSpans(), r.PartialSuccess().ErrorMessage(), err
		},
	}
	metricsSignal = signal{
		name:          "metrics",
		items:         "data points",
		rejectedField: "rejected_data_points",
		endpoint:      func(c *Config) string { return c.MetricsEndpoint },
		codec:         metricsCodec,
		rejected: func(body []byte, ct string) (int64, string, error) {
			r := pmetricotlp.NewExportResponse()
			err := unmarshalResponse(body, ct, r.UnmarshalProto, r.UnmarshalJSON)
			return r.PartialSuccess().RejectedDataPoints(), r.PartialSuccess().ErrorMessage(), err
		},
	}
	logsSignal = signal{
		name:          "logs",
		items:         "log records",
		rejectedField: "rejected_log_records",
		endpoint:      func(c *Config) string { return c.LogsEndpoint },
		codec:         logsCodec,
		rejected: func(body []byte, ct string) (int64, string, error) {
			r := plogotlp.NewExportResponse()
			err := unmarshalResponse(body, ct, r.UnmarshalProto, r.UnmarshalJSON)
			return r.PartialSuccess().RejectedLogRecords(), r.PartialSuccess().ErrorMessage(), err
		},
	}
)

func unmarshalResponse(body []byte, contentType string, fromProto, fromJSON func([]byte) error) error {
	if len(body) == 0 {
		return nil
	}
	switch mediaType(contentType) {
	case protobufContentType:
		if err := fromProto(body); err != nil {
			return fmt.Errorf("parsing protobuf export response: %w", err)
		}
	case jsonContentType:
		if err := fromJSON(body); err != nil {
			return fmt.Errorf("parsing json export response: %w", err)
		}
	}
	return nil
}

// url is the signal's destination: its override, or endpoint with
// /v1/<signal> appended to its path (a query string stays a query string).
// An endpoint that does not parse is returned as it is, for the caller's
// url.Parse to report.
func (s signal) url(cfg *Config) string {
	if u := s.endpoint(cfg); u != "" {
		return u
	}
	base, err := url.Parse(cfg.ClientConfig.Endpoint)
	if err != nil {
		return cfg.ClientConfig.Endpoint
	}
	return base.JoinPath("v1", s.name).String()
}
