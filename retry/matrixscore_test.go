// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// coreRetry is the core exporter's retry sender as exporterhelper v0.165
// runs it for otlp_http: after a 429, 502, 503 or 504 it waits the
// exponential backoff (5 s × 1.5^n, ± 50 %, at most 30 s), or the
// Retry-After of a 429 or 503 when that is longer, for 300 s in all; any
// other status drops.
func coreRetry(rng func() float64, send func(attempt int) retry.Response) retry.OutcomeKind {
	start := time.Now()
	interval := 5 * time.Second
	for attempt := 1; ; attempt++ {
		r := send(attempt)
		if r.Status >= 200 && r.Status < 300 {
			return retry.Delivered
		}
		if r.Status != 429 && r.Status != 502 && r.Status != 503 && r.Status != 504 {
			return retry.Dropped
		}
		wait := time.Duration(float64(interval) * (0.5 + rng()))
		interval = min(time.Duration(float64(interval)*1.5), 30*time.Second)
		if ra := r.Header.Get("Retry-After"); ra != "" && (r.Status == 429 || r.Status == 503) {
			if s, err := strconv.Atoi(ra); err == nil {
				wait = max(wait, time.Duration(s)*time.Second)
			}
		}
		if time.Since(start)+wait > 300*time.Second {
			return retry.Dropped
		}
		time.Sleep(wait)
	}
}

// runScore is cellModel.run, or with core set the same cell through the
// core exporter's retry (coreRetry) in place of the loop: the model of
// both exporters that scores the pacer against every goal of the issue,
// "no later than core" included.
func runScore(m cellModel, seed uint64, core bool) cellFigures {
	if !core {
		return m.run(seed)
	}
	c := m.Cell
	spec := c.Limiter
	spec.Seed = seed
	lim, _ := limiter.New(spec)
	backend := &cellBackend{lim: lim, latency: c.Latency, accepted: map[int]time.Time{}}
	req := limiter.Request{Items: c.Batch, Bytes: scenario.BatchWireBytes(c.Batch)}
	rng := &lockedRand{r: rand.New(rand.NewPCG(seed, 0x63656c6c))}
	load := c.Load()
	start := time.Now()
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
						time.Sleep(20 * time.Millisecond)
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
				k := coreRetry(rng.Float64, func(attempt int) retry.Response {
					time.Sleep(m.Network / 2)
					r := backend.answer(batch, limiter.Request{Items: req.Items, Bytes: req.Bytes, ID: requestID(batch, attempt)})
					time.Sleep(m.Network / 2)
					return r
				})
				mu.Lock()
				if k == retry.Delivered {
					f.delivered++
				} else {
					f.Dropped++
				}
				mu.Unlock()
			}
		})
	}
	senders.Wait()
	close(queue)
	consumers.Wait()
	f.Spans = load.Senders * load.Batches * c.Batch
	f.Lost = f.Dropped * c.Batch
	f.Requests = len(backend.served)
	var last time.Time
	for _, s := range backend.served {
		if !s.Accepted {
			f.Refused++
		} else if s.Arrival.After(last) {
			last = s.Arrival
		}
	}
	if len(backend.served) > 0 {
		f.First = backend.served[0].Arrival
	}
	for _, at := range backend.accepted {
		if at.After(f.Complete) {
			f.Complete = at
		}
	}
	d := f.Complete.Sub(start).Seconds()
	f.DeliverySeconds = &d
	if used, ok := spec.Used(backend.served, f.First, last); ok {
		f.Used = &used
	}
	return f
}

// scoreCells are the cells TestScore judges: the matrix's, with
// SCORE_EXTRA the extra and long ones, with SCORE_OFFERED the cells with
// a limit offered at other multiples of it (scenario.OfferedCells), and
// of those only SCORE_CELLS's.
func scoreCells() []scenario.Cell {
	cells := matrixCells(os.Getenv("SCORE_EXTRA") != "")
	if os.Getenv("SCORE_OFFERED") != "" {
		cells = slices.Concat(cells, scenario.OfferedCells())
	}
	return filterCells(cells, os.Getenv("SCORE_CELLS"))
}

