// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command name may hold spaces and parentheses; utime 250 and
	// stime 50 ticks are 3 s.
	stat := "4242 (otel col) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 1000 200"
	got, err := parseStatCPU(stat)
	if err != nil || got != 3 {
		t.Fatalf("parseStatCPU = %v, %v; want 3 s", got, err)
	}
	if _, err := parseStatCPU("4242 (short) S 1 2"); err == nil {
		t.Fatal("a truncated stat line parsed")
	}
}

func TestStatusKB(t *testing.T) {
	status := "Name:\totelcol\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\n"
	if got, err := statusKB(status, "VmHWM"); err != nil || got != 51200*1024 {
		t.Fatalf("VmHWM = %d, %v", got, err)
	}
	if _, err := statusKB(status, "VmSwap"); err == nil {
		t.Fatal("a missing line read as a size")
	}
	if _, err := statusKB("VmRSS:\t12 MB\n", "VmRSS"); err == nil {
		t.Fatal("a size not in kB read")
	}
}

func TestReadProcOfThisProcess(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.RSSBytes <= 0 || p.PeakRSSBytes < p.RSSBytes || p.CPUSeconds < 0 {
		t.Fatalf("implausible sample of this process: %+v", p)
	}
}

func TestFindPidByArgument(t *testing.T) {
	// An argument no other process on the machine carries.
	arg := "31" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("sleep", arg)
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Until the child has exec'd, /proc shows the parent's command line:
	// look again until it shows sleep's (a guard, not a timing assertion).
	var pid int
	var err error
	for range 500 {
		if pid, err = FindPid("/usr/bin/sleep", arg); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || pid != cmd.Process.Pid {
		t.Fatalf("FindPid = %d, %v; want %d", pid, err, cmd.Process.Pid)
	}
	if _, err := FindPid("/usr/bin/sleep", arg+"0"); err == nil {
		t.Fatal("found a process for an argument nobody has")
	}
}
