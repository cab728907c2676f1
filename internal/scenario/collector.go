// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	_ "embed"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// Exporter is one of the two exporters under comparison.
type Exporter string

const (
	// Ours is otlp_http_retry, built by `make build-collector`.
	Ours Exporter = "otlp_http_retry"
	// Core is the core otlp_http exporter, built by `make build-core-collector`.
	Core Exporter = "otlp_http"
)

// Short is the exporter's name in tables.
func (e Exporter) Short() string {
	if e == Ours {
		return "ours"
	}
	return "core"
}

// configTemplate is the collector configuration: otlp receiver → (batch)
// → the exporter under test, healthcheckv2, the collector's own metrics on
// a Prometheus pull endpoint.
//
//go:embed collector.yaml.tmpl
var configTemplate string

// Setup is how a collector is configured: the same for both exporters.
type Setup struct {
	// QueueSize and NumConsumers are the sending queue's; the defaults of
	// both exporters are 1000 and 10.
	QueueSize, NumConsumers int
	// BatchProcessor puts a batch processor (defaults) before the exporter.
	BatchProcessor bool
	// PersistentQueue puts the sending queue on file_storage.
	PersistentQueue bool
	// PacingOff sets otlp_http_retry's pacing::enabled to false (the core
	// exporter has no such setting).
	PacingOff bool
	// EncodeAt sets otlp_http_retry's encode_at (empty: its default, entry).
	EncodeAt string
	// QueueBatch gives both exporters sending_queue::batch with its
	// defaults (batching in the exporter, the collector's direction).
	QueueBatch bool
}

// DefaultSetup is both exporters' default queue, no batch processor.
func DefaultSetup() Setup { return Setup{QueueSize: 1000, NumConsumers: 10} }

// collectorConfig is what the template is rendered with.
type collectorConfig struct {
	demorun.CollectorConfig
	Setup
	ExporterType Exporter
	// Headers are the exporter's configured headers.
	Headers map[string]string
}

// Configs returns n collector configurations against backendURL, each
// with its own storage directory under dirs[i], with distinct free
// loopback ports picked at once (picking them one collector at a time
// while others start could hand two collectors the same port).
func Configs(backendURL string, dirs []string) ([]demorun.CollectorConfig, error) {
	addrs, err := demorun.FreeAddrs(3 * len(dirs))
	if err != nil {
		return nil, err
	}
	out := make([]demorun.CollectorConfig, len(dirs))
	for i, dir := range dirs {
		storage := filepath.Join(dir, "storage")
		if err := os.MkdirAll(storage, 0o700); err != nil {
			return nil, err
		}
		host, port, err := net.SplitHostPort(addrs[3*i+2])
		if err != nil {
			return nil, err
		}
		metricsPort, err := strconv.Atoi(port)
		if err != nil {
			return nil, err
		}
		out[i] = demorun.CollectorConfig{
			ReceiverEndpoint: addrs[3*i],
			BackendURL:       backendURL,
			StorageDir:       storage,
			HealthEndpoint:   addrs[3*i+1],
			MetricsHost:      host,
			MetricsPort:      metricsPort,
			LogLevel:         "warn",
		}
	}
	return out, nil
}

// Render writes the configuration of exp on cc into dir and returns its path.
func (s Setup) Render(dir string, exp Exporter, cc demorun.CollectorConfig, headers map[string]string) (string, error) {
	text, err := renderConfig(collectorConfig{CollectorConfig: cc, Setup: s, ExporterType: exp, Headers: headers})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "collector.yaml")
	return path, os.WriteFile(path, []byte(text), 0o600)
}

func renderConfig(c collectorConfig) (string, error) {
	return demorun.RenderTemplate(configTemplate, c)
}

// Running is a collector started for one run.
type Running struct {
	*demorun.Collector
	Config     demorun.CollectorConfig
	ConfigPath string
	// Pid is the collector's process, found in /proc by its config path.
	Pid int
}

// Launch renders the configuration on cc (see Configs) into dir, starts
// bin on it and waits until healthcheckv2 answers 200.
func (s Setup) Launch(ctx context.Context, bin, dir string, exp Exporter, cc demorun.CollectorConfig, headers map[string]string) (*Running, error) {
	path, err := s.Render(dir, exp, cc, headers)
	if err != nil {
		return nil, err
	}
	c, err := demorun.StartCollector(bin, path, filepath.Join(dir, "collector.log"))
	if err != nil {
		return nil, err
	}
	r := &Running{Collector: c, Config: cc, ConfigPath: path}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if werr := c.WaitHealthy(wctx, cc.HealthURL()); werr != nil {
		_, _ = c.Stop(10 * time.Second)
		return nil, werr
	}
	if r.Pid, err = FindPid(bin, "file:"+path); err != nil {
		_, _ = c.Stop(10 * time.Second)
		return nil, err
	}
	return r, nil
}
