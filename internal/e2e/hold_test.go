// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// probeSlack absorbs scheduling noise between the exporter's timer and the
// backend's arrival stamps.
const probeSlack = 0.05

// checkHoldPacing checks one collector process's requests to a held
// destination. seq is what the backend saw from that process, in arrival
// order, up to the first request it accepted. The first request was
// answered 401; the requests already in flight then (arriving within
// burstWindow of it) are the burst, at most maxBurst (num_consumers) of
// them. Every later request is a probe: at least one probe interval after
// the first 401 and after the previous request.
func checkHoldPacing(t *testing.T, label string, seq []demobackend.Record, probe, burstWindow time.Duration, maxBurst int) (probes int) {
	t.Helper()
	if len(seq) == 0 {
		t.Errorf("%s: no requests", label)
		return 0
	}
	if seq[0].Status != http.StatusUnauthorized {
		t.Errorf("%s: first request answered %d, want 401", label, seq[0].Status)
		return 0
	}
	first := seq[0].Arrival
	i := 1
	for i < len(seq) && seq[i].Arrival.Sub(first) < burstWindow {
		i++
	}
	if i > maxBurst {
		t.Errorf("%s: %d requests within %s of the first 401, more than the %d allowed (num_consumers when nothing is held yet; one probe when the hold was kept): %s",
			label, i, burstWindow, maxBurst, statusLine(seq))
	}
	minGap := time.Duration(float64(probe) * (1 - probeSlack))
	prev := first
	for ; i < len(seq); i++ {
		if gap := seq[i].Arrival.Sub(prev); gap < minGap {
			t.Errorf("%s: request %d (answered %d) came %s after the previous probe; while held at most one request per probe interval (%s) may reach the backend: %s",
				label, i, seq[i].Status, gap.Round(time.Millisecond), probe, statusLine(seq))
		}
		prev = seq[i].Arrival
		probes++
	}
	return probes
}

// untilFirstAccept returns recs up to and including the first 200.
func untilFirstAccept(recs []demobackend.Record) []demobackend.Record {
	for i, r := range recs {
		if r.Status == http.StatusOK {
			return recs[:i+1]
		}
	}
	return recs
}

// probesAfter is a waitRecords condition: at least n requests arrived
// after from and more than burstWindow after the first of them (probes,
// not the burst of requests in flight at the first 401).
func probesAfter(from time.Time, burstWindow time.Duration, n int) func([]demobackend.Record) bool {
	return func(recs []demobackend.Record) bool {
		seg := between(recs, from, time.Time{})
		if len(seg) == 0 {
			return false
		}
		count := 0
		for _, r := range seg[1:] {
			if r.Arrival.Sub(seg[0].Arrival) >= burstWindow {
				count++
			}
		}
		return count >= n
	}
}

