// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// Figures is one row: one exporter through one scenario, one run. A
// figure that does not apply to the scenario is nil.
type Figures struct {
	Scenario string `json:"scenario"`
	Exporter string `json:"exporter"`
	Run      int    `json:"run"`

	// Spans is what the receiver accepted; Delivered, Lost, Duplicates and
	// UncoveredDuplicates come from the backend's records (CheckDelivery).
	Spans               int `json:"spans"`
	Delivered           int `json:"delivered"`
	Lost                int `json:"lost"`
	Duplicates          int `json:"duplicates"`
	UncoveredDuplicates int `json:"uncovered_duplicates"`
	// ReceiverPushback counts refusals of the collector's receiver that
	// the load retried (its queue was full).
	ReceiverPushback int `json:"receiver_pushback"`
	// ReceiverP50Ms and ReceiverP99Ms are quantiles of how long the
	// collector's receiver took to answer a batch it accepted, in ms: what
	// work the exporter does before the receiver answers shows here.
	ReceiverP50Ms *float64 `json:"receiver_p50_ms,omitempty"`
	ReceiverP99Ms *float64 `json:"receiver_p99_ms,omitempty"`

	// DeliverySeconds is from the load's first batch to the request that
	// completed delivery (nil when some spans never arrived); ItemsPerSecond
	// is Delivered over it.
	DeliverySeconds *float64 `json:"delivery_seconds,omitempty"`
	ItemsPerSecond  *float64 `json:"items_per_second,omitempty"`
	// CPUSecondsPer100k is the collector's user+system CPU from the load's
	// start to full delivery (or the timeout), per 100 000 spans delivered.
	CPUSecondsPer100k float64 `json:"cpu_seconds_per_100k"`
	// BenchCPUSecondsPer100k is the same for this process: the load
	// generator and the backend, which share the machine's cores with the
	// collector.
	BenchCPUSecondsPer100k float64 `json:"bench_cpu_seconds_per_100k"`
	// PeakRSSBytes is the collector's VmHWM at the end of the run.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`

	// Requests is every request that reached the backend's socket; Refused
	// the 429s, Unavailable the 503s, DroppedConnections those closed
	// without an answer.
	Requests int `json:"requests"`
	// Connections is how many TCP connections the exporter opened to the backend.
	Connections        int `json:"connections"`
	Refused            int `json:"refused"`
	Unavailable        int `json:"unavailable"`
	DroppedConnections int `json:"dropped_connections"`

	// IntoWindow is the requests that arrived after the first refusal and
	// before the window ended. For a quota it is the requests that
	// arrived before an earlier 429's Retry-After had passed.
	IntoWindow *int `json:"into_window,omitempty"`
	// AfterWindowRPS is the requests in the second after the window ended;
	// PeakRPSAfterWindow the most in any 1 s from then to full delivery.
	AfterWindowRPS     *int `json:"after_window_rps,omitempty"`
	PeakRPSAfterWindow *int `json:"peak_rps_after_window,omitempty"`
	// RecoverySeconds is from the window's end to full delivery.
	RecoverySeconds *float64 `json:"recovery_seconds,omitempty"`

	// QuotaUsed is the spans accepted over what the bucket allowed from
	// the first request to full delivery (burst + rate × that time);
	// RefusedShare the share of requests answered 429.
	QuotaUsed    *float64 `json:"quota_used,omitempty"`
	RefusedShare *float64 `json:"refused_share,omitempty"`

	// For a cell of the limiter matrix (matrix.go): Limited is the
	// requests its limiter refused (429, or 503 when it sheds; their share
	// is RefusedShare), LimitUsed the share of the limit used from the
	// first request to full delivery (limiter.Spec.Used; to the last
	// accepted request while some spans are missing), and Dropped the
	// spans the exporter gave up on (otelcol_exporter_send_failed_spans at
	// the end), where Lost also counts those still queued at the timeout.
	Limited   *int     `json:"limited,omitempty"`
	LimitUsed *float64 `json:"limit_used,omitempty"`
	Dropped   *int     `json:"dropped,omitempty"`
	// LimitBest, for a fixed window, is the most of its limit any exporter
	// could have used in this run (Cell.BestUsed from the run's first
	// request): a whole window is counted at its start, so the share used
	// hangs on where in a window the load began.
	LimitBest *float64 `json:"limit_best,omitempty"`

	// HeldHeapPer10k and HeldRSSPer10k are the growth of the collector's
	// Go heap (otelcol_process_runtime_heap_alloc_bytes) and of its RSS
	// (VmRSS) from before the load to Scenario.Held before the window's
	// end, per 10 000 spans queued then (accepted by the receiver, not yet
	// by the backend). QueuedSpans is that count.
	HeldHeapPer10k *float64 `json:"held_heap_bytes_per_10k,omitempty"`
	HeldRSSPer10k  *float64 `json:"held_rss_bytes_per_10k,omitempty"`
	QueuedSpans    *int     `json:"queued_spans,omitempty"`

	// WallSeconds is the run from starting the collector to its exit.
	WallSeconds float64 `json:"wall_seconds"`
	// Err is why the run fell short (spans lost, a sender stopped, ...).
	Err string `json:"error,omitempty"`
}

