// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
)

// Delivery is what the backend's records say about a load's spans.
type Delivery struct {
	// Expected is the number of spans the receiver accepted; Delivered how
	// many of them the backend accepted at least once; Lost the others.
	Expected, Delivered, Lost int
	// Duplicates counts extra acceptances of a span; UncoveredDuplicates
	// those not covered by an idempotency key: a second acceptance under
	// the same key is one a backend deduplicating on the key would drop,
	// one under another key (or none) reaches storage twice.
	Duplicates, UncoveredDuplicates int
	// Complete is when the last expected span was first accepted (the
	// arrival of the request that completed delivery); zero while some are
	// missing.
	Complete time.Time
	// ItemsAccepted sums the items of every accepted request.
	ItemsAccepted int
}

// spanSeen is what the records say about one span.
type spanSeen struct {
	n     int
	first time.Time
}

// CheckDelivery compares the accepted records with the spans of the load's
// accepted batches (instance, spans per batch).
func CheckDelivery(records []demobackend.Record, loads []LoadSpec) Delivery {
	var d Delivery
	seen := map[string]*spanSeen{}
	for _, r := range records {
		if r.Status != http.StatusOK {
			continue
		}
		d.ItemsAccepted += r.Items
		for _, id := range r.ItemIDs {
			s := seen[id]
			if s == nil {
				seen[id] = &spanSeen{n: 1, first: r.Arrival}
				continue
			}
			s.n++
		}
	}
	dupIDs := map[string]bool{}
	for _, l := range loads {
		for _, b := range l.Batches {
			for i := range l.Spans {
				d.Expected++
				id := ItemID(l.Instance, b, i)
				s := seen[id]
				if s == nil {
					d.Lost++
					continue
				}
				d.Delivered++
				if s.first.After(d.Complete) {
					d.Complete = s.first
				}
				if s.n > 1 {
					d.Duplicates += s.n - 1
					dupIDs[id] = true
				}
			}
		}
	}
	if d.Lost > 0 {
		d.Complete = time.Time{}
	}
	if len(dupIDs) == 0 {
		return d
	}
	// groups[span] is its distinct keys plus its keyless acceptances.
	keys := map[string]map[string]bool{}
	keyless := map[string]int{}
	for _, r := range records {
		if r.Status != http.StatusOK {
			continue
		}
		for _, id := range r.ItemIDs {
			if !dupIDs[id] {
				continue
			}
			if r.Key == "" {
				keyless[id]++
				continue
			}
			if keys[id] == nil {
				keys[id] = map[string]bool{}
			}
			keys[id][r.Key] = true
		}
	}
	for id := range dupIDs {
		d.UncoveredDuplicates += len(keys[id]) + keyless[id] - 1
	}
	return d
}

// LoadSpec is which spans one load's receiver accepted.
type LoadSpec struct {
	Instance uint32
	Spans    int
	Batches  []int
}

// CountBetween counts the times strictly after from and strictly before to.
func CountBetween(times []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range times {
		if t.After(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// CountIn counts the times in [from, from+d).
func CountIn(times []time.Time, from time.Time, d time.Duration) int {
	n := 0
	for _, t := range times {
		if !t.Before(from) && t.Before(from.Add(d)) {
			n++
		}
	}
	return n
}

// PeakPerSecond is the most times in any 1 s interval [t, t+1s) with t in
// [from, to]: a sliding window, so that a burst straddling a second's
// boundary is not halved.
func PeakPerSecond(times []time.Time, from, to time.Time) int {
	sorted := slices.Clone(times)
	slices.SortFunc(sorted, func(a, b time.Time) int { return a.Compare(b) })
	peak, j := 0, 0
	for i, t := range sorted {
		if t.Before(from) || t.After(to) {
			continue
		}
		if j < i {
			j = i
		}
		for j < len(sorted) && sorted[j].Before(t.Add(time.Second)) {
			j++
		}
		peak = max(peak, j-i)
	}
	return peak
}

// Jain is Jain's fairness index of xs: (Σx)² / (n·Σx²), 1 when every x is
// equal, 1/n when one takes everything; NaN for no x or all zero.
func Jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if len(xs) == 0 || sq == 0 {
		return math.NaN()
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// Median is the middle value (the mean of the two middle ones for an even
// count), ignoring NaN; NaN when nothing is left.
func Median(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Rates bins times into bins of width from start to end and returns each
// bin's rate per second.
func Rates(times []time.Time, start, end time.Time, width time.Duration) []float64 {
	n := int(math.Ceil(float64(end.Sub(start)) / float64(width)))
	if n <= 0 {
		return nil
	}
	out := make([]float64, n)
	for _, t := range times {
		if t.Before(start) || !t.Before(end) {
			continue
		}
		out[int(t.Sub(start)/width)] += 1 / width.Seconds()
	}
	return out
}

// Quantile is the q-quantile (0 ≤ q ≤ 1, nearest rank) of ds; false when
// ds is empty.
func Quantile(ds []time.Duration, q float64) (time.Duration, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)], true
}
