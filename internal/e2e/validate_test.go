// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const validateTemplate = `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:0
exporters:
  otlp_http_retry:
    endpoint: http://127.0.0.1:4318
%s
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_http_retry]
`

// runValidate runs `otelcol-retry validate --config F` on the exporter
// lines given and returns the combined output and the exit code.
func runValidate(t *testing.T, exporterLines string) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(validateTemplate, exporterLines)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(collectorBin(t), "validate", "--config", "file:"+path).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("running validate: %v\n%s", err, out)
	return "", -1
}

// TestValidateRefusesIdempotencyHeaderInHeaders: a static value for the
// idempotency header in headers would overwrite every payload's key (the
// configured headers are set after the exporter's own), so validate must
// refuse it, in any case of the name, naming the header and why.
func TestValidateRefusesIdempotencyHeaderInHeaders(t *testing.T) {
	t.Parallel()
	// Control: the same config without the header validates.
	if out, code := runValidate(t, "    headers:\n      X-Api-Key: abc"); code != 0 {
		t.Fatalf("validate refused a config without the idempotency header (exit %d):\n%s", code, out)
	}
	cases := []struct{ name, lines, header string }{
		{"canonical", "    headers:\n      Idempotency-Key: static", "Idempotency-Key"},
		{"lower case", "    headers:\n      idempotency-key: static", "idempotency-key"},
		{"upper case", "    headers:\n      IDEMPOTENCY-KEY: static", "IDEMPOTENCY-KEY"},
		{"custom idempotency_header", "    idempotency_header: X-Dedup-Key\n    headers:\n      x-dedup-key: static", "x-dedup-key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, code := runValidate(t, c.lines)
			t.Logf("exit %d:\n%s", code, out)
			if code == 0 {
				t.Fatalf("validate accepted headers: {%s: static}", c.header)
			}
			lower := strings.ToLower(out)
			if !strings.Contains(lower, strings.ToLower(c.header)) {
				t.Errorf("the message does not name the header %s", c.header)
			}
			if !strings.Contains(out, "headers") {
				t.Errorf("the message does not name the key headers")
			}
			// Why: it clashes with the key the exporter sets itself.
			if !strings.Contains(out, "idempotency_header") {
				t.Errorf("the message does not say why (it should point to idempotency_header, which sets that header per payload)")
			}
		})
	}
}
