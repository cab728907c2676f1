// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// paceWriteEvery is the exporter's bound on the writes of a changed pace
// (holds.go): the first change at once, later ones at most once a
// second.
const paceWriteEvery = time.Second

// boundedWrites is how many writes the changes at times (in order) cost
// under that bound: a change paceWriteEvery or more after the last write
// is written at once; one sooner waits for the write due paceWriteEvery
// after the last, which takes every change until then.
func boundedWrites(times []time.Time) int {
	writes := 0
	var last, due time.Time
	for _, at := range times {
		if !due.IsZero() && !at.Before(due) {
			writes, last, due = writes+1, due, time.Time{}
		}
		switch {
		case writes == 0 || at.Sub(last) >= paceWriteEvery:
			writes, last = writes+1, at
		case due.IsZero():
			due = last.Add(paceWriteEvery)
		}
	}
	if !due.IsZero() {
		writes++
	}
	return writes
}

func TestBoundedWrites(t *testing.T) {
	ms := func(v ...int) []time.Time {
		out := make([]time.Time, len(v))
		for i, x := range v {
			out[i] = t0.Add(time.Duration(x) * time.Millisecond)
		}
		return out
	}
	for _, tt := range []struct {
		times []time.Time
		want  int
	}{
		{nil, 0},
		{ms(0), 1},
		{ms(0, 100, 200, 900), 2},
		{ms(0, 1000, 2000), 3},
		{ms(0, 100, 1500), 3},
		{ms(0, 100, 1100), 3},
		{ms(0, 100, 1000, 1100), 3},
	} {
		require.Equal(t, tt.want, boundedWrites(tt.times), "%v", tt.times)
	}
}

// TestKeptPaceWrites measures how often a pace changes in a way worth
// writing (a cut, a concurrency limit: Pacer.WatchKept) in every cell of
// the limiter model, and the writes the exporter's bound leaves of them
// (at most one a second after the first), over the run (the load, and
// the delivery after it). Opt-in: PACE_WRITES_SEEDS seeds
// per cell; PACE_WRITES_JSON stores the runs (from the repository root):
//
//	PACE_WRITES_SEEDS=3 PACE_WRITES_JSON=docs/pace-writes-model.json go test -run TestKeptPaceWrites ./retry/
func TestKeptPaceWrites(t *testing.T) {
	n, _ := strconv.ParseUint(os.Getenv("PACE_WRITES_SEEDS"), 10, 16)
	if n == 0 {
		t.Skip("set PACE_WRITES_SEEDS to run")
	}
	path := os.Getenv("PACE_WRITES_JSON")
	stored := struct {
		scenario.Provenance
		Runs []map[string]any `json:"runs"`
	}{Provenance: scenario.NewProvenance([]string{"PACE_WRITES_SEEDS=" + strconv.FormatUint(n, 10), "PACE_WRITES_JSON=" + path, "go", "test", "-run", "TestKeptPaceWrites", "./retry/"})}
	for _, c := range modelCells(false) {
		for seed := range n {
			var mu sync.Mutex
			var changes []time.Time
			var stop func()
			m := newCellModel(c)
			m.Loop = func(l *retry.Loop) {
				stop = l.Pacer().WatchKept(func(retry.KeptPace) {
					mu.Lock()
					changes = append(changes, time.Now())
					mu.Unlock()
				})
			}
			f := simulateCell(t, m, seed)
			stop()
			// Over the run: from the load's start to its end, or to the
			// delivery, or to the last change, whichever is last.
			end := f.Start.Add(c.Load().Duration())
			if f.Complete.After(end) {
				end = f.Complete
			}
			if n := len(changes); n > 0 && changes[n-1].After(end) {
				end = changes[n-1]
			}
			secs := end.Sub(f.Start).Seconds()
			most := 0
			for i := range changes {
				k := i
				for k < len(changes) && changes[k].Sub(changes[i]) < time.Second {
					k++
				}
				most = max(most, k-i)
			}
			writes := boundedWrites(changes)
			t.Logf("%-38s seed %d: %3d changes worth writing over the %.1f s run (%.2f/s, at most %d in a second), %3d writes (%.2f/s); %d requests",
				c.Name, seed, len(changes), secs, float64(len(changes))/secs, most, writes, float64(writes)/secs, f.Requests)
			stored.Runs = append(stored.Runs, map[string]any{
				"scenario": c.Name, "exporter": string(scenario.Ours), "model": "limiter", "run": seed,
				"changes": len(changes), "changes_per_s": float64(len(changes)) / secs, "most_changes_in_a_second": most,
				"writes": writes, "writes_per_s": float64(writes) / secs, "run_seconds": secs, "requests": f.Requests,
			})
		}
	}
	if path != "" && os.Getenv("LIMITER_CELLS") == "" {
		stored.Finish()
		writeStoredRun(t, path, stored)
	}
}
