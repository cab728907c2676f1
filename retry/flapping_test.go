// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// TestModelAFlappingBackend: behind a backend that refuses every request
// for 4 s of every 15 s (bare 429s) and takes everything the rest of the
// time, the load is delivered in full on more seeds than with the
// nineteenth step's law (rowKeep and rowMeasure off), whose every row cut
// the pace to what a span holding the row accepted: a fraction of the load,
// then less at each row. Over the same seeds, the rows' refusals cut
// nothing deep in a row, and nothing is dropped either way.
func TestModelAFlappingBackend(t *testing.T) {
	c, ok := scenario.CellByName("x-flapping-15s/none/20rps/100/down4s")
	require.True(t, ok)
	const seeds = 12
	delivered := func() (n, dropped int) {
		for seed := range uint64(seeds) {
			f := simulateCell(t, newCellModel(c), seed)
			if f.Lost == 0 {
				n++
			}
			dropped += f.Dropped
		}
		return n, dropped
	}
	now, dropped := delivered()
	assert.Zero(t, dropped, "dropped")
	restore, err := retry.SetTuning(map[string]float64{"rowKeep": 0, "rowMeasure": 0})
	require.NoError(t, err)
	defer restore()
	before, droppedBefore := delivered()
	assert.Zero(t, droppedBefore, "dropped, the law before")
	t.Logf("seeds delivered in full: %d of %d; the law before: %d", now, seeds, before)
	assert.Equal(t, seeds, now, "seeds delivered in full")
	assert.Greater(t, now, before+2, "seeds delivered in full, against the law before")
}
