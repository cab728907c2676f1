// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// configStage says where the collector would reject a config.
type configStage string

const (
	stageOK        configStage = "ok"
	stageUnmarshal configStage = "unmarshal"
	stageValidate  configStage = "validate"
)

// loadTestdataConfig does what the collector does with an exporter's
// section: Sub(id), unmarshal into the default config, confmap.Validate.
func loadTestdataConfig(t *testing.T, name string) (*Config, configStage, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewIDWithName(metadata.Type, name)
	if name == "" {
		id = component.NewID(metadata.Type)
	}
	require.Truef(t, cm.IsSet(id.String()), "testdata/config.yaml has no entry %q", id)
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return cfg, stageUnmarshal, err
	}
	if err := confmap.Validate(cfg); err != nil {
		return cfg, stageValidate, err
	}
	return cfg, stageOK, nil
}

func TestConfigStruct(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(createDefaultConfig()))
}

func TestConfigDefaultEntryDecodesToDefaults(t *testing.T) {
	cfg, stage, err := loadTestdataConfig(t, "")
	assert.Equal(t, createDefaultConfig(), cfg)
	// The defaults carry no endpoint, and the exporter needs one.
	assert.Equal(t, stageValidate, stage)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "endpoint: at least one of endpoint, traces_endpoint, metrics_endpoint or logs_endpoint must be set")

	// The documented defaults of the keys this exporter adds.
	assert.Equal(t, 30*time.Second, cfg.ClientConfig.Timeout)
	assert.Equal(t, UnauthorizedHold, cfg.OnUnauthorized)
	assert.Equal(t, time.Minute, cfg.Unauthorized.ProbeInterval)
	assert.Zero(t, cfg.Outage.MaxDuration, "outage::max_duration: 0 means no limit")
	assert.Equal(t, retry.PacingConfig{Enabled: true, RateLimitHeaders: true, QuietPeriod: time.Minute}, cfg.Pacing)
	assert.Equal(t, retry.NewDefaultBackoffConfig(), cfg.Backoff)
	assert.Equal(t, retry.NewDefaultRetryAfterConfig(), cfg.RetryAfter)
	assert.Equal(t, "Idempotency-Key", cfg.IdempotencyHeader)
	assert.Empty(t, cfg.AttemptHeader)
	assert.Equal(t, EncodeAtEntry, cfg.EncodeAt)
}

