// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Collector is a running collector process.
type Collector struct {
	cmd     *exec.Cmd
	logFile *os.File
	// LogPath is the file holding the collector's stdout and stderr.
	LogPath string
	exited  chan struct{}
	waitErr error
}

// StartCollector runs bin --config file:configPath and the extra arguments
// (e.g. --feature-gates=…), writing its output to logPath.
func StartCollector(bin, configPath, logPath string, extra ...string) (*Collector, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("collector binary %s: %w (build it with `make build-collector`)", bin, err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"--config", "file:" + configPath}, extra...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	c := &Collector{cmd: cmd, logFile: logFile, LogPath: logPath, exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		logFile.Close()
		close(c.exited)
	}()
	return c, nil
}

// Exited is closed when the process has ended.
func (c *Collector) Exited() <-chan struct{} { return c.exited }

// Stop sends SIGTERM and waits up to grace for the process to end, then
// kills it. It returns how long the shutdown took and the exit error.
func (c *Collector) Stop(grace time.Duration) (time.Duration, error) {
	start := time.Now()
	select {
	case <-c.exited:
		return 0, fmt.Errorf("collector had already exited: %w", exitErr(c.waitErr))
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-c.exited:
		return time.Since(start), c.waitErr
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return time.Since(start), fmt.Errorf("collector did not stop within %s of SIGTERM and was killed", grace)
	}
}

// Kill sends SIGKILL and waits for the process to end: none of the
// collector's shutdown runs, as after a crash or an OOM kill.
func (c *Collector) Kill() error {
	select {
	case <-c.exited:
		return fmt.Errorf("collector had already exited: %w", exitErr(c.waitErr))
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-c.exited
	return nil
}

func exitErr(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// WaitHealthy polls url until it answers 200, the collector exits or ctx ends.
func (c *Collector) WaitHealthy(ctx context.Context, url string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var last string
		code, _, err := HTTPGet(ctx, url)
		switch {
		case err == nil && code == http.StatusOK:
			return nil
		case err == nil:
			last = fmt.Sprintf("status %d", code)
		default:
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			// The log itself, not its path: the path may go with the run's directory.
			return fmt.Errorf("collector not healthy at %s (%s): %w; its log:\n%s", url, last, ctx.Err(), c.LogTail(40))
		case <-c.exited:
			return fmt.Errorf("collector exited before it was healthy (%v); its log:\n%s", exitErr(c.waitErr), c.LogTail(40))
		case <-tick.C:
		}
	}
}

// LogTail returns the last n lines of the collector's log.
func (c *Collector) LogTail(n int) string {
	lines := c.LogLines(func(string) bool { return true })
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogLines returns the lines of the collector's log that match keep.
func (c *Collector) LogLines(keep func(string) bool) []string {
	f, err := os.Open(c.LogPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if keep(sc.Text()) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// HTTPGet fetches url and returns the status code and body.
func HTTPGet(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, body, err
}
