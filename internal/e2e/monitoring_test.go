// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
	"github.com/otlphttpretry/otlphttpretry/internal/monitoring"
)

// The kit's test copy: the shipped rules rendered with short thresholds,
// a Prometheus scraping every 2 s and evaluating every 500 ms.
const (
	kitScrape = 2 * time.Second
	kitEval   = 500 * time.Millisecond
	// kitLead is the healthy load before each scenario's trouble: longer
	// than the drop and RateLimit windows, so that Prometheus has scraped
	// the collector for a whole window when the trouble begins.
	kitLead = 12 * time.Second
	// kitAfter is the load after the trouble ends.
	kitAfter = 6 * time.Second
	// kitRateInterval stands for Grafana's $__rate_interval (four scrapes).
	kitRateInterval = "8s"
)

func kitThresholds() monitoring.Thresholds {
	th := monitoring.Defaults()
	th.RateWindow = monitoring.Duration(10 * time.Second)
	th.UnauthorizedFor = 0
	th.OutageFor = monitoring.Duration(6 * time.Second)
	th.ThrottleFor = monitoring.Duration(6 * time.Second)
	th.DroppedWindow = monitoring.Duration(10 * time.Second)
	th.QueueFor = monitoring.Duration(4 * time.Second)
	th.RateLimitWindow = monitoring.Duration(10 * time.Second)
	th.NoSuccessWindow = monitoring.Duration(20 * time.Second)
	th.NoSuccessFor = monitoring.Duration(6 * time.Second)
	return th
}

// troubleKind is how a scenario's trouble begins and ends.
type troubleKind int

const (
	// troubleNone: a healthy backend all along.
	troubleNone troubleKind = iota
	// troubleSwitch: from the trouble's start to its end the scripted
	// backend answers; before and after, a backend that accepts everything.
	troubleSwitch
	// troubleDown: the backend refuses connections for the trouble's length.
	troubleDown
)

// kitScenario is one scenario of the kit's run.
type kitScenario struct {
	name    string
	kind    troubleKind
	script  demobackend.Config
	sc      scenario
	trouble time.Duration
	// spansPerBatch of the load (5 batches a second).
	spansPerBatch int
	// badRateLimit adds an unusable RateLimit-Policy item to every answer
	// of the scripted backend.
	badRateLimit bool
	// expect are the alerts that must fire, each within its bound, and
	// resolve; no other alert may fire.
	expect []string
}

func kitScenarios() []kitScenario {
	return []kitScenario{
		{name: "healthy", kind: troubleNone, trouble: 40 * time.Second, spansPerBatch: 5},
		{
			name: "throttle", kind: troubleSwitch, trouble: 14 * time.Second, spansPerBatch: 5,
			script: demobackend.Config{Mode: demobackend.ModeThrottle, ThrottleFor: time.Hour, RetryAfter: 2},
			expect: []string{"OtlpHttpRetryThrottled"},
		},
		{
			name: "outage", kind: troubleDown, trouble: 40 * time.Second, spansPerBatch: 5,
			sc:     scenario{QueueSize: 20, MaxInterval: 2 * time.Second},
			expect: []string{"OtlpHttpRetryOutage", "OtlpHttpRetryQueueNearlyFull", "OtlpHttpRetryItemsDropped", "OtlpHttpRetryNoSuccessfulExport"},
		},
		{
			name: "unauthorized", kind: troubleSwitch, trouble: 36 * time.Second, spansPerBatch: 5,
			script: demobackend.Config{Mode: demobackend.ModeUnauthorized},
			sc:     scenario{ProbeInterval: 2 * time.Second},
			expect: []string{"OtlpHttpRetryUnauthorized", "OtlpHttpRetryNoSuccessfulExport"},
		},
		{
			name: "quota", kind: troubleSwitch, trouble: 20 * time.Second, spansPerBatch: 20,
			script:       demobackend.Config{Mode: demobackend.ModeQuota, Quota: demobackend.Quota{Rate: 50, Headers: true}},
			badRateLimit: true,
			expect:       []string{"OtlpHttpRetryRateLimitHeaderRejected"},
		},
	}
}

