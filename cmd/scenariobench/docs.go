// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

// Figures in the docs come from stored runs. Each measured figure in
// README.md and docs/benchmarks.md sits between two HTML comments (unseen
// on the rendered page) that say where it comes from:
//
//	<!-- fig v scenariobench-quota-20s.json quota/ours/refused_share median pct1 -->4.2 %<!-- /fig -->
//
// and a table the same way over several lines:
//
//	<!-- fig table scenariobench.json -->
//	| scenario | exporter | … |
//	<!-- /fig -->
//
// `scenariobench -docs` renders every figure again from the JSON it names
// (in docs/) and rewrites the files; TestDocFiguresMatchStoredRuns fails
// when a figure differs from what its JSON gives. After a new benchmark
// run, one command brings every figure in step:
//
//	go run ./cmd/scenariobench -docs    (make docs-figures)
//
// The kinds of figure:
//
//	v FILES SELECTOR STAT FORMAT   one value
//	run FILES                      when, on which commit and machine the run was made
//	duration FILE                  how long the run took
//	gb FILE BENCH/COLUMN UNIT STAT FORMAT
//	                               one Go benchmark figure (COLUMN "a÷b": the
//	                               median of the pairs' ratios)
//	command FILE                   the command as run (the binary's path shortened)
//	table FILE [SCENARIOS]         the medians of every scenario (or of the
//	                               comma-separated SCENARIOS) per exporter and the
//	                               median of the pairs' ratios ours ÷ core
//	fleet FILE                     the fleet's medians and ratios
//	matrix FILE                    the limiter matrix's table and worst cells (-matrix-table)
//	met FILE EXPORTER [CELL]       in how many of the exporter's (ours, core) runs of
//	                               the limiter matrix's cells (or of CELL's alone)
//	                               every goal was met: "10 of 13"
//	gobench FILE                   the Go micro-benchmarks (cmd/benchjson's JSON)
//
// FILES is one JSON file of docs/ or several, comma-separated, whose runs
// are taken together. SELECTOR is scenario|exporter|field[|key=value…]
// (with "|" between the parts, as a scenario's name may hold "/"; "/" is
// read the same when the name has none; in a markdown table's row "\|",
// as GFM splits cells at every unescaped "|"): the scenario's name or a
// path.Match pattern of names ("fleet" for the fleet's runs), ours, core or ratio
// (the ratio ours ÷ core of each pair: the two runs of the same run number),
// a field of the JSON's runs, and filters on other fields (encode_at=auto).
// STAT is median, min, max, range ("a–b"), rangen ("a–b over N runs"),
// list (every run, in order), n (how many runs), iqr (the middle half),
// ge=X ("2 of 7": how many runs reach X), le=X (how many are at most X). FORMAT is f0…f3 (decimals),
// pct0…pct2 (a share as per cent), k0 or k1 (thousands, "362 k"), mib0
// (bytes as MiB), us0… (seconds as µs), more0… (a ratio as "15 % more").

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// docFiles are the files whose figures -docs renders (and whose figures
// TestDocFiguresAreAccountedFor accounts for), from the repository root.
var docFiles = []string{"README.md", filepath.Join("docs", "behaviour.md"), filepath.Join("docs", "benchmarks.md")}

var figurePattern = regexp.MustCompile(`(?s)<!-- fig ([^>]*?) -->(.*?)<!-- /fig -->`)

