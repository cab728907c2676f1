// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
)

// MetricPrefix is the prefix of the exporter's own metrics on the
// collector's Prometheus endpoint.
const MetricPrefix = "otelcol_otlp_http_retry_"

// Throttle is the demo scenario: a bounded load through the collector to a
// backend that answers 429 + Retry-After for a while.
type Throttle struct {
	CollectorBin string
	// Dir must exist; the config, the log and the queue's storage go there.
	Dir string
	// Kept says Dir outlives the run; only then does the report name the
	// files in it. KeepHint, for a Dir that goes, says how to keep it
	// (cmd/demo: "run with -keep to keep it").
	Kept     bool
	KeepHint string
	Load     Load
	// ThrottleFor and RetryAfter (seconds) script the backend.
	ThrottleFor time.Duration
	RetryAfter  int
	// DeliveryTimeout bounds the wait for every span, from the load's start.
	DeliveryTimeout time.Duration
	// Progress, if not nil, receives a line per step.
	Progress io.Writer
}

// DefaultThrottle is the demo's scenario: 20 batches of 10 spans over
// about 5 s; the backend throttles for 10 s with Retry-After: 4.
func DefaultThrottle(bin, dir string) Throttle {
	return Throttle{
		CollectorBin:    bin,
		Dir:             dir,
		Load:            Load{Batches: 20, SpansPerBatch: 10, Interval: 250 * time.Millisecond},
		ThrottleFor:     10 * time.Second,
		RetryAfter:      4,
		DeliveryTimeout: 60 * time.Second,
	}
}

// ThrottleResult is what the scenario observed.
type ThrottleResult struct {
	Scenario Throttle
	Load     LoadResult
	// Records and Summary are the backend's, taken after the collector stopped.
	Records []demobackend.Record
	Summary demobackend.Summary
	// Missing, Duplicated and Unexpected count spans: sent but never
	// accepted, accepted more than once, accepted but never sent.
	Missing, Duplicated, Unexpected int
	// DeliveredAfter is the time from the load's start until every span had
	// been accepted; DeliveryErr is set when that did not happen in time.
	DeliveredAfter time.Duration
	DeliveryErr    error
	// Metrics is the collector's Prometheus endpoint, scraped after delivery.
	Metrics Metrics
	// LogLines are the collector's log lines about throttling, drops and errors.
	LogLines []string
	// CollectorLog and ConfigPath are the collector's full log and its
	// config, in Scenario.Dir.
	CollectorLog string
	ConfigPath   string
	// ShutdownTook is how long the collector took to exit after SIGTERM.
	ShutdownTook time.Duration
	ShutdownErr  error
}

// ExactlyOnce reports whether every span sent was accepted exactly once and nothing else was.
func (r *ThrottleResult) ExactlyOnce() bool {
	return r.DeliveryErr == nil && r.Load.Spans() > 0 && r.Missing == 0 && r.Duplicated == 0 && r.Unexpected == 0
}

