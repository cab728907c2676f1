// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func renderFor(t *testing.T, s Setup, exp Exporter, headers map[string]string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	ccs, err := Configs("http://127.0.0.1:4318", []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	path, err := s.Render(dir, exp, ccs[0], headers)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, string(b)
}

func TestBothExportersGetTheSameSettings(t *testing.T) {
	s := Setup{QueueSize: 700, NumConsumers: 7}
	for _, exp := range []Exporter{Ours, Core} {
		_, text := renderFor(t, s, exp, map[string]string{"X-Scope-OrgID": "tenant-3"})
		for _, want := range []string{
			"\n  " + string(exp) + ":\n    endpoint: http://127.0.0.1:4318\n    compression: gzip\n",
			"      X-Scope-OrgID: \"tenant-3\"\n",
			"      queue_size: 700\n      num_consumers: 7\n",
			"      exporters: [" + string(exp) + "]\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s config lacks %q:\n%s", exp, want, text)
			}
		}
		for _, unwanted := range []string{"processors:", "storage: file_storage", "retry_on_failure", "retry_after", "backoff", "encode_at"} {
			if strings.Contains(text, unwanted) {
				t.Errorf("%s config has %q without being asked:\n%s", exp, unwanted, text)
			}
		}
	}
}

func TestSetupOptions(t *testing.T) {
	_, text := renderFor(t, Setup{QueueSize: 1000, NumConsumers: 10, BatchProcessor: true, PersistentQueue: true}, Ours, nil)
	for _, want := range []string{"processors:\n  batch: {}\n", "      processors: [batch]\n", "      storage: file_storage\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("config lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "headers:") {
		t.Errorf("headers without any:\n%s", text)
	}
	if strings.Contains(text, "pacing:") {
		t.Errorf("pacing set without being asked:\n%s", text)
	}
	off := Setup{QueueSize: 1000, NumConsumers: 10, PacingOff: true}
	if _, text := renderFor(t, off, Ours, nil); !strings.Contains(text, "    pacing:\n      enabled: false\n") {
		t.Errorf("PacingOff did not turn pacing off:\n%s", text)
	}
	if _, text := renderFor(t, off, Core, nil); strings.Contains(text, "pacing:") {
		t.Errorf("the core exporter has no pacing setting:\n%s", text)
	}
	entry := Setup{QueueSize: 1000, NumConsumers: 10, EncodeAt: "entry"}
	if _, text := renderFor(t, entry, Ours, nil); !strings.Contains(text, "    encode_at: entry\n") {
		t.Errorf("EncodeAt did not set encode_at:\n%s", text)
	}
	if _, text := renderFor(t, entry, Core, nil); strings.Contains(text, "encode_at:") {
		t.Errorf("the core exporter has no encode_at setting:\n%s", text)
	}
}

func TestConfigsPickDistinctPorts(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	ccs, err := Configs("http://backend", dirs)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range ccs {
		for _, a := range []string{c.ReceiverEndpoint, c.HealthEndpoint, c.MetricsURL()} {
			if seen[a] {
				t.Fatalf("address %s handed out twice", a)
			}
			seen[a] = true
		}
	}
}

// TestCollectorsAcceptTheConfig runs the built collectors' validate
// subcommand when they have been built (make build-collector
// build-core-collector).
func TestCollectorsAcceptTheConfig(t *testing.T) {
	for exp, bin := range map[Exporter]string{Ours: "otelcol-retry/otelcol-retry", Core: "otelcol-core/otelcol-core"} {
		bin = filepath.Join("..", "..", "build", bin)
		if _, err := os.Stat(bin); err != nil {
			t.Logf("%s not built; skipping %s", bin, exp)
			continue
		}
		path, _ := renderFor(t, DefaultSetup(), exp, map[string]string{"X-Scope-OrgID": "a"})
		if out, err := exec.Command(bin, "validate", "--config", "file:"+path).CombinedOutput(); err != nil {
			t.Errorf("%s validate: %v\n%s", exp, err, out)
		}
	}
}
