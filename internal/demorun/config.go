// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package demorun is what the demo program (cmd/demo) and the end-to-end
// tests (internal/e2e) share: rendering the collector configuration,
// starting and stopping an ocb-built collector, sending OTLP load to it,
// scraping its Prometheus endpoint, and the throttled scenario with its
// report.
package demorun // import "github.com/otlphttpretry/otlphttpretry/internal/demorun"

import (
	_ "embed"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// DefaultConfigTemplate is the collector configuration of the demo: otlp
// receiver → memory_limiter → batch → otlp_http_retry (persistent queue on
// file_storage) and debug, healthcheckv2, and the collector's own metrics
// on a Prometheus pull endpoint.
//
//go:embed collector.yaml.tmpl
var DefaultConfigTemplate string

// CollectorConfig fills the configuration template.
type CollectorConfig struct {
	// ReceiverEndpoint is the otlp receiver's HTTP host:port.
	ReceiverEndpoint string
	// BackendURL is the exporter's endpoint (http://host:port).
	BackendURL string
	// StorageDir is the file_storage directory.
	StorageDir string
	// HealthEndpoint is healthcheckv2's HTTP host:port.
	HealthEndpoint string
	// MetricsHost and MetricsPort are the Prometheus pull endpoint.
	MetricsHost string
	MetricsPort int
	// IncludePermanentErrors makes healthcheckv2 answer 500 once a
	// component reports a permanent error.
	IncludePermanentErrors bool
	// LogLevel is the collector's log level (info by default).
	LogLevel string
}

// NewCollectorConfig picks free loopback ports for every listener.
func NewCollectorConfig(backendURL, storageDir string) (CollectorConfig, error) {
	addrs, err := FreeAddrs(3)
	if err != nil {
		return CollectorConfig{}, err
	}
	_, port, _ := net.SplitHostPort(addrs[2])
	var metricsPort int
	if _, err := fmt.Sscan(port, &metricsPort); err != nil {
		return CollectorConfig{}, err
	}
	return CollectorConfig{
		ReceiverEndpoint: addrs[0],
		BackendURL:       backendURL,
		StorageDir:       storageDir,
		HealthEndpoint:   addrs[1],
		MetricsHost:      "127.0.0.1",
		MetricsPort:      metricsPort,
		LogLevel:         "info",
	}, nil
}

// ReceiverURL is the base URL to send OTLP/HTTP to.
func (c CollectorConfig) ReceiverURL() string { return "http://" + c.ReceiverEndpoint }

// HealthURL is healthcheckv2's status URL.
func (c CollectorConfig) HealthURL() string { return "http://" + c.HealthEndpoint + "/status" }

// MetricsURL is the collector's Prometheus endpoint.
func (c CollectorConfig) MetricsURL() string {
	return fmt.Sprintf("http://%s/metrics", net.JoinHostPort(c.MetricsHost, fmt.Sprint(c.MetricsPort)))
}

// Render fills tmpl (DefaultConfigTemplate when empty) with c.
func (c CollectorConfig) Render(tmpl string) (string, error) {
	if tmpl == "" {
		tmpl = DefaultConfigTemplate
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	return RenderTemplate(tmpl, c)
}

// RenderTemplate renders a collector configuration template with data;
// a key the data lacks is an error.
func RenderTemplate(tmpl string, data any) (string, error) {
	t, err := template.New("collector.yaml").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", fmt.Errorf("parsing the collector config template: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering the collector config template: %w", err)
	}
	return b.String(), nil
}

// WriteFile renders tmpl into dir/collector.yaml and returns its path.
func (c CollectorConfig) WriteFile(dir, tmpl string) (string, error) {
	text, err := c.Render(tmpl)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "collector.yaml")
	return path, os.WriteFile(path, []byte(text), 0o600)
}

// FreeAddrs returns n distinct free 127.0.0.1:port addresses. The ports
// are free when checked; another process could take one before it is used.
func FreeAddrs(n int) ([]string, error) {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	out := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	return out, nil
}
