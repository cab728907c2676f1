// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"golang.org/x/net/http/httpguts"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// EncodingType is the wire encoding of the OTLP payload.
type EncodingType string

const (
	EncodingProto EncodingType = "proto"
	EncodingJSON  EncodingType = "json"
)

var _ encoding.TextUnmarshaler = (*EncodingType)(nil)

// UnmarshalText rejects anything but proto and json at config load.
func (e *EncodingType) UnmarshalText(text []byte) error {
	switch s := EncodingType(text); s {
	case EncodingProto, EncodingJSON:
		*e = s
		return nil
	default:
		return fmt.Errorf("invalid encoding %q: use proto or json", string(text))
	}
}

// UnauthorizedMode says what a 401 does to the exporter.
type UnauthorizedMode string

const (
	// UnauthorizedHold stops sending to the destination after a 401, but
	// for one probe every unauthorized::probe_interval, and drops nothing;
	// the first probe that succeeds resumes sending.
	UnauthorizedHold UnauthorizedMode = "hold"
	// UnauthorizedDrop drops the batch that got the 401 and keeps sending.
	UnauthorizedDrop UnauthorizedMode = "drop"
)

// TelemetryConfig tunes the exporter's own metrics.
type TelemetryConfig struct {
	// Detailed records the metrics the collector reserves for its `detailed`
	// telemetry level (the Retry-After parse time). The collector does not tell
	// components its telemetry level, so this mirrors it.
	Detailed bool `mapstructure:"detailed"`
}

// Config is the configuration of the otlp_http_retry exporter.
type Config struct {
	ClientConfig confighttp.ClientConfig              `mapstructure:",squash"`
	QueueConfig  configoptional.Optional[QueueConfig] `mapstructure:"sending_queue"`

	// TracesEndpoint, MetricsEndpoint and LogsEndpoint override Endpoint + "/v1/<signal>".
	TracesEndpoint  string `mapstructure:"traces_endpoint"`
	MetricsEndpoint string `mapstructure:"metrics_endpoint"`
	LogsEndpoint    string `mapstructure:"logs_endpoint"`

	// Encoding of the payload: proto (default) or json.
	Encoding EncodingType `mapstructure:"encoding"`
	// EncodeAt is where a batch is encoded and compressed: entry (default), auto or consumer.
	EncodeAt EncodeAt `mapstructure:"encode_at"`

	// Backoff is the counted exponential backoff for retryable failures without Retry-After.
	Backoff retry.BackoffConfig `mapstructure:"backoff"`
	// RetryAfter is the rate-limit path: how Retry-After is honoured.
	RetryAfter retry.RetryAfterConfig `mapstructure:"retry_after"`

	// IdempotencyHeader names the header that carries the payload's key; empty disables it.
	IdempotencyHeader string `mapstructure:"idempotency_header"`
	// AttemptHeader names an optional header carrying the attempt number (1-based); empty disables it.
	AttemptHeader string `mapstructure:"attempt_header"`

	// StatusOverrides maps an HTTP status code to "retry" or "drop".
	StatusOverrides map[string]string `mapstructure:"status_overrides"`

	// OnUnauthorized is what a 401 does: hold (default) or drop.
	OnUnauthorized UnauthorizedMode `mapstructure:"on_unauthorized"`
	// Unauthorized tunes the hold after a 401.
	Unauthorized retry.UnauthorizedConfig `mapstructure:"unauthorized"`
	// Outage bounds how long a destination may be down before data is dropped.
	Outage retry.OutageConfig `mapstructure:"outage"`
	// Pacing paces a destination that has throttled.
	Pacing retry.PacingConfig `mapstructure:"pacing"`

	Telemetry TelemetryConfig `mapstructure:"telemetry"`
}

var (
	_ component.Config    = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

// Unmarshal decodes the config and turns the core exporter's retry_on_failure
// section into a start-up error that says where its knobs went.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	if conf.IsSet("retry_on_failure") {
		return errors.New("retry_on_failure is the core otlp_http exporter's key; this exporter retries with its own loop: " +
			"use backoff (max_attempts, initial_interval, multiplier, max_interval, jitter) and retry_after (default, max, max_elapsed, jitter) instead")
	}
	if err := checkRawValues(conf); err != nil {
		return err
	}
	return conf.Unmarshal(cfg)
}

// minAttemptTimeout is the shortest `timeout` accepted: below it an attempt
// cannot reach any backend, and a value that small is nearly always a number
// written without a unit, which the decoder reads as nanoseconds.
const minAttemptTimeout = time.Millisecond

