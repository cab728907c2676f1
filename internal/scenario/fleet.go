// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// Fleet is Size collectors, one exporter each, sending to one quota
// backend: a fleet behind a load balancer. The backend is closed for
// Window from its first request (429 Retry-After RetryAfter), then a token
// bucket of QuotaRate spans/s (burst the same). Each collector is offered
// twice its share of the quota for LoadFor.
//
// One collector per exporter instance is the honest layout for
// otlp_http_retry: its throttle gate is shared by every exporter of a
// process that sends to the same URL, so 50 exporters in one process
// would wait as one.
type Fleet struct {
	Size       int
	BatchSpans int
	QuotaRate  float64
	Window     time.Duration
	RetryAfter int
	LoadFor    time.Duration
	Timeout    time.Duration
	// Limiter, when set, takes the token bucket's place after the window
	// (demobackend.ModeLimiter), and the window's 429s carry Retry-After
	// only when RetryAfter is positive (see BareFleet).
	Limiter *limiter.Spec `json:",omitempty"`
}

// DefaultFleet is the documented fleet of 50: a quota of 5 000 spans/s,
// 100 requests/s of 50 spans, offered twice that.
func DefaultFleet(size int) Fleet {
	return Fleet{Size: size, BatchSpans: 50, QuotaRate: 5000, Window: 5 * time.Second, RetryAfter: 5, LoadFor: 15 * time.Second, Timeout: 2 * time.Minute}
}

// BareFleet is DefaultFleet behind a request-rate limiter without hints,
// as a reverse proxy runs one (issue 15): bare 429s for the window, then a
// GCRA of the quota's rate in requests (100 a second of 50 spans; a burst
// of a tenth of a second's) answering a bare 429.
func BareFleet(size int) Fleet {
	f := DefaultFleet(size)
	rps := f.QuotaRate / float64(f.BatchSpans)
	f.RetryAfter = 0
	f.Limiter = &limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintNone, Rate: rps, Burst: math.Max(1, rps/10)}
	return f
}

// Description says what the fleet does.
func (f Fleet) Description() string {
	if f.Limiter != nil {
		ra := "bare 429"
		if f.RetryAfter > 0 {
			ra = fmt.Sprintf("429 Retry-After: %d", f.RetryAfter)
		}
		return fmt.Sprintf("%d collectors, one exporter each, %d-span batches at %.0f spans/s each (twice the limit in all) for %s, into one backend "+
			"answering %s for %s, then a %s",
			f.Size, f.BatchSpans, f.offered(), f.LoadFor, ra, f.Window, f.Limiter)
	}
	return fmt.Sprintf("%d collectors, one exporter each, %d-span batches at %.0f spans/s each (twice the quota in all) for %s, into one backend "+
		"answering 429 Retry-After: %d for %s, then a token bucket of %.0f spans/s (%.0f requests/s)",
		f.Size, f.BatchSpans, f.offered(), f.LoadFor, f.RetryAfter, f.Window, f.QuotaRate, f.QuotaRate/float64(f.BatchSpans))
}

// offered is each collector's load in spans/s.
func (f Fleet) offered() float64 { return 2 * f.QuotaRate / float64(f.Size) }

