// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"fmt"
	"os"
)

// WorkDir is the directory one demo run writes its collector config, the
// collector's log and the queue's storage to.
type WorkDir struct {
	// Path is the directory.
	Path string
	// Kept says the directory outlives the run: Close leaves it.
	Kept bool
}

// NewWorkDir creates a fresh directory for one run. With parent set it is
// a new directory under parent (created if missing), always kept: a run
// never reuses another run's queue storage. Otherwise it is a temporary
// directory, kept only when keep is set.
func NewWorkDir(parent string, keep bool) (*WorkDir, error) {
	if parent != "" {
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return nil, fmt.Errorf("creating the log directory: %w", err)
		}
		keep = true
	}
	dir, err := os.MkdirTemp(parent, "otlp-http-retry-demo-")
	if err != nil {
		return nil, err
	}
	return &WorkDir{Path: dir, Kept: keep}, nil
}

// Close removes the directory unless it is kept.
func (w *WorkDir) Close() error {
	if w.Kept {
		return nil
	}
	return os.RemoveAll(w.Path)
}
