// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "math"

// negligibleTerm is a term of the binomial sum below which the terms
// further from the mode are left out: they only fall from there, and n of
// them weigh less than n × 1e-17.
const negligibleTerm = 1e-17

// binomialTail is the chance of k or more successes in n trials of
// chance p each, P(X ≥ k) for X ~ Binomial(n, p): 1 − Σ_{i<k} C(n,i) pⁱ
// (1−p)ⁿ⁻ⁱ. The sum starts at the term of [0, k) nearest the mode, in log
// space (thousands of trials do not underflow), and walks away from it by
// the ratio of neighbouring terms until they are negligible: its cost grows
// with the spread of X, not with k (the pacer calls it, under its lock,
// for every bare refusal while many answers since the last cut are in).
func binomialTail(n, k int, p float64) float64 {
	switch {
	case k <= 0 || p >= 1:
		return 1
	case k > n || p <= 0:
		return 0
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	start := min(int(float64(n+1)*p), n, k-1) // the mode, or k−1 below it
	lnN, _ := math.Lgamma(float64(n + 1))
	ls, _ := math.Lgamma(float64(start + 1))
	lr, _ := math.Lgamma(float64(n - start + 1))
	first := lnN - ls - lr + float64(start)*lp + float64(n-start)*lq
	below := math.Exp(first)
	// Down to 0: term(i−1) / term(i) = i / (n−i+1) × (1−p) / p.
	for i, lt := start, first; i > 0; i-- {
		lt += math.Log(float64(i)/float64(n-i+1)) + lq - lp
		t := math.Exp(lt)
		below += t
		if t < negligibleTerm {
			break
		}
	}
	// Up to k−1 (only when the mode is below it): term(i+1) / term(i) =
	// (n−i) / (i+1) × p / (1−p).
	for i, lt := start, first; i+1 < k; i++ {
		lt += math.Log(float64(n-i)/float64(i+1)) + lp - lq
		t := math.Exp(lt)
		below += t
		if t < negligibleTerm {
			break
		}
	}
	return min(max(1-below, 0), 1)
}