func TestConfigFullEntryDecodesEveryKey(t *testing.T) {
	cfg, stage, err := loadTestdataConfig(t, "full")
	require.NoError(t, err)
	require.Equal(t, stageOK, stage)

	want := createDefaultConfig().(*Config)
	want.ClientConfig.Endpoint = "https://backend.example.com:4318"
	want.ClientConfig.Headers = configopaque.MapList{
		{Name: "Authorization", Value: "Bearer secret-token"},
		{Name: "X-Scope-OrgID", Value: "tenant-1"},
	}
	want.ClientConfig.Timeout = 12 * time.Second
	want.ClientConfig.TLS.CAFile = "/etc/ssl/backend-ca.pem"
	want.ClientConfig.TLS.MinVersion = "1.3"
	want.ClientConfig.TLS.ServerName = "backend.internal"
	want.ClientConfig.Compression = configcompression.TypeZstd
	storageID := component.MustNewID("file_storage")
	q := want.QueueConfig.Get()
	q.NumConsumers = 4
	q.QueueSize = 5000
	q.BlockOnOverflow = true
	q.StorageID = &storageID
	want.TracesEndpoint = "https://traces.example.com/otlp/v1/traces"
	want.MetricsEndpoint = "https://metrics.example.com/otlp/v1/metrics"
	want.LogsEndpoint = "https://logs.example.com/otlp/v1/logs"
	want.Encoding = EncodingJSON
	want.EncodeAt = EncodeAtAuto
	want.Backoff = retry.BackoffConfig{
		MaxAttempts:     8,
		InitialInterval: 250 * time.Millisecond,
		Multiplier:      1.5,
		MaxInterval:     10 * time.Second,
		Jitter:          100 * time.Millisecond,
	}
	want.RetryAfter = retry.RetryAfterConfig{
		Default:    10 * time.Second,
		Max:        120 * time.Second,
		MaxElapsed: time.Hour,
		Jitter:     time.Second,
	}
	want.IdempotencyHeader = "X-Request-Key"
	want.AttemptHeader = "X-Attempt"
	want.StatusOverrides = map[string]string{"500": "drop", "404": "retry"}
	want.OnUnauthorized = UnauthorizedDrop
	want.Unauthorized = retry.UnauthorizedConfig{ProbeInterval: 30 * time.Second}
	want.Outage = retry.OutageConfig{MaxDuration: 2 * time.Hour}
	want.Pacing = retry.PacingConfig{Enabled: false, RateLimitHeaders: false, QuietPeriod: 5 * time.Minute}
	want.Telemetry = TelemetryConfig{Detailed: true}
	assert.Equal(t, want, cfg)

	// Every key in /full differs from its default, so a key that silently
	// failed to decode would show up as a default here.
	def := createDefaultConfig().(*Config)
	assert.NotEqual(t, def.ClientConfig.Timeout, cfg.ClientConfig.Timeout)
	assert.NotEqual(t, def.ClientConfig.Compression, cfg.ClientConfig.Compression)
	assert.NotEqual(t, def.Backoff, cfg.Backoff)
	assert.NotEqual(t, def.RetryAfter, cfg.RetryAfter)
	assert.NotEqual(t, def.Encoding, cfg.Encoding)
	assert.NotEqual(t, def.OnUnauthorized, cfg.OnUnauthorized)
	assert.NotEqual(t, def.IdempotencyHeader, cfg.IdempotencyHeader)
	assert.NotEqual(t, def.Unauthorized, cfg.Unauthorized)
	assert.NotEqual(t, def.Outage, cfg.Outage)
	assert.NotEqual(t, def.Pacing, cfg.Pacing)

	// An unquoted YAML integer key decodes to the same override as a quoted one.
	overrides, err := cfg.overrides()
	require.NoError(t, err)
	assert.Equal(t, map[int]retry.Action{500: retry.ActionDrop, 404: retry.ActionRetry}, overrides)

	// Per-signal endpoints win over endpoint + /v1/<signal>.
	assert.Equal(t, "https://traces.example.com/otlp/v1/traces", tracesSignal.url(cfg))
	assert.Equal(t, "https://metrics.example.com/otlp/v1/metrics", metricsSignal.url(cfg))
	assert.Equal(t, "https://logs.example.com/otlp/v1/logs", logsSignal.url(cfg))
}

func TestConfigValidEdgeCases(t *testing.T) {
	t.Run("no_queue", func(t *testing.T) {
		cfg, stage, err := loadTestdataConfig(t, "no_queue")
		require.NoError(t, err)
		assert.Equal(t, stageOK, stage)
		assert.False(t, cfg.QueueConfig.HasValue(), "sending_queue::enabled: false must remove the queue")
	})
	t.Run("no_key_headers", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "no_key_headers")
		require.NoError(t, err)
		assert.Empty(t, cfg.IdempotencyHeader, "an empty idempotency_header disables the header")
		assert.Empty(t, cfg.AttemptHeader)
	})
	t.Run("traces_only", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "traces_only")
		require.NoError(t, err)
		assert.Equal(t, "http://localhost:4318/v1/traces", tracesSignal.url(cfg))
	})
	t.Run("compression_none", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "compression_none")
		require.NoError(t, err)
		assert.Equal(t, configcompression.Type("none"), cfg.ClientConfig.Compression)
	})
	t.Run("on_unauthorized_hold", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "on_unauthorized_hold")
		require.NoError(t, err)
		assert.Equal(t, UnauthorizedHold, cfg.OnUnauthorized)
	})
	t.Run("endpoint_query_not_credential", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "endpoint_query_not_credential")
		require.NoError(t, err)
		assert.Equal(t, "https://backend.example.com/otlp/v1/logs?tenant=acme&region=eu", logsSignal.url(cfg))
	})
	t.Run("headers_host_user_agent", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "headers_host_user_agent")
		require.NoError(t, err)
		assert.Len(t, cfg.ClientConfig.Headers, 2)
	})
	t.Run("duration_bounds", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "duration_bounds")
		require.NoError(t, err)
		assert.Equal(t, time.Millisecond, cfg.ClientConfig.Timeout)
		assert.Equal(t, 100, cfg.Backoff.MaxAttempts)
		assert.Equal(t, 24*time.Hour, cfg.Backoff.Jitter)
		assert.Equal(t, 8760*time.Hour, cfg.RetryAfter.MaxElapsed)
		assert.Equal(t, time.Second, cfg.Unauthorized.ProbeInterval)
		assert.Zero(t, cfg.Outage.MaxDuration, "a unitless 0 is no limit")
	})
	t.Run("batch", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "batch")
		require.NoError(t, err)
		require.True(t, cfg.batching())
		q := cfg.QueueConfig.Get()
		assert.True(t, q.WaitForResult)
		b := q.Batch.Get()
		assert.Equal(t, 500*time.Millisecond, b.FlushTimeout)
		assert.Equal(t, exporterhelper.RequestSizerTypeBytes, b.Sizer)
		assert.Equal(t, int64(1_000_000), b.MinSize)
		assert.Equal(t, int64(4_000_000), b.MaxSize)
		assert.Equal(t, []string{"X-Scope-OrgID"}, b.Partition.MetadataKeys)
		assert.Equal(t, 50, b.Partition.CacheSize)
		assert.Equal(t, 2*time.Minute, b.Partition.IdleTimeout)
		// exporterhelper's queue never batches: batches are formed before it.
		h := cfg.helperQueueConfig()
		assert.False(t, h.Get().Batch.HasValue())
	})
	t.Run("batch_sizer_from_queue", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "batch_sizer_from_queue")
		require.NoError(t, err)
		b := cfg.QueueConfig.Get().Batch.Get()
		assert.Equal(t, exporterhelper.RequestSizerTypeRequests, b.Sizer, "the queue's sizer, as exporterhelper decodes it")
		assert.Equal(t, int64(50), b.MinSize)
	})
	t.Run("batch_default", func(t *testing.T) {
		cfg, _, err := loadTestdataConfig(t, "batch_default")
		require.NoError(t, err)
		require.True(t, cfg.batching(), "an empty batch section turns batching on")
		assert.Equal(t, newDefaultBatchConfig(), *cfg.QueueConfig.Get().Batch.Get())
		assert.Equal(t, 200*time.Millisecond, cfg.QueueConfig.Get().Batch.Get().FlushTimeout)
		assert.Equal(t, int64(8192), cfg.QueueConfig.Get().Batch.Get().MinSize)
	})
	t.Run("endpoint_with_trailing_slash", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		cfg.ClientConfig.Endpoint = "https://backend.example.com/otlp/"
		require.NoError(t, confmap.Validate(cfg))
		assert.Equal(t, "https://backend.example.com/otlp/v1/metrics", metricsSignal.url(cfg))
	})
}

