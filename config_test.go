package otlphttpretry

import (
	"path/filepath"
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
		{"bad_batch", stageValidate, []string{"sending_queue::batch", "changes their identity", "remove sending_queue::batch", "batch processor before this exporter"}},
		{"bad_backoff_attempts", stageValidate, []string{"backoff::max_attempts", "must be at least 1"}},
		{"bad_initial_interval", stageValidate, []string{"backoff::initial_interval", "must be positive"}},
		{"bad_multiplier", stageValidate, []string{"backoff::multiplier", "0.5 must be at least 1"}},
		{"bad_max_interval", stageValidate, []string{"backoff::max_interval", "must be at least initial_interval (2s)"}},
		{"bad_jitter", stageValidate, []string{"backoff::jitter", "must not be negative"}},
		{"bad_retry_after_default", stageValidate, []string{"retry_after::default", "must not exceed retry_after::max (5m0s)"}},
		{"bad_retry_after_negative_default", stageValidate, []string{"retry_after::default", "must not be negative"}},
		{"bad_retry_after_max", stageValidate, []string{"retry_after::max", "must be positive"}},
		{"bad_max_elapsed", stageValidate, []string{"retry_after::max_elapsed", "14m0s", "at least three capped waits", "3 x retry_after::max = 15m0s"}},
		{"bad_ra_jitter", stageValidate, []string{"retry_after::jitter", "must be between 0s and 5s"}},
		{"bad_override_code", stageValidate, []string{"status_overrides", `"5xx"`, "not an HTTP status code (100-599)"}},
		{"bad_override_range", stageValidate, []string{"status_overrides", `"600"`, "(100-599)"}},
		{"bad_override_action", stageValidate, []string{"status_overrides", "503", `"ignore"`, "use retry or drop"}},
		{"bad_override_2xx", stageValidate, []string{"status_overrides", "204", "success code and cannot be overridden"}},
		{"bad_on_unauthorized", stageValidate, []string{"on_unauthorized", `"retry"`, "use halt or drop"}},
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stage, err := loadTestdataConfig(t, tt.name)
			require.Error(t, err)
			assert.Equal(t, tt.stage, stage, "rejected at the wrong stage: %v", err)
			for _, s := range tt.want {
				assert.Contains(t, err.Error(), s)
			}
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
