// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package monitoring

import (
	"fmt"
	"os"
	"path/filepath"
)

// The shipped files, relative to the repository's monitoring directory.
const (
	RulesFile     = "otlphttpretry.rules.yaml"
	RulesTestFile = "otlphttpretry.rules.test.yaml"
	DashboardFile = "otlphttpretry.dashboard.json"
)

// WriteShipped writes the rules (default thresholds) and the dashboard
// into dir.
func WriteShipped(dir string) error {
	rules, err := Rules(Defaults())
	if err != nil {
		return err
	}
	dash, err := Dashboard()
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{RulesFile: rules, DashboardFile: dash} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil { //nolint:gosec // shipped files are world-readable
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