// Validate checks the whole config and names the key and the fix for every bad value.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.ClientConfig.Endpoint == "" && cfg.TracesEndpoint == "" && cfg.MetricsEndpoint == "" && cfg.LogsEndpoint == "" {
		errs = append(errs, errors.New("endpoint: at least one of endpoint, traces_endpoint, metrics_endpoint or logs_endpoint must be set"))
	}
	for _, e := range []struct{ key, value string }{
		{"endpoint", cfg.ClientConfig.Endpoint}, {"traces_endpoint", cfg.TracesEndpoint},
		{"metrics_endpoint", cfg.MetricsEndpoint}, {"logs_endpoint", cfg.LogsEndpoint},
	} {
		if e.value == "" {
			continue
		}
		u, err := parseEndpoint(e.value)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.key, err))
			continue
		}
		for _, err := range endpointCredentials(u) {
			errs = append(errs, fmt.Errorf("%s: %w", e.key, err))
		}
	}
	// The exporter turns exporterhelper's timeout off, so this is the only
	// limit on one attempt.
	if t := cfg.ClientConfig.Timeout; t < minAttemptTimeout {
		errs = append(errs, fmt.Errorf("timeout: %s must be at least %s: it limits each attempt, 0 or less leaves an attempt with no time limit, "+
			"and a number without a unit is read as nanoseconds; write a unit, e.g. 30s", t, minAttemptTimeout))
	}
	errs = append(errs, cfg.headerErrors()...)
	if _, ok := compressors[cfg.ClientConfig.Compression]; !ok {
		errs = append(errs, fmt.Errorf("compression: %q is not supported; use one of none, gzip, zlib, deflate, snappy, zstd", cfg.ClientConfig.Compression))
	}
	if cfg.batching() && cfg.EncodeAt != EncodeAtEntry {
		errs = append(errs, fmt.Errorf("encode_at: %s cannot be combined with sending_queue::batch: a batch is encoded, compressed and keyed once, as it is formed; "+
			"remove encode_at (or set it to entry), or remove sending_queue::batch", cfg.EncodeAt))
	}
	if cfg.IdempotencyHeader != "" && !httpguts.ValidHeaderFieldName(cfg.IdempotencyHeader) {
		errs = append(errs, fmt.Errorf("idempotency_header: %q is not a valid HTTP header name", cfg.IdempotencyHeader))
	} else if err := reservedHeaderError("idempotency_header", cfg.IdempotencyHeader, "Idempotency-Key"); err != nil {
		errs = append(errs, err)
	}
	if cfg.AttemptHeader != "" && !httpguts.ValidHeaderFieldName(cfg.AttemptHeader) {
		errs = append(errs, fmt.Errorf("attempt_header: %q is not a valid HTTP header name", cfg.AttemptHeader))
	} else if err := reservedHeaderError("attempt_header", cfg.AttemptHeader, "X-Attempt"); err != nil {
		errs = append(errs, err)
	}
	if cfg.AttemptHeader != "" && http.CanonicalHeaderKey(cfg.AttemptHeader) == http.CanonicalHeaderKey(cfg.IdempotencyHeader) {
		errs = append(errs, errors.New("attempt_header: must differ from idempotency_header"))
	}
	if _, err := cfg.overrides(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.encodeAtError(); err != nil {
		errs = append(errs, err)
	}
	switch cfg.OnUnauthorized {
	case UnauthorizedHold, UnauthorizedDrop:
	default:
		errs = append(errs, fmt.Errorf("on_unauthorized: %q is not valid; use hold or drop", cfg.OnUnauthorized))
	}
	return errors.Join(errs...)
}

// overrides parses status_overrides into the classifier's table. Keys are
// read in sorted order, so that its errors come out in the same order on
// every run.
func (cfg *Config) overrides() (map[int]retry.Action, error) {
	out := make(map[int]retry.Action, len(cfg.StatusOverrides))
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(cfg.StatusOverrides)) {
		value := cfg.StatusOverrides[key]
		code, ok := statusCode(key)
		if !ok {
			errs = append(errs, fmt.Errorf("status_overrides: key %q is not an HTTP status code (100-599): write three digits, e.g. 404", key))
			continue
		}
		if code >= 200 && code <= 299 {
			errs = append(errs, fmt.Errorf("status_overrides: %d is a success code and cannot be overridden", code))
			continue
		}
		switch value {
		case "retry":
			out[code] = retry.ActionRetry
		case "drop":
			out[code] = retry.ActionDrop
		default:
			errs = append(errs, fmt.Errorf("status_overrides: %d: %q is not an action; use retry or drop", code, value))
		}
	}
	return out, errors.Join(errs...)
}

// statusCode reads a plain three-digit status code from 100 to 599: no
// sign, no space, no leading zero (strconv.Atoi accepts "+404" and "0404").
func statusCode(key string) (int, bool) {
	if len(key) != 3 || key[0] < '1' || key[0] > '5' {
		return 0, false
	}
	code := 0
	for _, c := range []byte(key) {
		if c < '0' || c > '9' {
			return 0, false
		}
		code = code*10 + int(c-'0')
	}
	return code, true
}

// parseEndpoint parses an absolute http(s) URL. Its errors show the URL
// without user info, query or fragment, even when it does not parse: they
// may hold a credential (see redactRawURL).
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err // its text repeats the URL whole
		}
		return nil, fmt.Errorf("%q is not a valid URL: %w", redactRawURL(raw), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q must start with http:// or https://", redactRawURL(raw))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", redactRawURL(raw))
	}
	return u, nil
}

// compression types the exporter compresses with once, at the door.
var compressors = map[configcompression.Type]bool{
	"": true, configcompression.TypeGzip: true, configcompression.TypeZlib: true, configcompression.TypeDeflate: true,
	configcompression.TypeSnappy: true, configcompression.TypeZstd: true, "none": true,
}