// matrixCells are the matrix's cells and, with extra, the extra cells
// that bound the space further (scenario.ExtraCells) and the long cells
// (scenario.LongCells: the limited cells without a hint, three times as
// long).
func matrixCells(extra bool) []scenario.Cell {
	cells := scenario.MatrixCells()
	if extra {
		cells = slices.Concat(cells, scenario.ExtraCells(), scenario.LongCells())
	}
	return cells
}

// filterCells keeps the cells whose names contain one of filter's
// comma-separated parts (and the unlimited reference); all when it is empty.
func filterCells(cells []scenario.Cell, filter string) []scenario.Cell {
	if filter == "" {
		return cells
	}
	var out []scenario.Cell
	for _, c := range cells {
		for _, p := range strings.Split(filter, ",") {
			if strings.Contains(c.Name, p) || c.Name == "unlimited/none/20rps/100" {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// cellScore is one cell's verdict over the seeds: its worst seed's, with
// ours' figures on that seed, how many seeds met every goal and the
// median of the seeds' worst ratios (a change is judged on the spread of
// the seeds, not on the worst seed alone).
type cellScore struct {
	cell    scenario.Cell
	worst   scenario.Verdict
	figures cellFigures
	met     int
	median  scenario.Ratio
	// excess adds up, over the seeds, how far each goal a seed missed is
	// past it (its ratio − 1); undelivered counts the seeds that left
	// spans undelivered (their ratio is infinite).
	excess      float64
	undelivered int
}

// row is the cell's stored figures under the variant named variant: its
// seeds meeting every goal, the median and the worst of their ratios, and
// the worst seed's requests, refused share, share used and delivery.
func (sc cellScore) row(variant string) map[string]any {
	row := map[string]any{
		"scenario": sc.cell.Name, "exporter": string(scenario.Ours), "model": "score", "variant": variant,
		"worst": sc.worst.Worst, "seeds_met": sc.met, "median_ratio": sc.median,
		"requests": sc.figures.Requests, "refused_share": share(sc.figures.Refused, sc.figures.Requests),
	}
	if sc.figures.Used != nil {
		row["used"] = *sc.figures.Used
	}
	if sc.figures.DeliverySeconds != nil {
		row["delivery_seconds"] = *sc.figures.DeliverySeconds
	}
	return row
}

// scoreCellsOver runs every cell over n seeds, ours against the core model
// on the same seed, and gives each cell's worst seed.
func scoreCellsOver(t *testing.T, cells []scenario.Cell, n int) []cellScore {
	refs := map[string][]cellFigures{}
	var out []cellScore
	for _, c := range cells {
		var worst scenario.Verdict
		var wf cellFigures
		var ratios []float64
		met, excess, undelivered := 0, 0.0, 0
		for seed := range n {
			var o, k cellFigures
			synctest.Test(t, func(*testing.T) { o = runScore(newCellModel(c), uint64(seed), false) }) //nolint:gosec // G115: seeds are small and never negative
			synctest.Test(t, func(*testing.T) { k = runScore(newCellModel(c), uint64(seed), true) })  //nolint:gosec // G115: as above
			if c.Limiter.Kind == limiter.Unlimited {
				refs[c.Name] = append(refs[c.Name], o)
			}
			var ref *scenario.CellFigures
			if r := refs[c.Reference]; len(r) > seed {
				ref = &r[seed].CellFigures
			}
			v := scenario.Judge(c, "ours", o.CellFigures, &k.CellFigures, ref)
			if seed == 0 || v.Worst > worst.Worst {
				worst, wf = v, o
			}
			if v.Met() {
				met++
			}
			ratios = append(ratios, float64(v.Worst))
			for _, check := range v.Checks {
				switch r := float64(check.Ratio); {
				case math.IsInf(r, 0):
					undelivered++
				case r > 1:
					excess += r - 1
				}
			}
		}
		slices.Sort(ratios)
		out = append(out, cellScore{cell: c, worst: worst, figures: wf, met: met, median: scenario.Ratio(ratios[len(ratios)/2]),
			excess: excess, undelivered: undelivered})
	}
	return out
}

// scoreTuning sets the pacer's tuning to the variant SCORE_TUNING names
// ("name=value,name=value" with the names of retry.SetTuning), until the
// test ends; the default when it is empty.
func scoreTuning(t *testing.T) {
	t.Helper()
	values, err := parseTuning(os.Getenv("SCORE_TUNING"))
	if err != nil {
		t.Fatalf("SCORE_TUNING: %v", err)
	}
	if len(values) == 0 {
		return
	}
	restore, err := retry.SetTuning(values)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restore)
}

// parseTuning reads a variant's name, "name=value,name=value" (nil for
// an empty name: the default).
func parseTuning(set string) (map[string]float64, error) {
	if set == "" {
		return nil, nil
	}
	values := map[string]float64{}
	for kv := range strings.SplitSeq(set, ",") {
		name, v, _ := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kv, err)
		}
		values[name] = f
	}
	return values, nil
}

// tunedStore is the file the variable store names, where a model test
// stores its run, after it set the tuning SCORE_TUNING names
// (scoreTuning): a stored run is the default tuning's, so both at once are
// refused.
func tunedStore(t *testing.T, store string) string {
	t.Helper()
	path := os.Getenv(store)
	if path != "" && os.Getenv("SCORE_TUNING") != "" {
		t.Fatalf("a stored run is the default tuning's: unset SCORE_TUNING or %s", store)
	}
	scoreTuning(t)
	return path
}

// TestScore judges every cell of the matrix (and with SCORE_EXTRA eight more
// that bound the space further, and the long cells; with SCORE_OFFERED the
// cells with a limit offered at other multiples of it) over SCORE_SEEDS
// seeds, ours against the core model on the same seed, and prints each
// cell's worst seed, the median of its seeds' worst ratios and how many
// seeds met every goal, and the worst cell; with SCORE_JSON set to a file
// it stores each cell's spread there with its provenance (SCORE_CELLS: only the cells whose names contain one of its
// comma-separated parts; SCORE_TUNING: a variant of the pacer's tuning,
// as "name=value,name=value" with the names of retry.SetTuning). It
// asserts nothing; TestPacerVariants stores such runs for
// docs/benchmarks.md.
func TestScore(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SCORE_SEEDS"))
	if n == 0 {
		t.Skip("set SCORE_SEEDS")
	}
	path := tunedStore(t, "SCORE_JSON")
	stored := struct {
		scenario.Provenance
		Seeds int              `json:"seeds"`
		Runs  []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance(modelCommand("SCORE_EXTRA="+os.Getenv("SCORE_EXTRA"), "SCORE_OFFERED="+os.Getenv("SCORE_OFFERED"), "SCORE_SEEDS="+strconv.Itoa(n), "SCORE_JSON="+path, "go", "test", "-run", "TestScore$", "./retry/")), Seeds: n}
	fails := 0
	worstName, worstVal := "", scenario.Ratio(0)
	for _, sc := range scoreCellsOver(t, scoreCells(), n) {
		stored.Runs = append(stored.Runs, map[string]any{
			"scenario": sc.cell.Name, "exporter": string(scenario.Ours), "model": "score",
			"seeds_met": sc.met, "median_ratio": sc.median, "worst": sc.worst.Worst,
		})
		mark := "ok  "
		if !sc.worst.Met() {
			mark = "FAIL"
			fails++
		}
		if sc.worst.Worst > worstVal {
			worstVal, worstName = sc.worst.Worst, sc.cell.Name
		}
		t.Logf("%s %-40s %.2f (median %.2f, %d of %d seeds met) %s | %s", mark, sc.cell.Name, sc.worst.Worst, sc.median, sc.met, n, sc.figures, sc.worst.Missed())
	}
	t.Logf("failing %d; worst %s %.2f", fails, worstName, worstVal)
	if path != "" {
		stored.Finish()
		writeStoredRun(t, path, stored)
	}
}
