// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cellNamed(t *testing.T, name string) Cell {
	t.Helper()
	c, ok := CellByName(name)
	require.True(t, ok, name)
	return c
}

func TestJudge(t *testing.T) {
	gcra := cellNamed(t, "gcra/none/50rps/50")
	rl := cellNamed(t, "gcra/ratelimit/20rps/200")
	sporadic := cellNamed(t, "sporadic-5%/none/20rps/100")
	shed := cellNamed(t, "shed-50%/none/10rps/200")
	for _, tc := range []struct {
		name     string
		cell     Cell
		exporter string
		f        CellFigures
		core     *CellFigures
		ref      *CellFigures
		missed   []string // the goals missed
		worst    float64
	}{
		{
			name: "every goal met", cell: gcra, exporter: string(Ours),
			f:    CellFigures{Requests: 100, Refused: 5, Used: ptr(0.9), DeliverySeconds: ptr(10.5), Spans: 1000},
			core: &CellFigures{DeliverySeconds: ptr(10.0)}, worst: 1,
		},
		{
			name: "refused, used and later than core missed", cell: gcra, exporter: string(Ours),
			f:      CellFigures{Requests: 100, Refused: 10, Used: ptr(0.6), DeliverySeconds: ptr(21.0), Spans: 1000},
			core:   &CellFigures{DeliverySeconds: ptr(10.0)},
			missed: []string{"refused ≤ 5 %", "used ≥ 90 %", "delivered ≤ 1.05 × core's time"}, worst: 2.1 / 1.05,
		},
		{
			name: "RateLimit fields: 2 % refused at most", cell: rl, exporter: string(Ours),
			f:      CellFigures{Requests: 100, Refused: 3, Used: ptr(0.95), DeliverySeconds: ptr(10.0), Spans: 1000},
			missed: []string{"refused ≤ 2 %"}, worst: 1.5,
		},
		{
			name: "core is not judged against itself", cell: gcra, exporter: string(Core),
			f:    CellFigures{Requests: 100, Refused: 1, Used: ptr(0.95), DeliverySeconds: ptr(100.0), Spans: 1000},
			core: &CellFigures{DeliverySeconds: ptr(10.0)}, worst: 0.9 / 0.95,
		},
		{
			name: "a loss", cell: shed, exporter: string(Ours),
			f:      CellFigures{Requests: 300, Refused: 150, Spans: 30000, Lost: 600},
			core:   &CellFigures{DeliverySeconds: ptr(20.0)},
			missed: []string{"nothing lost", "delivered ≤ 1.05 × core's time"},
		},
		{
			name: "late, not dropped", cell: shed, exporter: string(Ours),
			f:      CellFigures{Requests: 300, Refused: 150, Spans: 30000, Lost: 600, Dropped: ptr(200)},
			missed: []string{"nothing lost", "all delivered within the cell's timeout"},
		},
		{
			name: "sporadic against the never-refusing backend", cell: sporadic, exporter: string(Ours),
			f:      CellFigures{Requests: 300, Refused: 15, DeliverySeconds: ptr(17.0), Spans: 30000},
			ref:    &CellFigures{DeliverySeconds: ptr(15.0)},
			missed: []string{"delivered ≤ 1.10 × the never-refusing backend's time"}, worst: 17 / 15.0 / 1.1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.cell, tc.exporter, tc.f, tc.core, tc.ref)
			var missed []string
			for _, c := range v.Checks {
				if !c.Met {
					missed = append(missed, c.Goal)
				}
			}
			assert.Equal(t, tc.missed, missed)
			assert.Equal(t, len(tc.missed) == 0, v.Met())
			if tc.f.Lost > 0 {
				dropped := tc.f.Lost
				if tc.f.Dropped != nil {
					dropped = *tc.f.Dropped
				}
				assert.InDelta(t, float64(dropped)/float64(tc.f.Spans), v.Lost, 1e-12)
				assert.InDelta(t, float64(tc.f.Lost-dropped)/float64(tc.f.Spans), v.Late, 1e-12)
			} else {
				assert.InDelta(t, tc.worst, float64(v.Worst), 1e-9)
			}
		})
	}
}

// TestVerdictJSON: a loss's infinite ratio is written as null (JSON has no
// infinity), a finite one as a number.
func TestVerdictJSON(t *testing.T) {
	v := Judge(cellNamed(t, "shed-50%/none/10rps/200"), string(Ours), CellFigures{Requests: 10, Spans: 100, Lost: 10}, nil, nil)
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"worst_ratio":null`)
	assert.Contains(t, string(b), `"ratio":0`)
}

// TestWorse: a loss outranks lateness, lateness any rate; then the larger
// ratio.
func TestWorse(t *testing.T) {
	vs := []Verdict{{Cell: "a", Worst: 3}, {Cell: "b", Lost: 0.01, Worst: 1.2}, {Cell: "c", Worst: 1.5}, {Cell: "d", Lost: 0.02}, {Cell: "e", Late: 0.5}}
	slices.SortFunc(vs, func(x, y Verdict) int {
		if Worse(x, y) {
			return -1
		}
		if Worse(y, x) {
			return 1
		}
		return 0
	})
	var order []string
	for _, v := range vs {
		order = append(order, v.Cell)
	}
	assert.Equal(t, []string{"d", "b", "e", "a", "c"}, order)
}
