// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocFiguresMatchStoredRuns: every figure of README.md and
// docs/benchmarks.md is what the stored run it names gives. A figure
// changed by hand, or a stored run replaced without `scenariobench -docs`,
// fails here.
func TestDocFiguresMatchStoredRuns(t *testing.T) {
	diffs, err := renderDocFigures(filepath.Join("..", ".."), false)
	require.NoError(t, err)
	for _, d := range diffs {
		t.Error(d.String() + " (run `make docs-figures` after a new benchmark run)")
	}
}

// TestDocFiguresRewrite: -docs rewrites a figure changed by hand, inline
// and in a block, and leaves the rest of the file as it was.
func TestDocFiguresRewrite(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "docs"), 0o700))
	run := `{"command": "/tmp/x/scenariobench -runs 2", "commit": "0123456789abcdef", "started": "2026-12-01T10:00:00Z", "finished": "2026-12-01T10:05:00Z",
	  "machine": {"cpu_model": "CPU", "cpus": 2, "go_version": "go1.26.8"},
	  "runs": [
	    {"scenario": "healthy", "exporter": "otlp_http_retry", "run": 1, "items_per_second": 400, "delivered": 1},
	    {"scenario": "healthy", "exporter": "otlp_http", "run": 1, "items_per_second": 200, "delivered": 1},
	    {"scenario": "healthy", "exporter": "otlp_http_retry", "run": 2, "items_per_second": 300, "delivered": 1},
	    {"scenario": "healthy", "exporter": "otlp_http", "run": 2, "items_per_second": 150, "delivered": 1},
	    {"scenario": "healthy", "exporter": "otlp_http_retry", "run": 3, "items_per_second": 100, "delivered": 1},
	    {"scenario": "healthy", "exporter": "otlp_http", "run": 3, "items_per_second": 400, "delivered": 1}]}`
	require.NoError(t, os.WriteFile(filepath.Join(root, "docs", "r.json"), []byte(run), 0o600))
	bench := "# B\n\nSpans/s <!-- fig v r.json healthy/ours/items_per_second median f0 -->999<!-- /fig --> " +
		"(<!-- fig v r.json healthy/ours/items_per_second rangen f0 -->x<!-- /fig -->), ratio " +
		"<!-- fig v r.json healthy/ratio/items_per_second median f2 -->1.00<!-- /fig -->; " +
		"<!-- fig run r.json -->?<!-- /fig -->; `<!-- fig command r.json -->?<!-- /fig -->`.\n" +
		"<!-- fig table r.json -->\nold\n<!-- /fig -->\nend\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "docs", "benchmarks.md"), []byte(bench), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("no figures\n"), 0o600))

	diffs, err := renderDocFigures(root, true)
	require.NoError(t, err)
	assert.Len(t, diffs, 6)
	got, err := os.ReadFile(filepath.Join(root, "docs", "benchmarks.md"))
	require.NoError(t, err)
	text := string(got)
	// Ours 400, 300, 100 (median 300), core 200, 150, 400 (median 200):
	// the pairs' ratios 2, 2, 0.25 have the median 2.00, where the ratio
	// of the medians would be 1.50.
	assert.Contains(t, text, "-->300<!-- /fig -->")
	assert.Contains(t, text, "-->100–400 over 3 runs<!-- /fig -->")
	assert.Contains(t, text, "-->2.00<!-- /fig -->")
	assert.Contains(t, text, "-->2026-12-01 10:00–10:05 UTC, commit 0123456, 2 × CPU, go1.26.8<!-- /fig -->")
	assert.Contains(t, text, "`<!-- fig command r.json -->scenariobench -runs 2<!-- /fig -->`")
	assert.Contains(t, text, "| healthy | ours | 3 | 300 |")
	assert.Contains(t, text, "| healthy | **ours ÷ core, median of pairs** | 3 | 2.00 |")

	r := &figureRenderer{dir: filepath.Join(root, "docs"), cache: map[string]map[string]any{}}
	got2, err := r.render("v r.json heal*|ours|items_per_second max f0")
	require.NoError(t, err)
	assert.Equal(t, "400", got2, "a pattern of scenarios, with | between the selector's parts")
	assert.True(t, strings.HasSuffix(text, "<!-- /fig -->\nend\n"), text)

	diffs, err = renderDocFigures(root, false)
	require.NoError(t, err)
	assert.Empty(t, diffs, "rendered twice, nothing changes")
}