func TestConfigRejectsBadValuesNamingKeyAndFix(t *testing.T) {
	tests := []struct {
		name  string
		stage configStage
		// want are substrings of the error: the key, then the fix.
		want []string
	}{
		{"bad_batch_sizer", stageUnmarshal, []string{"spans"}},
		{"bad_batch_max_size", stageValidate, []string{"sending_queue::batch::max_size: 500 is less than min_size (1000)", "raise max_size"}},
		{"bad_batch_flush_timeout", stageValidate, []string{"sending_queue::batch::flush_timeout: 0s must be positive"}},
		{"bad_batch_flush_timeout_unitless", stageUnmarshal, []string{"sending_queue::batch::flush_timeout: 200 has no unit", "e.g. 30s"}},
		{"bad_batch_max_bytes_tiny", stageValidate, []string{"sending_queue::batch::max_size: 100 bytes cannot hold a request", "at least 1024"}},
		{"bad_batch_min_above_queue", stageValidate, []string{"sending_queue::batch::min_size: 5000 is more than queue_size (1000)", "items"}},
		{"bad_batch_encode_at", stageValidate, []string{"encode_at: auto cannot be combined with sending_queue::batch", "remove encode_at"}},
		{"bad_batch_wait_persistent", stageValidate, []string{"sending_queue::wait_for_result", "persistent queue", "remove wait_for_result or storage"}},
		{"bad_backoff_attempts", stageValidate, []string{"backoff::max_attempts", "must be at least 1"}},
		{"bad_initial_interval", stageValidate, []string{"backoff::initial_interval", "must be at least 100ms"}},
		{"bad_multiplier", stageValidate, []string{"backoff::multiplier", "0.5 must be at least 1"}},
		{"bad_max_interval", stageValidate, []string{"backoff::max_interval", "must be at least initial_interval (2s)"}},
		{"bad_jitter", stageValidate, []string{"backoff::jitter", "must not be negative"}},
		{"bad_retry_after_default", stageValidate, []string{"retry_after::default", "must not exceed retry_after::max (5m0s)"}},
		{"bad_retry_after_negative_default", stageValidate, []string{"retry_after::default", "must not be negative"}},
		{"bad_retry_after_max", stageValidate, []string{"retry_after::max", "must be at least 1s"}},
		{"bad_max_elapsed", stageValidate, []string{"retry_after::max_elapsed", "14m0s", "at least three capped waits", "3 x retry_after::max = 15m0s"}},
		{"bad_ra_jitter", stageValidate, []string{"retry_after::jitter", "must be between 0s and 5s"}},
		{"bad_override_code", stageValidate, []string{"status_overrides", `"5xx"`, "not an HTTP status code (100-599)"}},
		{"bad_override_range", stageValidate, []string{"status_overrides", `"600"`, "(100-599)"}},
		{"bad_override_action", stageValidate, []string{"status_overrides", "503", `"ignore"`, "use retry or drop"}},
		{"bad_override_2xx", stageValidate, []string{"status_overrides", "204", "success code and cannot be overridden"}},
		{"bad_on_unauthorized", stageValidate, []string{"on_unauthorized", `"retry"`, "use hold or drop"}},
		{"bad_idempotency_header", stageValidate, []string{"idempotency_header", `"Idempotency Key"`, "not a valid HTTP header name"}},
		{"bad_attempt_header", stageValidate, []string{"attempt_header", `"X-Attempt:"`, "not a valid HTTP header name"}},
		{"same_headers", stageValidate, []string{"attempt_header", "must differ from idempotency_header"}},
		{"bad_encoding", stageUnmarshal, []string{"encoding", `"yaml"`, "use proto or json"}},
		{"bad_compression", stageValidate, []string{"compression", `"lz4"`, "use one of none, gzip, zlib, deflate, snappy, zstd"}},
		// confighttp's own type rejects names it does not know at unmarshal.
		{"unknown_compression", stageUnmarshal, []string{"compression", `"brotli"`}},
		{"no_endpoint", stageValidate, []string{"endpoint", "at least one of endpoint, traces_endpoint, metrics_endpoint or logs_endpoint must be set"}},
		{"bad_endpoint_scheme", stageValidate, []string{"endpoint", `"localhost:4318"`, "must start with http:// or https://"}},
		{"bad_traces_endpoint_scheme", stageValidate, []string{"traces_endpoint", "ftp://", "must start with http:// or https://"}},
		{"bad_endpoint_host", stageValidate, []string{"endpoint", "has no host"}},
		{"retry_on_failure", stageUnmarshal, []string{
			"retry_on_failure", "core otlp_http exporter's key",
			"use backoff (max_attempts, initial_interval, multiplier, max_interval, jitter)",
			"retry_after (default, max, max_elapsed, jitter)",
		}},
		{"unknown_key", stageUnmarshal, []string{"max_attempts"}},

		// timeout bounds each attempt.
		{"bad_timeout_zero", stageValidate, []string{"timeout: 0s must be at least 1ms", "no time limit", "write a unit, e.g. 30s"}},
		{"bad_timeout_negative", stageValidate, []string{"timeout: -5s must be at least 1ms", "write a unit, e.g. 30s"}},
		{"bad_timeout_tiny", stageValidate, []string{"timeout: 500µs must be at least 1ms", "write a unit, e.g. 30s"}},
		// A number without a unit is nanoseconds to mapstructure: refused before it decodes.
		{"bad_timeout_unitless", stageUnmarshal, []string{"timeout: 30 has no unit", "read as 30 nanoseconds", "write a unit, e.g. 30s"}},
		{"bad_max_elapsed_unitless", stageUnmarshal, []string{"retry_after::max_elapsed: 3600 has no unit", "write a unit, e.g. 30s"}},
		{"bad_max_interval_out_of_range", stageUnmarshal, []string{"backoff::max_interval", `"3000000h"`, "not a duration", "e.g. 30s"}},

		{"bad_multiplier_nan", stageValidate, []string{"backoff::multiplier: NaN must be a finite number between 1 and 100"}},
		{"bad_multiplier_inf", stageValidate, []string{"backoff::multiplier: +Inf must be a finite number between 1 and 100"}},
		{"bad_multiplier_huge", stageValidate, []string{"backoff::multiplier: 1000 must be at most 100"}},
		{"bad_retry_after_overflow", stageValidate, []string{
			"retry_after::max: 1000000h0m0s must be at most 24h0m0s",
			"retry_after::max_elapsed: 1s must allow at least three capped waits (3 x retry_after::max = more than 2562047h47m16.854775807s)",
		}},
		{"bad_max_elapsed_negative", stageValidate, []string{"retry_after::max_elapsed: -1s must not be negative"}},
		{"bad_max_interval_huge", stageValidate, []string{"backoff::max_interval: 1000000h0m0s must be at most 24h0m0s"}},
		{"bad_backoff_jitter_large", stageValidate, []string{"backoff::jitter: 1m0s must not exceed backoff::max_interval (30s)", "lower jitter or raise max_interval"}},
		// 1e30 decodes into an int as math.MinInt64 on amd64: refused before it decodes.
		{"bad_max_attempts_float_huge", stageUnmarshal, []string{"backoff::max_attempts: 1e+30 is too large", "write a whole number of attempts, e.g. 5"}},
		{"bad_max_attempts_fraction", stageUnmarshal, []string{"backoff::max_attempts: 3.5 is not a whole number", "write a whole number of attempts, e.g. 5"}},
		{"bad_max_attempts_large", stageValidate, []string{"backoff::max_attempts: 1000 must be at most 100"}},

		{"bad_override_plus", stageValidate, []string{"status_overrides", `"+404"`, "not an HTTP status code (100-599)", "three digits"}},
		{"bad_override_leading_zero", stageValidate, []string{"status_overrides", `"0404"`, "not an HTTP status code (100-599)"}},
		{"bad_override_space", stageValidate, []string{"status_overrides", `" 404"`, "not an HTTP status code (100-599)"}},

		{"bad_headers_idempotency", stageValidate, []string{`headers: "idempotency-key"`, "the exporter sets Idempotency-Key on every request", "payload's identity", "remove it from headers"}},
		{"bad_headers_custom_idempotency", stageValidate, []string{`headers: "X-REQUEST-KEY"`, "the exporter sets X-Request-Key on every request", "payload's identity", "remove it from headers"}},
		{"bad_headers_attempt", stageValidate, []string{`headers: "x-attempt"`, "the exporter sets X-Attempt on every request", "attempt number", "remove it from headers"}},
		{"bad_headers_content_type", stageValidate, []string{`headers: "content-type"`, "the exporter sets Content-Type on every request", "describes the body", "remove it from headers"}},
		{"bad_headers_content_encoding", stageValidate, []string{`headers: "Content-Encoding"`, "the exporter sets Content-Encoding on every request", "describes the body", "remove it from headers"}},
		{"bad_headers_content_length", stageValidate, []string{`headers: "CONTENT-LENGTH"`, "Content-Length", "describes the body", "remove it from headers"}},
		{"bad_headers_list_form", stageValidate, []string{`headers: "Content-Type"`, "remove it from headers"}},
		{"bad_idempotency_header_reserved", stageValidate, []string{"idempotency_header", `"content-type"`, "describes the body", "pick a header of its own, e.g. Idempotency-Key"}},
		{"bad_idempotency_header_authorization", stageValidate, []string{"idempotency_header", `"Authorization"`, "carries credentials", "pick a header of its own"}},
		{"bad_attempt_header_reserved", stageValidate, []string{"attempt_header", `"host"`, "pick a header of its own, e.g. X-Attempt"}},

		{"bad_endpoint_query_api_key", stageValidate, []string{`endpoint: query parameter "api_key" looks like a credential`, "url.full", "move it to headers"}},
		{"bad_traces_endpoint_query_token", stageValidate, []string{`traces_endpoint: query parameter "Access_Token" looks like a credential`, "move it to headers"}},
		{"bad_metrics_endpoint_query_suffix_key", stageValidate, []string{`metrics_endpoint: query parameter "ingest_key" looks like a credential`}},
		{"bad_logs_endpoint_query_sig", stageValidate, []string{`logs_endpoint: query parameter "sig" looks like a credential`}},
		{"bad_endpoint_query_x_api_key", stageValidate, []string{`endpoint: query parameter "X-API-KEY" looks like a credential`}},
		{"bad_endpoint_query_token_inside", stageValidate, []string{`endpoint: query parameter "mytokenvalue" looks like a credential`}},
		{"bad_endpoint_query_semicolon", stageValidate, []string{`endpoint: query parameter "password" looks like a credential`}},
		{"bad_endpoint_userinfo", stageValidate, []string{"endpoint: user info in the URL is a credential", "print-config", "Authorization", "remove it from the endpoint"}},
		{"bad_endpoint_userinfo_user_only", stageValidate, []string{"endpoint: user info in the URL is a credential"}},

		{"bad_probe_interval", stageValidate, []string{"unauthorized::probe_interval: 500ms must be at least 1s"}},
		{"bad_probe_interval_huge", stageValidate, []string{"unauthorized::probe_interval: 48h0m0s must be at most 24h0m0s"}},
		{"bad_outage_negative", stageValidate, []string{"outage::max_duration: -1m0s must not be negative (0 means no limit)"}},
		{"bad_outage_huge", stageValidate, []string{"outage::max_duration: 10000h0m0s must be at most 8760h0m0s; use 0 for no limit"}},
		{"bad_pacing_quiet_period", stageValidate, []string{"pacing::quiet_period: 100ms must be between 1s and 24h"}},
		{"bad_encode_at", stageUnmarshal, []string{"encode_at", `"later"`, "use entry, auto or consumer"}},
		{"bad_encode_at_persistent", stageValidate, []string{"encode_at: consumer", "persistent queue (sending_queue::storage) stores bytes", "use entry or auto"}},
		{"bad_encode_at_bytes", stageValidate, []string{"encode_at: consumer", "in bytes", "use entry or auto, or another sending_queue::sizer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stage, err := loadTestdataConfig(t, tt.name)
			require.Error(t, err)
			assert.Equal(t, tt.stage, stage, "rejected at the wrong stage: %v", err)
			for _, s := range tt.want {
				assert.Contains(t, err.Error(), s)
			}
			// A credential is named, never shown.
			assert.NotContains(t, err.Error(), "abc-secret")
		})
	}
}

