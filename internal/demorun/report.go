// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteReport prints the scenario's result for people.
func (r *ThrottleResult) WriteReport(w io.Writer) {
	s, sc := r.Summary, r.Scenario
	t0 := r.Load.Start
	at := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return fmt.Sprintf("t+%.2fs", t.Sub(t0).Seconds())
	}
	yesNo := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}

	fmt.Fprintf(w, "\n== Load ==\n")
	fmt.Fprintf(w, "sent %d batches = %d spans (%d per batch, one batch every %s) to the collector's OTLP/HTTP receiver\n",
		r.Load.Batches, r.Load.Spans(), sc.Load.SpansPerBatch, sc.Load.Interval)
	fmt.Fprintf(w, "backend script: 429 with Retry-After: %d for the first %s after its first request, then 200\n",
		sc.RetryAfter, sc.ThrottleFor)

	fmt.Fprintf(w, "\n== What the backend received (t = seconds since the load started) ==\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The key is a UUIDv7: its first characters are a timestamp, alike for
	// every payload minted within a minute; its last ones are random.
	fmt.Fprintln(tw, "#\tt\tpath\tstatus\tretry-after\tkey (last 8)\titems\tbody sha256\tnote")
	firstSeen := map[string]int{}
	for _, rec := range r.Records {
		var notes []string
		if prev, ok := firstSeen[rec.Key]; ok && rec.Key != "" {
			same := "same bytes"
			if r.Records[prev].BodyHash != rec.BodyHash {
				same = "DIFFERENT BYTES"
			}
			notes = append(notes, fmt.Sprintf("retry of #%d (same key, %s)", prev, same))
		} else {
			firstSeen[rec.Key] = rec.Seq
		}
		if rec.InRefusedWindow {
			notes = append(notes, "INSIDE A REFUSED WINDOW")
		}
		if rec.Err != "" {
			notes = append(notes, rec.Err)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d %s\t%s\t%s\t%d\t%s\t%s\n",
			rec.Seq, at(rec.Arrival), rec.Path, rec.Status, http.StatusText(rec.Status), orDash(rec.RetryAfter),
			keyPrefix(rec.Key), rec.Items, shortHash(rec.BodyHash), strings.Join(notes, "; "))
	}
	tw.Flush()

	fmt.Fprintf(w, "\n== Verdict ==\n")
	fmt.Fprintf(w, "requests:                 %d (refused with 429: %d, accepted: %d, 401: %d, malformed: %d)\n",
		s.Requests, s.Refused, s.Accepted, s.Unauthorized, s.Malformed)
	fmt.Fprintf(w, "first refusal / accept:   %s / %s\n", at(s.FirstRefusal), at(s.FirstAccept))
	fmt.Fprintf(w, "inside a refused window:  %s (%d requests arrived after a 429 and before its Retry-After had passed)\n",
		yesNo(s.AnyInsideRefusedWindow), s.InsideRefusedWindow)
	fmt.Fprintf(w, "idempotency keys:         %d distinct, %d reused on retries, %d sent with different bytes, %d duplicates accepted, %d requests without a key\n",
		s.DistinctKeys, s.KeysReused, s.KeysWithChangedBody, s.DuplicateKeysAccepted, s.MissingKeys)
	fmt.Fprintf(w, "spans:                    sent %d, accepted %d distinct, %d duplicates, %d missing, %d unexpected\n",
		r.Load.Spans(), s.DistinctItemsAccepted, r.Duplicated, r.Missing, r.Unexpected)
	if r.DeliveryErr == nil {
		fmt.Fprintf(w, "all spans delivered:      %.1f s after the load started\n", r.DeliveredAfter.Seconds())
	} else {
		fmt.Fprintf(w, "all spans delivered:      NO: %v\n", r.DeliveryErr)
	}
	fmt.Fprintf(w, "collector shutdown:       %.2f s after SIGTERM", r.ShutdownTook.Seconds())
	if r.ShutdownErr != nil {
		fmt.Fprintf(w, " (%v)", r.ShutdownErr)
	}
	fmt.Fprintln(w)

	if len(r.LogLines) > 0 {
		fmt.Fprintf(w, "\n== Collector log: throttling, drops, warnings (full log: %s) ==\n", r.fullLog())
		lines := r.LogLines
		if len(lines) > 20 {
			fmt.Fprintf(w, "(last 20 of %d lines)\n", len(lines))
			lines = lines[len(lines)-20:]
		}
		for _, l := range lines {
			fmt.Fprintln(w, "  "+truncateLine(CompactLogLine(l), 400))
		}
	}

	fmt.Fprintf(w, "\n== Collector self-metrics (%s*, histogram buckets left out) ==\n", MetricPrefix)
	own := r.Metrics.WithPrefix(MetricPrefix)
	if len(own) == 0 {
		fmt.Fprintln(w, "  (none scraped)")
	}
	for _, m := range own {
		if strings.HasSuffix(m.Name, "_bucket") {
			continue
		}
		fmt.Fprintln(w, "  "+m.Line)
	}

	fmt.Fprintln(w)
	if sc.Kept {
		fmt.Fprintf(w, "kept: collector config %s, collector log %s\n\n", r.ConfigPath, r.CollectorLog)
	} else {
		fmt.Fprintf(w, "working directory (collector config, log, queue storage): %s\n\n", r.notKept())
	}
	if err := r.Err(); err != nil {
		fmt.Fprintf(w, "RESULT: FAIL\n%v\n", err)
		return
	}
	fmt.Fprintf(w, "RESULT: PASS: every one of the %d spans arrived exactly once; no request arrived inside a refused window; retries reused their key and bytes\n", r.Load.Spans())
}

// fullLog says where the full log is, or, when it goes with the run's
// directory, that it goes and how to keep it: never a path that will not exist.
func (r *ThrottleResult) fullLog() string {
	if r.Scenario.Kept {
		return r.CollectorLog
	}
	return r.notKept()
}

func (r *ThrottleResult) notKept() string {
	s := "deleted when the run ends"
	if r.Scenario.KeepHint != "" {
		s += "; " + r.Scenario.KeepHint
	}
	return s
}

func keyPrefix(k string) string {
	if k == "" {
		return "(none)"
	}
	if len(k) > 8 {
		return "…" + k[len(k)-8:]
	}
	return k
}

// CompactLogLine shortens a collector log line (console encoding:
// time, level, caller, message, JSON fields) to its time of day, level,
// message and the fields that are not the resource or the component's
// identity. Lines in another shape come back unchanged.
func CompactLogLine(line string) string {
	parts := strings.SplitN(line, "\t", 5)
	if len(parts) < 4 {
		return line
	}
	ts := parts[0]
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.Format("15:04:05.000")
	}
	msg, rest := parts[3], ""
	if len(parts) == 5 {
		rest = parts[4]
	}
	if !strings.Contains(parts[2], ".go:") { // no caller: the message is in parts[2]
		msg, rest = parts[2], strings.Join(parts[3:], "\t")
	}
	out := ts + " " + parts[1] + " " + msg
	var fields map[string]any
	if rest != "" && json.Unmarshal([]byte(rest), &fields) == nil {
		keys := make([]string, 0, len(fields))
		for k := range fields {
			if k != "resource" && !strings.HasPrefix(k, "otelcol.") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			out += fmt.Sprintf(" %s=%v", k, fields[k])
		}
	}
	return out
}

func shortHash(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncateLine(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
