// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package scenario runs the same OTLP trace load through an ocb-built
// collector with either exporter (otlp_http_retry or the core otlp_http)
// against the demo backend (internal/demobackend) following a script, and
// measures what a user and a backend operator see: throughput, the
// collector's CPU and memory, requests sent into throttle windows, bursts
// after them, time to full delivery, quota use, items lost and duplicated.
// cmd/scenariobench drives it.
package scenario // import "github.com/otlphttpretry/otlphttpretry/internal/scenario"

import (
	"fmt"
	"strings"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// Scenario is one script of the backend with the load sent through it.
type Scenario struct {
	Name        string
	Description string
	Backend     demobackend.Config
	// DropFor closes connections without an answer for this long after
	// the first request (see Wire).
	DropFor time.Duration
	Load    Load
	// Window is how long after the backend's first request it refuses
	// everything (ThrottleFor, FailFor); 0 when the script has no window.
	Window time.Duration
	// HeldAt is when (after the backend's first request) the memory the
	// collector holds is sampled: inside the window, after the load has
	// all been queued (0: not sampled).
	HeldAt time.Duration
	// Timeout bounds the wait for full delivery after the load ends.
	Timeout time.Duration
	// Cell is the limiter matrix's cell the scenario runs (matrix.go); nil
	// for the other scenarios.
	Cell *Cell
	// QueueBatch gives both exporters sending_queue::batch (its defaults)
	// whatever the run's Setup says.
	QueueBatch bool
	// Phase, for a fixed window's cell, starts the load that far into one
	// of the limiter's windows (StartDelay), where the share of the limit any
	// exporter could use hangs on it (Cell.BestUsed); zero starts it at
	// once, wherever the clock is.
	Phase time.Duration
}

// StartDelay is how long the load waits at now so that it starts Phase
// into a window of its fixed window's cell: zero without a Phase, or for
// another kind of cell.
func (s Scenario) StartDelay(now time.Time) time.Duration {
	if s.Phase <= 0 || s.Cell == nil || s.Cell.Limiter.Kind != limiter.FixedWindow || s.Cell.Limiter.Window <= 0 {
		return 0
	}
	w := s.Cell.Limiter.Window
	d := s.Phase%w - now.Sub(s.Cell.Limiter.WindowStart(now))
	if d < 0 {
		d += w
	}
	return d
}

// Names of the scenarios.
const (
	Healthy      = "healthy"
	Throttle429  = "throttle-429"
	Storm503     = "storm-503"
	QuotaBucket  = "quota"
	QuotaHeaders = "quota-headers"
	Drops        = "drops"
	RetryOnce    = "retry-once"
	// SmallRequests is the load as SDKs send it, batched by the exporters'
	// own sending_queue::batch (no batch processor).
	SmallRequests = "small-requests"
)

// Params scale the scenarios.
type Params struct {
	// Spans is the healthy scenario's load (4 senders, batches of
	// BatchSpans); retry-once sends a fiftieth of it (the core exporter
	// waits 5 s before each retry, one batch per queue consumer).
	Spans int
	// BatchSpans is the spans per batch of every scenario.
	BatchSpans int
	// Window is the length of the 429 window (Retry-After RetryAfter);
	// the load into it is offered for HeldFor. FailFor is the length of
	// the 503 storm and of the dropped-connection window, whose loads last
	// half of it.
	Window, HeldFor, FailFor time.Duration
	RetryAfter               int
	// QuotaRate is the token bucket's rate (spans/s; burst the same),
	// offered at twice its rate for QuotaFor.
	QuotaRate float64
	QuotaFor  time.Duration
	// PacedRate is the offered load (spans/s) of the 503 storm and the
	// dropped connections; HeldRate that of the 429 window, higher so that
	// the memory held by the queue stands out of the heap's noise.
	PacedRate, HeldRate float64
	// SmallSpans is the small-requests load: SmallSenders senders posting
	// requests of SmallBatch spans as fast as the collector takes them.
	SmallSpans, SmallSenders, SmallBatch int
}

// DefaultParams are the documented scenarios.
func DefaultParams() Params {
	return Params{
		Spans:      1_000_000,
		BatchSpans: 500,
		Window:     12 * time.Second,
		HeldFor:    3 * time.Second,
		FailFor:    5 * time.Second,
		RetryAfter: 5,
		QuotaRate:  2000,
		QuotaFor:   8 * time.Second,
		PacedRate:  4000,
		HeldRate:   60000,

		SmallSpans:   500_000,
		SmallSenders: 20,
		SmallBatch:   10,
	}
}

// DefaultSet is the scenarios run unless asked otherwise.
var DefaultSet = []string{Healthy, Throttle429, Storm503, QuotaBucket, Drops, RetryOnce}

// AllNames is every scenario, in the order they run.
var AllNames = []string{Healthy, Throttle429, Storm503, QuotaBucket, QuotaHeaders, Drops, RetryOnce, SmallRequests}

// paced is a load of rate spans/s for d, in batches of p.BatchSpans from
// two senders.
func (p Params) paced(rate float64, d time.Duration) Load {
	const senders = 2
	perSender := rate / float64(p.BatchSpans) / senders
	return Load{Senders: senders, Spans: p.BatchSpans, Rate: perSender, Batches: max(1, int(perSender*d.Seconds()))}
}

// maxRate is an unpaced load of about spans from 4 senders.
func (p Params) maxRate(spans int) Load {
	const senders = 4
	return Load{Senders: senders, Spans: p.BatchSpans, Batches: max(1, spans/senders/p.BatchSpans)}
}

// Build returns the named scenario.
func (p Params) Build(name string) (Scenario, error) {
	half := p.FailFor / 2
	switch name {
	case Healthy:
		l := p.maxRate(p.Spans)
		return Scenario{
			Name:        name,
			Description: fmt.Sprintf("%d spans from %d senders in batches of %d, as fast as the collector takes them; the backend accepts everything", l.Total(), l.Senders, l.Spans),
			Load:        l, Timeout: 2 * time.Minute,
		}, nil
	case SmallRequests:
		senders := max(1, p.SmallSenders)
		l := Load{Senders: senders, Spans: p.SmallBatch, Batches: max(1, p.SmallSpans/senders/max(1, p.SmallBatch))}
		return Scenario{
			Name: name,
			Description: fmt.Sprintf("%d spans from %d senders in requests of %d, as fast as the collector takes them, batched by sending_queue::batch "+
				"(defaults: flush_timeout 200ms, sizer items, min_size 8192) in both exporters; the backend accepts everything", l.Total(), l.Senders, l.Spans),
			Load: l, Timeout: 2 * time.Minute, QueueBatch: true,
		}, nil
	case RetryOnce:
		l := p.maxRate(p.Spans / 50)
		return Scenario{
			Name:        name,
			Description: fmt.Sprintf("%d spans from %d senders in batches of %d, as fast as possible; the backend answers 503 to the first request of each batch and 200 to its retry", l.Total(), l.Senders, l.Spans),
			Backend:     demobackend.Config{Mode: demobackend.ModeFailFirst},
			Load:        l, Timeout: 2 * time.Minute,
		}, nil
	case Throttle429:
		l := p.paced(p.HeldRate, p.HeldFor)
		// The held memory is sampled 2 s after the load ends, if the
		// sampling ends inside the window.
		heldAt := l.Duration() + 2*time.Second
		if heldAt+heldSampling >= p.Window {
			heldAt = 0
		}
		return Scenario{
			Name: name,
			Description: fmt.Sprintf("%.0f spans/s for %s; the backend answers 429 Retry-After: %d for %s from its first request",
				p.HeldRate, p.HeldFor, p.RetryAfter, p.Window),
			// Retry-After 0 is sent as such ("retry now"), not left out.
			Backend: demobackend.Config{Mode: demobackend.ModeThrottle, ThrottleFor: p.Window, RetryAfter: p.RetryAfter, RetryAfterZero: p.RetryAfter == 0},
			Load:    l, Window: p.Window, HeldAt: heldAt, Timeout: 2 * time.Minute,
		}, nil
	case Storm503:
		l := p.paced(p.PacedRate, half)
		return Scenario{
			Name:        name,
			Description: fmt.Sprintf("%.0f spans/s for %s; the backend answers 503 (no Retry-After) for %s from its first request", p.PacedRate, half, p.FailFor),
			Backend:     demobackend.Config{Mode: demobackend.ModeUnavailable, FailFor: p.FailFor},
			Load:        l, Window: p.FailFor, Timeout: 2 * time.Minute,
		}, nil
	case Drops:
		l := p.paced(p.PacedRate, half)
		return Scenario{
			Name: name,
			Description: fmt.Sprintf("%.0f spans/s for %s; for %s from its first request the backend closes every connection without an answer "+
				"(alternately before reading the request, and after accepting it)", p.PacedRate, half, p.FailFor),
			DropFor: p.FailFor, Load: l, Window: p.FailFor, Timeout: 2 * time.Minute,
		}, nil
	case QuotaBucket, QuotaHeaders:
		q := demobackend.Quota{Rate: p.QuotaRate, Burst: p.QuotaRate, Headers: name == QuotaHeaders}
		headers := ""
		if q.Headers {
			headers = ", with RateLimit-Policy and RateLimit headers on every answer"
		}
		return Scenario{
			Name: name,
			Description: fmt.Sprintf("%.0f spans/s for %s into a token bucket of %.0f spans/s (burst %.0f)%s",
				2*p.QuotaRate, p.QuotaFor, q.Rate, q.Rate, headers),
			Backend: demobackend.Config{Mode: demobackend.ModeQuota, Quota: q},
			Load:    p.paced(2*p.QuotaRate, p.QuotaFor), Timeout: 2*p.QuotaFor + time.Minute,
		}, nil
	}
	if c, ok := CellByName(name); ok {
		return c.Scenario(), nil
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q: use one of %s, %s (every cell of the limiter matrix) or a cell's name", name, strings.Join(AllNames, ", "), Matrix)
}
