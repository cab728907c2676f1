// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "math"

// binomialTail is the chance of k or more successes in n trials of
// chance p each, P(X ≥ k) for X ~ Binomial(n, p). The terms are summed in
// log space, so that thousands of trials do not underflow.
func binomialTail(n, k int, p float64) float64 {
	switch {
	case k <= 0 || p >= 1:
		return 1
	case k > n || p <= 0:
		return 0
	}
	// P(X ≥ k) = 1 − Σ_{i<k} C(n,i) pⁱ (1−p)ⁿ⁻ⁱ.
	lnN, _ := math.Lgamma(float64(n + 1))
	lp, lq := math.Log(p), math.Log1p(-p)
	below := 0.0
	for i := range k {
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		below += math.Exp(lnN - li - lr + float64(i)*lp + float64(n-i)*lq)
	}
	return min(max(1-below, 0), 1)
}
