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
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
// are drawn at random below the kernel's ephemeral range, so that neither
// an outgoing connection's source port nor another listener on port 0 (a
// test backend) can take one between this check and the collector's bind,
// as happened with ports the kernel handed out. Another process drawing
// the same port at the same moment is still possible, but unlikely (one
// in thousands); without that range it falls back to ports the kernel
// picks. Within one process it never returns a port twice: tests that run
// in parallel draw their ports at once, and a port one test drew and
// closed again could be drawn by another before the first one's collector
// binds it. (Seen once, not confirmed: a test's collector was reported
// healthy 0.37 s after the test began and its receiver refused the first
// connection, as when its health port answers from another collector.)
func FreeAddrs(n int) ([]string, error) {
	issued.Lock()
	defer issued.Unlock()
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	low, high := unassignedPorts()
	out := make([]string, 0, n)
	for tries := 0; len(out) < n; tries++ {
		addr := "127.0.0.1:0"
		if high-low >= 100*n && tries < 1000 {
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(low+rand.IntN(high-low)))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if addr != "127.0.0.1:0" {
				continue
			}
			return nil, err
		}
		lns = append(lns, ln)
		got := ln.Addr().String()
		if issued.addrs[got] {
			continue
		}
		issued.addrs[got] = true
		out = append(out, got)
	}
	return out, nil
}

// issued is every address FreeAddrs returned in this process.
var issued = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// unassignedPorts is the range [low, high) of ports below the kernel's
// ephemeral range and above the well-known registered services this
// machine might run (10000); (0, 0) when the range cannot be read.
func unassignedPorts() (low, high int) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	var first, last int
	if _, err := fmt.Sscan(string(data), &first, &last); err != nil || first <= 10000 {
		return 0, 0
	}
	return 10000, first
}
