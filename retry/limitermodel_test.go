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
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// cellModel is one collector in front of a cell of the limiter matrix
// (scenario.MatrixCells), in virtual time: the real retry.Loop with the
// exporter's default policy, its own gate and pacer, Consumers queue
// consumers taking batches from a queue of QueueSize, fed by the cell's
// load (two senders, each offered half the cell's rate, a batch the full
// queue refuses retried 20 ms later, as the benchmark's load does). Each
// request takes about Network (half on the way there, half back, each
// give or take half at random: see trip); an accepted
// one is also held for the cell's Latency, and stays open at an in-flight
// limiter meanwhile. What is not delivered Cell.Timeout after the load's
// end is counted lost, as the benchmark counts it.
//
// Use it from any test of package retry_test:
//
//	f := simulateCell(t, newCellModel(cell), seed)
//	v := scenario.Judge(cell, "model", f.CellFigures, nil, nil)
type cellModel struct {
	Cell                 scenario.Cell
	Consumers, QueueSize int
	Network              time.Duration
	// Policy is the loop's policy; exporterPolicy() by default.
	Policy retry.Policy
	// Trace, when set, sees every attempt: when it left, when it was
	// answered, with what, and the pacer's rate right after.
	Trace func(sent, answered time.Time, status int, rate float64)
	// Loop, when set, is given the loop before the load starts.
	Loop func(*retry.Loop)
}

// newCellModel is the exporter's defaults (10 consumers, a queue of 1 000)
// on loopback (modelNetwork).
func newCellModel(c scenario.Cell) cellModel {
	return cellModel{Cell: c, Consumers: 10, QueueSize: 1000, Network: modelNetwork(), Policy: exporterPolicy()}
}

// loopbackNetwork is the round trip the model gives a request: what the
// real runs of the matrix, on loopback, have. Of 0.25, 0.5, 0.75, 1 and
// 2 ms, every stored real run of the matrix falls within the model's seeds
// at 0.5 and 0.75 ms (TestModelMatchesRealMatrix; docs/benchmarks.md, "The
// model against the real matrix, and a network's round trip"); at the
// others the RateLimit sliding window falls out of them.
const loopbackNetwork = 500 * time.Microsecond

// modelNetwork is loopbackNetwork, or LIMITER_NETWORK (a Go duration,
// such as 20ms) to run the model over another network.
func modelNetwork() time.Duration {
	v := os.Getenv("LIMITER_NETWORK")
	if v == "" {
		return loopbackNetwork
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		panic(fmt.Sprintf("LIMITER_NETWORK=%q: want a duration such as 2ms", v))
	}
	return d
}

// modelCommand is the environment a stored model run was made with, for
// its provenance: LIMITER_NETWORK when set.
func modelCommand(args ...string) []string {
	if v := os.Getenv("LIMITER_NETWORK"); v != "" {
		args = append([]string{"LIMITER_NETWORK=" + v}, args...)
	}
	return args
}

// cellFigures are one run's figures: what scenario.Judge reads, and more.
type cellFigures struct {
	scenario.CellFigures
	// Dropped is the batches the loop dropped; Late those still not
	// delivered at the timeout.
	Dropped, Late int
	// Start is the load's first batch; First the first request; Complete
	// the arrival of the request that completed delivery (zero if none).
	Start, First, Complete time.Time
	// Best is, for a fixed window, the most of its limit any exporter
	// could have used in this run (scenario.Cell.BestUsed from First).
	Best *float64

	// For the harness's own test: batches delivered, accepted requests,
	// batches accepted more than once.
	delivered, accepted, acceptedTwice int
}

func (f cellFigures) String() string {
	used, delivery := "–", "not delivered"
	if f.Used != nil {
		used = fmt.Sprintf("%5.1f%%", 100**f.Used)
		if f.Best != nil {
			used += fmt.Sprintf(" (at most %.1f%%)", 100**f.Best)
		}
	}
	if f.DeliverySeconds != nil {
		delivery = fmt.Sprintf("%6.1fs", *f.DeliverySeconds)
	}
	return fmt.Sprintf("refused %5.1f%% of %4d, used %s, delivered %s, lost %d spans (%d dropped, %d late)",
		100*f.RefusedShare(), f.Requests, used, delivery, f.Lost, f.Dropped, f.Late)
}

