// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command benchjson stores a run of Go benchmarks as JSON beside its
// provenance (command, commit, date, machine), so that the figures in
// docs/benchmarks.md can be rendered from it (scenariobench -docs). It
// reads `go test -bench` output on stdin, copies it to stdout as it comes,
// and writes the JSON when the input ends:
//
//	go test -run '^$' -bench . -count 6 . | go run ./cmd/benchjson -command "go test …" -out docs/bench-go.json
//
// Units are stored as the benchmark reports them, but ns/op becomes sec/op
// and MB/s becomes B/s (as benchstat shows them).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

type result struct {
	Name       string             `json:"name"`
	Iterations int                `json:"iterations"`
	Metrics    map[string]float64 `json:"metrics"`
}

type report struct {
	scenario.Provenance
	// Config is the `key: value` lines go test prints (goos, goarch, pkg, cpu).
	Config  map[string]string `json:"config"`
	Results []result          `json:"results"`
}

func main() { os.Exit(run(os.Stdin, os.Stdout)) }

func run(in io.Reader, out io.Writer) int {
	command := flag.String("command", "", "the benchmark command whose output comes on stdin (recorded as the run's command)")
	path := flag.String("out", "", "write the JSON to `FILE`")
	flag.Parse()
	if *command == "" || *path == "" {
		fmt.Fprintln(os.Stderr, "benchjson: -command and -out are required")
		return 2
	}
	rep := report{Provenance: scenario.NewProvenance(strings.Fields(*command)), Config: map[string]string{}}
	rep.Command = *command
	failed := false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(out, line)
		if r, ok := parseLine(line); ok {
			rep.Results = append(rep.Results, r)
			continue
		}
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.Contains(k, " ") && k != "" {
			rep.Config[k] = strings.TrimSpace(v)
		}
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") {
			failed = true
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "benchjson:", err)
		return 2
	}
	rep.Finish()
	if failed || len(rep.Results) == 0 {
		fmt.Fprintln(os.Stderr, "benchjson: the benchmarks failed or printed no result; nothing written")
		return 1
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchjson:", err)
		return 2
	}
	if err := os.WriteFile(*path, append(b, '\n'), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "benchjson:", err)
		return 2
	}
	return 0
}

// parseLine reads one result line: name, iterations, then value-unit pairs.
func parseLine(line string) (result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return result{}, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return result{}, false
	}
	r := result{Name: f[0], Iterations: n, Metrics: map[string]float64{}}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return result{}, false
		}
		switch unit := f[i+1]; unit {
		case "ns/op":
			r.Metrics["sec/op"] = v / 1e9
		case "MB/s":
			r.Metrics["B/s"] = v * 1e6
		default:
			r.Metrics[unit] = v
		}
	}
	return r, true
}