// switchBackend answers with the scripted backend between start and end,
// and with one that accepts everything otherwise.
type switchBackend struct {
	healthy, scripted http.Handler
	badRateLimit      bool

	mu         sync.Mutex
	start, end time.Time
}

func (s *switchBackend) set(start, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start, s.end = start, end
}

func (s *switchBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	now := time.Now()
	scripted := !s.start.IsZero() && !now.Before(s.start) && now.Before(s.end)
	s.mu.Unlock()
	if !scripted {
		s.healthy.ServeHTTP(w, r)
		return
	}
	if s.badRateLimit {
		w = badRateLimitWriter{w}
	}
	s.scripted.ServeHTTP(w, r)
}

// badRateLimitWriter adds a RateLimit-Policy item with a negative quota
// next to the backend's own: the exporter ignores that item (reason
// negative) and keeps using the valid one.
type badRateLimitWriter struct{ http.ResponseWriter }

func (w badRateLimitWriter) WriteHeader(code int) {
	w.Header().Add("RateLimit-Policy", `"burst";q=-1;w=1`)
	w.ResponseWriter.WriteHeader(code)
}

// alertSpan is one stretch of time an alert was seen firing.
type alertSpan struct{ from, to time.Time }

// alertLog polls Prometheus's alerts and keeps, per alert instance, when
// it was seen firing.
type alertLog struct {
	mu      sync.Mutex
	labels  map[string]map[string]string
	spans   map[string][]alertSpan
	pending map[string]bool
	polls   int
	errs    int
}

func newAlertLog() *alertLog {
	return &alertLog{labels: map[string]map[string]string{}, spans: map[string][]alertSpan{}, pending: map[string]bool{}}
}

func (l *alertLog) poll(ctx context.Context, p *promServer) {
	firing := map[string]bool{}
	alerts, err := p.alerts(ctx)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.polls++
	if err != nil {
		l.errs++
		return
	}
	for _, a := range alerts {
		k := alertKey(a.Labels)
		l.labels[k] = a.Labels
		if a.State != "firing" {
			l.pending[k] = true
			continue
		}
		firing[k] = true
		s := l.spans[k]
		if len(s) == 0 || !s[len(s)-1].to.IsZero() {
			l.spans[k] = append(s, alertSpan{from: now})
		}
	}
	for k, s := range l.spans {
		if last := &s[len(s)-1]; last.to.IsZero() && !firing[k] {
			last.to = now
		}
	}
}