// cellBackend is the limiter, the requests it served and what it
// accepted of each batch.
type cellBackend struct {
	mu       sync.Mutex
	lim      *limiter.Limiter
	latency  time.Duration
	served   []limiter.Served
	accepted map[int]time.Time // batch → arrival of its first acceptance
	twice    int               // acceptances of a batch accepted before
}

func (b *cellBackend) answer(batch int, req limiter.Request) retry.Response {
	b.mu.Lock()
	now := time.Now()
	a := b.lim.Admit(now, req)
	i := len(b.served)
	b.served = append(b.served, limiter.Served{Request: req, Arrival: now, Done: now, Accepted: a.Accepted()})
	if a.Accepted() {
		if _, ok := b.accepted[batch]; ok {
			b.twice++
		} else {
			b.accepted[batch] = now
		}
	}
	b.mu.Unlock()
	if !a.Accepted() {
		return retry.Response{Status: a.Status, Header: a.Header, Err: fmt.Errorf("collector answered %d", a.Status)}
	}
	time.Sleep(b.latency)
	b.mu.Lock()
	b.lim.Done()
	b.served[i].Done = time.Now()
	b.mu.Unlock()
	return retry.Response{Status: a.Status, Header: a.Header}
}

// trip is how long request id takes on its way there and back: half of
// Network each way, give or take half of that at random (seeded by the
// run's seed and the request), as a real network spreads requests that
// leave together; without it, requests sent at one virtual instant would
// all reach the limiter at one instant.
func (m cellModel) trip(seed, id uint64) (there, back time.Duration) {
	r := rand.New(rand.NewPCG(seed, id^0x74726970))
	half := float64(m.Network / 2)
	return time.Duration(half * (0.5 + r.Float64())), time.Duration(half * (0.5 + r.Float64()))
}

// run simulates the cell with seed (the limiter's random refusals and the
// loop's jitter); call it inside a synctest bubble.
func (m cellModel) run(seed uint64) cellFigures {
	c := m.Cell
	spec := c.Limiter
	spec.Seed = seed
	lim, err := limiter.New(spec)
	if err != nil {
		panic(err)
	}
	backend := &cellBackend{lim: lim, latency: c.Latency, accepted: map[int]time.Time{}}
	req := limiter.Request{Items: c.Batch, Bytes: scenario.BatchWireBytes(c.Batch)}

	var loop *retry.Loop
	loop = retry.NewLoop(m.Policy, retry.RealClock{}, retry.NewGate(retry.RealClock{}), func(_ context.Context, e retry.Event) {
		if m.Trace != nil && e.Kind == retry.EventAttempt {
			now := time.Now()
			m.Trace(now.Add(-e.Duration), now, e.Response.Status, loop.Pacer().Rate())
		}
	})
	loop.SetRandom((&lockedRand{r: rand.New(rand.NewPCG(seed, 0x63656c6c))}).Float64)
	if m.Loop != nil {
		m.Loop(loop)
	}

	load := c.Load()
	window := time.Duration(0)
	if spec.Kind == limiter.FixedWindow || spec.Kind == limiter.Flapping {
		window = spec.Window
	}
	time.Sleep(clockPhase(seed, window))
	start := time.Now()
	loadEnd := start.Add(load.Duration())
	deadline, cancel := context.WithDeadline(context.Background(), loadEnd.Add(c.Timeout))
	defer cancel()
	queue := make(chan int, m.QueueSize)
	var senders, consumers sync.WaitGroup
	for s := range load.Senders {
		senders.Go(func() {
			offset := time.Duration(float64(s) / float64(load.Senders) / load.Rate * float64(time.Second))
			for k := range load.Batches {
				time.Sleep(time.Until(start.Add(offset + time.Duration(float64(k)/load.Rate*float64(time.Second)))))
				for {
					select {
					case queue <- s*load.Batches + k:
					default:
						time.Sleep(20 * time.Millisecond) // the receiver's pushback, retried
						continue
					}
					break
				}
			}
		})
	}
	var mu sync.Mutex
	f := cellFigures{Start: start}
	for range m.Consumers {
		consumers.Go(func() {
			for batch := range queue {
				if deadline.Err() != nil {
					mu.Lock()
					f.Late++
					mu.Unlock()
					continue
				}
				out := loop.RunItems(deadline, c.Batch, func(_ context.Context, attempt int) retry.Response {
					id := requestID(batch, attempt)
					there, back := m.trip(seed, id)
					time.Sleep(there)
					r := backend.answer(batch, limiter.Request{Items: req.Items, Bytes: req.Bytes, ID: id})
					time.Sleep(back)
					return r
				})
				mu.Lock()
				switch out.Kind {
				case retry.Delivered:
					f.delivered++
				case retry.Dropped:
					f.Dropped++
				case retry.Interrupted:
					f.Late++
				}
				mu.Unlock()
			}
		})
	}
	senders.Wait()
	close(queue)
	consumers.Wait()

	f.Spans = load.Senders * load.Batches * c.Batch
	f.Lost = (f.Dropped + f.Late) * c.Batch
	dropped := f.Dropped * c.Batch
	f.CellFigures.Dropped = &dropped
	f.Requests = len(backend.served)
	for _, s := range backend.served {
		if !s.Accepted {
			f.Refused++
		} else {
			f.accepted++
		}
	}
	f.acceptedTwice = backend.twice
	if len(backend.served) > 0 {
		f.First = backend.served[0].Arrival
	}
	// The last accepted request's arrival, and its answer's time.
	var last, lastDone time.Time
	for _, s := range backend.served {
		if s.Accepted && !s.Arrival.Before(last) {
			last, lastDone = s.Arrival, s.Done
		}
	}
	if f.Lost == 0 {
		for _, at := range backend.accepted {
			if at.After(f.Complete) {
				f.Complete = at
			}
		}
		d := f.Complete.Sub(start).Seconds()
		f.DeliverySeconds = &d
	}
	to := last
	if spec.Kind == limiter.InFlight {
		to = lastDone
	}
	if used, ok := spec.Used(backend.served, f.First, to); ok {
		f.Used = &used
		if best, ok := c.BestUsed(f.First); ok {
			f.Best = &best
		}
	}
	return f
}

