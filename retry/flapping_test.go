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
// time, the limiter model delivers the load in full on every seed with the
// default, whose rows climb back to the rate the run before them was
// accepted at (runPlateau), and on far fewer with runPlateau off (the
// nineteenth step's law), whose every row cut the pace to what a span
// holding the row accepted: a fraction of the load, then less at each row.
// Nothing is dropped either way.
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
	law, dropped := delivered()
	assert.Zero(t, dropped, "dropped, the default")
	restore, err := retry.SetTuning(map[string]float64{"runPlateau": 0})
	require.NoError(t, err)
	defer restore()
	off, droppedOff := delivered()
	assert.Zero(t, droppedOff, "dropped, runPlateau off")
	t.Logf("seeds delivered in full: %d of %d; runPlateau off: %d", law, seeds, off)
	assert.Equal(t, seeds, law, "seeds delivered in full, the default")
	assert.Greater(t, law, off+2, "seeds delivered in full, against runPlateau off")
}
