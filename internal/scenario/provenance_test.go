// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestProvenanceRecordsCommitDateAndMachine: a run made in this checkout
// records its commit, its start and end, and the machine, under the JSON
// keys the docs' figure check reads.
func TestProvenanceRecordsCommitDateAndMachine(t *testing.T) {
	p := NewProvenance([]string{"scenariobench", "-runs", "1"})
	p.Finish()
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(p.Commit) {
		t.Skipf("not in a git checkout with git on PATH: commit %q", p.Commit)
	}
	if p.Command != "scenariobench -runs 1" || p.Started.IsZero() || p.Finished.Before(p.Started) {
		t.Fatalf("command %q, started %v, finished %v", p.Command, p.Started, p.Finished)
	}
	if p.Machine.CPUs < 1 || p.Machine.CPUModel == "" || !strings.HasPrefix(p.Machine.GoVersion, "go") {
		t.Fatalf("machine %+v", p.Machine)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"command":`, `"commit":`, `"started":`, `"finished":`, `"machine":`, `"cpu_model":`, `"cpus":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s missing from %s", key, b)
		}
	}
}
