// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// TestBinomialTail: P(X ≥ k) for X ~ Binomial(n, p), against values worked
// by hand and the normal approximation where n is large (summed in log
// space, thousands of trials do not underflow to "always").
func TestBinomialTail(t *testing.T) {
	for _, tt := range []struct {
		n, k  int
		p     float64
		want  float64
		delta float64
	}{
		{n: 10, k: 0, p: 0.3, want: 1},
		{n: 10, k: 11, p: 0.3, want: 0},
		{n: 10, k: 1, p: 0, want: 0},
		{n: 10, k: 10, p: 1, want: 1},
		{n: 1, k: 1, p: 0.5, want: 0.5},
		{n: 3, k: 2, p: 0.5, want: 0.5},      // (3 + 1) / 8
		{n: 4, k: 4, p: 0.5, want: 1.0 / 16}, // all four
		{n: 30, k: 5, p: 0.1, want: 0.1755, delta: 1e-4},
		{n: 30, k: 9, p: 0.1, want: 0.00202, delta: 1e-5},
		// mean 1 500, standard deviation 37.7: 2.65 below and 5.3 above
		{n: 30000, k: 1400, p: 0.05, want: 0.996, delta: 0.002},
		{n: 30000, k: 1700, p: 0.05, want: 0, delta: 1e-6},
	} {
		assert.InDelta(t, tt.want, retry.BinomialTail(tt.n, tt.k, tt.p), max(tt.delta, 1e-12), "n %d, k %d, p %g", tt.n, tt.k, tt.p)
	}
}

// BenchmarkBinomialTail: the refused share's test, as the pacer runs it
// under its lock at a bare refusal: a few answers since the last cut, and
// many (a backend refusing 60 % whatever the pace, minutes without a cut).
func BenchmarkBinomialTail(b *testing.B) {
	for _, c := range []struct {
		name string
		n, k int
		p    float64
	}{{"30 answers", 30, 5, 0.1}, {"15000 answers", 15000, 9000, 0.6}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				retry.BinomialTail(c.n, c.k, c.p)
			}
		})
	}
}