// firingFor lists the alert instances of scenario still firing.
func (l *alertLog) firingFor(scenario string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, s := range l.spans {
		if l.labels[k]["scenario"] == scenario && s[len(s)-1].to.IsZero() {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// endpointLog is what a scenario saw on its collector's own endpoint,
// every 250 ms: when each condition an alert watches first showed.
type endpointLog struct {
	held       map[string]time.Time // reason → first time held
	dropped    map[string]time.Time // reason → first time counted
	rejected   time.Time            // first RateLimit value rejected
	queueOver  time.Time            // first time the queue was above queue_fill
	successes  []time.Time          // times the success count was seen to grow
	lastCount  float64
	scrapeErrs int
}

func (e *endpointLog) sample(now time.Time, m demorun.Metrics, fill float64) {
	for _, reason := range []string{"throttle", "outage", "unauthorized"} {
		if _, seen := e.held[reason]; !seen && m.Sum(prefix+"held", map[string]string{"reason": reason}) == 1 {
			e.held[reason] = now
		}
	}
	for _, s := range m.Find(prefix+"dropped_items", nil) {
		if _, seen := e.dropped[s.Labels["reason"]]; !seen && s.Value > 0 {
			e.dropped[s.Labels["reason"]] = now
		}
	}
	if e.rejected.IsZero() && m.Sum(prefix+"ratelimit_rejected", nil) > 0 {
		e.rejected = now
	}
	size, capacity := m.Sum("otelcol_exporter_queue_size", nil), m.Sum("otelcol_exporter_queue_capacity", nil)
	if e.queueOver.IsZero() && capacity > 0 && size/capacity > fill {
		e.queueOver = now
	}
	if n := m.Sum(prefix+"attempts", map[string]string{"outcome": "success"}); n > e.lastCount {
		e.successes = append(e.successes, now)
		e.lastCount = n
	}
}

// lastSuccessBefore is the last time the success count grew before t.
func (e *endpointLog) lastSuccessBefore(t time.Time) time.Time {
	var last time.Time
	for _, s := range e.successes {
		if s.Before(t) {
			last = s
		}
	}
	return last
}

// kitRun is what one scenario leaves for the analysis.
type kitRun struct {
	sc                                   kitScenario
	instance                             string
	start, troubleStart, troubleEnd, end time.Time
	ep                                   *endpointLog
}

// TestMonitoringKit runs the operator's kit against a real Prometheus: the
// shipped rules rendered with short thresholds, Prometheus scraping five
// collectors (one per scenario: healthy, throttle window, outage, 401,
// quota with an unusable RateLimit header), all at once. Each expected
// alert fires within its bound after its condition shows on the
// collector's endpoint and resolves after the scenario ends; no other
// alert fires, none in the healthy run; every dashboard query returns data
// in some scenario. With MONITORING_RECORD=<path> the run is stored there
// (docs/monitoring-run.json, plotted by `make monitoring`).
func TestMonitoringKit(t *testing.T) {
	t.Parallel()
	bin := prometheusBin(t)
	collectorBin(t) // fail early without the collector
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	th := kitThresholds()
	rules, err := monitoring.Rules(th)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rulesPath := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesPath, rules, 0o600); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(ctx, t, bin, dir, rulesPath, kitScrape, kitEval)
	t.Logf("%s on %s, scrape %s, evaluation %s", prom.version, prom.base, kitScrape, kitEval)

	log := newAlertLog()
	pollCtx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			log.poll(pollCtx, prom)
			select {
			case <-pollCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { stopPoll(); <-polled }()

	var mu sync.Mutex
	runs := map[string]*kitRun{}
	runStart := time.Now()
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range kitScenarios() {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				run := runKitScenario(ctx, t, prom, dir, log, sc, th)
				mu.Lock()
				runs[sc.name] = run
				mu.Unlock()
			})
		}
	})
	runEnd := time.Now()
	stopPoll()
	<-polled
	if t.Failed() {
		return
	}

	rec := monitoring.Run{
		Prometheus:         prom.version,
		ScrapeInterval:     kitScrape.String(),
		EvaluationInterval: kitEval.String(),
		Thresholds:         map[string]string{},
	}
	for _, x := range th.List() {
		if x.Name != "runbook_url" {
			rec.Thresholds[x.Name] = x.Value
		}
	}
	checkAlerts(t, log, runs, th, &rec)
	checkPanels(ctx, t, prom, runs, &rec)
	t.Logf("polls of /api/v1/alerts: %d (%d failed); the kit's run took %s", log.polls, log.errs, runEnd.Sub(runStart).Round(time.Second))

	if path := os.Getenv("MONITORING_RECORD"); path != "" && !t.Failed() {
		recordPanels(ctx, t, prom, runs["throttle"], &rec)
		stamp(&rec)
		if err := monitoring.WriteRun(path, rec); err != nil {
			t.Fatal(err)
		}
		t.Logf("stored the run in %s", path)
	}
}