// Each rejected entry in testdata carries exactly one mistake: fixing it
// must leave a config that validates, so the table above tests what it says.
func TestConfigRejectedEntriesHaveOneMistake(t *testing.T) {
	fixes := map[string]func(*Config){
		"bad_backoff_attempts":   func(c *Config) { c.Backoff.MaxAttempts = 1 },
		"bad_multiplier":         func(c *Config) { c.Backoff.Multiplier = 1 },
		"bad_jitter":             func(c *Config) { c.Backoff.Jitter = 0 },
		"bad_max_elapsed":        func(c *Config) { c.RetryAfter.MaxElapsed = 15 * time.Minute },
		"bad_ra_jitter":          func(c *Config) { c.RetryAfter.Jitter = 5 * time.Second },
		"bad_override_action":    func(c *Config) { c.StatusOverrides["503"] = "drop" },
		"bad_on_unauthorized":    func(c *Config) { c.OnUnauthorized = UnauthorizedDrop },
		"bad_idempotency_header": func(c *Config) { c.IdempotencyHeader = "Idempotency-Key" },
		"same_headers":           func(c *Config) { c.AttemptHeader = "X-Attempt" },
		"bad_compression":        func(c *Config) { c.ClientConfig.Compression = configcompression.TypeGzip },
		"bad_endpoint_scheme":    func(c *Config) { c.ClientConfig.Endpoint = "http://localhost:4318" },

		"bad_timeout_zero":                      func(c *Config) { c.ClientConfig.Timeout = 30 * time.Second },
		"bad_timeout_tiny":                      func(c *Config) { c.ClientConfig.Timeout = 30 * time.Second },
		"bad_multiplier_nan":                    func(c *Config) { c.Backoff.Multiplier = 2 },
		"bad_multiplier_inf":                    func(c *Config) { c.Backoff.Multiplier = 2 },
		"bad_multiplier_huge":                   func(c *Config) { c.Backoff.Multiplier = 100 },
		"bad_retry_after_overflow":              func(c *Config) { c.RetryAfter.Max, c.RetryAfter.MaxElapsed = 24*time.Hour, 72*time.Hour },
		"bad_max_elapsed_negative":              func(c *Config) { c.RetryAfter.MaxElapsed = 15 * time.Minute },
		"bad_max_interval_huge":                 func(c *Config) { c.Backoff.MaxInterval = 24 * time.Hour },
		"bad_backoff_jitter_large":              func(c *Config) { c.Backoff.Jitter = c.Backoff.MaxInterval },
		"bad_max_attempts_large":                func(c *Config) { c.Backoff.MaxAttempts = 100 },
		"bad_override_plus":                     func(c *Config) { c.StatusOverrides = map[string]string{"404": "drop"} },
		"bad_override_leading_zero":             func(c *Config) { c.StatusOverrides = map[string]string{"404": "drop"} },
		"bad_override_space":                    func(c *Config) { c.StatusOverrides = map[string]string{"404": "drop"} },
		"bad_headers_idempotency":               func(c *Config) { c.ClientConfig.Headers = nil },
		"bad_headers_custom_idempotency":        func(c *Config) { c.IdempotencyHeader = "Idempotency-Key" },
		"bad_headers_attempt":                   func(c *Config) { c.AttemptHeader = "" },
		"bad_headers_content_type":              func(c *Config) { c.ClientConfig.Headers = nil },
		"bad_headers_list_form":                 func(c *Config) { c.ClientConfig.Headers = nil },
		"bad_idempotency_header_reserved":       func(c *Config) { c.IdempotencyHeader = "Idempotency-Key" },
		"bad_attempt_header_reserved":           func(c *Config) { c.AttemptHeader = "X-Attempt" },
		"bad_endpoint_query_api_key":            func(c *Config) { c.ClientConfig.Endpoint = "https://backend.example.com/otlp" },
		"bad_traces_endpoint_query_token":       func(c *Config) { c.TracesEndpoint = "https://traces.example.com/v1/traces?tenant=a" },
		"bad_endpoint_userinfo":                 func(c *Config) { c.ClientConfig.Endpoint = "https://backend.example.com/otlp" },
		"bad_metrics_endpoint_query_suffix_key": func(c *Config) { c.MetricsEndpoint = "" },
		"bad_probe_interval":                    func(c *Config) { c.Unauthorized.ProbeInterval = time.Second },
		"bad_outage_huge":                       func(c *Config) { c.Outage.MaxDuration = 0 },
		"bad_pacing_quiet_period":               func(c *Config) { c.Pacing.QuietPeriod = time.Minute },
		"bad_encode_at_persistent":              func(c *Config) { c.EncodeAt = EncodeAtEntry },
		"bad_encode_at_bytes":                   func(c *Config) { c.EncodeAt = EncodeAtEntry },
		"bad_batch_max_size":                    func(c *Config) { c.QueueConfig.Get().Batch.Get().MaxSize = 1000 },
		"bad_batch_flush_timeout":               func(c *Config) { c.QueueConfig.Get().Batch.Get().FlushTimeout = time.Second },
		"bad_batch_max_bytes_tiny":              func(c *Config) { c.QueueConfig.Get().Batch.Get().MaxSize = 1024 },
		"bad_batch_min_above_queue":             func(c *Config) { c.QueueConfig.Get().Batch.Get().MinSize = 1000 },
		"bad_batch_encode_at":                   func(c *Config) { c.EncodeAt = EncodeAtEntry },
		"bad_batch_wait_persistent":             func(c *Config) { c.QueueConfig.Get().WaitForResult = false },
	}
	for name, fix := range fixes {
		t.Run(name, func(t *testing.T) {
			cfg, stage, err := loadTestdataConfig(t, name)
			require.Equal(t, stageValidate, stage)
			require.Error(t, err)
			fix(cfg)
			assert.NoError(t, confmap.Validate(cfg))
		})
	}
}

