// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileRun is one stored run of the hostile end-to-end tests
// (internal/e2e/hostile_*_test.go with HOSTILE_OUT set): each line a
// figure, with the command, commit, date and machine that made it.
type hostileRun map[string]float64

func loadHostileRun(t *testing.T, path string) hostileRun {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	run := hostileRun{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Test, Figure, Commit, Date, Machine, Command string
			Value                                        float64
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		require.NotEmpty(t, line.Commit, "every figure records its commit")
		require.NotEmpty(t, line.Date)
		require.NotEmpty(t, line.Machine)
		require.NotEmpty(t, line.Command)
		run[line.Test+" "+line.Figure] = line.Value
	}
	require.NoError(t, sc.Err())
	return run
}

// formatFigure is how docs/hostile.md writes a figure: a whole number as
// it is, any other to three significant digits.
func formatFigure(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.3g", v)
}

// TestHostileFiguresComeFromStoredRuns: every figure in docs/hostile.md's
// table is the value stored in docs/hostile-before.jsonl (main before
// issue 19) and docs/hostile-after.jsonl, under the test and figure the
// row names; a figure a run does not have is written "—".
func TestHostileFiguresComeFromStoredRuns(t *testing.T) {
	before := loadHostileRun(t, "docs/hostile-before.jsonl")
	after := loadHostileRun(t, "docs/hostile-after.jsonl")
	doc, err := os.ReadFile("docs/hostile.md")
	require.NoError(t, err)
	rows := 0
	for line := range strings.SplitSeq(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`") {
			continue
		}
		rows++
		key := strings.Trim(strings.TrimSpace(cells[2]), "`")
		for i, run := range []hostileRun{before, after} {
			want := "—"
			if v, ok := run[key]; ok {
				want = formatFigure(v)
			}
			assert.Equal(t, want, strings.TrimSpace(cells[3+i]), "%s: the %s figure", key, []string{"before", "after"}[i])
		}
	}
	assert.GreaterOrEqual(t, rows, 15, "the table's rows")
}

// spaced writes a whole number with a space between thousands, as the
// README does (47 113).
func spaced(v float64) string {
	s := fmt.Sprintf("%d", int64(v))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

// TestHostileFiguresInTheREADME: the README's before and after figures of
// issue 19 are those of the stored runs.
func TestHostileFiguresInTheREADME(t *testing.T) {
	before := loadHostileRun(t, "docs/hostile-before.jsonl")
	after := loadHostileRun(t, "docs/hostile-after.jsonl")
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	behaviour, err := os.ReadFile("docs/behaviour.md") // the README's behaviour, moved there
	require.NoError(t, err)
	readme = append(readme, behaviour...)
	const (
		flood     = "TestHostileFloodConfigs/default_0_jitter_0,_bare_429 requests_in_15s"
		floodZero = "TestHostileFloodConfigs/default_0_alone,_bare_429 requests_in_15s"
		quota     = "TestHostileExhaustedQuotaOn200 RateLimit/delivered_in_window"
		control   = "TestHostileExhaustedQuotaOn200 none/delivered_in_window"
		share     = "TestHostileRateLimitPolicies delivered_share_20s"
		stop      = "TestHostileRateLimitPolicies shutdown_seconds"
		scrub     = "TestHostileScrubTransforms occurrences_of_any_form"
	)
	for _, key := range []string{flood, floodZero, quota, control, share, stop, scrub} {
		require.Contains(t, before, key)
		require.Contains(t, after, key)
	}
	for _, want := range []string{
		fmt.Sprintf("against a bare 429 sent %s requests in 15 s before these floors and %s after", spaced(before[flood]), spaced(after[flood])),
		fmt.Sprintf("(`retry_after: {default: 0s}` alone: %s and %s)", spaced(before[floodZero]), spaced(after[floodZero])),
		fmt.Sprintf("exporter delivered %s of %s requests in 60 s before", spaced(before[quota]), spaced(before[control])),
		fmt.Sprintf("(%.0f %% of the requests offered delivered in 20 s, SIGTERM not done after %.0f s)", 100*before[share], before[stop]),
		fmt.Sprintf("(%.0f %%, shutdown in %.0f ms)", 100*after[share], 1000*after[stop]),
		fmt.Sprintf("put them in the log %s times before, %s times after", spaced(before[scrub]), spaced(after[scrub])),
	} {
		assert.Contains(t, string(readme), want)
	}
}
