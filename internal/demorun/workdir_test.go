// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const keepHint = "run with -keep to keep it"

// writeRunFiles puts a config and a log in dir, as a run does.
func writeRunFiles(t *testing.T, dir string) (configPath, logPath string) {
	t.Helper()
	configPath, logPath = filepath.Join(dir, "collector.yaml"), filepath.Join(dir, "collector.log")
	for _, p := range []string{configPath, logPath} {
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return configPath, logPath
}

// report is the report of a run in w, written before w is closed.
func report(w *WorkDir, configPath, logPath string) string {
	res := &ThrottleResult{
		Scenario:     Throttle{Dir: w.Path, Kept: w.Kept, KeepHint: keepHint},
		CollectorLog: logPath,
		ConfigPath:   configPath,
		LogLines:     []string{"2026-11-29T14:59:53.553Z\twarn\tx.go:1\tDropped a batch\t{}"},
	}
	var b bytes.Buffer
	res.WriteReport(&b)
	return b.String()
}

// pathsUnder returns every path under dir that text mentions.
func pathsUnder(text, dir string) []string {
	return regexp.MustCompile(regexp.QuoteMeta(dir)+`[^\s,;:()]*`).FindAllString(text, -1)
}

// Without -keep, the run's directory goes when the demo ends: the report
// names no file in it and says how to keep them.
func TestReportWithoutKeepNamesNoPathThatWillNotExist(t *testing.T) {
	w, err := NewWorkDir("", false)
	if err != nil {
		t.Fatal(err)
	}
	configPath, logPath := writeRunFiles(t, w.Path)
	text := report(w, configPath, logPath)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
		t.Fatalf("the directory is still there after Close: %v", err)
	}
	if got := pathsUnder(text, w.Path); len(got) > 0 {
		t.Errorf("the report names %q, which no longer exist(s):\n%s", got, text)
	}
	if !strings.Contains(text, keepHint) {
		t.Errorf("the report does not say how to keep the log (%q):\n%s", keepHint, text)
	}
}

// With -keep (a temporary directory) or -log-dir (a new directory under
// the one given), the log and the config outlive the demo, and the report
// names them.
func TestReportWithKeepNamesTheKeptLogAndConfig(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "not", "yet")
	for name, open := range map[string]func() (*WorkDir, error){
		"keep":    func() (*WorkDir, error) { return NewWorkDir("", true) },
		"log-dir": func() (*WorkDir, error) { return NewWorkDir(parent, false) },
	} {
		t.Run(name, func(t *testing.T) {
			w, err := open()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(w.Path) })
			if !w.Kept {
				t.Fatal("not kept")
			}
			if name == "log-dir" && filepath.Dir(w.Path) != parent {
				t.Errorf("%s is not in %s", w.Path, parent)
			}
			configPath, logPath := writeRunFiles(t, w.Path)
			text := report(w, configPath, logPath)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{logPath, configPath} {
				if !strings.Contains(text, p) {
					t.Errorf("the report does not name %s:\n%s", p, text)
				}
			}
			for _, p := range pathsUnder(text, w.Path) {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("the report names %s: %v", p, err)
				}
			}
			if strings.Contains(text, keepHint) {
				t.Errorf("the report says how to keep what is kept:\n%s", text)
			}
		})
	}
}

// Two runs with the same -log-dir do not share a directory: a second run
// must not meet the first one's queue storage.
func TestLogDirGivesEachRunItsOwnDirectory(t *testing.T) {
	parent := t.TempDir()
	a, err := NewWorkDir(parent, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewWorkDir(parent, false)
	if err != nil {
		t.Fatal(err)
	}
	if a.Path == b.Path {
		t.Fatalf("both runs in %s", a.Path)
	}
}

// A collector that never becomes healthy: the error shows the end of its
// log, not the path of a log that goes with the run's directory.
func TestWaitHealthyTimeoutShowsTheLogNotItsPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-collector")
	script := "#!/bin/sh\necho fake collector is up but never healthy\nexec sleep 30\n"
	//nolint:gosec // G306: the fake collector is a script the test runs, so it must be executable.
	if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "collector.log")
	c, err := StartCollector(bin, filepath.Join(dir, "collector.yaml"), logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = c.Stop(10 * time.Second) }()
	// Wait for the line to be in the log (the process is up).
	for deadline := time.Now().Add(10 * time.Second); len(c.LogLines(func(string) bool { return true })) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the fake collector wrote nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	addrs, err := FreeAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = c.WaitHealthy(ctx, "http://"+addrs[0]+"/status")
	if err == nil {
		t.Fatal("healthy without a health endpoint")
	}
	if strings.Contains(err.Error(), logPath) {
		t.Errorf("the error names the log's path: %v", err)
	}
	if !strings.Contains(err.Error(), "fake collector is up but never healthy") {
		t.Errorf("the error does not show the log: %v", err)
	}
}