// Validate's message lists its problems in the same order every time: the
// endpoint keys in a fixed order, then status_overrides by code, so that a
// start-up error (and a test that reads it) does not change from run to run.
func TestConfigValidateMessageOrderIsFixed(t *testing.T) {
	cfg, stage, err := loadTestdataConfig(t, "many_mistakes")
	require.Equal(t, stageValidate, stage)
	require.Error(t, err)
	first := err.Error()
	for range 200 {
		require.Equal(t, first, confmap.Validate(cfg).Error())
	}

	// The order a reader expects: the endpoint keys as documented, the
	// header problems in headers: order, the overrides by key.
	msg := cfg.Validate().Error()
	for _, pair := range [][2]string{
		{"endpoint: \"localhost:4318\"", "traces_endpoint: "},
		{"traces_endpoint: ", "metrics_endpoint: "},
		{"metrics_endpoint: ", "logs_endpoint: "},
		{`headers: "Content-Encoding"`, `headers: "Content-Type"`},
		{`headers: "Content-Type"`, `headers: "Idempotency-Key"`},
		{`"+404"`, `"0404"`},
		{`"0404"`, "204 is a success code"},
		{"204 is a success code", `418: "maybe"`},
		{`418: "maybe"`, `503: "ignore"`},
		{`503: "ignore"`, `"5xx"`},
		{`"5xx"`, `"600"`},
	} {
		before, after := strings.Index(msg, pair[0]), strings.Index(msg, pair[1])
		require.NotEqual(t, -1, before, "%q missing from %s", pair[0], msg)
		require.NotEqual(t, -1, after, "%q missing from %s", pair[1], msg)
		assert.Less(t, before, after, "%q should come before %q in %s", pair[0], pair[1], msg)
	}
}