// Regions of a doc whose figures are not rendered here say so:
//
//	<!-- figures checked by TestName -->  …  <!-- /figures -->
//
// for figures another test holds to their stored run (the limiter
// matrix's tables, issue 19's before and after), and
//
//	<!-- figures unchecked: why -->  …  <!-- /figures -->
//
// for figures no stored run gives yet (a model run not stored, constants of
// the code written out): a debt in plain sight. Outside them and outside
// fig comments and code, a number that looks measured (a decimal with a
// unit, "4.2 %", "8.0 s", "1.5 ×", or a number with two decimals or more,
// "0.895") fails TestDocFiguresAreAccountedFor. A constant of the code, a
// setting or a goal, written in inline code (`0.89`, `2.5 s`), is not a
// measurement.
var (
	regionPattern   = regexp.MustCompile(`(?s)<!-- figures (checked by (Test\w+)|unchecked: [^>]*?) -->.*?<!-- /figures -->`)
	codePattern     = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`|Go \\d+\\.\\d+")
	measuredPattern = regexp.MustCompile(`(?:^|[^\w.])(\d+\.\d+ ?(?:%|s|ms|µs|min|MiB|KiB|GiB|×)|\d+\.\d{2,})(?:[^\w.]|$)`)
)

// strayFigure is a measured-looking number outside every figure and region.
type strayFigure struct {
	file, figure, context string
	line                  int
}

// unaccountedFigures lists the stray figures of text, and the tests that
// its "checked by" regions name.
func unaccountedFigures(file, text string) (stray []strayFigure, checkers []string) {
	blank := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, s)
	}
	for _, m := range regionPattern.FindAllStringSubmatch(text, -1) {
		if m[2] != "" {
			checkers = append(checkers, m[2])
		}
	}
	text = regionPattern.ReplaceAllStringFunc(text, blank)
	text = figurePattern.ReplaceAllStringFunc(text, blank)
	text = codePattern.ReplaceAllStringFunc(text, blank)
	for i, line := range strings.Split(text, "\n") {
		for _, m := range measuredPattern.FindAllStringSubmatch(line, -1) {
			stray = append(stray, strayFigure{file: file, line: i + 1, figure: m[1], context: strings.TrimSpace(line)})
		}
	}
	return stray, checkers
}

// figureDiff is a figure whose text differs from what its run gives.
type figureDiff struct {
	file      string
	line      int
	spec      string
	got, want string
}

func (d figureDiff) String() string {
	return fmt.Sprintf("%s:%d: figure %q reads %q; its stored run gives %q", d.file, d.line, d.spec, strings.TrimSpace(d.got), strings.TrimSpace(d.want))
}

// renderDocFigures renders every figure of the files under root (docFiles)
// from the JSON in root/docs; with write it rewrites the files, else it
// only reports the figures that differ.
func renderDocFigures(root string, write bool) ([]figureDiff, error) {
	r := &figureRenderer{dir: filepath.Join(root, "docs"), cache: map[string]map[string]any{}}
	var diffs []figureDiff
	var errs []error
	for _, name := range docFiles {
		path := filepath.Join(root, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		text := string(b)
		var out strings.Builder
		last := 0
		for _, m := range figurePattern.FindAllStringSubmatchIndex(text, -1) {
			spec, got := text[m[2]:m[3]], text[m[4]:m[5]]
			line := 1 + strings.Count(text[:m[0]], "\n")
			want, err := r.render(spec)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: figure %q: %w", name, line, spec, err))
				want = got
			}
			if strings.HasPrefix(got, "\n") { // a block: the figure on lines of its own
				want = "\n" + strings.TrimSuffix(want, "\n") + "\n"
			}
			if got != want {
				diffs = append(diffs, figureDiff{file: name, line: line, spec: spec, got: got, want: want})
			}
			out.WriteString(text[last:m[4]])
			out.WriteString(want)
			last = m[5]
		}
		out.WriteString(text[last:])
		if write && out.String() != text {
			if err := os.WriteFile(path, []byte(out.String()), 0o600); err != nil {
				return nil, err
			}
		}
	}
	return diffs, errors.Join(errs...)
}

// figureRenderer renders figures from the JSON files of dir.
type figureRenderer struct {
	dir   string
	cache map[string]map[string]any
}

func (r *figureRenderer) render(spec string) (string, error) {
	f := strings.Fields(spec)
	if len(f) < 2 {
		return "", errors.New("want a kind and a file")
	}
	kind, files := f[0], strings.Split(f[1], ",")
	args := f[2:]
	switch kind {
	case "v":
		if len(args) != 3 {
			return "", errors.New("v wants FILES SELECTOR STAT FORMAT")
		}
		return r.value(files, args[0], args[1], args[2])
	case "run":
		return r.provenance(files)
	case "duration":
		var p scenario.Provenance
		if err := r.decode(files[0], &p); err != nil {
			return "", err
		}
		if p.Started.IsZero() || p.Finished.IsZero() {
			return "", fmt.Errorf("%s records no start or end", files[0])
		}
		d := p.Finished.Sub(p.Started).Round(time.Second)
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60), nil
	case "gb":
		if len(args) != 4 {
			return "", errors.New("gb wants FILE BENCHMARK/COLUMN UNIT STAT FORMAT")
		}
		return r.goBenchValue(files[0], args[0], args[1], args[2], args[3])
	case "command":
		doc, err := r.load(files[0])
		if err != nil {
			return "", err
		}
		return shortCommand(str(doc["command"])), nil
	case "table":
		runs, err := r.figures(files[0], "runs")
		if err != nil {
			return "", err
		}
		if len(args) > 0 {
			keep := strings.Split(args[0], ",")
			runs = slices.DeleteFunc(runs, func(f scenario.Figures) bool { return !slices.Contains(keep, f.Scenario) })
		}
		var b strings.Builder
		writeTable(&b, medians(runs))
		return b.String(), nil
	case "fleet":
		var doc struct {
			Runs []scenario.FleetFigures `json:"fleet_runs"`
		}
		if err := r.decode(files[0], &doc); err != nil {
			return "", err
		}
		var b strings.Builder
		writeFleetTable(&b, fleetMedians(doc.Runs))
		return b.String(), nil
	case "matrix":
		var b strings.Builder
		if err := printStoredMatrix(&b, filepath.Join(r.dir, files[0])); err != nil {
			return "", err
		}
		return b.String(), nil
	case "met":
		if len(args) < 1 || len(args) > 2 || exporterNames[args[0]] == "" {
			return "", errors.New("met wants FILE ours|core [CELL]")
		}
		cell := ""
		if len(args) == 2 {
			cell = args[1]
		}
		return metCells(filepath.Join(r.dir, files[0]), exporterNames[args[0]], cell)
	case "gobench":
		return r.goBench(files[0])
	}
	return "", fmt.Errorf("unknown kind %q", kind)
}

func (r *figureRenderer) load(file string) (map[string]any, error) {
	if doc, ok := r.cache[file]; ok {
		return doc, nil
	}
	b, err := os.ReadFile(filepath.Join(r.dir, file))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	r.cache[file] = doc
	return doc, nil
}

func (r *figureRenderer) decode(file string, v any) error {
	b, err := os.ReadFile(filepath.Join(r.dir, file))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (r *figureRenderer) figures(file, key string) ([]scenario.Figures, error) {
	var doc map[string]json.RawMessage
	if err := r.decode(file, &doc); err != nil {
		return nil, err
	}
	var runs []scenario.Figures
	if err := json.Unmarshal(doc[key], &runs); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", file, key, err)
	}
	return runs, nil
}

// exporterNames are the selector's names of the exporters.
var exporterNames = map[string]string{"ours": string(scenario.Ours), "core": string(scenario.Core)}

// pairKeys identify the pair a run belongs to, beside its file: the run
// number and, in files merged by hand, their own pair or round numbers.
var pairKeys = []string{"run", "pair", "round"}

// value renders one figure: STAT of the field over the runs SELECTOR picks.
func (r *figureRenderer) value(files []string, selector, stat, format string) (string, error) {
	// In a markdown table a "|" in the comment is written "\|", as GFM
	// splits a row's cells at every unescaped "|", inside comments too.
	selector = strings.ReplaceAll(selector, `\|`, "|")
	sep := "/"
	if strings.Contains(selector, "|") {
		sep = "|" // a scenario name of the limiter matrix holds "/"
	}
	sel := strings.Split(selector, sep)
	if len(sel) < 3 {
		return "", errors.New("selector wants scenario/exporter/field")
	}
	scen, exp, field := sel[0], sel[1], sel[2]
	filters := map[string]string{}
	for _, kv := range sel[3:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return "", fmt.Errorf("filter %q: want key=value", kv)
		}
		filters[k] = v
	}
	var xs []float64
	pairs := map[string]map[string]float64{}
	var order []string
	for i, file := range files {
		doc, err := r.load(file)
		if err != nil {
			return "", err
		}
		key := "runs"
		if scen == "fleet" {
			key = "fleet_runs"
		}
		list, _ := doc[key].([]any)
		for _, item := range list {
			run, _ := item.(map[string]any)
			if scen != "fleet" && !scenarioMatches(scen, str(run["scenario"])) || !matches(run, filters) {
				continue
			}
			v, ok := run[field].(float64)
			if !ok {
				continue
			}
			switch exp {
			case "ratio":
				k := strconv.Itoa(i)
				for _, pk := range pairKeys {
					if pv, ok := run[pk]; ok {
						k += fmt.Sprintf("/%v", pv)
					}
				}
				if pairs[k] == nil {
					pairs[k] = map[string]float64{}
					order = append(order, k)
				}
				pairs[k][str(run["exporter"])] = v
			default:
				name, ok := exporterNames[exp]
				if !ok {
					return "", fmt.Errorf("exporter %q: want ours, core or ratio", exp)
				}
				if str(run["exporter"]) == name {
					xs = append(xs, v)
				}
			}
		}
	}
	for _, k := range order {
		o, okO := pairs[k][string(scenario.Ours)]
		c, okC := pairs[k][string(scenario.Core)]
		if okO && okC && c != 0 {
			xs = append(xs, o/c)
		}
	}
	if len(xs) == 0 {
		return "", fmt.Errorf("no run has %s", selector)
	}
	fmtv := func(v float64) (string, error) { return formatFigure(v, format) }
	switch stat {
	case "median":
		return fmtv(scenario.Median(xs))
	case "min":
		return fmtv(slices.Min(xs))
	case "max":
		return fmtv(slices.Max(xs))
	case "n":
		return strconv.Itoa(len(xs)), nil
	case "iqr":
		// The middle half: the medians of the lower and the upper halves.
		sorted := slices.Sorted(slices.Values(xs))
		half := len(sorted) / 2
		lo, err := fmtv(scenario.Median(sorted[:half]))
		if err != nil {
			return "", err
		}
		hi, _ := fmtv(scenario.Median(sorted[len(sorted)-half:]))
		return joinRange(lo, hi), nil
	case "range", "rangen":
		lo, err := fmtv(slices.Min(xs))
		if err != nil {
			return "", err
		}
		hi, _ := fmtv(slices.Max(xs))
		s := joinRange(lo, hi)
		if stat == "rangen" {
			s += fmt.Sprintf(" over %d runs", len(xs))
		}
		return s, nil
	case "list":
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i], _ = fmtv(x)
		}
		return strings.Join(out, ", "), nil
	}
	if t, ge := strings.CutPrefix(stat, "ge="); ge || strings.HasPrefix(stat, "le=") {
		// How many runs reach t, or are at most t: "2 of 7".
		if !ge {
			t = strings.TrimPrefix(stat, "le=")
		}
		bound, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return "", fmt.Errorf("stat %q", stat)
		}
		n := 0
		for _, x := range xs {
			if (ge && x >= bound) || (!ge && x <= bound) {
				n++
			}
		}
		return fmt.Sprintf("%d of %d", n, len(xs)), nil
	}
	return "", fmt.Errorf("stat %q: want median, min, max, range, rangen, list, n, iqr, ge=X or le=X", stat)
}

// scenarioMatches reports whether a run's scenario is the selector's, or
// matches it as a pattern (path.Match: "gcra/*/*/*" is every GCRA cell of
// the limiter matrix).
func scenarioMatches(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return pattern == name || ok && err == nil
}

// joinRange writes lo–hi with their unit once: "30.4–32.6 %", or one
// figure when both are the same.
func joinRange(lo, hi string) string {
	if lo == hi {
		return lo
	}
	for _, unit := range []string{" %", " k", " µs", " % more", " % less"} {
		if strings.HasSuffix(lo, unit) && strings.HasSuffix(hi, unit) {
			return strings.TrimSuffix(lo, unit) + "–" + hi
		}
	}
	return lo + "–" + hi
}

func matches(run map[string]any, filters map[string]string) bool {
	for k, v := range filters {
		if fmt.Sprint(run[k]) != v {
			return false
		}
	}
	return true
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// formatFigure writes v as format says.
func formatFigure(v float64, format string) (string, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", fmt.Errorf("%v is no figure", v)
	}
	prec := strconv.Atoi
	switch {
	case strings.HasPrefix(format, "pct"):
		p, err := prec(format[3:])
		if err != nil {
			return "", fmt.Errorf("format %q", format)
		}
		return strconv.FormatFloat(100*v, 'f', p, 64) + " %", nil
	case strings.HasPrefix(format, "mib"):
		p, err := prec(format[3:])
		if err != nil {
			return "", fmt.Errorf("format %q", format)
		}
		return strconv.FormatFloat(v/(1<<20), 'f', p, 64), nil
	case strings.HasPrefix(format, "us"):
		p, err := prec(format[2:])
		if err != nil {
			return "", fmt.Errorf("format %q", format)
		}
		return strconv.FormatFloat(v*1e6, 'f', p, 64) + " µs", nil
	case strings.HasPrefix(format, "more"):
		// A ratio as how much more (or less) than 1, in per cent: 1.148 → "15 % more".
		p, err := prec(format[4:])
		if err != nil {
			return "", fmt.Errorf("format %q", format)
		}
		if v >= 1 {
			return strconv.FormatFloat(100*(v-1), 'f', p, 64) + " % more", nil
		}
		return strconv.FormatFloat(100*(1-v), 'f', p, 64) + " % less", nil
	case strings.HasPrefix(format, "k"):
		p, err := prec(format[1:])
		if err != nil {
			return "", fmt.Errorf("format %q", format)
		}
		return strconv.FormatFloat(v/1000, 'f', p, 64) + " k", nil
	case strings.HasPrefix(format, "f"):
		p, err := prec(format[1:])
		if err != nil {
			return "", fmt.Errorf("format %q", format)
		}
		return strconv.FormatFloat(v, 'f', p, 64), nil
	}
	return "", fmt.Errorf("format %q: want f0…, pct0…, k0…, mib0…", format)
}

// provenance says when, on which commit and which machine the runs of
// files were made.
func (r *figureRenderer) provenance(files []string) (string, error) {
	var parts []string
	for _, file := range files {
		var p scenario.Provenance
		if err := r.decode(file, &p); err != nil {
			return "", err
		}
		if p.Started.IsZero() || p.Commit == "" || p.Machine.CPUs == 0 {
			return "", fmt.Errorf("%s records no start, commit or machine", file)
		}
		when := p.Started.UTC().Format("2006-01-02 15:04")
		if !p.Finished.IsZero() {
			when += "–" + p.Finished.UTC().Format("15:04")
		}
		commit := p.Commit
		if len(commit) > 7 && !strings.Contains(commit, " ") {
			commit = commit[:7]
		}
		switch {
		case slices.Equal(p.Dirty, []string{notRecorded}):
			commit += " (local changes not recorded)"
		case len(p.Dirty) > 0 && docsOnly(p.Dirty):
			commit += " (local changes to docs only)"
		case len(p.Dirty) > 0:
			commit += " with local changes"
		}
		cpu := fmt.Sprintf("%d × %s", p.Machine.CPUs, p.Machine.CPUModel)
		if p.Machine.CPUModel == notRecorded {
			cpu = fmt.Sprintf("%d CPUs (model not recorded)", p.Machine.CPUs)
		}
		parts = append(parts, fmt.Sprintf("%s UTC, commit %s, %s, %s", when, commit, cpu, p.Machine.GoVersion))
	}
	return strings.Join(parts, "; "), nil
}

// docsOnly reports whether every changed file (git status --porcelain
// lines) is documentation or a stored run: the code measured was the
// commit's.
func docsOnly(dirty []string) bool {
	for _, line := range dirty {
		f := strings.Fields(line)
		path := f[len(f)-1]
		if !strings.HasSuffix(path, ".md") && !strings.HasPrefix(path, "docs/") {
			return false
		}
	}
	return true
}

// notRecorded marks what a run stored before its tool recorded it (commit
// and machine were added afterwards from git history; see provenance_note).
const notRecorded = "not recorded"

// shortCommand is the command with the built binary's path shortened to
// the command's name.
func shortCommand(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) > 0 && strings.Contains(f[0], "/") {
		f[0] = filepath.Base(f[0])
		if strings.HasSuffix(f[0], "-d") || strings.Contains(f[0], "scenariobench") {
			f[0] = "scenariobench"
		}
	}
	return strings.Join(f, " ")
}

// goBench renders the Go micro-benchmarks of a cmd/benchjson file: for
// each benchmark and unit, the median of each column and of the pairs'
// ratios to the first column.
func (r *figureRenderer) goBench(file string) (string, error) {
	var doc goBenchReport
	if err := r.decode(file, &doc); err != nil {
		return "", err
	}
	return doc.table(), nil
}

// goBenchValue renders one figure of a cmd/benchjson file: STAT over the
// runs of BENCHMARK/COLUMN in UNIT, or, for COLUMN "a÷b", over the ratios
// of the pairs (the i-th run of a over the i-th of b).
func (r *figureRenderer) goBenchValue(file, sel, unit, stat, format string) (string, error) {
	var doc goBenchReport
	if err := r.decode(file, &doc); err != nil {
		return "", err
	}
	i := strings.LastIndex(sel, "/")
	if i < 0 {
		return "", fmt.Errorf("%q: want BENCHMARK/COLUMN", sel)
	}
	bench, col := sel[:i], sel[i+1:]
	series := func(c string) []float64 {
		var xs []float64
		for _, res := range doc.Results {
			if b, _, rc := splitColumn(res.Name); b == bench && rc == c {
				if v, ok := res.Metrics[unit]; ok {
					xs = append(xs, v)
				}
			}
		}
		return xs
	}
	var xs []float64
	if a, b, ok := strings.Cut(col, "÷"); ok {
		as, bs := series(a), series(b)
		for j := range min(len(as), len(bs)) {
			if bs[j] != 0 {
				xs = append(xs, as[j]/bs[j])
			}
		}
	} else {
		xs = series(col)
	}
	if len(xs) == 0 {
		return "", fmt.Errorf("%s has no %s in %s", file, unit, sel)
	}
	switch stat {
	case "median":
		return formatFigure(scenario.Median(xs), format)
	case "n":
		return strconv.Itoa(len(xs)), nil
	case "range":
		lo, err := formatFigure(slices.Min(xs), format)
		if err != nil {
			return "", err
		}
		hi, _ := formatFigure(slices.Max(xs), format)
		return joinRange(lo, hi), nil
	}
	return "", fmt.Errorf("stat %q: want median, range or n", stat)
}

// goBenchReport is what cmd/benchjson writes.
type goBenchReport struct {
	scenario.Provenance
	Results []goBenchResult `json:"results"`
}

// goBenchResult is one line of `go test -bench` output.
type goBenchResult struct {
	Name    string             `json:"name"` // BenchmarkExport/exporter=otlp_http-2
	Iter    int                `json:"iterations"`
	Metrics map[string]float64 `json:"metrics"` // unit → value (sec/op, B/op, allocs/op, …)
}

// table groups results by the key of their column (exporter=…, impl=…),
// then by benchmark (the name without its column) and column, in the order
// met: one table per key and unit, the first column the base of the ratios.
func (d goBenchReport) table() string {
	type series = map[string][]float64 // unit → values in run order
	var families, benches []string
	cols := map[string][]string{}          // family → columns
	units := map[string][]string{}         // family → units
	vals := map[string]map[string]series{} // bench → col → series
	familyOf := map[string]string{}        // bench → family
	for _, res := range d.Results {
		bench, family, col := splitColumn(res.Name)
		if !slices.Contains(families, family) {
			families = append(families, family)
		}
		if !slices.Contains(benches, bench) {
			benches = append(benches, bench)
		}
		familyOf[bench] = family
		if !slices.Contains(cols[family], col) {
			cols[family] = append(cols[family], col)
		}
		if vals[bench] == nil {
			vals[bench] = map[string]series{}
		}
		if vals[bench][col] == nil {
			vals[bench][col] = series{}
		}
		keys := make([]string, 0, len(res.Metrics))
		for u := range res.Metrics {
			keys = append(keys, u)
		}
		sort.Strings(keys)
		for _, u := range keys {
			if !slices.Contains(units[family], u) {
				units[family] = append(units[family], u)
			}
			vals[bench][col][u] = append(vals[bench][col][u], res.Metrics[u])
		}
	}
	var b strings.Builder
	for _, family := range families {
		slices.SortStableFunc(units[family], func(x, y string) int { return unitRank(x) - unitRank(y) })
		for _, u := range units[family] {
			present := cols[family]
			head := []string{"benchmark"}
			for i, c := range present {
				head = append(head, c+" "+u)
				if i > 0 {
					head = append(head, "÷ "+present[0])
				}
			}
			fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
			for _, bench := range benches {
				if familyOf[bench] != family {
					continue
				}
				base := vals[bench][present[0]][u]
				row := []string{bench}
				for i, c := range present {
					xs := vals[bench][c][u]
					if len(xs) == 0 {
						row = append(row, "–")
						if i > 0 {
							row = append(row, "–")
						}
						continue
					}
					row = append(row, fmt.Sprintf("%s (n=%d)", benchValue(scenario.Median(xs), u), len(xs)))
					if i > 0 {
						var ratios []float64
						for j := range min(len(xs), len(base)) {
							if base[j] != 0 {
								ratios = append(ratios, xs[j]/base[j])
							}
						}
						if len(ratios) == 0 {
							row = append(row, "–")
							continue
						}
						row = append(row, fmt.Sprintf("%.2f", scenario.Median(ratios)))
					}
				}
				fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// splitColumn cuts "BenchmarkExport/exporter=otlp_http-2" into the
// benchmark ("Export"), the column's key ("exporter") and the column
// ("otlp_http").
func splitColumn(name string) (bench, key, col string) {
	name = strings.TrimPrefix(name, "Benchmark")
	if i := strings.LastIndex(name, "-"); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i] // the GOMAXPROCS suffix
		}
	}
	var parts []string
	for part := range strings.SplitSeq(name, "/") {
		if k, v, ok := strings.Cut(part, "="); ok && (k == "exporter" || k == "impl") {
			key, col = k, v
			continue
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "/"), key, col
}

// unitRank orders a benchmark's units: time first.
func unitRank(u string) int {
	if i := slices.Index([]string{"sec/op", "B/op", "allocs/op", "B/s", "ratio"}, u); i >= 0 {
		return i
	}
	return 99
}

// benchValue writes a benchmark figure in its unit's usual scale.
func benchValue(v float64, unit string) string {
	switch unit {
	case "sec/op":
		switch {
		case v >= 1e-3:
			return fmt.Sprintf("%.2f ms", v*1e3)
		default:
			return fmt.Sprintf("%.1f µs", v*1e6)
		}
	case "B/op":
		return fmt.Sprintf("%.1f KiB", v/1024)
	case "B/s":
		return fmt.Sprintf("%.1f MiB/s", v/(1<<20))
	case "allocs/op":
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
