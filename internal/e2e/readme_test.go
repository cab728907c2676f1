// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/otlphttpretry/otlphttpretry/internal/readmeconf"
)

// TestReadmeExamplesValidate runs the built collector's `validate` on every
// collector configuration in the README, as written (the file_storage
// directory it names is not created by validate).
func TestReadmeExamplesValidate(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeconf.Blocks(readme)
	if len(blocks) == 0 {
		t.Fatal("the README has no collector configuration with otlp_http_retry")
	}
	for i, block := range blocks {
		t.Run(strconv.Itoa(i+1), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(collectorBin(t), "validate", "--config", "file:"+path).CombinedOutput()
			if err != nil {
				t.Errorf("README block %d does not validate: %v\n%s\n--- block ---\n%s", i+1, err, out, block)
			}
		})
	}
}