// What the YAML and the decoder make of odd values, pinned so that a
// change in either shows up here rather than as a silent config change.
func TestConfigDecodeOfOddValues(t *testing.T) {
	t.Run("max_attempts 1e3 is a whole number and decodes to 1000", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		err := confmap.NewFromStringMap(map[string]any{"backoff": map[string]any{"max_attempts": 1e3}}).Unmarshal(cfg)
		require.NoError(t, err)
		assert.Equal(t, 1000, cfg.Backoff.MaxAttempts)
	})
	t.Run("max_attempts as a string does not decode", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		err := confmap.NewFromStringMap(map[string]any{"backoff": map[string]any{"max_attempts": "5"}}).Unmarshal(cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "max_attempts")
	})
	t.Run("a unitless 0 is zero", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		err := confmap.NewFromStringMap(map[string]any{"outage": map[string]any{"max_duration": 0}}).Unmarshal(cfg)
		require.NoError(t, err)
		assert.Zero(t, cfg.Outage.MaxDuration)
	})
	t.Run("a duration beyond int64 nanoseconds", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		err := confmap.NewFromStringMap(map[string]any{"timeout": 1e30}).Unmarshal(cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "timeout: 1e+30 has no unit")
	})
	t.Run("a huge integer max_attempts", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		err := confmap.NewFromStringMap(map[string]any{"backoff": map[string]any{"max_attempts": uint64(math.MaxUint64)}}).Unmarshal(cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "backoff::max_attempts: 18446744073709551615 is too large")
	})
}