// TestUnauthorizedHoldSurvivesRestart: the backend answers 401 until told
// otherwise. The exporter (on_unauthorized: hold, the default) must drop
// nothing and send one probe per unauthorized::probe_interval. In the
// middle of the hold the collector is stopped (SIGTERM) and started again
// on the same file_storage directory; then the backend accepts, and every
// span arrives exactly once.
func TestUnauthorizedHoldSurvivesRestart(t *testing.T) {
	t.Parallel()
	const (
		probe     = 2 * time.Second
		consumers = 4
		burst     = probe / 2
	)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := newHarness(t, demobackend.Config{Mode: demobackend.ModeUnauthorized},
		scenario{Storage: true, NumConsumers: consumers, ProbeInterval: probe})

	// First process: load arrives while the backend refuses the credentials.
	h.start(ctx)
	startA := time.Now()
	first, err := demorun.Load{Batches: 6, SpansPerBatch: 5, Interval: 300 * time.Millisecond}.Send(ctx, h.receiverURL())
	if err != nil {
		t.Fatal(err)
	}
	if recs, ok := h.waitRecords(ctx, 3*probe+10*time.Second, probesAfter(startA, burst, 2)); !ok {
		m := h.scrape(ctx)
		t.Fatalf("the held exporter sent no second probe within %s of its first 401 (probe_interval %s); backend saw: %s; %s",
			3*probe+10*time.Second, probe, statusLine(recs), droppedLines(m))
	}
	mA := h.scrape(ctx)
	if got := mA.Sum(prefix+"dropped_items", nil); got != 0 {
		t.Errorf("first process: dropped_items = %v while held, want 0: %s", got, droppedLines(mA))
	}
	// While held, the health endpoint shows the recoverable error.
	if code, body := h.health(ctx); code != http.StatusInternalServerError || !strings.Contains(body, "StatusRecoverableError") {
		t.Errorf("health while held: %d, want 500 naming StatusRecoverableError\n%s", code, body)
	}

	// Restart in the middle of the hold, on the same storage.
	took := h.stop()
	t.Logf("first process stopped in %s", took.Round(time.Millisecond))
	stoppedA := time.Now()
	h.start(ctx)
	second, err := demorun.Load{Batches: 4, SpansPerBatch: 5, Interval: 300 * time.Millisecond}.Send(ctx, h.receiverURL())
	if err != nil {
		t.Fatal(err)
	}
	if recs, ok := h.waitRecords(ctx, 3*probe+10*time.Second, probesAfter(stoppedA, burst, 2)); !ok {
		t.Fatalf("after the restart the held exporter sent no second probe within %s; backend saw since the restart: %s",
			3*probe+10*time.Second, statusLine(between(recs, stoppedA, time.Time{})))
	}

	// The backend takes the credentials again: the next probe succeeds and
	// everything held goes out, without a restart.
	h.Backend.Recover()
	recovered := time.Now()
	sent := append(append([]string(nil), first.SpanIDs...), second.SpanIDs...)
	recs, ok := h.waitRecords(ctx, 2*probe+30*time.Second, allAccepted(sent))
	if !ok {
		d := checkDelivery(sent, recs)
		t.Errorf("%d of %d spans not delivered within %s of the backend's recovery (e.g. %v)", d.Missing, d.Sent, 2*probe+30*time.Second, d.MissingIDs)
	}
	mB := h.scrape(ctx)
	// Recovered: the component reported OK again.
	if code, body := h.health(ctx); code != http.StatusOK {
		t.Errorf("health after the recovery: %d, want 200\n%s", code, body)
	}
	h.stop()

	d := checkDelivery(sent, recs)
	t.Logf("sent %d spans in %d batches; backend: %d requests; delivery %+v; accepted %s after recovery",
		len(sent), first.Batches+second.Batches, len(recs), d, firstAcceptAfter(recs, recovered))
	if d.Missing != 0 || d.Duplicated != 0 || d.Unexpected != 0 {
		t.Errorf("not exactly once: %+v", d)
	}
	sum := demobackend.Summarize(recs)
	if sum.DuplicateKeysAccepted != 0 || sum.KeysWithChangedBody != 0 || sum.MissingKeys != 0 {
		t.Errorf("idempotency keys: %d accepted twice, %d with changed bytes, %d requests without a key", sum.DuplicateKeysAccepted, sum.KeysWithChangedBody, sum.MissingKeys)
	}
	if got := mB.Sum(prefix+"dropped_items", nil); got != 0 {
		t.Errorf("second process: dropped_items = %v, want 0: %s", got, droppedLines(mB))
	}

	// Pacing while held, per process: the first meets the 401 with at most
	// one request per consumer; the second starts holding (the hold is kept
	// in file_storage, holds.go), so it sends one probe, not a burst.
	segA := between(recs, time.Time{}, stoppedA)
	segB := untilFirstAccept(between(recs, stoppedA, time.Time{}))
	pa := checkHoldPacing(t, "first process", segA, probe, burst, consumers)
	pb := checkHoldPacing(t, "second process", segB, probe, burst, 1)
	t.Logf("first process: %s", statusLine(segA))
	t.Logf("second process until the first accept: %s", statusLine(segB))
	t.Logf("probes after the burst: %d before the restart, %d after (the last one accepted)", pa, pb)
	if len(segB) > 0 && segB[len(segB)-1].Status != http.StatusOK {
		t.Errorf("second process: no request accepted after the recovery")
	}
}

func firstAcceptAfter(recs []demobackend.Record, t0 time.Time) string {
	for _, r := range recs {
		if r.Status == http.StatusOK && r.Arrival.After(t0) {
			return r.Arrival.Sub(t0).Round(time.Millisecond).String()
		}
	}
	return "never"
}