// runKitScenario runs one scenario: healthy load for kitLead, the trouble,
// kitAfter more load, then it waits until no alert of the scenario fires.
func runKitScenario(ctx context.Context, t *testing.T, prom *promServer, dir string, log *alertLog, sc kitScenario, th monitoring.Thresholds) *kitRun {
	var sw *switchBackend
	if sc.kind == troubleSwitch {
		sw = &switchBackend{healthy: demobackend.New(demobackend.Config{}).Handler(), badRateLimit: sc.badRateLimit}
		sc.sc.Serve = func(b *demobackend.Backend) http.Handler {
			sw.scripted = b.Handler()
			return sw
		}
	}
	h := newHarness(t, sc.script, sc.sc)
	h.start(ctx)
	instance := net.JoinHostPort("127.0.0.1", strconv.Itoa(h.data.MetricsPort))
	prom.addTarget(dir, sc.name, instance)
	run := &kitRun{sc: sc, instance: instance, ep: &endpointLog{held: map[string]time.Time{}, dropped: map[string]time.Time{}}}

	// Prometheus scrapes the collector before the load starts.
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := prom.query(ctx, fmt.Sprintf(`up{scenario=%q} == 1`, sc.name), time.Time{}, time.Time{}, 0)
		if err == nil && len(res) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not scrape %s within 30 s (%v)", instance, err)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// The collector's own endpoint, every 250 ms.
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			m, err := demorun.Scrape(sampleCtx, h.metricsURL())
			if err != nil {
				run.ep.scrapeErrs++
			} else {
				run.ep.sample(time.Now(), m, th.QueueFill)
			}
			select {
			case <-sampleCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	const interval = 200 * time.Millisecond
	total := kitLead + sc.trouble + kitAfter
	wait := sendAsync(ctx, demorun.Load{Batches: int(total / interval), SpansPerBatch: sc.spansPerBatch, Interval: interval}, h.receiverURL())
	run.start = time.Now()
	time.Sleep(kitLead)
	run.troubleStart = time.Now()
	switch sc.kind {
	case troubleSwitch:
		sw.set(run.troubleStart, run.troubleStart.Add(sc.trouble))
		time.Sleep(sc.trouble)
	case troubleDown:
		if err := h.Backend.Down(sc.trouble); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.Backend.Serving():
		case <-time.After(sc.trouble + 30*time.Second):
			t.Fatalf("the backend did not come back: %v", h.Backend.UpErr())
		}
	default:
		time.Sleep(sc.trouble)
	}
	run.troubleEnd = time.Now()
	if _, err := wait(); err != nil {
		t.Errorf("load: %v", err)
	}

	// Every alert of the scenario resolves while its collector still runs
	// (a stopped collector's series would go stale and end them anyway).
	resolveBy := time.Now().Add(60 * time.Second)
	for {
		firing := log.firingFor(sc.name)
		if len(firing) == 0 {
			break
		}
		if time.Now().After(resolveBy) {
			t.Errorf("still firing 60 s after the load ended: %v", firing)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Two more evaluations, so that an alert about to fire late is seen.
	time.Sleep(2 * kitScrape)
	run.end = time.Now()
	stopSampling()
	<-sampled
	if run.ep.scrapeErrs > 0 {
		t.Logf("%d scrapes of the collector's endpoint failed", run.ep.scrapeErrs)
	}
	return run
}

// checkAlerts holds each scenario's alerts to its expectations and fills
// rec.Alerts.
func checkAlerts(t *testing.T, log *alertLog, runs map[string]*kitRun, th monitoring.Thresholds, rec *monitoring.Run) {
	t.Helper()
	log.mu.Lock()
	defer log.mu.Unlock()
	twoScrapes := 2 * kitScrape.Seconds()
	for _, sc := range kitScenarios() {
		run := runs[sc.name]
		if run == nil {
			t.Errorf("%s: no run", sc.name)
			continue
		}
		fired := map[string]bool{}
		for _, k := range slices.Sorted(maps.Keys(log.spans)) {
			labels := log.labels[k]
			if labels["scenario"] != sc.name {
				continue
			}
			name := labels["alertname"]
			fired[name] = true
			if !slices.Contains(sc.expect, name) {
				t.Errorf("%s: %s fired, which this scenario must not fire (a false positive): %v", sc.name, k, log.spans[k])
				continue
			}
			first := log.spans[k][0].from
			var onset time.Time
			bound := twoScrapes
			switch name {
			case "OtlpHttpRetryUnauthorized":
				onset, bound = run.ep.held["unauthorized"], bound+time.Duration(th.UnauthorizedFor).Seconds()
			case "OtlpHttpRetryOutage":
				onset, bound = run.ep.held["outage"], bound+time.Duration(th.OutageFor).Seconds()
			case "OtlpHttpRetryThrottled":
				onset, bound = run.ep.held["throttle"], bound+time.Duration(th.ThrottleFor).Seconds()
			case "OtlpHttpRetryItemsDropped":
				onset = run.ep.dropped[labels["reason"]]
			case "OtlpHttpRetryQueueNearlyFull":
				onset, bound = run.ep.queueOver, bound+time.Duration(th.QueueFor).Seconds()
			case "OtlpHttpRetryRateLimitHeaderRejected":
				onset = run.ep.rejected
			case "OtlpHttpRetryNoSuccessfulExport":
				// Its condition is a window without a success.
				if s := run.ep.lastSuccessBefore(first); !s.IsZero() {
					onset = s.Add(time.Duration(th.NoSuccessWindow))
				}
				bound += time.Duration(th.NoSuccessFor).Seconds()
			}
			spans := log.spans[k]
			last := spans[len(spans)-1]
			timing := monitoring.AlertTiming{
				Scenario: sc.name, Alert: name, Bound: bound, Resolved: -1,
				Onset: round(onset.Sub(run.start).Seconds()), Fired: round(first.Sub(onset).Seconds()),
			}
			if reason := labels["reason"]; name == "OtlpHttpRetryItemsDropped" || name == "OtlpHttpRetryRateLimitHeaderRejected" {
				timing.Labels = map[string]string{"reason": reason}
			}
			if !last.to.IsZero() {
				timing.Resolved = round(last.to.Sub(run.troubleEnd).Seconds())
			}
			rec.Alerts = append(rec.Alerts, timing)
			t.Logf("%-9s %-40s onset +%.1fs into the run; fired %.2fs after it (bound %.0fs); resolved %.1fs after the trouble ended; fired %d time(s)",
				sc.name, k[:strings.IndexByte(k+" ", ' ')]+labelSuffix(timing.Labels), timing.Onset, timing.Fired, bound, timing.Resolved, len(spans))
			switch {
			case onset.IsZero():
				t.Errorf("%s: %s fired but its condition never showed on the collector's endpoint", sc.name, k)
			case timing.Fired > bound:
				t.Errorf("%s: %s fired %.2fs after its condition showed, more than its bound of %.0fs (for plus two scrape intervals)", sc.name, k, timing.Fired, bound)
			}
			if last.to.IsZero() {
				t.Errorf("%s: %s never resolved", sc.name, k)
			}
			if len(spans) > 1 {
				t.Errorf("%s: %s fired %d times (flapping): %v", sc.name, k, len(spans), spans)
			}
		}
		for _, want := range sc.expect {
			if !fired[want] {
				t.Errorf("%s: %s never fired (endpoint: held %v, dropped %v, RateLimit rejected %v, queue over %v)",
					sc.name, want, run.ep.held, run.ep.dropped, run.ep.rejected, run.ep.queueOver)
			}
		}
	}
	for k := range log.pending {
		if log.labels[k]["scenario"] == "healthy" {
			t.Logf("healthy: %s was pending (not firing) at some point", k)
		}
	}
}

func labelSuffix(l map[string]string) string {
	if r, ok := l["reason"]; ok {
		return "{reason=" + r + "}"
	}
	return ""
}

// kitVars are the dashboard's variables for one scenario's collector.
func kitVars(instance string) map[string]string {
	// A regular expression inside a PromQL string: its backslashes doubled.
	re := strings.ReplaceAll(regexp.QuoteMeta(instance), `\`, `\\`)
	return map[string]string{"job": ".*", "instance": re, "exporter": ".*", "__rate_interval": kitRateInterval}
}

// checkPanels runs every query of the dashboard over each scenario and
// fails for a query that returned data in none.
func checkPanels(ctx context.Context, t *testing.T, prom *promServer, runs map[string]*kitRun, rec *monitoring.Run) {
	t.Helper()
	for _, p := range monitoring.Panels() {
		for _, target := range p.Targets {
			cov := monitoring.PanelCoverage{Panel: p.Title, Expr: target.Expr, Scenarios: []string{}}
			for _, sc := range kitScenarios() {
				run := runs[sc.name]
				expr, err := monitoring.ExpandVariables(target.Expr, kitVars(run.instance))
				if err != nil {
					t.Fatal(err)
				}
				res, err := prom.query(ctx, expr, run.start, run.end, time.Second)
				if err != nil {
					t.Errorf("panel %q: %v", p.Title, err)
					continue
				}
				if hasSamples(res) {
					cov.Scenarios = append(cov.Scenarios, sc.name)
				}
			}
			rec.PanelData = append(rec.PanelData, cov)
			if len(cov.Scenarios) == 0 {
				t.Errorf("panel %q: no scenario gave its query data: %s", p.Title, target.Expr)
			} else {
				t.Logf("panel %-38q data in %v", p.Title, cov.Scenarios)
			}
		}
	}
}

func hasSamples(res []promSample) bool {
	for _, s := range res {
		if len(s.Values) > 0 {
			return true
		}
	}
	return false
}

// recordPanels stores every panel's series over the throttle scenario.
func recordPanels(ctx context.Context, t *testing.T, prom *promServer, run *kitRun, rec *monitoring.Run) {
	t.Helper()
	rec.Plotted = run.sc.name
	rec.Events = []monitoring.Event{
		{Name: "429 window starts", At: round(run.troubleStart.Sub(run.start).Seconds())},
		{Name: "429 window ends", At: round(run.troubleEnd.Sub(run.start).Seconds())},
	}
	for _, p := range monitoring.Panels() {
		ps := monitoring.PanelSeries{Title: p.Title, Unit: p.Unit, Series: []monitoring.Series{}}
		for _, target := range p.Targets {
			expr, err := monitoring.ExpandVariables(target.Expr, kitVars(run.instance))
			if err != nil {
				t.Fatal(err)
			}
			res, err := prom.query(ctx, expr, run.start, run.end, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res {
				series := monitoring.Series{Legend: monitoring.Legend(target.Legend, s.Metric), Points: [][2]float64{}}
				for _, v := range s.Values {
					ts, _ := v[0].(float64)
					str, _ := v[1].(string)
					val, err := strconv.ParseFloat(str, 64)
					if err != nil || math.IsNaN(val) || math.IsInf(val, 0) {
						continue // a gap, as Grafana draws it (a quantile of no data is NaN)
					}
					secs := ts - float64(run.start.UnixNano())/1e9
					series.Points = append(series.Points, [2]float64{round(secs), val})
				}
				ps.Series = append(ps.Series, series)
			}
		}
		rec.Panels = append(rec.Panels, ps)
	}
}

// stamp records how the run was made.
func stamp(rec *monitoring.Run) {
	rec.Command = "MONITORING_RECORD=$PWD/docs/monitoring-run.json make e2e-test (TestMonitoringKit), then make monitoring"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		rec.Commit = strings.TrimSpace(string(out))
	}
	rec.Date = time.Now().UTC().Format(time.RFC3339)
	host := "unknown"
	if out, err := exec.Command("uname", "-sm").Output(); err == nil {
		host = strings.TrimSpace(string(out))
	}
	rec.Machine = fmt.Sprintf("%s, %d cores (%s)", host, runtime.NumCPU(), runtime.Version())
}

func round(x float64) float64 { return float64(int64(x*1000+0.5*sign(x))) / 1000 }

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}
