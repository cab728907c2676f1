// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// longCell is the matrix's cell of that name with three times its load
// (scenario.LongCells), time enough to see the pace past the learning:
// over many windows, or many probes past the plateau.
func longCell(t *testing.T, name string) scenario.Cell {
	t.Helper()
	c, ok := scenario.CellByName("long-" + name)
	require.True(t, ok, name)
	return c
}

// TestLongFixedWindowIsNotHammered: behind a fixed window of 50 requests
// per 10 s without hints, offered twice that for 36 s, the pacer keeps
// cutting when a window runs out. (A background share read from one
// streak refusal once stopped every later cut: the pace grew without bound
// through the holds, and 44-60 % of the requests were refused.) Over 40
// seeds the refused share was 7.2-8.4 % and nothing was lost.
func TestLongFixedWindowIsNotHammered(t *testing.T) {
	c := longCell(t, "fixed-window-10s/none/5rps/1000")
	for seed := range uint64(3) {
		f := simulateCell(t, newCellModel(c), seed)
		t.Logf("seed %d: %s", seed, f)
		assert.Zero(t, f.Lost, "seed %d: lost", seed)
		assert.LessOrEqual(t, f.RefusedShare(), 0.10, "seed %d: refused share", seed)
	}
}