// nestedConf turns "a::b::c" = v into {"a": {"b": {"c": v}}}, beside the
// endpoint every config needs.
func nestedConf(key string, v any) *confmap.Conf {
	parts := strings.Split(key, "::")
	raw := map[string]any{parts[len(parts)-1]: v}
	for i := len(parts) - 2; i >= 0; i-- {
		raw = map[string]any{parts[i]: raw}
	}
	if _, ok := raw["endpoint"]; !ok {
		raw["endpoint"] = "http://localhost:4318"
	}
	return confmap.NewFromStringMap(raw)
}

// TestEveryDurationKeyNeedsAUnit: the duration keys are found from Config
// itself (its own sections, confighttp's squashed keys, optional sections
// such as keepalive and sending_queue::batch), every one is a real key of
// a time.Duration field, and a bare number in any of them is refused
// before it decodes as nanoseconds.
func TestEveryDurationKeyNeedsAUnit(t *testing.T) {
	for _, want := range []string{
		"timeout", "keepalive::idle_conn_timeout", "sending_queue::batch::flush_timeout",
		"backoff::initial_interval", "backoff::max_interval", "backoff::jitter",
		"retry_after::default", "retry_after::max", "retry_after::max_elapsed", "retry_after::jitter",
		"unauthorized::probe_interval", "outage::max_duration", "pacing::quiet_period",
	} {
		assert.Contains(t, durationKeys, want)
	}
	for _, key := range durationKeys {
		t.Run(key, func(t *testing.T) {
			// A real key: "7s" there sets exactly one Duration field to 7 s.
			def := createDefaultConfig().(*Config)
			cfg := createDefaultConfig().(*Config)
			require.NoError(t, nestedConf(key, "7s").Unmarshal(cfg))
			assert.Equal(t, 1, durationsChangedTo(reflect.ValueOf(def).Elem(), reflect.ValueOf(cfg).Elem(), 7*time.Second), "%s names one time.Duration", key)

			err := nestedConf(key, 30).Unmarshal(createDefaultConfig().(*Config))
			require.Error(t, err)
			assert.Contains(t, err.Error(), key+": 30 has no unit")
		})
	}
}

// durationsChangedTo counts the time.Duration values that differ between
// a and b and equal want in b, walking structs and pointers (also the
// unexported inside of configoptional.Optional).
func durationsChangedTo(a, b reflect.Value, want time.Duration) int {
	switch {
	case a.Type() == reflect.TypeFor[time.Duration]():
		if a.Int() != b.Int() && time.Duration(b.Int()) == want {
			return 1
		}
		return 0
	case a.Kind() == reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if !b.IsNil() {
				return durationsChangedTo(reflect.New(b.Type().Elem()).Elem(), b.Elem(), want)
			}
			return 0
		}
		return durationsChangedTo(a.Elem(), b.Elem(), want)
	case a.Kind() == reflect.Struct:
		n := 0
		for i := range a.NumField() {
			n += durationsChangedTo(a.Field(i), b.Field(i), want)
		}
		return n
	}
	return 0
}
