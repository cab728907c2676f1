// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// fleetSim is the benchmark's fleet (internal/scenario/fleet.go) in virtual
// time: Size collector processes, each with its own gate and loop (the
// exporter's default policy) and a sending queue of Consumers consumers,
// each offered a batch of BatchItems items every 1/Rate s for LoadFor, into
// one backend that answers 429 Retry-After: 5 for Window from its first
// request, then is a token bucket of QuotaRPS requests a second (as many
// banked) that answers 429 Retry-After: 1 when empty.
type fleetSim struct {
	Size, Consumers, BatchItems int
	Rate                        float64 // batches a second per collector
	LoadFor, Window, Latency    time.Duration
	QuotaRPS                    float64
	// Phase spreads the collectors' loads: each starts at a random offset
	// in [0, Phase).
	Phase time.Duration
	// StartBurst, when above one, queues each collector's first
	// StartBurst batches at its offset at once (a load whose first
	// batches arrive together, as the built collectors' do), the others
	// on their schedule.
	StartBurst int
	// Limiter, when set, replaces the token bucket after the window, and
	// the window's 429s carry a Retry-After only when its hint is
	// retry-after (fleetlimiter_test.go).
	Limiter *limiter.Spec
	// trace and probes, when set, see every throttled attempt (with the
	// pacer's ceiling after it) and every attempt.
	trace  func(instance int, at time.Time, ceiling float64)
	probes func(probe, refused bool, at time.Time)
}

// defaultFleetSim is the benchmark's fleet of 50: 4 batches a second of 50
// spans each (twice a collector's share of 5 000 spans/s), 15 s long.
func defaultFleetSim() fleetSim {
	return fleetSim{Size: 50, Consumers: 10, BatchItems: 50, Rate: 4, LoadFor: 15 * time.Second,
		Window: 5 * time.Second, Latency: 3 * time.Millisecond, QuotaRPS: 100, Phase: 250 * time.Millisecond}
}

// fleetFigures are the benchmark's figures of one run.
type fleetFigures struct {
	AfterWindow, Peak int     // requests in the second after the window; most in any second after it
	Fairness          float64 // Jain's index of items accepted per collector, window end to load end
	Requests, Refused int
	Lost              int
	Delivery          time.Duration // from the first request to the last delivery
	// Per collector, window end to load end: items accepted, requests
	// accepted in its first 5 s, requests refused.
	shares           []float64
	early, refusedIn []int
}

func (f fleetFigures) String() string {
	return fmt.Sprintf("after window %3d/s, peak %3d/s, fairness %.3f, refused %4.1f%% of %d, lost %d, delivered in %.1fs",
		f.AfterWindow, f.Peak, f.Fairness, 100*float64(f.Refused)/float64(f.Requests), f.Requests, f.Lost, f.Delivery.Seconds())
}

type fleetRecord struct {
	at       time.Time
	instance int
	status   int
}

// fleetBackend is the quota backend: a window of refusals from its first
// request, then a token bucket counted in requests (every request carries
// the same items).
type fleetBackend struct {
	window   time.Duration
	rate     float64
	mu       sync.Mutex
	first    time.Time
	tokens   float64
	last     time.Time
	records  []fleetRecord
	windowRA http.Header
	bucketRA http.Header
	lim      *limiter.Limiter // after the window instead of the bucket, when set
}

func (b *fleetBackend) answer(instance int) retry.Response {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.first.IsZero() {
		// Full at its first use, refilling from then on (during the window too).
		b.first, b.tokens, b.last = now, b.rate, now
	}
	b.tokens = min(b.rate, b.tokens+b.rate*now.Sub(b.last).Seconds())
	b.last = now
	r := fleetRecord{at: now, instance: instance, status: http.StatusOK}
	var h http.Header
	switch {
	case now.Before(b.first.Add(b.window)):
		r.status, h = http.StatusTooManyRequests, b.windowRA
	case b.lim != nil:
		a := b.lim.Admit(now, limiter.Request{Items: 1})
		r.status, h = a.Status, a.Header
	case b.tokens >= 1:
		b.tokens--
	default:
		r.status, h = http.StatusTooManyRequests, b.bucketRA
	}
	b.records = append(b.records, r)
	if r.status != http.StatusOK {
		return retry.Response{Status: r.status, Header: h, Err: fmt.Errorf("collector answered %d", r.status)}
	}
	return retry.Response{Status: r.status}
}

// lockedRand is a jitter source the loop may call from many goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// exporterPolicy is the policy the exporter builds from its default
// config (exporter.go, factory.go): hold on 401, pacing on.
func exporterPolicy() retry.Policy {
	p := defaultPolicy()
	p.Pacing = retry.NewDefaultPacingConfig()
	return p
}

