// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
)

// Options set up an Env.
type Options struct {
	// CollectorBin is the ocb-built collector.
	CollectorBin string
	// Dir holds the config, the collector log and the file_storage
	// directory; it must exist. Callers own it (t.TempDir, os.MkdirTemp).
	Dir string
	// Backend is the demo backend's script.
	Backend demobackend.Config
	// IncludePermanentErrors is healthcheckv2's component_health setting.
	IncludePermanentErrors bool
	// ConfigTemplate replaces DefaultConfigTemplate when not empty.
	ConfigTemplate string
	// StartTimeout bounds the wait for the collector to be healthy (default 30 s).
	StartTimeout time.Duration
}

// Env is a demo backend and a collector exporting to it.
type Env struct {
	Backend    *demobackend.Backend
	Collector  *Collector
	Config     CollectorConfig
	ConfigPath string
	// Started is when the collector answered healthy.
	Started time.Time
}

// Start starts the backend on a free loopback port, writes the collector
// config, starts the collector and waits until healthcheckv2 answers 200.
func Start(ctx context.Context, o Options) (*Env, error) {
	if o.StartTimeout == 0 {
		o.StartTimeout = 30 * time.Second
	}
	b := demobackend.New(o.Backend)
	if err := b.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	env := &Env{Backend: b}
	storage := filepath.Join(o.Dir, "storage")
	if err := os.MkdirAll(storage, 0o700); err != nil {
		b.Close()
		return nil, err
	}
	cfg, err := NewCollectorConfig(b.URL(), storage)
	if err != nil {
		b.Close()
		return nil, err
	}
	cfg.IncludePermanentErrors = o.IncludePermanentErrors
	env.Config = cfg
	if env.ConfigPath, err = cfg.WriteFile(o.Dir, o.ConfigTemplate); err != nil {
		b.Close()
		return nil, err
	}
	if env.Collector, err = StartCollector(o.CollectorBin, env.ConfigPath, filepath.Join(o.Dir, "collector.log")); err != nil {
		b.Close()
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	if err := env.Collector.WaitHealthy(wctx, cfg.HealthURL()); err != nil {
		_, _ = env.Stop()
		return nil, err
	}
	env.Started = time.Now()
	return env, nil
}

// Stop stops the collector (SIGTERM, 20 s grace) and the backend; it
// returns how long the collector took to stop.
func (e *Env) Stop() (time.Duration, error) {
	var d time.Duration
	var errs []error
	if e.Collector != nil {
		var err error
		d, err = e.Collector.Stop(20 * time.Second)
		errs = append(errs, err)
	}
	errs = append(errs, e.Backend.Close())
	return d, errors.Join(errs...)
}

// Scrape reads the collector's Prometheus endpoint.
func (e *Env) Scrape(ctx context.Context) (Metrics, error) {
	return Scrape(ctx, e.Config.MetricsURL())
}

// ScrapeUntil scrapes until cond holds or timeout passes, and returns the
// last scrape (with an error only when no scrape succeeded).
func (e *Env) ScrapeUntil(ctx context.Context, timeout time.Duration, cond func(Metrics) bool) (Metrics, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := e.Scrape(ctx)
		if err == nil && cond(m) || time.Now().After(deadline) || ctx.Err() != nil {
			return m, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitRecords waits until cond holds for the backend's records, the
// collector exits or ctx ends; it returns the records it last saw.
func (e *Env) WaitRecords(ctx context.Context, cond func([]demobackend.Record) bool) ([]demobackend.Record, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		changed := e.Backend.Changed()
		recs := e.Backend.Records()
		if cond(recs) {
			return recs, nil
		}
		select {
		case <-ctx.Done():
			return recs, ctx.Err()
		case <-e.Collector.Exited():
			return recs, errors.New("the collector exited; its log:\n" + e.Collector.LogTail(40))
		case <-changed:
		case <-tick.C:
		}
	}
}