// Result is a run's figures and what the plot needs.
type Result struct {
	Figures
	// Arrivals are the requests' arrival times at the backend's socket;
	// Origin is the load's start, WindowEnd the window's end (zero if none).
	Arrivals          []time.Time
	Origin, WindowEnd time.Time
}

// heldSampling is how long liveHeap scrapes; before the load, while the
// collector is idle and collects rarely, it goes on for up to
// baselineSampling until it has seen a collection.
const (
	heldSampling     = 6 * time.Second
	baselineSampling = 3 * heldSampling
)

// heapMetric is the collector's Go heap in use, from its own metrics.
const heapMetric = "otelcol_process_runtime_heap_alloc_bytes"

// Run runs s through a collector built at bin with exporter exp, in dir.
// An error means the run could not take place; shortfalls of the exporter
// are in Figures.Err.
func (s Scenario) Run(ctx context.Context, exp Exporter, bin string, setup Setup, dir string, bodies *Bodies) (*Result, error) {
	s.Load.Prebuild(bodies)
	if s.QueueBatch {
		setup.QueueBatch = true
	}
	began := time.Now()
	backend := demobackend.New(s.Backend)
	wire := NewWire(backend.Handler(), s.DropFor)
	if err := wire.Start(); err != nil {
		return nil, err
	}
	defer wire.Close()
	ccs, err := Configs(wire.URL(), []string{dir})
	if err != nil {
		return nil, err
	}
	col, err := setup.Launch(ctx, bin, dir, exp, ccs[0], nil)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = col.Stop(20 * time.Second)
		}
	}()
	var heap0 float64
	if s.HeldAt > 0 {
		if heap0, err = liveHeap(ctx, col.Config.MetricsURL(), heldSampling, baselineSampling); err != nil {
			return nil, err
		}
	}
	// The wait for a window's phase comes before the CPU baselines, so
	// that the idle collector's wait is not counted against the load.
	if d := s.StartDelay(time.Now()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	base, err := ReadProc(col.Pid)
	if err != nil {
		return nil, err
	}
	self0, err := ReadProc(os.Getpid())
	if err != nil {
		return nil, err
	}
	res := &Result{Figures: Figures{Scenario: s.Name, Exporter: string(exp)}}
	var errs []error

	loadDone := make(chan LoadResult, 1)
	go func() { loadDone <- s.Load.Send(ctx, col.Config.ReceiverURL(), bodies) }()
	held := make(chan heldSample, 1)
	if s.HeldAt > 0 {
		go func() { held <- sampleHeld(ctx, backend, col, s.HeldAt) }()
	} else {
		held <- heldSample{}
	}
	load := <-loadDone
	if load.Err != nil {
		errs = append(errs, fmt.Errorf("load: %w", load.Err))
	}
	res.Origin = load.Start
	res.Spans, res.ReceiverPushback = load.Spans, load.Pushback
	if q, ok := Quantile(load.Latencies, 0.5); ok {
		res.ReceiverP50Ms = ptr(float64(q) / float64(time.Millisecond))
	}
	if q, ok := Quantile(load.Latencies, 0.99); ok {
		res.ReceiverP99Ms = ptr(float64(q) / float64(time.Millisecond))
	}
	specs := []LoadSpec{{Instance: s.Load.Instance, Spans: s.Load.Spans, Batches: load.Accepted}}

	d := waitDelivery(ctx, backend, specs, load.End.Add(s.Timeout))
	h := <-held
	end, err := ReadProc(col.Pid)
	if err != nil {
		return nil, err
	}
	self1, err := ReadProc(os.Getpid())
	if err != nil {
		return nil, err
	}
	var dropped *int
	if s.Cell != nil {
		if m, err := demorun.Scrape(ctx, col.Config.MetricsURL()); err == nil {
			dropped = ptr(int(m.Sum("otelcol_exporter_send_failed_spans", nil)))
		} else {
			errs = append(errs, fmt.Errorf("reading the collector's send_failed_spans: %w", err))
		}
	}
	_, stopErr := col.Stop(20 * time.Second)
	stopped = true
	if stopErr != nil {
		errs = append(errs, fmt.Errorf("collector stop: %w", stopErr))
	}
	res.WallSeconds = time.Since(began).Seconds()

	records := backend.Records()
	writeTimeline(dir, records)
	res.Delivered, res.Lost, res.Duplicates, res.UncoveredDuplicates = d.Delivered, d.Lost, d.Duplicates, d.UncoveredDuplicates
	if d.Lost > 0 {
		errs = append(errs, fmt.Errorf("%d of %d spans were not delivered within %s of the load's end", d.Lost, d.Expected, s.Timeout))
	}
	if !d.Complete.IsZero() {
		res.DeliverySeconds = ptr(d.Complete.Sub(load.Start).Seconds())
		res.ItemsPerSecond = ptr(float64(d.Delivered) / *res.DeliverySeconds)
	}
	if d.Delivered > 0 {
		// Without what sampling the held memory cost (its scrapes).
		res.CPUSecondsPer100k = (end.CPUSeconds - base.CPUSeconds - h.cpu) / float64(d.Delivered) * 1e5
		res.BenchCPUSecondsPer100k = (self1.CPUSeconds - self0.CPUSeconds) / float64(d.Delivered) * 1e5
	}
	res.PeakRSSBytes = end.PeakRSSBytes

	arrivals := wire.Arrivals()
	for _, a := range arrivals {
		res.Arrivals = append(res.Arrivals, a.At)
		if a.Dropped != "" {
			res.DroppedConnections++
		}
	}
	res.Requests, res.Connections = len(arrivals), wire.Connections()
	sum := demobackend.Summarize(records)
	res.Refused, res.Unavailable = sum.Refused, sum.Unavailable

	// The window and its first refusal.
	var firstRefusal time.Time
	switch {
	case s.DropFor > 0:
		firstRefusal, res.WindowEnd = wire.DropWindow()
	case s.Window > 0 && !sum.FirstRequest.IsZero():
		res.WindowEnd = sum.FirstRequest.Add(s.Window)
		for _, r := range records {
			if r.Status == http.StatusTooManyRequests || r.Status == http.StatusServiceUnavailable {
				firstRefusal = r.Arrival
				break
			}
		}
	}
	if !res.WindowEnd.IsZero() {
		res.IntoWindow = ptr(CountBetween(res.Arrivals, firstRefusal, res.WindowEnd))
		res.AfterWindowRPS = ptr(CountIn(res.Arrivals, res.WindowEnd, time.Second))
		last := d.Complete
		if last.IsZero() {
			last = time.Now()
		}
		res.PeakRPSAfterWindow = ptr(PeakPerSecond(res.Arrivals, res.WindowEnd, last))
		if !d.Complete.IsZero() {
			res.RecoverySeconds = ptr(d.Complete.Sub(res.WindowEnd).Seconds())
		}
	}
	if q := s.Backend.Quota; s.Backend.Mode == demobackend.ModeQuota && sum.Requests > 0 {
		res.IntoWindow = ptr(sum.InsideRefusedWindow)
		res.RefusedShare = ptr(float64(sum.Refused) / float64(sum.Requests))
		if !d.Complete.IsZero() {
			allowed := q.Burst + q.Rate*d.Complete.Sub(sum.FirstRequest).Seconds()
			res.QuotaUsed = ptr(float64(d.ItemsAccepted) / allowed)
		}
	}
	if s.Cell != nil && sum.Requests > 0 {
		res.Limited, res.LimitUsed = limitFigures(s.Cell, records, d.Complete)
		res.LimitBest = bestUsed(s.Cell, records)
		res.RefusedShare = ptr(float64(*res.Limited) / float64(sum.Requests))
		res.IntoWindow = ptr(sum.InsideRefusedWindow)
		res.Dropped = dropped
	}
	if h.ok {
		res.QueuedSpans = ptr(h.queued)
		if h.queued > 0 {
			res.HeldHeapPer10k = ptr((h.heap - heap0) / float64(h.queued) * 1e4)
			res.HeldRSSPer10k = ptr(float64(h.rss-base.RSSBytes) / float64(h.queued) * 1e4)
		}
	} else if h.err != nil {
		errs = append(errs, fmt.Errorf("sampling held memory: %w", h.err))
	}
	if err := errors.Join(errs...); err != nil {
		res.Err = err.Error()
	}
	return res, nil
}