// run simulates the fleet with seed; call it inside a synctest bubble.
func (s fleetSim) run(seed uint64) fleetFigures {
	backend := &fleetBackend{window: s.Window, rate: s.QuotaRPS,
		windowRA: http.Header{"Retry-After": {strconv.Itoa(int(s.Window.Seconds()))}},
		bucketRA: http.Header{"Retry-After": {"1"}}}
	if s.Limiter != nil {
		backend.lim = newFleetLimiter(*s.Limiter, seed)
		if s.Limiter.Hint != limiter.HintRetryAfter {
			backend.windowRA = nil
		}
	}
	phases := rand.New(rand.NewPCG(seed, 0))
	time.Sleep(clockPhase(seed, 0))
	start := time.Now()
	batches := int(s.Rate * s.LoadFor.Seconds())
	var (
		mu            sync.Mutex
		lost          int
		lastDelivered time.Time
		loadEnd       time.Time
		wg            sync.WaitGroup
	)
	for i := range s.Size {
		var loop *retry.Loop
		loop = retry.NewLoop(exporterPolicy(), retry.RealClock{}, retry.NewGate(retry.RealClock{}), func(_ context.Context, e retry.Event) {
			if s.probes != nil && e.Kind == retry.EventAttempt {
				s.probes(e.Probe, e.Throttled, time.Now())
			}
			if s.trace != nil && e.Kind == retry.EventAttempt && e.Throttled {
				s.trace(i, time.Now(), loop.Pacer().Ceiling())
			}
		})
		loop.SetRandom((&lockedRand{r: rand.New(rand.NewPCG(seed, uint64(i)+1))}).Float64)
		offset := time.Duration(phases.Float64() * float64(s.Phase))
		queue := make(chan int, batches)
		wg.Go(func() {
			defer close(queue)
			for k := range batches {
				at := offset + time.Duration(float64(k)/s.Rate*float64(time.Second))
				if k < s.StartBurst {
					at = offset
				}
				time.Sleep(time.Until(start.Add(at)))
				queue <- k
			}
			mu.Lock()
			if now := time.Now(); now.After(loadEnd) {
				loadEnd = now
			}
			mu.Unlock()
		})
		send := func(context.Context, int) retry.Response {
			time.Sleep(s.Latency / 2)
			r := backend.answer(i)
			time.Sleep(s.Latency / 2)
			return r
		}
		for range s.Consumers {
			wg.Go(func() {
				for range queue {
					out := loop.RunItems(context.Background(), s.BatchItems, send)
					mu.Lock()
					if out.Kind != retry.Delivered {
						lost++
					} else if now := time.Now(); now.After(lastDelivered) {
						lastDelivered = now
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()

	f := fleetFigures{Lost: lost, Requests: len(backend.records), Delivery: lastDelivered.Sub(backend.first)}
	windowEnd := backend.first.Add(s.Window)
	var arrivals []time.Time
	f.shares = make([]float64, s.Size)
	f.early = make([]int, s.Size)
	f.refusedIn = make([]int, s.Size)
	for _, r := range backend.records {
		arrivals = append(arrivals, r.at)
		if r.status != http.StatusOK {
			f.Refused++
			if !r.at.Before(windowEnd) && !r.at.After(loadEnd) {
				f.refusedIn[r.instance]++
			}
			continue
		}
		if !r.at.Before(windowEnd) && !r.at.After(loadEnd) {
			f.shares[r.instance] += float64(s.BatchItems)
			if r.at.Before(windowEnd.Add(5 * time.Second)) {
				f.early[r.instance]++
			}
		}
	}
	for _, t := range arrivals {
		if !t.Before(windowEnd) && t.Before(windowEnd.Add(time.Second)) {
			f.AfterWindow++
		}
	}
	f.Peak = scenario.PeakPerSecond(arrivals, windowEnd, lastDelivered)
	f.Fairness = scenario.Jain(f.shares)
	return f
}

func simulateFleet(t *testing.T, s fleetSim, seed uint64) fleetFigures {
	t.Helper()
	var f fleetFigures
	synctest.Test(t, func(*testing.T) { f = s.run(seed) })
	return f
}

// TestFleetKeepsTheWindowsEndGentle: the fleet of 50 after a window that
// refused everyone (the benchmark's fleet, simulated) over twenty seeds:
// nothing is lost; in the second after the window no more than the
// bucket's burst plus one probe per collector arrive (the slow start, not
// everything that waited); and the quota is shared evenly between the
// window's end and the load's: Jain's index has a median of at least 0.89
// (the pacer before the additive step and the per-refusal cut: 0.871; 50
// collectors drawing at random would score 0.95), and no seed is below 0.8.
func TestFleetKeepsTheWindowsEndGentle(t *testing.T) {
	s := defaultFleetSim()
	var fair []float64
	for seed := range uint64(20) {
		f := simulateFleet(t, s, seed)
		t.Logf("seed %d: %s", seed, f)
		assert.Zero(t, f.Lost, "seed %d: batches lost", seed)
		assert.LessOrEqual(t, f.AfterWindow, int(s.QuotaRPS)+s.Size, "seed %d: requests in the second after the window", seed)
		assert.Equal(t, s.Size*int(s.Rate*s.LoadFor.Seconds()), f.Requests-f.Refused, "seed %d: every batch accepted once", seed)
		assert.GreaterOrEqual(t, f.Fairness, 0.8, "seed %d: fairness", seed)
		fair = append(fair, f.Fairness)
	}
	slices.Sort(fair)
	assert.GreaterOrEqual(t, (fair[9]+fair[10])/2, 0.89, "median fairness over twenty seeds")
}

// TestFleetDistribution logs the fleet's figures over many seeds (set
// FLEET_SEEDS to how many), with the tuning SCORE_TUNING names (as
// TestScore); it asserts nothing. With FLEET_JSON set to a
// file, it also stores them there with their provenance, for the figures of
// docs/benchmarks.md:
//
//	FLEET_SEEDS=40 FLEET_JSON=docs/fleet-model.json go test -run TestFleetDistribution ./retry/
func TestFleetDistribution(t *testing.T) {
	n, _ := strconv.ParseUint(os.Getenv("FLEET_SEEDS"), 10, 16)
	if n == 0 {
		t.Skip("set FLEET_SEEDS to run")
	}
	path := tunedStore(t, "FLEET_JSON")
	stored := struct {
		scenario.Provenance
		Runs []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance([]string{"FLEET_SEEDS=" + strconv.FormatUint(n, 10), "go", "test", "-run", "TestFleetDistribution", "./retry/"})}
	var fair, peaks []float64
	for seed := range n {
		f := simulateFleet(t, defaultFleetSim(), seed)
		t.Logf("seed %2d: %s", seed, f)
		stored.Runs = append(stored.Runs, map[string]any{
			"scenario": "fleet-model", "exporter": "otlp_http_retry", "run": seed,
			"fairness": f.Fairness, "after_window_rps": f.AfterWindow, "peak_rps_after_window": f.Peak,
			"requests": f.Requests, "refused": f.Refused, "refused_share": float64(f.Refused) / float64(f.Requests),
			"lost": f.Lost, "delivery_seconds": f.Delivery.Seconds(),
		})
		if os.Getenv("FLEET_SHARES") != "" {
			sh := slices.Clone(f.shares)
			sort.Float64s(sh)
			t.Logf("  shares (requests): %v", func() []int {
				out := make([]int, len(sh))
				for i, x := range sh {
					out[i] = int(x / 50)
				}
				return out
			}())
		}
		fair = append(fair, f.Fairness)
		peaks = append(peaks, float64(f.Peak))
	}
	slices.Sort(fair)
	slices.Sort(peaks)
	t.Logf("fairness min %.3f median %.3f max %.3f; peak min %.0f median %.0f max %.0f",
		fair[0], fair[len(fair)/2], fair[len(fair)-1], peaks[0], peaks[len(peaks)/2], peaks[len(peaks)-1])
	if path != "" {
		stored.Finish()
		stored.Command = fmt.Sprintf("FLEET_SEEDS=%d FLEET_JSON=%s go test -run TestFleetDistribution ./retry/", n, path)
		writeStoredRun(t, path, stored)
	}
}

// TestFleetTrace shows one seed's run per collector (set FLEET_TRACE to the
// seed): requests accepted window end to load end (in its first 5 s + the
// rest), refused, and at each refusal the time since the window's end and
// the ceiling after it in requests/s; then how often probes and other
// requests were refused. It asserts nothing.
func TestFleetTrace(t *testing.T) {
	seed, err := strconv.ParseUint(os.Getenv("FLEET_TRACE"), 10, 64)
	if err != nil {
		t.Skip("set FLEET_TRACE to a seed")
	}
	s := defaultFleetSim()
	var mu sync.Mutex
	lines := map[int][]string{}
	var origin time.Time
	s.trace = func(i int, at time.Time, c float64) {
		mu.Lock()
		defer mu.Unlock()
		if origin.IsZero() {
			origin = at
		}
		lines[i] = append(lines[i], fmt.Sprintf("%.2f:%.1f", at.Sub(origin).Seconds()-5, c/50))
	}
	var cnt [2][2]int
	s.probes = func(probe, refused bool, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if origin.IsZero() || at.Sub(origin) < 5*time.Second || at.Sub(origin) > 15*time.Second {
			return
		}
		a, b := 0, 0
		if probe {
			a = 1
		}
		if refused {
			b = 1
		}
		cnt[a][b]++
	}
	f := simulateFleet(t, s, seed)
	t.Logf("non-probe ok %d refused %d; probe ok %d refused %d", cnt[0][0], cnt[0][1], cnt[1][0], cnt[1][1])
	t.Logf("%s", f)
	for i := range s.Size {
		t.Logf("%2d %3.0f = %2d + %2d refused %2d %v", i, f.shares[i]/50, f.early[i], int(f.shares[i]/50)-f.early[i], f.refusedIn[i], lines[i])
	}
}
