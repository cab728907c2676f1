// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// The restart behind a limiter: a GCRA of paceLimitRate requests a second
// (a burst of paceLimitBurst) that answers a bare 429, offered twice its
// rate for paceLoadFor, one payload per request (no batch processor), with
// paceConsumers queue consumers and file_storage. Then the collector
// stops (SIGTERM, or kill -9) with a backlog queued, and starts again on
// the same storage; its first paceFirstRequests requests are counted.
const (
	paceLimitRate     = 20
	paceLimitBurst    = 5
	paceConsumers     = 8
	paceLoadFor       = 8 * time.Second
	paceFirstRequests = 40
	// paceMaxRefusedAfter is the most of the new process's first
	// paceFirstRequests requests the limiter may refuse: it resumes the
	// pace the old process learned. In the stored runs
	// (docs/pace-restart-e2e.json, 5 of each) it refused at most 1 after
	// SIGTERM (the pace written at shutdown has grown to the limit) and 0
	// after kill -9 (the pace written at the last cut); a build that does not
	// keep the pace meets the limit with its queue consumers at once and
	// learns it anew: 3 to 22 (docs/pace-restart-e2e-before.json).
	paceMaxRefusedAfter = 2
)

// TestPaceKeptAcrossRestart: a collector paced behind a bare-429 GCRA and
// restarted (SIGTERM, then kill -9) with a backlog queued resumes the pace
// it had learned: the limiter refuses at most paceMaxRefusedAfter of the
// new process's first paceFirstRequests requests, fewer than it refused
// of the first process's first requests, when that one started without a
// pace; and every span is delivered exactly once.
func TestPaceKeptAcrossRestart(t *testing.T) {
	for _, how := range []string{"sigterm", "kill-9"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			before, after := restartPaced(t, how)
			t.Logf("%s: the limiter refused %d of the first process's first %d requests, %d of the new process's first %d",
				how, before, paceFirstRequests, after, paceFirstRequests)
			if after > paceMaxRefusedAfter {
				t.Errorf("%s: the limiter refused %d of the new process's first %d requests, want at most %d: the learned pace was not resumed",
					how, after, paceFirstRequests, paceMaxRefusedAfter)
			}
			if after >= before {
				t.Errorf("%s: the new process met the limit as often (%d refusals) as the first one did unpaced (%d)", how, after, before)
			}
		})
	}
}

// restartPaced runs the restart behind the GCRA, stopping the first
// process as how says ("sigterm" or "kill-9"), and returns how many of
// each process's first paceFirstRequests requests the limiter refused.
func restartPaced(t *testing.T, how string) (before, after int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := newHarness(t, demobackend.Config{Mode: demobackend.ModeLimiter,
		Limiter: limiter.Spec{Kind: limiter.GCRA, Hint: limiter.HintNone, Rate: paceLimitRate, Burst: paceLimitBurst}},
		scenario{Storage: true, NumConsumers: paceConsumers, NoBatchProcessor: true, QueueSize: 5000})

	// The first process: twice the limit's rate for paceLoadFor, a backlog
	// left queued.
	h.start(ctx)
	interval := time.Second / (2 * paceLimitRate)
	load, err := demorun.Load{Batches: int(paceLoadFor / interval), SpansPerBatch: 5, Interval: interval}.Send(ctx, h.receiverURL())
	if err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	switch how {
	case "kill-9":
		if err := h.Collector.Kill(); err != nil {
			t.Fatalf("kill -9: %v", err)
		}
	default:
		h.stop()
	}
	first := h.Backend.Records()
	before = refusedOfFirst(first, paceFirstRequests)
	accepted := countStatus(first, http.StatusOK)
	if left := load.Batches - accepted; left < 2*paceFirstRequests {
		t.Fatalf("only %d of %d batches left queued at the stop (%d accepted), want at least %d for the new process to send",
			left, load.Batches, accepted, 2*paceFirstRequests)
	}

	// What the first process sent from the stop on (the signal, or the
	// kill) until it exited.
	atStop := between(first, stopped, time.Time{})

	// The new process sends what the first left queued.
	restarted := time.Now()
	h.start(ctx)
	recs, ok := h.waitRecords(ctx, 90*time.Second, allAccepted(load.SpanIDs))
	d := checkDelivery(load.SpanIDs, recs)
	if !ok || d.Missing != 0 || d.Unexpected != 0 {
		t.Errorf("%s: not every span delivered: %+v", how, d)
	}
	if how != "kill-9" && d.Duplicated != 0 {
		t.Errorf("%s: %d spans delivered twice", how, d.Duplicated)
	}
	sum := demobackend.Summarize(recs)
	if sum.DuplicateKeysAccepted != 0 && how != "kill-9" || sum.KeysWithChangedBody != 0 || sum.MissingKeys != 0 {
		t.Errorf("%s: keys: %d accepted twice, %d with changed bytes, %d requests without a key (%d bodies cut off by a stop, left out)", how, sum.DuplicateKeysAccepted, sum.KeysWithChangedBody, sum.MissingKeys, sum.TruncatedBodies)
	}
	second := between(recs, restarted, time.Time{})
	after = refusedOfFirst(second, paceFirstRequests)
	resumed := h.Collector.LogLines(func(l string) bool { return strings.Contains(l, "Pacing, as before the restart") })
	t.Logf("%s: first process: %d requests, %d accepted, %d from the stop on (%s); new process: %d requests until every span was delivered (%s)",
		how, len(first), accepted, len(atStop), statusLine(atStop), len(second), statusLine(firstN(second, paceFirstRequests)))
	recordRun(t, "PACEKEEP_OUT", []string{"TestPaceKeptAcrossRestart"}, "restart-paced/"+how, map[string]any{
		"first_requests":          paceFirstRequests,
		"refused_first_process":   before,
		"refused_new_process":     after,
		"sent_at_stop":            len(atStop),
		"refused_at_stop":         countStatus(atStop, http.StatusTooManyRequests),
		"queued_at_stop":          load.Batches - accepted,
		"new_process_requests":    len(second),
		"new_process_refused":     countStatus(second, http.StatusTooManyRequests),
		"pace_restored_log_lines": len(resumed),
		"lost":                    d.Missing,
		"spans":                   len(load.SpanIDs),
		"collector":               os.Getenv("PACEKEEP_COLLECTOR"),
	})
	if len(resumed) != 1 {
		t.Errorf("%s: the new process logged 'Pacing, as before the restart' %d times, want once", how, len(resumed))
	}
	return before, after
}

// refusedOfFirst counts the 429s among the first n of recs.
func refusedOfFirst(recs []demobackend.Record, n int) int {
	return countStatus(firstN(recs, n), http.StatusTooManyRequests)
}

func firstN(recs []demobackend.Record, n int) []demobackend.Record {
	return recs[:min(n, len(recs))]
}