func simulateCell(t *testing.T, m cellModel, seed uint64) cellFigures {
	t.Helper()
	var f cellFigures
	synctest.Test(t, func(*testing.T) { f = m.run(seed) })
	return f
}

// modelCells returns the matrix's cells (with extra, the extra and long
// cells too), or those whose names contain one of LIMITER_CELLS's
// comma-separated parts.
func modelCells(extra bool) []scenario.Cell {
	cells := matrixCells(extra)
	filter := os.Getenv("LIMITER_CELLS")
	if filter == "" {
		return cells
	}
	var out []scenario.Cell
	for _, c := range cells {
		for part := range strings.SplitSeq(filter, ",") {
			if part != "" && strings.Contains(c.Name, part) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// TestLimiterModelAccountsForEveryBatch: every batch offered is delivered
// (accepted exactly once), dropped or late, whatever the limiter; the
// requests are the acceptances and the refusals; and a seed's figures move
// little from run to run (the limiter's decisions depend on the seed
// alone, but goroutines that wake at the same virtual instant run in any
// order, which moves the loop's jitter from one payload to another).
func TestLimiterModelAccountsForEveryBatch(t *testing.T) {
	for _, name := range []string{"gcra/none/50rps/50", "in-flight-2/none/20rps/500", "shed-50%/none/10rps/200"} {
		c, ok := scenario.CellByName(name)
		require.True(t, ok, name)
		a := simulateCell(t, newCellModel(c), 3)
		b := simulateCell(t, newCellModel(c), 3)
		t.Logf("%s: %s", name, a)
		for _, f := range []cellFigures{a, b} {
			assert.Equal(t, c.Batches(), f.delivered+f.Dropped+f.Late, "%s: batches delivered, dropped and late", name)
			assert.Zero(t, f.acceptedTwice, "%s: batches accepted twice", name)
			assert.Equal(t, f.Requests, f.accepted+f.Refused, "%s: requests", name)
			assert.Equal(t, (f.Dropped+f.Late)*c.Batch, f.Lost, name)
		}
		assert.InEpsilon(t, a.Requests, b.Requests, 0.05, "%s: requests of one seed", name)
		assert.InDelta(t, a.RefusedShare(), b.RefusedShare(), 0.02, "%s: refused share of one seed", name)
	}
}

// TestLimiterModelReference: without a limit the load is delivered as it
// is offered: nothing refused or lost, the last batch delivered within a
// few milliseconds of its offer; and a limit the load stays under refuses
// nothing and measures the share of it the load used.
func TestLimiterModelReference(t *testing.T) {
	c, ok := scenario.CellByName("unlimited/none/20rps/100")
	require.True(t, ok)
	f := simulateCell(t, newCellModel(c), 1)
	t.Logf("%s", f)
	assert.Zero(t, f.Refused)
	assert.Zero(t, f.Lost)
	require.NotNil(t, f.DeliverySeconds)
	// The second sender's last batch, half an interval after the first's.
	l := c.Load()
	lastOffer := l.Duration().Seconds() + 1/l.Rate/float64(l.Senders)
	assert.InDelta(t, lastOffer, *f.DeliverySeconds, 0.01)
	assert.Nil(t, f.Used)

	// The same load (20 batches a second) under a GCRA of 40 a second.
	c.Limiter = limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintNone, Rate: 40, Burst: 2}
	f = simulateCell(t, newCellModel(c), 1)
	t.Logf("%s", f)
	assert.Zero(t, f.Refused)
	require.NotNil(t, f.Used)
	// 300 requests over a burst of 2 + 40 × the 14.95 s from the first
	// request to the last.
	assert.InDelta(t, 300.0/(2+40*14.95), *f.Used, 0.001)
}

// TestLimiterModelTimesOut: what the loop has not delivered at the cell's
// timeout is late, and counted lost.
func TestLimiterModelTimesOut(t *testing.T) {
	c, ok := scenario.CellByName("gcra/none/2rps/5000")
	require.True(t, ok)
	c.Timeout = time.Second
	f := simulateCell(t, newCellModel(c), 1)
	t.Logf("%s", f)
	assert.Positive(t, f.Late)
	assert.Equal(t, (f.Late+f.Dropped)*c.Batch, f.Lost)
	assert.Nil(t, f.DeliverySeconds)
}

// TestLimiterMatrix runs every cell of the limiter matrix in the model
// (set LIMITER_SEEDS to how many seeds; LIMITER_CELLS to run only the
// cells whose names contain one of its comma-separated parts; SCORE_EXTRA
// to add the extra and long cells, as TestScore: a stored run's command
// names both) and prints
// each cell's figures per seed, its medians, whether the goals
// that need no core exporter are met, and the worst cell, with the tuning
// SCORE_TUNING names (as TestScore; a stored run is the default's). It
// asserts nothing. With LIMITER_JSON set to a file, it also stores every seed's
// figures there with their provenance, for the figures of
// docs/benchmarks.md:
//
//	LIMITER_SEEDS=10 LIMITER_JSON=docs/limiter-model.json go test -run TestLimiterMatrix ./retry/
func TestLimiterMatrix(t *testing.T) {
	n, _ := strconv.ParseUint(os.Getenv("LIMITER_SEEDS"), 10, 16)
	if n == 0 {
		t.Skip("set LIMITER_SEEDS to run")
	}
	path := tunedStore(t, "LIMITER_JSON")
	stored := struct {
		scenario.Provenance
		Runs []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance(modelCommand(append(cellFilter(), "LIMITER_SEEDS="+strconv.FormatUint(n, 10), "LIMITER_JSON="+path, "go", "test", "-run", "TestLimiterMatrix", "./retry/")...))}
	byName := map[string]cellFigures{}
	var verdicts []scenario.Verdict
	extra := os.Getenv("SCORE_EXTRA") != ""
	for _, c := range modelCells(extra) {
		var runs []cellFigures
		for seed := range n {
			f := simulateCell(t, newCellModel(c), seed)
			if n > 1 {
				t.Logf("%-38s seed %2d: %s", c.Name, seed, f)
			}
			runs = append(runs, f)
			run := map[string]any{
				"scenario": c.Name, "exporter": string(scenario.Ours), "model": "limiter", "run": seed,
				"requests": f.Requests, "refused": f.Refused, "refused_share": share(f.Refused, f.Requests),
				"spans": f.Spans, "lost": f.Lost, "dropped": f.Dropped, "late": f.Late,
			}
			if f.Used != nil {
				run["used"] = *f.Used
			}
			if f.Best != nil {
				run["best"] = *f.Best
			}
			if f.DeliverySeconds != nil {
				run["delivery_seconds"] = *f.DeliverySeconds
			}
			stored.Runs = append(stored.Runs, run)
		}
		med := medianCell(runs)
		byName[c.Name] = med
		var ref *scenario.CellFigures
		if r, ok := byName[c.Reference]; ok {
			ref = &r.CellFigures
		}
		v := scenario.Judge(c, "model", med.CellFigures, nil, ref)
		verdicts = append(verdicts, v)
		status := "met"
		if !v.Met() {
			status = "MISSED: " + v.Missed()
		}
		t.Logf("%-38s median: %s; %s", c.Name, med, status)
		if n > 1 {
			t.Logf("%-38s spread: %s", c.Name, spreadCell(runs))
		}
	}
	if len(verdicts) == 0 {
		return
	}
	worst := slices.MinFunc(verdicts, func(a, b scenario.Verdict) int {
		switch {
		case scenario.Worse(a, b):
			return -1
		case scenario.Worse(b, a):
			return 1
		}
		return 0
	})
	t.Logf("worst cell: %s: %s", worst.Cell, worst.Missed())
	if path != "" {
		stored.Finish()
		writeStoredRun(t, path, stored)
	}
}

// cellFilter is what chose the cells of a run beyond the matrix's own, as
// its command names it: SCORE_EXTRA and LIMITER_CELLS when set.
func cellFilter() []string {
	var env []string
	for _, k := range []string{"SCORE_EXTRA", "LIMITER_CELLS"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// medianCell is the run whose delivery time is the median (undelivered
// runs count as the slowest, the more lost the slower).
func medianCell(runs []cellFigures) cellFigures {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b cellFigures) int {
		switch {
		case a.DeliverySeconds == nil && b.DeliverySeconds == nil:
			return a.Lost - b.Lost
		case a.DeliverySeconds == nil:
			return 1
		case b.DeliverySeconds == nil:
			return -1
		}
		if *a.DeliverySeconds < *b.DeliverySeconds {
			return -1
		}
		if *a.DeliverySeconds > *b.DeliverySeconds {
			return 1
		}
		return 0
	})
	return sorted[len(sorted)/2]
}

// spreadCell is the least and the most of each figure over runs.
func spreadCell(runs []cellFigures) string {
	span := func(get func(cellFigures) (float64, bool), format string) string {
		lo, hi, n := 0.0, 0.0, 0
		for _, f := range runs {
			v, ok := get(f)
			if !ok {
				continue
			}
			if n == 0 || v < lo {
				lo = v
			}
			if n == 0 || v > hi {
				hi = v
			}
			n++
		}
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf(format+"–"+format, lo, hi)
	}
	refused := span(func(f cellFigures) (float64, bool) { return 100 * f.RefusedShare(), true }, "%.1f")
	used := span(func(f cellFigures) (float64, bool) {
		if f.Used == nil {
			return 0, false
		}
		return 100 * *f.Used, true
	}, "%.1f")
	delivered := span(func(f cellFigures) (float64, bool) {
		if f.DeliverySeconds == nil {
			return 0, false
		}
		return *f.DeliverySeconds, true
	}, "%.1f")
	lost := span(func(f cellFigures) (float64, bool) { return float64(f.Lost), true }, "%.0f")
	undelivered := 0
	for _, f := range runs {
		if f.DeliverySeconds == nil {
			undelivered++
		}
	}
	return fmt.Sprintf("refused %s %%, used %s %%, delivered in %s s (%d of %d runs not all delivered), lost %s spans",
		refused, used, delivered, undelivered, len(runs), lost)
}

// TestLimiterTrace shows one cell's run second by second (set
// LIMITER_TRACE to the cell's name, LIMITER_SEED to the seed, 0 by
// default): requests sent, accepted and refused in each second of the
// backend's time, and the pacer's rate at the end of it, with the tuning
// SCORE_TUNING names (as TestScore); with LIMITER_TRACE_REQUESTS set, each
// request too (when it left, also as its place past the clock's multiple of
// 10 s, and was answered, its status, the pacer's rate after it in requests
// a second). It asserts nothing.
func TestLimiterTrace(t *testing.T) {
	name := os.Getenv("LIMITER_TRACE")
	if name == "" {
		t.Skip("set LIMITER_TRACE to a cell's name")
	}
	scoreTuning(t)
	c, ok := scenario.CellByName(name)
	require.True(t, ok, "no cell %q", name)
	seed, _ := strconv.ParseUint(os.Getenv("LIMITER_SEED"), 10, 64)
	type second struct {
		ok, refused int
		rate        float64
	}
	var mu sync.Mutex
	var origin time.Time
	var secs []second
	requests := os.Getenv("LIMITER_TRACE_REQUESTS") != ""
	m := newCellModel(c)
	m.Trace = func(sent, answered time.Time, status int, rate float64) {
		mu.Lock()
		defer mu.Unlock()
		if origin.IsZero() {
			origin = sent
		}
		if requests {
			t.Logf("sent %8.3f s (clock %6.3f s past 10 s), answered %8.3f s: %d, pacer rate %.2f requests/s", sent.Sub(origin).Seconds(), sent.Sub(sent.Truncate(10*time.Second)).Seconds(), answered.Sub(origin).Seconds(), status, rate/float64(c.Batch))
		}
		i := int(answered.Sub(origin) / time.Second)
		for len(secs) <= i {
			secs = append(secs, second{})
		}
		if status == http.StatusOK {
			secs[i].ok++
		} else {
			secs[i].refused++
		}
		secs[i].rate = rate
	}
	f := simulateCell(t, m, seed)
	t.Logf("%s (limit %.3g requests/s): %s", c.Name, c.LimitRPS(), f)
	for i, s := range secs {
		t.Logf("%3d s: %3d accepted %3d refused, pacer rate %.1f items/s", i, s.ok, s.refused, s.rate)
	}
}

// clockPhase is how far into the clock's 10 s a model's run with seed
// starts, evenly in [0, 10 s): the bubble's clock starts on a multiple of
// 10 s, where a real run starts anywhere, and the exporter reads those
// multiples (a fixed window resets there: Policy's window holds). Behind a
// fixed window (window, 0 for none) of at most 10 s, the draw of the
// phase in the window comes first, as it did before the exporter read the
// clock (a seed starts at the same point of its windows), and a whole
// number of windows is drawn after it.
func clockPhase(seed uint64, window time.Duration) time.Duration {
	r := rand.New(rand.NewPCG(seed, 0x7068617365))
	phase := r.Float64()
	if window <= 0 || window > windowAlign {
		return time.Duration(phase * float64(windowAlign))
	}
	return time.Duration(phase*float64(window)) + time.Duration(r.IntN(int(windowAlign/window)))*window
}

// windowAlign is the exporter's: fixed windows reset at its multiples.
const windowAlign = 10 * time.Second

// requestID names a model's request by its batch and attempt, for the
// limiter's draws and the network's delays: the same requests are refused
// at random, and take the same time on the way, whatever order they are
// sent in.
func requestID(batch, attempt int) uint64 {
	return uint64(batch)<<16 | uint64(attempt) //nolint:gosec // G115: batch numbers and attempts are small and never negative
}

// firstRequestRefused says whether cell c's limiter, with seed, refuses a
// model's first request (the first batch's first attempt) at random.
func firstRequestRefused(t *testing.T, c scenario.Cell, seed uint64) bool {
	t.Helper()
	spec := c.Limiter
	spec.Seed = seed
	lim, err := limiter.New(spec)
	require.NoError(t, err)
	return lim.Admit(t0, limiter.Request{Items: c.Batch, Bytes: scenario.BatchWireBytes(c.Batch), ID: requestID(0, 1)}).Status != http.StatusOK
}