func ptr[T any](v T) *T { return &v }

// limitFigures are a cell's refusals by its limiter and the share of its
// limit used from the first request to complete (the arrival of the
// request that completed delivery; for an in-flight limit, when that
// request was answered), or to the last accepted request when complete is
// zero.
func limitFigures(c *Cell, records []demobackend.Record, complete time.Time) (*int, *float64) {
	limited := 0
	var last demobackend.Record
	for _, r := range records {
		if r.Limited {
			limited++
		}
		if r.Status == http.StatusOK && !r.Arrival.Before(last.Arrival) && (complete.IsZero() || !r.Arrival.After(complete)) {
			last = r
		}
	}
	if len(records) == 0 || last.Arrival.IsZero() {
		return &limited, nil
	}
	to := last.Arrival
	if c.Limiter.Kind == limiter.InFlight && !last.Answered.IsZero() {
		to = last.Answered
	}
	used, ok := c.Limiter.Used(demobackend.Served(records), records[0].Arrival, to)
	if !ok {
		return &limited, nil
	}
	return &limited, &used
}

// bestUsed is c.BestUsed from the first request of records, nil when it
// has none (no fixed window, no request).
func bestUsed(c *Cell, records []demobackend.Record) *float64 {
	if len(records) == 0 {
		return nil
	}
	if best, ok := c.BestUsed(records[0].Arrival); ok {
		return &best
	}
	return nil
}

