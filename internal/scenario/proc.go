// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go runs on (`getconf CLK_TCK`).
const clockTicks = 100

// ProcSample is what /proc says about a process at one moment.
type ProcSample struct {
	// CPUSeconds is user + system time so far.
	CPUSeconds float64
	// RSSBytes is the resident set now (VmRSS); PeakRSSBytes its high-water mark (VmHWM).
	RSSBytes, PeakRSSBytes int64
}

// ReadProc samples /proc/<pid>/stat and /proc/<pid>/status.
func ReadProc(pid int) (ProcSample, error) {
	var s ProcSample
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	if s.CPUSeconds, err = parseStatCPU(string(stat)); err != nil {
		return s, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	if s.RSSBytes, err = statusKB(string(status), "VmRSS"); err != nil {
		return s, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	if s.PeakRSSBytes, err = statusKB(string(status), "VmHWM"); err != nil {
		return s, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return s, nil
}

// parseStatCPU reads utime + stime (fields 14 and 15) from a stat line. The
// command name (field 2) is in parentheses and may hold spaces, so fields
// are counted from the last ')'.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no ')' in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is f[11], stime f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("only %d fields after the command name", len(f))
	}
	var ticks float64
	for _, v := range f[11:13] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("utime/stime %q: %w", v, err)
		}
		ticks += float64(n)
	}
	return ticks / clockTicks, nil
}

// statusKB reads a "Name:   123 kB" line of /proc/<pid>/status in bytes.
func statusKB(status, name string) (int64, error) {
	for line := range strings.SplitSeq(status, "\n") {
		rest, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s: %q is not a size in kB", name, rest)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return n * 1024, nil
	}
	return 0, fmt.Errorf("no %s line", name)
}

// FindPid finds the process running bin with arg among its arguments.
// demorun.Collector does not expose its process, and the config path is
// unique to a run, so it identifies the collector.
func FindPid(bin, arg string) (int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	want := []byte(arg)
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
		if len(args) < 2 || filepath.Base(string(args[0])) != filepath.Base(bin) {
			continue
		}
		for _, a := range args[1:] {
			if bytes.Equal(a, want) {
				return strconv.Atoi(filepath.Base(d))
			}
		}
	}
	return 0, fmt.Errorf("no process of %s with argument %q in /proc", bin, arg)
}
