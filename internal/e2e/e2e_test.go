// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

const prefix = demorun.MetricPrefix

// collectorBin is $OTELCOL_BIN, or the repository's build output.
func collectorBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "build", "otelcol-retry", "otelcol-retry")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("collector binary %s: %v; run `make build-collector` or set OTELCOL_BIN", abs, err)
	}
	return abs
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func TestComponentsListsExporter(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(collectorBin(t), "components").CombinedOutput()
	if err != nil {
		t.Fatalf("components: %v\n%s", err, out)
	}
	for _, want := range []string{"otlp_http_retry", "file_storage", "healthcheckv2", "otlp", "batch", "memory_limiter", "debug"} {
		if !bytes.Contains(out, []byte("name: "+want+"\n")) {
			t.Errorf("components does not list %s:\n%s", want, out)
		}
	}
}

// TestThrottledDelivery runs the demo scenario: 20 batches of 10 spans; the
// backend answers 429 with Retry-After: 4 for 10 s after its first request.
func TestThrottledDelivery(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := demorun.DefaultThrottle(collectorBin(t), t.TempDir())
	s.Progress = logWriter{t}
	res, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	res.WriteReport(&report)
	t.Log(report.String())

	// On the wire.
	sum := res.Summary
	if err := res.Err(); err != nil {
		t.Errorf("delivery: %v", err)
	}
	if !res.ExactlyOnce() {
		t.Errorf("not exactly once: %d sent, %d missing, %d duplicated, %d unexpected", res.Load.Spans(), res.Missing, res.Duplicated, res.Unexpected)
	}
	if sum.Refused < 2 {
		t.Errorf("backend refused %d requests; the scenario should throttle at least twice (10 s window, Retry-After 4)", sum.Refused)
	}
	if sum.AnyInsideRefusedWindow {
		t.Errorf("%d requests arrived inside a refused window", sum.InsideRefusedWindow)
	}
	if sum.KeysReused == 0 || sum.KeysWithChangedBody != 0 || sum.RefusedKeysNeverAccepted != 0 || sum.DuplicateKeysAccepted != 0 || sum.MissingKeys != 0 {
		t.Errorf("keys: %+v", sum)
	}
	if sum.DistinctKeys != sum.Accepted {
		t.Errorf("%d distinct keys for %d accepted payloads; every payload must have its own key", sum.DistinctKeys, sum.Accepted)
	}
	// Every refused request is retried with the same key and bytes and no
	// earlier than its Retry-After.
	for i, rec := range res.Records {
		if rec.Status != 429 {
			continue
		}
		next := -1
		for j := i + 1; j < len(res.Records); j++ {
			if res.Records[j].Key == rec.Key {
				next = j
				break
			}
		}
		if next < 0 {
			t.Errorf("request #%d (key %s) was refused and never retried", i, rec.Key)
			continue
		}
		retry := res.Records[next]
		if retry.BodyHash != rec.BodyHash {
			t.Errorf("request #%d retried as #%d with different bytes", i, next)
		}
		if gap := retry.Arrival.Sub(rec.Arrival); gap < 4*time.Second {
			t.Errorf("request #%d retried as #%d after %s, before Retry-After: 4", i, next, gap)
		}
	}

	// On the collector's Prometheus endpoint (v0.165: no _total, no unit
	// suffix, no otel_scope_* labels; exporter and data_type added by the exporter).
	m := res.Metrics
	t.Logf("exporter series on the endpoint: %v", m.WithPrefix(prefix).Names())
	ident := map[string]string{"exporter": "otlp_http_retry", "data_type": "traces"}
	with := func(kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range ident {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	labelsOf := func(name string, want ...string) {
		t.Helper()
		got := m.LabelNames(name)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s labels = %v, want %v", name, got, want)
		}
	}

	attempts := prefix + "attempts"
	if got := m.Sum(attempts, with("outcome", "throttled", "status_code", "429")); got <= 0 || int(got) != sum.Refused {
		t.Errorf("%s{outcome=throttled,status_code=429} = %v, want %d (the backend's refusals)", attempts, got, sum.Refused)
	}
	if got := m.Sum(attempts, with("outcome", "success", "status_code", "200")); got <= 0 || int(got) != sum.Accepted {
		t.Errorf("%s{outcome=success,status_code=200} = %v, want %d (the backend's accepts)", attempts, got, sum.Accepted)
	}
	if got := m.Sum(attempts, nil); int(got) != sum.Requests {
		t.Errorf("%s total = %v, want %d (every request the backend saw)", attempts, got, sum.Requests)
	}
	labelsOf(attempts, "exporter", "data_type", "outcome", "status_code")

	retries := prefix + "retries"
	if got := m.Sum(retries, with("path", "rate_limit", "reason", "429")); int(got) != sum.Refused {
		t.Errorf("%s{path=rate_limit,reason=429} = %v, want %d", retries, got, sum.Refused)
	}
	if got := m.Sum(retries, with("path", "backoff")); got != 0 {
		t.Errorf("%s{path=backoff} = %v, want 0", retries, got)
	}
	labelsOf(retries, "exporter", "data_type", "path", "reason")

	wait := prefix + "retry_after_wait_seconds"
	if got := m.Sum(wait+"_count", with("source", "header")); int(got) != sum.Refused {
		t.Errorf("%s_count{source=header} = %v, want %d", wait, got, sum.Refused)
	}
	if got, lo, hi := m.Sum(wait+"_sum", with("source", "header")), 4*float64(sum.Refused), 4.25*float64(sum.Refused); got < lo || got > hi {
		t.Errorf("%s_sum{source=header} = %v, want within [%v, %v] (Retry-After 4 plus up to 250 ms jitter each)", wait, got, lo, hi)
	}
	if len(m.Find(wait+"_bucket", with("source", "header", "le", "+Inf"))) != 1 {
		t.Errorf("%s_bucket{le=+Inf} missing", wait)
	}
	labelsOf(wait+"_count", "exporter", "data_type", "source")

	if got := m.Sum(prefix+"dropped_items", nil); got != 0 {
		t.Errorf("%sdropped_items = %v, want absent or 0", prefix, got)
	}
	throttled := m.Find(prefix+"throttled", ident)
	if len(throttled) != 1 {
		t.Errorf("%sthrottled gauge: %d series, want 1", prefix, len(throttled))
	} else if throttled[0].Value != 0 {
		t.Errorf("%sthrottled = %v after delivery, want 0 (gate open)", prefix, throttled[0].Value)
	}
	labelsOf(prefix+"throttled", "exporter", "data_type")

	for _, name := range []string{attempts + "_total", prefix + "retry_after_wait_seconds_seconds_count", prefix + "throttled_ratio"} {
		if len(m.Find(name, nil)) != 0 {
			t.Errorf("unexpected suffixed series %s", name)
		}
	}
	for _, s := range m.WithPrefix(prefix) {
		for k := range s.Labels {
			if strings.HasPrefix(k, "otel_scope_") {
				t.Errorf("%s carries %s", s.Name, k)
			}
		}
	}
}
