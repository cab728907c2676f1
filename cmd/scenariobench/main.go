// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command scenariobench runs the same OTLP trace load through two
// ocb-built collectors, one with the otlp_http_retry exporter and one with
// the core otlp_http exporter, against the repository's demo backend
// (in-process) following a script, one after the other (ours, core, ours,
// core, ...), several times. It prints one row per exporter and scenario,
// the medians and the ratios ours ÷ core, and writes every figure as JSON.
//
//	make build-collector build-core-collector
//	go run ./cmd/scenariobench -runs 3 -out scenariobench.json
//
// Scenarios: healthy, throttle-429, storm-503, quota, quota-headers,
// drops, retry-once, small-requests (-scenarios, comma-separated, or "all"). -fleet 50
// also runs a fleet of 50 collectors against one quota backend.
// -scenarios matrix runs every cell of the limiter matrix (issue 15:
// internal/scenario/matrix.go), or a cell by its name, and prints every
// run of every cell judged against the goals, then each
// exporter's worst cell:
//
//	go run ./cmd/scenariobench -scenarios matrix -runs 1 -out docs/scenariobench-matrix.json
//
// Exit status: 0; 1 when otlp_http_retry lost spans or fell short in any
// scenario, or either exporter did in the healthy one; 2 when a run could
// not take place.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

func main() { os.Exit(run()) }

// report is the JSON written by -out.
// Its provenance (command, commit, date, machine) comes first, so that
// every figure in the docs can be traced to the run that made it.
type report struct {
	scenario.Provenance
	Binaries    map[string]string       `json:"binaries"`
	Params      scenario.Params         `json:"params"`
	Setup       scenario.Setup          `json:"setup"`
	Scenarios   map[string]string       `json:"scenarios"`
	Runs        []scenario.Figures      `json:"runs"`
	Medians     []medianRow             `json:"medians"`
	Fleet       *scenario.Fleet         `json:"fleet,omitempty"`
	FleetDesc   string                  `json:"fleet_description,omitempty"`
	FleetRuns   []scenario.FleetFigures `json:"fleet_runs,omitempty"`
	FleetMedian []medianRow             `json:"fleet_medians,omitempty"`
	Matrix      *matrixReport           `json:"matrix,omitempty"`
}