// CellFigures are the figures of a cell's run that its goals are judged on.
func (f Figures) CellFigures() CellFigures {
	cf := CellFigures{Requests: f.Requests, Used: f.LimitUsed, DeliverySeconds: f.DeliverySeconds, Spans: f.Spans, Lost: f.Lost, Dropped: f.Dropped}
	if f.Limited != nil {
		cf.Refused = *f.Limited
	}
	return cf
}

// waitDelivery polls the backend until every span of loads is accepted or
// the deadline passes. It runs the full check only when the accepted items
// add up to the load, so that a million spans are not counted on every poll.
func waitDelivery(ctx context.Context, backend *demobackend.Backend, loads []LoadSpec, deadline time.Time) Delivery {
	want := 0
	for _, l := range loads {
		want += l.Spans * len(l.Batches)
	}
	lastChecked := -1
	for {
		records := backend.Records()
		accepted := 0
		for _, r := range records {
			if r.Status == http.StatusOK {
				accepted += r.Items
			}
		}
		if accepted >= want && accepted != lastChecked {
			lastChecked = accepted
			if d := CheckDelivery(records, loads); d.Lost == 0 {
				return d
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return CheckDelivery(records, loads)
		}
		select {
		case <-ctx.Done():
		case <-backend.Changed():
			time.Sleep(20 * time.Millisecond) // let a burst land before counting again
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// heldSample is the collector's memory while its load sits in the queue.
type heldSample struct {
	ok     bool
	err    error
	heap   float64
	rss    int64
	queued int
	// cpu is what the sampling cost the collector (its scrapes).
	cpu float64
}

// sampleHeld waits until at (since the backend's first request), counts
// the spans queued (accepted by the receiver, not yet by the backend) and
// reads the collector's live heap (liveHeap) and RSS.
func sampleHeld(ctx context.Context, backend *demobackend.Backend, col *Running, at time.Duration) heldSample {
	for {
		if recs := backend.Records(); len(recs) > 0 {
			if err := sleepUntil(ctx, recs[0].Arrival.Add(at)); err != nil {
				return heldSample{err: err}
			}
			break
		}
		select {
		case <-ctx.Done():
			return heldSample{err: ctx.Err()}
		case <-backend.Changed():
		}
	}
	m, err := demorun.Scrape(ctx, col.Config.MetricsURL())
	if err != nil {
		return heldSample{err: err}
	}
	delivered := 0
	for _, r := range backend.Records() {
		if r.Status == http.StatusOK {
			delivered += r.Items
		}
	}
	h := heldSample{queued: int(m.Sum("otelcol_receiver_accepted_spans", nil)) - delivered}
	p0, err := ReadProc(col.Pid)
	if err != nil {
		return heldSample{err: err}
	}
	if h.heap, err = liveHeap(ctx, col.Config.MetricsURL(), heldSampling, heldSampling); err != nil {
		return heldSample{err: err}
	}
	p1, err := ReadProc(col.Pid)
	if err != nil {
		return heldSample{err: err}
	}
	h.ok, h.rss, h.cpu = true, p1.RSSBytes, p1.CPUSeconds-p0.CPUSeconds
	return h
}

// liveHeap estimates the collector's live Go heap. Its heap in use
// (otelcol_process_runtime_heap_alloc_bytes, refreshed at most once a
// second) counts garbage until the next collection, and an idle collector,
// its load queued behind a throttle, collects nothing. Each scrape of its
// metrics allocates a little, so scraping every 2 ms brings on
// collections; between two collections the heap in use grows from the live
// heap to twice it (GOGC=100). The lowest value seen after the first
// collection is the estimate: an overestimate by about the live heap over
// the number of values seen. It scrapes for d, and on past d until it has
// seen a collection, for limit at most; it fails when it saw none.
func liveHeap(ctx context.Context, url string, d, limit time.Duration) (float64, error) {
	began := time.Now()
	prev, low, collected := math.Inf(1), math.Inf(1), false
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for since := time.Duration(0); since < d || (!collected && since < limit); since = time.Since(began) {
		m, err := demorun.Scrape(ctx, url)
		if err != nil {
			return 0, err
		}
		v := m.Sum(heapMetric, nil)
		if v < prev && !math.IsInf(prev, 1) {
			collected = true
		}
		if collected {
			low = math.Min(low, v)
		}
		prev = v
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
	if !collected {
		return 0, fmt.Errorf("the collector's heap did not shrink within %s of scraping %s", max(d, limit), url)
	}
	return low, nil
}

// writeTimeline writes every request the backend answered to
// dir/timeline.tsv (milliseconds from the first, status, items, key, when
// answered, and the tenant: the fleet's X-Scope-OrgID, empty elsewhere), for
// reading a run kept with -keep.
func writeTimeline(dir string, records []demobackend.Record) {
	if len(records) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("ms\tstatus\titems\tretry_after\tkey\tanswered_ms\ttenant\n")
	t0 := records[0].Arrival
	for _, r := range records {
		answered := ""
		if !r.Answered.IsZero() {
			answered = strconv.FormatFloat(float64(r.Answered.Sub(t0).Microseconds())/1000, 'f', 3, 64)
		}
		fmt.Fprintf(&b, "%d\t%d\t%d\t%s\t%s\t%s\t%s\n", r.Arrival.Sub(t0).Milliseconds(), r.Status, r.Items, r.RetryAfter, r.Key, answered, r.Header.Get("X-Scope-OrgID"))
	}
	_ = os.WriteFile(filepath.Join(dir, "timeline.tsv"), []byte(b.String()), 0o600)
}