// FleetFigures is one fleet run.
type FleetFigures struct {
	Exporter string `json:"exporter"`
	Run      int    `json:"run"`
	Size     int    `json:"size"`
	// QuotaRPS is the bucket's rate in requests of BatchSpans spans.
	QuotaRPS float64 `json:"quota_rps"`
	// AfterWindowRPS is the requests in the second after the window ended;
	// PeakRPSAfterWindow the most in any 1 s from then to full delivery.
	AfterWindowRPS     int `json:"after_window_rps"`
	PeakRPSAfterWindow int `json:"peak_rps_after_window"`
	// IntoWindow is the requests between the first refusal and the window's end.
	IntoWindow int `json:"into_window"`
	// Fairness is Jain's index of the spans each collector got accepted
	// from the window's end to the load's end, while the quota was
	// contended (1 = equal shares, 1/Size = one took all).
	Fairness *float64 `json:"fairness,omitempty"`
	// Requests, Refused (429s), RefusedShare, QuotaUsed as in Figures.
	Requests     int      `json:"requests"`
	Refused      int      `json:"refused"`
	RefusedShare float64  `json:"refused_share"`
	QuotaUsed    *float64 `json:"quota_used,omitempty"`
	Spans        int      `json:"spans"`
	Lost         int      `json:"lost"`
	Duplicates   int      `json:"duplicates"`
	// DeliverySeconds is from the loads' start to full delivery.
	DeliverySeconds *float64 `json:"delivery_seconds,omitempty"`
	// CPUSeconds is the fleet's CPU from the loads' start to full
	// delivery; RSSBytes the sum of the collectors' peak RSS.
	CPUSeconds  float64 `json:"cpu_seconds"`
	RSSBytes    int64   `json:"rss_bytes"`
	StartupSecs float64 `json:"startup_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
	Err         string  `json:"error,omitempty"`
}

// FleetResult is a fleet run's figures and its arrivals, for the plot.
type FleetResult struct {
	FleetFigures
	Arrivals          []time.Time
	Origin, WindowEnd time.Time
}

// Run starts the fleet with exporter exp (binary bin) under dir, sends the
// load and measures.
func (f Fleet) Run(ctx context.Context, exp Exporter, bin string, setup Setup, dir string, bodies *Bodies) (*FleetResult, error) {
	began := time.Now()
	q := demobackend.Quota{Rate: f.QuotaRate, Burst: f.QuotaRate}
	cfg := demobackend.Config{Mode: demobackend.ModeQuota, Quota: q, ThrottleFor: f.Window, RetryAfter: f.RetryAfter}
	if f.Limiter != nil {
		cfg.Mode, cfg.Quota, cfg.Limiter = demobackend.ModeLimiter, demobackend.Quota{}, *f.Limiter
	}
	backend := demobackend.New(cfg)
	wire := NewWire(backend.Handler(), 0)
	if err := wire.Start(); err != nil {
		return nil, err
	}
	defer wire.Close()

	cols := make([]*Running, f.Size)
	defer func() {
		var wg sync.WaitGroup
		for _, c := range cols {
			if c != nil {
				wg.Go(func() { _, _ = c.Stop(20 * time.Second) })
			}
		}
		wg.Wait()
	}()
	dirs := make([]string, f.Size)
	for i := range dirs {
		dirs[i] = filepath.Join(dir, fmt.Sprintf("collector-%02d", i))
	}
	ccs, err := Configs(wire.URL(), dirs)
	if err != nil {
		return nil, err
	}
	// Start them four at a time: the machine has two cores.
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var startErrs []error
	for i := range f.Size {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			// Distinct headers: distinct senders (tenants) to the backend.
			c, err := setup.Launch(ctx, bin, dirs[i], exp, ccs[i], map[string]string{"X-Scope-OrgID": "tenant-" + strconv.Itoa(i)})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				startErrs = append(startErrs, fmt.Errorf("collector %d: %w", i, err))
				return
			}
			cols[i] = c
		})
	}
	wg.Wait()
	if err := errors.Join(startErrs...); err != nil {
		return nil, err
	}
	res := &FleetResult{FleetFigures: FleetFigures{Exporter: string(exp), Size: f.Size, QuotaRPS: f.QuotaRate / float64(f.BatchSpans)}}
	res.StartupSecs = time.Since(began).Seconds()

	perRate := f.offered() / float64(f.BatchSpans)
	loads := make([]Load, f.Size)
	for i := range loads {
		loads[i] = Load{Senders: 1, Spans: f.BatchSpans, Rate: perRate, Batches: max(1, int(perRate*f.LoadFor.Seconds())), Instance: uint32(i)}
		for b := range loads[i].Batches {
			bodies.Get(uint32(i), b, f.BatchSpans)
		}
	}
	cpu0 := make([]float64, f.Size)
	for i, c := range cols {
		p, err := ReadProc(c.Pid)
		if err != nil {
			return nil, err
		}
		cpu0[i] = p.CPUSeconds
	}
	results := make([]LoadResult, f.Size)
	for i, c := range cols {
		wg.Go(func() { results[i] = loads[i].Send(ctx, c.Config.ReceiverURL(), bodies) })
	}
	wg.Wait()
	res.Origin = results[0].Start
	loadEnd := results[0].End
	var specs []LoadSpec
	var errs []error
	for i, r := range results {
		res.Origin = minTime(res.Origin, r.Start)
		if r.End.After(loadEnd) {
			loadEnd = r.End
		}
		res.Spans += r.Spans
		specs = append(specs, LoadSpec{Instance: uint32(i), Spans: f.BatchSpans, Batches: r.Accepted})
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("load %d: %w", i, r.Err))
		}
	}
	d := waitDelivery(ctx, backend, specs, loadEnd.Add(f.Timeout))
	for i, c := range cols {
		p, err := ReadProc(c.Pid)
		if err != nil {
			return nil, err
		}
		res.CPUSeconds += p.CPUSeconds - cpu0[i]
		res.RSSBytes += p.PeakRSSBytes
	}
	res.Lost, res.Duplicates = d.Lost, d.Duplicates
	if d.Lost > 0 {
		errs = append(errs, fmt.Errorf("%d of %d spans were not delivered within %s of the load's end", d.Lost, d.Expected, f.Timeout))
	}
	if !d.Complete.IsZero() {
		res.DeliverySeconds = ptr(d.Complete.Sub(res.Origin).Seconds())
	}

	records := backend.Records()
	writeTimeline(dir, records)
	sum := demobackend.Summarize(records)
	for _, a := range wire.Arrivals() {
		res.Arrivals = append(res.Arrivals, a.At)
	}
	res.Requests, res.Refused = len(res.Arrivals), sum.Refused
	if res.Requests > 0 {
		res.RefusedShare = float64(sum.Refused) / float64(res.Requests)
	}
	if !sum.FirstRequest.IsZero() {
		res.WindowEnd = sum.FirstRequest.Add(f.Window)
		res.IntoWindow = CountBetween(res.Arrivals, sum.FirstRefusal, res.WindowEnd)
		res.AfterWindowRPS = CountIn(res.Arrivals, res.WindowEnd, time.Second)
		last := d.Complete
		if last.IsZero() {
			last = time.Now()
		}
		res.PeakRPSAfterWindow = PeakPerSecond(res.Arrivals, res.WindowEnd, last)
		if !d.Complete.IsZero() {
			// The bucket was closed for the window, then allowed burst + rate × the rest.
			allowed := q.Burst + q.Rate*d.Complete.Sub(res.WindowEnd).Seconds()
			res.QuotaUsed = ptr(float64(d.ItemsAccepted) / allowed)
			if f.Limiter != nil {
				// The limiter's own measure, from the window's end.
				res.QuotaUsed = nil
				if used, ok := f.Limiter.Used(demobackend.Served(records), res.WindowEnd, d.Complete); ok {
					res.QuotaUsed = &used
				}
			}
		}
	}
	shares := make([]float64, f.Size)
	for _, r := range records {
		if r.Status != http.StatusOK || r.Arrival.Before(res.WindowEnd) || r.Arrival.After(loadEnd) || len(r.ItemIDs) == 0 {
			continue
		}
		if i, ok := InstanceOf(r.ItemIDs[0]); ok && int(i) < f.Size {
			shares[i] += float64(r.Items)
		}
	}
	if j := Jain(shares); !math.IsNaN(j) {
		res.Fairness = &j
	}
	res.WallSeconds = time.Since(began).Seconds()
	if err := errors.Join(errs...); err != nil {
		res.Err = err.Error()
	}
	return res, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