func run() int {
	p := scenario.DefaultParams()
	setup := scenario.DefaultSetup()
	ours := flag.String("ours", "build/otelcol-retry/otelcol-retry", "collector with otlp_http_retry (make build-collector)")
	core := flag.String("core", "build/otelcol-core/otelcol-core", "collector with the core otlp_http (make build-core-collector)")
	runs := flag.Int("runs", 3, "runs of every scenario for each exporter")
	firstRun := flag.Int("first-run", 1, "number of the first run; runs are numbered from it, and a run's number seeds the random refusals of the sporadic and shedding cells")
	names := flag.String("scenarios", strings.Join(scenario.DefaultSet, ","), `scenarios to run, comma-separated, or "all" (`+strings.Join(scenario.AllNames, ", ")+`); "`+scenario.Matrix+`" runs every cell of the limiter matrix, a cell's name that cell`)
	flag.IntVar(&p.Spans, "spans", p.Spans, "spans of the healthy scenario (retry-once sends a fiftieth)")
	flag.IntVar(&p.BatchSpans, "batch", p.BatchSpans, "spans per batch the load sends")
	flag.DurationVar(&p.Window, "window", p.Window, "429 window")
	flag.DurationVar(&p.HeldFor, "held-for", p.HeldFor, "how long the load into the 429 window is offered (the memory held is sampled 2 s after it, for 6 s, if that ends inside the window)")
	flag.DurationVar(&p.FailFor, "fail-for", p.FailFor, "the 503 storm and the dropped-connection window (their loads last half of it)")
	flag.IntVar(&p.RetryAfter, "retry-after", p.RetryAfter, "Retry-After of the 429 window, in seconds (0 is sent as \"Retry-After: 0\")")
	flag.Float64Var(&p.QuotaRate, "quota-rate", p.QuotaRate, "token bucket's rate in spans/s (burst the same); offered twice that")
	flag.DurationVar(&p.QuotaFor, "quota-for", p.QuotaFor, "how long the quota is offered twice its rate")
	flag.Float64Var(&p.PacedRate, "rate", p.PacedRate, "offered spans/s of the 503 storm and the dropped connections")
	flag.Float64Var(&p.HeldRate, "held-rate", p.HeldRate, "offered spans/s into the 429 window (for -held-for), where the memory held is measured")
	flag.IntVar(&setup.QueueSize, "queue-size", setup.QueueSize, "sending_queue::queue_size of both exporters")
	flag.IntVar(&setup.NumConsumers, "num-consumers", setup.NumConsumers, "sending_queue::num_consumers of both exporters")
	flag.BoolVar(&setup.BatchProcessor, "batch-processor", false, "put a batch processor (defaults) before both exporters")
	flag.BoolVar(&setup.QueueBatch, "queue-batch", false, "give both exporters sending_queue::batch (its defaults); the small-requests scenario always has it")
	flag.IntVar(&p.SmallSpans, "small-spans", p.SmallSpans, "spans of the small-requests scenario")
	flag.IntVar(&p.SmallSenders, "small-senders", p.SmallSenders, "senders of the small-requests scenario")
	flag.IntVar(&p.SmallBatch, "small-batch", p.SmallBatch, "spans per request of the small-requests scenario")
	flag.BoolVar(&setup.PersistentQueue, "persistent", false, "put both sending queues on file_storage")
	flag.BoolVar(&setup.PacingOff, "pacing-off", false, "turn otlp_http_retry's pacing off (pacing::enabled: false)")
	flag.StringVar(&setup.EncodeAt, "encode-at", "", "otlp_http_retry's encode_at: entry, auto or consumer (empty: its default, entry)")
	fleetSize := flag.Int("fleet", 0, "also run a fleet of N collectors against one quota backend (0: no fleet)")
	fleetRuns := flag.Int("fleet-runs", 0, "runs of the fleet for each exporter (0: -runs)")
	fleetOnly := flag.Bool("fleet-only", false, "run only the fleet")
	fleetBare := flag.Bool("fleet-bare", false, "put the fleet behind a request-rate limiter without hints (bare 429s: a GCRA of the quota's rate in requests) instead of the quota")
	phase := flag.Duration("window-phase", 0, "start the load of each fixed window's cell this far into a window on the clock (0: wherever the clock is)")
	out := flag.String("out", "scenariobench.json", "write every figure as JSON to `FILE` (empty: do not)")
	plotPath := flag.String("plot", "", "draw the throttle-429 window of the first run into this PNG (e.g. docs/throttle-window.png)")
	fleetPlot := flag.String("fleet-plot", "", "draw the fleet's window of its first run into this PNG")
	order := flag.String("order", "ours,core", "which exporter runs first in each pair: ours,core or core,ours; ours or core alone runs only that one (no ratios)")
	keep := flag.Bool("keep", false, "keep every run's directory (config, collector log, queue storage)")
	tableFrom := flag.String("matrix-table", "", "run nothing: print the limiter matrix's table and worst cells of a JSON written by -out (`FILE`)")
	docs := flag.Bool("docs", false, "run nothing: render every figure of README.md and docs/benchmarks.md again from the stored JSON it names, and rewrite them (from the repository root; see docs.go)")
	flag.Parse()

	if *docs {
		diffs, err := renderDocFigures(".", true)
		for _, d := range diffs {
			fmt.Println("rewritten:", d)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "scenariobench:", err)
			return 2
		}
		fmt.Printf("scenariobench: %d figure(s) rewritten\n", len(diffs))
		return 0
	}

	if *tableFrom != "" {
		if err := printStoredMatrix(os.Stdout, *tableFrom); err != nil {
			fmt.Fprintln(os.Stderr, "scenariobench:", err)
			return 2
		}
		return 0
	}

	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "scenariobench: -runs must be at least 1")
		return 2
	}
	if *firstRun < 1 {
		fmt.Fprintln(os.Stderr, "scenariobench: -first-run must be at least 1")
		return 2
	}
	var set []string
	switch {
	case *fleetOnly:
	case *names == "all":
		set = scenario.AllNames
	default:
		set = expandNames(strings.Split(*names, ","))
	}
	scenarios := make([]scenario.Scenario, 0, len(set))
	for _, n := range set {
		s, err := p.Build(strings.TrimSpace(n))
		if err != nil {
			fmt.Fprintln(os.Stderr, "scenariobench:", err)
			return 2
		}
		s.Phase = *phase
		scenarios = append(scenarios, s)
	}
	bins := map[scenario.Exporter]string{scenario.Ours: *ours, scenario.Core: *core}
	for exp, bin := range bins {
		if _, err := os.Stat(bin); err != nil {
			fmt.Fprintf(os.Stderr, "scenariobench: the %s collector %s: %v (make build-collector build-core-collector)\n", exp, bin, err)
			return 2
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := report{
		Provenance: scenario.NewProvenance(os.Args), Binaries: map[string]string{"ours": *ours, "core": *core},
		Params: p, Setup: setup, Scenarios: map[string]string{},
	}
	fmt.Printf("scenariobench: commit %s, load average before: %s\n", rep.Commit, rep.Machine.LoadBefore)
	if len(rep.Dirty) > 0 {
		fmt.Printf("scenariobench: the checkout differs from that commit in %d tracked file(s)\n", len(rep.Dirty))
	}
	for _, s := range scenarios {
		rep.Scenarios[s.Name] = s.Description
		fmt.Printf("  %-14s %s\n", s.Name, s.Description)
	}

	bodies := scenario.NewBodies()
	exporters := []scenario.Exporter{scenario.Ours, scenario.Core}
	switch *order {
	case "ours,core":
	case "core,ours":
		exporters = []scenario.Exporter{scenario.Core, scenario.Ours}
	case "ours":
		exporters = []scenario.Exporter{scenario.Ours}
	case "core":
		exporters = []scenario.Exporter{scenario.Core}
	default:
		fmt.Fprintf(os.Stderr, "scenariobench: -order %q: use ours,core, core,ours, ours or core\n", *order)
		return 2
	}
	var plotted []series
	failed := false
	for r := *firstRun; r < *firstRun+*runs && len(scenarios) > 0; r++ {
		for _, s := range scenarios {
			if s.Cell != nil {
				// A seed per run: the random refusals of sporadic and
				// shedding cells differ from run to run, alike for both
				// exporters.
				s.Backend.Limiter.Seed = uint64(r)
			}
			for _, exp := range exporters {
				res, err := runOne(ctx, *keep, func(dir string) (*scenario.Result, error) {
					return s.Run(ctx, exp, bins[exp], setup, dir, bodies)
				})
				if err != nil {
					fmt.Fprintf(os.Stderr, "scenariobench: %s with %s, run %d: %v\n", s.Name, exp, r, err)
					return 2
				}
				res.Run = r
				rep.Runs = append(rep.Runs, res.Figures)
				printRun(os.Stdout, res.Figures)
				if res.Err != "" && (exp == scenario.Ours || s.Name == scenario.Healthy) {
					failed = true
				}
				if r == *firstRun && s.Name == scenario.Throttle429 {
					plotted = append(plotted, series{name: exp.Short() + " (" + string(exp) + ")", arrivals: res.Arrivals, origin: res.Origin, windowEnd: res.WindowEnd})
				}
			}
		}
	}

	var fleetPlotted []series
	if *fleetSize > 0 {
		f := scenario.DefaultFleet(*fleetSize)
		if *fleetBare {
			f = scenario.BareFleet(*fleetSize)
		}
		rep.Fleet, rep.FleetDesc = &f, f.Description()
		n := *fleetRuns
		if n == 0 {
			n = *runs
		}
		fmt.Printf("  %-14s %s\n", "fleet", rep.FleetDesc)
		for r := 1; r <= n; r++ {
			for _, exp := range exporters {
				var fr *scenario.FleetResult
				_, err := runOne(ctx, *keep, func(dir string) (*scenario.Result, error) {
					var err error
					fr, err = f.Run(ctx, exp, bins[exp], setup, dir, bodies)
					return nil, err
				})
				if err != nil {
					fmt.Fprintf(os.Stderr, "scenariobench: fleet with %s, run %d: %v\n", exp, r, err)
					return 2
				}
				fr.Run = r
				rep.FleetRuns = append(rep.FleetRuns, fr.FleetFigures)
				printFleetRun(os.Stdout, fr.FleetFigures)
				if fr.Err != "" && exp == scenario.Ours {
					failed = true
				}
				if r == 1 {
					fleetPlotted = append(fleetPlotted, series{name: exp.Short() + " (" + string(exp) + ")", arrivals: fr.Arrivals, origin: fr.Origin, windowEnd: fr.WindowEnd})
				}
			}
		}
	}

	rep.Finish()
	rep.Medians = medians(withoutCells(scenarios, rep.Runs))
	rep.Matrix = judgeMatrix(scenarios, rep.Runs)
	rep.FleetMedian = fleetMedians(rep.FleetRuns)
	if len(rep.Medians) > 0 {
		fmt.Println()
		printTable(os.Stdout, rep.Medians, *runs)
	}
	if len(rep.FleetMedian) > 0 {
		fmt.Println()
		printFleetTable(os.Stdout, rep.FleetMedian)
	}
	if rep.Matrix != nil {
		fmt.Println()
		printMatrix(os.Stdout, scenarios, rep.Runs, rep.Matrix)
	}
	fmt.Printf("\nscenariobench: %s; load average after: %s\n", rep.Finished.Sub(rep.Started).Round(time.Second), rep.Machine.LoadAfter)

	if *out != "" {
		if err := writeJSON(*out, rep); err != nil {
			fmt.Fprintln(os.Stderr, "scenariobench:", err)
			return 2
		}
	}
	if *plotPath != "" && len(plotted) > 0 {
		title := fmt.Sprintf("Requests at the backend through a 429 window (%s, Retry-After: %d)", p.Window, p.RetryAfter)
		if err := plotRates(*plotPath, title, plotted); err != nil {
			fmt.Fprintln(os.Stderr, "scenariobench: plot:", err)
			return 2
		}
	}
	if *fleetPlot != "" && len(fleetPlotted) > 0 {
		title := fmt.Sprintf("Requests at the backend: fleet of %d through a %s 429 window, then a quota", *fleetSize, rep.Fleet.Window)
		if *fleetBare {
			title = fmt.Sprintf("Requests at the backend: fleet of %d through a %s window of bare 429s, then a request-rate limiter", *fleetSize, rep.Fleet.Window)
		}
		if err := plotRates(*fleetPlot, title, fleetPlotted); err != nil {
			fmt.Fprintln(os.Stderr, "scenariobench: plot:", err)
			return 2
		}
	}
	if failed {
		fmt.Println("scenariobench: FAILED: otlp_http_retry fell short (or an exporter did in the healthy scenario); see the error column above")
		return 1
	}
	return 0
}

// runOne gives a run a fresh directory, removed afterwards unless keep.
func runOne(ctx context.Context, keep bool, f func(dir string) (*scenario.Result, error)) (*scenario.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "scenariobench-")
	if err != nil {
		return nil, err
	}
	if keep {
		fmt.Println("  kept:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	return f(dir)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

func printRun(w io.Writer, f scenario.Figures) {
	fmt.Fprintf(w, "run %d  %-14s %-16s items/s %s  cpu/100k %.2fs (bench %.2fs)  peakRSS %.0fMiB  into-window %s  after-window %s/s (peak %s)  recovery %s  quota %s  refused %s  lost %d  uncovered-dups %d  held %s B/10k  conns %d/%d req  wall %.0fs",
		f.Run, f.Scenario, f.Exporter, fmtF(f.ItemsPerSecond, 0), f.CPUSecondsPer100k, f.BenchCPUSecondsPer100k, float64(f.PeakRSSBytes)/(1<<20),
		fmtI(f.IntoWindow), fmtI(f.AfterWindowRPS), fmtI(f.PeakRPSAfterWindow), fmtF(f.RecoverySeconds, 1),
		fmtPct(f.QuotaUsed), fmtPct(f.RefusedShare), f.Lost, f.UncoveredDuplicates, fmtF(f.HeldHeapPer10k, 0), f.Connections, f.Requests, f.WallSeconds)
	if f.Err != "" {
		fmt.Fprintf(w, "  ERROR: %s", f.Err)
	}
	fmt.Fprintln(w)
}

func printFleetRun(w io.Writer, f scenario.FleetFigures) {
	fmt.Fprintf(w, "run %d  fleet of %d %-16s into-window %d  after-window %d/s (peak %d, quota %.0f)  fairness %s  requests %d  refused %d (%.1f%%)  quota %s  lost %d  cpu %.1fs  startup %.0fs  wall %.0fs",
		f.Run, f.Size, f.Exporter, f.IntoWindow, f.AfterWindowRPS, f.PeakRPSAfterWindow, f.QuotaRPS, fmtF(f.Fairness, 3),
		f.Requests, f.Refused, 100*f.RefusedShare, fmtPct(f.QuotaUsed), f.Lost, f.CPUSeconds, f.StartupSecs, f.WallSeconds)
	if f.Err != "" {
		fmt.Fprintf(w, "  ERROR: %s", f.Err)
	}
	fmt.Fprintln(w)
}

func fmtF(v *float64, prec int) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

func fmtI(v *int) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprint(*v)
}

func fmtPct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100**v)
}

// exportersOf lists exporters in the order ours, core.
func exportersOf(rows []scenario.Figures) []string {
	var out []string
	for _, e := range []scenario.Exporter{scenario.Ours, scenario.Core} {
		if slices.ContainsFunc(rows, func(f scenario.Figures) bool { return f.Exporter == string(e) }) {
			out = append(out, string(e))
		}
	}
	return out
}
