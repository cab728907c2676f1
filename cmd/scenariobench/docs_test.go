// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
	require.NoError(t, os.WriteFile(filepath.Join(root, "docs", "behaviour.md"), []byte("no figures\n"), 0o600))

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
	for stat, want := range map[string]string{"ge=300": "2 of 3", "le=300": "2 of 3", "le=99": "0 of 3", "ge=400": "1 of 3"} {
		counted, renderErr := r.render("v r.json healthy|ours|items_per_second " + stat + " f0")
		require.NoError(t, renderErr)
		assert.Equal(t, want, counted, stat)
	}
	assert.True(t, strings.HasSuffix(text, "<!-- /fig -->\nend\n"), text)

	diffs, err = renderDocFigures(root, false)
	require.NoError(t, err)
	assert.Empty(t, diffs, "rendered twice, nothing changes")
}

// TestDocFiguresAreAccountedFor: in README.md and docs/benchmarks.md every
// number that looks measured is a rendered figure, or sits in a region
// that names the test holding it to its stored run (which must exist), or
// in a region that says why nothing checks it yet (listed in the log).
func TestDocFiguresAreAccountedFor(t *testing.T) {
	root := filepath.Join("..", "..")
	tests := testFunctionNames(t, root)
	for _, name := range docFiles {
		b, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		stray, checkers := unaccountedFigures(name, string(b))
		for _, f := range stray {
			t.Errorf("%s:%d: %q is not rendered from a stored run (<!-- fig … -->) nor in a figures region: %s", f.file, f.line, f.figure, f.context)
		}
		for _, c := range checkers {
			assert.True(t, tests[c], "%s: a region says %s checks its figures; no such test", name, c)
		}
		for _, m := range regexp.MustCompile(`<!-- figures unchecked: ([^>]*?) -->`).FindAllStringSubmatch(string(b), -1) {
			t.Logf("%s: figures unchecked: %s", name, m[1])
		}
	}
}

// testFunctionNames finds every Test function of the repository's test files.
func testFunctionNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	fsys := os.DirFS(root)
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "build" || d.Name() == ".git") {
			return fs.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := fs.ReadFile(fsys, path)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	return names
}

// TestUnaccountedFigures: the guard sees a measured-looking figure outside
// figures and regions, and nothing inside them or in code.
func TestUnaccountedFigures(t *testing.T) {
	text := "a 4.2 % share and 0.895\n<!-- fig v x.json a|b|c median f1 -->9.9 %<!-- /fig -->\n" +
		"<!-- figures checked by TestX -->\n1.25 and 3.5 %\n<!-- /figures -->\n```\n7.77\n```\n" +
		"<!-- figures unchecked: a model run not stored -->8.88<!-- /figures -->\n60 % and 1 000 spans and `0.5 s`, `1.5 ×`\n" +
		"clears 8.0 s after, 1.5 × faster, 12.5 MiB\n"
	stray, checkers := unaccountedFigures("f.md", text)
	var got []string
	for _, f := range stray {
		got = append(got, f.figure)
	}
	assert.Equal(t, []string{"4.2 %", "0.895", "8.0 s", "1.5 ×", "12.5 MiB"}, got)
	assert.Equal(t, []string{"TestX"}, checkers)
}

// TestDocFiguresOfTheMatrix: "met" counts the cells of a stored matrix run
// whose every goal an exporter met (as -matrix-table judges them), and a
// selector may escape its "|" as "\|" (in a markdown table's cell).
func TestDocFiguresOfTheMatrix(t *testing.T) {
	r := &figureRenderer{dir: filepath.Join("..", "..", "docs"), cache: map[string]map[string]any{}}
	if _, err := os.Stat(filepath.Join(r.dir, "scenariobench-matrix-before.json")); err != nil {
		t.Skip(err)
	}
	// Before issue 15: ours met its goals in the bytes bucket, the 10 s
	// window and the unlimited reference; core in the reference alone.
	got, err := r.render("met scenariobench-matrix-before.json ours")
	require.NoError(t, err)
	assert.Equal(t, "3 of 13", got)
	got, err = r.render("met scenariobench-matrix-before.json core")
	require.NoError(t, err)
	assert.Equal(t, "1 of 13", got)
	_, err = r.render("met scenariobench-matrix-before.json both")
	require.Error(t, err)
	// One cell's runs: the bytes bucket met its goals, the 1 s window did not.
	got, err = r.render("met scenariobench-matrix-before.json ours token-bytes/retry-after/4rps/5000")
	require.NoError(t, err)
	assert.Equal(t, "1 of 1", got)
	got, err = r.render("met scenariobench-matrix-before.json ours fixed-window-1s/none/20rps/500")
	require.NoError(t, err)
	assert.Equal(t, "0 of 1", got)
	_, err = r.render("met scenariobench-matrix-before.json ours no/such/cell")
	require.Error(t, err)

	got, err = r.render(`v scenariobench-matrix-before.json gcra/none/2rps/5000\|ours\|requests max f0`)
	require.NoError(t, err)
	assert.Equal(t, "45", got)
	got2, err := r.render(`v scenariobench-matrix-before.json gcra/none/2rps/5000|ours|requests max f0`)
	require.NoError(t, err)
	assert.Equal(t, got, got2)
}
