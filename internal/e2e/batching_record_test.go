// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bench "github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// The batching tests' figures (losses, duplicates and their keys, the two
// tenants' rates, requests inside a hold window) are stored, when
// BATCHING_OUT names a JSON file, as runs in the scenario tool's shape
// (scenario, exporter, run and the figures), so that docs/benchmarks.md
// renders them with `scenariobench -docs` like any stored run. Each test
// run appends its run; the file's provenance is the first run's, its end
// the last one's.

// batchingRun is one test's run as stored.
type batchingRun map[string]any

// batchingFile is the stored document.
type batchingFile struct {
	bench.Provenance
	Runs []batchingRun `json:"runs"`
}

var batchingMu sync.Mutex

// recordBatching stores fields as a run of scenario (when BATCHING_OUT is
// set) and logs them always.
func recordBatching(t *testing.T, name string, fields map[string]any) {
	t.Helper()
	recordRun(t, "BATCHING_OUT", batchingTests(), name, fields)
}

// recordRun stores fields as a run of scenario name in the JSON file the
// environment variable env names, when it is set, as recordBatching does
// (tests: the tests that record into it, for the stored command), and
// logs them always.
func recordRun(t *testing.T, env string, tests []string, name string, fields map[string]any) {
	t.Helper()
	t.Logf("figures of %s: %v", name, fields)
	out := os.Getenv(env)
	if out == "" || t.Failed() {
		return
	}
	batchingMu.Lock()
	defer batchingMu.Unlock()
	var doc batchingFile
	data, err := os.ReadFile(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		doc.Provenance = bench.NewProvenance(nil)
		bin := "build/otelcol-retry/otelcol-retry"
		if b := os.Getenv("OTELCOL_BIN"); b != "" {
			bin = b
		}
		doc.Command = env + "=" + filepath.Base(out) + " OTELCOL_BIN=" + bin + " go test -tags e2e -run '" +
			strings.Join(tests, "|") + "' ./internal/e2e/"
	case err != nil:
		t.Fatal(err)
	default:
		if err = json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
	}
	n := 1
	for _, r := range doc.Runs {
		if r["scenario"] == name {
			n++
		}
	}
	run := batchingRun{"scenario": name, "exporter": string(bench.Ours), "run": n, "test": t.Name()}
	for k, v := range fields {
		run[k] = v
	}
	doc.Runs = append(doc.Runs, run)
	doc.Finish()
	data, err = json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err = os.WriteFile(out, append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// batchingTests are the tests that record their figures.
func batchingTests() []string {
	return []string{"TestBatchingSurvivesKill9", "TestBatchingTwoTenantsOneHeld", "TestBatchingRestartInsideHoldWindow"}
}