// Run runs the scenario. An error means it could not run (no collector,
// the load was refused); what the exporter did is judged from the result.
func (s Throttle) Run(ctx context.Context) (*ThrottleResult, error) {
	progress := func(format string, args ...any) {
		if s.Progress != nil {
			fmt.Fprintf(s.Progress, format+"\n", args...)
		}
	}
	progress("starting the demo backend and the collector (%s)", s.CollectorBin)
	env, err := Start(ctx, Options{
		CollectorBin: s.CollectorBin,
		Dir:          s.Dir,
		Backend:      demobackend.Config{Mode: demobackend.ModeThrottle, ThrottleFor: s.ThrottleFor, RetryAfter: s.RetryAfter},
	})
	if err != nil {
		return nil, err
	}
	res := &ThrottleResult{Scenario: s, CollectorLog: env.Collector.LogPath, ConfigPath: env.ConfigPath}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = env.Stop()
		}
	}()
	progress("collector healthy; backend at %s, receiver at %s, metrics at %s", env.Backend.URL(), env.Config.ReceiverURL(), env.Config.MetricsURL())

	progress("sending %d batches of %d spans, one every %s", s.Load.Batches, s.Load.SpansPerBatch, s.Load.Interval)
	res.Load, err = s.Load.Send(ctx, env.Config.ReceiverURL())
	if err != nil {
		return res, fmt.Errorf("sending the load: %w", err)
	}
	progress("load sent; waiting (at most %s from the load's start) until the backend has every span", s.DeliveryTimeout)

	want := make(map[string]bool, len(res.Load.SpanIDs))
	for _, id := range res.Load.SpanIDs {
		want[id] = true
	}
	wctx, cancel := context.WithDeadline(ctx, res.Load.Start.Add(s.DeliveryTimeout))
	_, res.DeliveryErr = env.WaitRecords(wctx, func(recs []demobackend.Record) bool {
		n := 0
		for id := range demobackend.AcceptedSpans(recs) {
			if want[id] {
				n++
			}
		}
		return n == len(want)
	})
	cancel()
	if res.DeliveryErr == nil {
		res.DeliveredAfter = time.Since(res.Load.Start)
		progress("every span arrived %.1f s after the load started", res.DeliveredAfter.Seconds())
	} else {
		res.DeliveryErr = fmt.Errorf("not every span arrived within %s: %w", s.DeliveryTimeout, res.DeliveryErr)
		progress("%v", res.DeliveryErr)
	}

	// The backend records a request before the exporter has read the
	// answer and counted the attempt: scrape until the exporter has counted
	// as many attempts as the backend saw requests (at most 5 s).
	res.Metrics, err = env.ScrapeUntil(ctx, 5*time.Second, func(m Metrics) bool {
		return int(m.Sum(MetricPrefix+"attempts", nil)) >= len(env.Backend.Records())
	})
	if err != nil {
		progress("scraping %s: %v", env.Config.MetricsURL(), err)
	}
	progress("stopping the collector (SIGTERM)")
	res.ShutdownTook, res.ShutdownErr = env.Stop()
	stopped = true

	res.Records = env.Backend.Records()
	res.Summary = demobackend.Summarize(res.Records)
	accepted := demobackend.AcceptedSpans(res.Records)
	for id := range want {
		switch n := accepted[id]; {
		case n == 0:
			res.Missing++
		case n > 1:
			res.Duplicated += n - 1
		}
	}
	for id, n := range accepted {
		if !want[id] {
			res.Unexpected += n
		}
	}
	res.LogLines = env.Collector.LogLines(interestingLogLine)
	return res, nil
}

// interestingLogLine keeps the collector's lines about throttling, drops,
// warnings and errors.
func interestingLogLine(line string) bool {
	for _, s := range []string{"Holding", "Hold ended", "Dropped", "halted", "401", "\twarn\t", "\terror\t", "panic"} {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// Err summarises every way the result falls short of exactly-once delivery
// without a request inside a refused window; nil when it does not.
func (r *ThrottleResult) Err() error {
	var errs []error
	if r.DeliveryErr != nil {
		errs = append(errs, r.DeliveryErr)
	}
	if r.Missing > 0 || r.Duplicated > 0 || r.Unexpected > 0 {
		errs = append(errs, fmt.Errorf("spans: %d missing, %d duplicated, %d unexpected", r.Missing, r.Duplicated, r.Unexpected))
	}
	s := r.Summary
	if s.AnyInsideRefusedWindow {
		errs = append(errs, fmt.Errorf("%d requests arrived inside a refused window", s.InsideRefusedWindow))
	}
	if s.DuplicateKeysAccepted > 0 {
		errs = append(errs, fmt.Errorf("%d idempotency keys accepted more than once", s.DuplicateKeysAccepted))
	}
	if s.KeysWithChangedBody > 0 {
		errs = append(errs, fmt.Errorf("%d keys were sent with different bodies", s.KeysWithChangedBody))
	}
	if s.MissingKeys > 0 {
		errs = append(errs, fmt.Errorf("%d requests carried no idempotency key", s.MissingKeys))
	}
	if s.RefusedKeysNeverAccepted > 0 {
		errs = append(errs, fmt.Errorf("%d refused keys were never accepted under the same key", s.RefusedKeysNeverAccepted))
	}
	return errors.Join(errs...)
}
