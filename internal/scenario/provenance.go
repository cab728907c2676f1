// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Provenance says where a stored run comes from: every JSON a benchmark
// tool writes into docs/ carries it, so that each figure in the docs can be
// traced to the command, the code, the day and the machine that made it.
type Provenance struct {
	// Command is the command line as run.
	Command string `json:"command"`
	// Commit is the repository's HEAD where the command ran ("unknown"
	// outside a git checkout); Dirty lists the tracked files that differed
	// from it (the collectors measured were built from that tree).
	Commit string   `json:"commit"`
	Dirty  []string `json:"dirty,omitempty"`
	// Started is the date: when the run began (Finished is the end).
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Machine describes the host.
	Machine Machine `json:"machine"`
}

// Machine is what a run's figures depend on in the host.
type Machine struct {
	CPUModel  string `json:"cpu_model"`
	CPUs      int    `json:"cpus"`
	MemoryMiB int64  `json:"memory_mib,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	GoVersion string `json:"go_version"`
	// LoadBefore and LoadAfter are /proc/loadavg's first three figures:
	// a busy machine moves throughput and CPU figures.
	LoadBefore string `json:"loadavg_before,omitempty"`
	LoadAfter  string `json:"loadavg_after,omitempty"`
}

// NewProvenance records the command (args as os.Args), the commit of the
// git checkout in the working directory, the start time and the machine.
// Call Finish when the run ends.
func NewProvenance(args []string) Provenance {
	commit, dirty := gitState()
	return Provenance{
		Command: strings.Join(args, " "),
		Commit:  commit,
		Dirty:   dirty,
		Started: time.Now().UTC(),
		Machine: Machine{
			CPUModel:   cpuModel(),
			CPUs:       runtime.NumCPU(),
			MemoryMiB:  memTotalMiB(),
			Kernel:     strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")),
			GoVersion:  runtime.Version(),
			LoadBefore: LoadAvg(),
		},
	}
}

// Finish records the end of the run and the load average then.
func (p *Provenance) Finish() {
	p.Finished = time.Now().UTC()
	p.Machine.LoadAfter = LoadAvg()
}

// LoadAvg is /proc/loadavg's first three figures, or "unknown".
func LoadAvg() string {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func gitState() (string, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown", nil
	}
	commit := strings.TrimSpace(string(out))
	// Untracked files are left out: a run's own output often is one.
	st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return commit, []string{"(git status failed: " + err.Error() + ")"}
	}
	var dirty []string
	for line := range strings.Lines(string(st)) {
		if line = strings.TrimSpace(line); line != "" {
			dirty = append(dirty, line)
		}
	}
	return commit, dirty
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotalMiB() int64 {
	for line := range strings.Lines(readFile("/proc/meminfo")) {
		var kb int64
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			return kb / 1024
		}
	}
	return 0
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
