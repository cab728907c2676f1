// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command demo shows the otlp_http_retry exporter riding out a throttling
// backend: it starts a demo OTLP/HTTP backend that answers 429 with
// Retry-After for a while, runs an ocb-built collector exporting to it,
// sends a bounded trace load through the collector, and reports what the
// backend received and what the collector's own metrics say.
//
//	go run ./cmd/demo -collector build/otelcol-retry/otelcol-retry
//
// The collector config, its log and the queue's storage go to a temporary
// directory that is deleted at the end; -keep keeps it, -log-dir DIR puts
// it under DIR and keeps it.
//
// It exits 0 only if every span arrived exactly once.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

func main() {
	os.Exit(run())
}

func run() int {
	def := demorun.DefaultThrottle("build/otelcol-retry/otelcol-retry", "")
	collector := flag.String("collector", def.CollectorBin, "path of the ocb-built collector (make build-collector)")
	batches := flag.Int("batches", def.Load.Batches, "batches of spans to send")
	spans := flag.Int("spans", def.Load.SpansPerBatch, "spans per batch")
	interval := flag.Duration("interval", def.Load.Interval, "time between batches")
	throttleFor := flag.Duration("throttle-for", def.ThrottleFor, "how long the backend answers 429 after its first request")
	retryAfter := flag.Int("retry-after", def.RetryAfter, "Retry-After the backend sends with a 429, in seconds")
	timeout := flag.Duration("timeout", def.DeliveryTimeout, "how long to wait for every span, from the load's start")
	keep := flag.Bool("keep", false, "keep the run's directory (collector config, collector log, queue storage) in the system's temporary directory")
	logDir := flag.String("log-dir", "", "keep the run's directory under `DIR` (created if missing; each run gets a new directory in it)")
	printConfig := flag.Bool("print-config", false, "print the collector config template and exit")
	flag.Parse()

	if *printConfig {
		fmt.Print(demorun.DefaultConfigTemplate)
		return 0
	}

	work, err := demorun.NewWorkDir(*logDir, *keep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 2
	}
	if work.Kept {
		fmt.Println("working directory (kept):", work.Path)
	}
	defer work.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s := def
	s.CollectorBin, s.Dir, s.Kept, s.KeepHint = *collector, work.Path, work.Kept, "run with -keep to keep it"
	s.Load.Batches, s.Load.SpansPerBatch, s.Load.Interval = *batches, *spans, *interval
	s.ThrottleFor, s.RetryAfter, s.DeliveryTimeout = *throttleFor, *retryAfter, *timeout
	s.Progress = progressWriter{start: time.Now()}

	res, err := s.Run(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		if res != nil {
			res.WriteReport(os.Stdout)
		}
		return 2
	}
	res.WriteReport(os.Stdout)
	if res.Err() != nil {
		return 1
	}
	return 0
}

// progressWriter prefixes progress lines with the time since the demo started.
type progressWriter struct{ start time.Time }

func (p progressWriter) Write(b []byte) (int, error) {
	fmt.Printf("[%5.1fs] %s", time.Since(p.start).Seconds(), b)
	return len(b), nil
}
