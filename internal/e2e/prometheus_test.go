// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// prometheusBin finds the Prometheus server and promtool. Without them the
// test fails on CI (CI=true: .ci/run installs Debian's prometheus package)
// and is skipped, saying why, elsewhere.
func prometheusBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS_BIN")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("prometheus"); err != nil {
			msg := "the Prometheus server is not installed (apt-get install -y --no-install-recommends prometheus, or set PROMETHEUS_BIN)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return bin
}

// promServer is a Prometheus server the test started.
type promServer struct {
	t       *testing.T
	cmd     *exec.Cmd
	exited  chan struct{}
	base    string // http://127.0.0.1:port
	logPath string
	version string
}

// promConfig is the server's configuration: everything listed in the
// file_sd directory is scraped (a scenario adds its collector by writing a
// file there), and rules are loaded from rulesPath.
const promConfig = `global:
  scrape_interval: %s
  scrape_timeout: %s
  evaluation_interval: %s
rule_files:
  - %s
scrape_configs:
  - job_name: otelcol
    file_sd_configs:
      - files: ['%s/*.json']
`

// startPrometheus starts bin with the rules at rulesPath, scraping every
// target file under dir/targets, and waits until it is ready.
func startPrometheus(ctx context.Context, t *testing.T, bin, dir, rulesPath string, scrape, eval time.Duration) *promServer {
	t.Helper()
	addrs, err := demorun.FreeAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	targets := filepath.Join(dir, "targets")
	if err = os.MkdirAll(targets, 0o750); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	cfg := fmt.Sprintf(promConfig, scrape, scrape, eval, rulesPath, targets)
	if err = os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	p := &promServer{t: t, base: "http://" + addrs[0], logPath: filepath.Join(dir, "prometheus.log"), exited: make(chan struct{}),
		version: strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addrs[0],
		"--log.level=warn",
	)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		_ = p.cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			data, _ := os.ReadFile(p.logPath)
			t.Logf("prometheus log:\n%s", tail(string(data), 40))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := demorun.HTTPGet(ctx, p.base+"/-/ready")
		if err == nil && code == http.StatusOK {
			return p
		}
		select {
		case <-p.exited:
			data, _ := os.ReadFile(p.logPath)
			t.Fatalf("prometheus exited at start:\n%s", tail(string(data), 40))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within 30 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// addTarget makes the server scrape addr with the label scenario=name.
func (p *promServer) addTarget(dir, name, addr string) {
	p.t.Helper()
	data, err := json.Marshal([]map[string]any{{"targets": []string{addr}, "labels": map[string]string{"scenario": name}}})
	if err != nil {
		p.t.Fatal(err)
	}
	tmp := filepath.Join(dir, "targets", "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		p.t.Fatal(err)
	}
	// Renamed into place, so that the server never reads half a file.
	if err := os.Rename(tmp, filepath.Join(dir, "targets", name+".json")); err != nil {
		p.t.Fatal(err)
	}
}

// promSample is one series of an instant or range query.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
	Values [][2]any          `json:"values"`
}

// query runs an instant query (or a range query when step > 0).
func (p *promServer) query(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]promSample, error) {
	v := url.Values{"query": {expr}}
	path := "/api/v1/query"
	if step > 0 {
		path = "/api/v1/query_range"
		v.Set("start", formatTime(start))
		v.Set("end", formatTime(end))
		v.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	}
	var resp struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := p.get(ctx, path+"?"+v.Encode(), &resp); err != nil {
		return nil, fmt.Errorf("%s: %w", expr, err)
	}
	if resp.Status != "success" {
		return nil, fmt.Errorf("%s: %s: %s", expr, resp.ErrorType, resp.Error)
	}
	return resp.Data.Result, nil
}

// promAlert is one alert of /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
}

func (p *promServer) alerts(ctx context.Context) ([]promAlert, error) {
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/alerts", &resp); err != nil {
		return nil, err
	}
	if resp.Status != "success" {
		return nil, errors.New("/api/v1/alerts: status " + resp.Status)
	}
	return resp.Data.Alerts, nil
}

func (p *promServer) get(ctx context.Context, path string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, http.NoBody)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("answer %d: %w: %.200s", resp.StatusCode, err, body)
	}
	return nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

// alertKey names an alert instance: its name and sorted labels.
func alertKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(labels["alertname"])
	for _, k := range keys {
		if k != "alertname" {
			fmt.Fprintf(&b, " %s=%s", k, labels[k])
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
