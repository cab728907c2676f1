// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// batchSpans is how many spans each test batch carries.
const batchSpans = 2

// batchRecord is a request carrying every span of batch b.
func batchRecord(status int, arrival float64, key string, b int) demobackend.Record {
	spans := batchSpans
	r := demobackend.Record{Status: status, Arrival: at(arrival), Key: key, Items: spans}
	for i := range spans {
		r.ItemIDs = append(r.ItemIDs, ItemID(0, b, i))
	}
	return r
}

func TestCheckDeliveryLostDuplicatesAndCompletion(t *testing.T) {
	loads := []LoadSpec{{Instance: 0, Spans: 2, Batches: []int{0, 1, 2}}}
	records := []demobackend.Record{
		batchRecord(http.StatusTooManyRequests, 1, "k0", 0), // refused: counts for nothing
		batchRecord(http.StatusOK, 2, "k0", 0),
		batchRecord(http.StatusOK, 3, "k0", 0), // same key again: a duplicate the key covers
		batchRecord(http.StatusOK, 4, "k1", 1),
		batchRecord(http.StatusOK, 5, "", 1), // batch 1 again without a key: not covered
	}
	d := CheckDelivery(records, loads)
	want := Delivery{Expected: 6, Delivered: 4, Lost: 2, Duplicates: 4, UncoveredDuplicates: 2, ItemsAccepted: 8}
	if d != want {
		t.Fatalf("batch 2 never sent:\n got %+v\nwant %+v", d, want)
	}

	// Batch 2 arrives under two keys: one uncovered duplicate per span;
	// delivery is complete at its first acceptance.
	records = append(records,
		batchRecord(http.StatusOK, 6, "k2", 2),
		batchRecord(http.StatusOK, 7, "k3", 2))
	d = CheckDelivery(records, loads)
	want = Delivery{Expected: 6, Delivered: 6, Duplicates: 6, UncoveredDuplicates: 4, ItemsAccepted: 12, Complete: at(6)}
	if d != want {
		t.Fatalf("every batch delivered:\n got %+v\nwant %+v", d, want)
	}
}

func TestCheckDeliveryOtherInstancesAreNotExpected(t *testing.T) {
	r := demobackend.Record{Status: http.StatusOK, Arrival: at(1), Items: 1, ItemIDs: []string{ItemID(7, 0, 0)}}
	d := CheckDelivery([]demobackend.Record{r}, []LoadSpec{{Instance: 0, Spans: 1, Batches: []int{0}}})
	if d.Delivered != 0 || d.Lost != 1 || !d.Complete.IsZero() {
		t.Fatalf("a span of instance 7 counted for instance 0: %+v", d)
	}
}

func TestCountsAndPeaks(t *testing.T) {
	times := []time.Time{at(0.5), at(1), at(1.6), at(1.7), at(2.2), at(2.3), at(5)}
	if n := CountBetween(times, at(1), at(2.3)); n != 3 {
		t.Errorf("CountBetween(1, 2.3) = %d, want 3 (both ends excluded)", n)
	}
	if n := CountIn(times, at(1), time.Second); n != 3 {
		t.Errorf("CountIn([1, 2)) = %d, want 3", n)
	}
	// [1.6, 2.6) holds four: a window sliding over the second's boundary.
	if n := PeakPerSecond(times, at(0), at(10)); n != 4 {
		t.Errorf("PeakPerSecond = %d, want 4", n)
	}
	if n := PeakPerSecond(times, at(2.25), at(10)); n != 1 {
		t.Errorf("PeakPerSecond from 2.25 = %d, want 1 (starts inside the range only)", n)
	}
}

func TestJain(t *testing.T) {
	if j := Jain([]float64{5, 5, 5, 5}); j != 1 {
		t.Errorf("equal shares: %v, want 1", j)
	}
	if j := Jain([]float64{8, 0, 0, 0}); j != 0.25 {
		t.Errorf("one takes all of 4: %v, want 0.25", j)
	}
	if j := Jain([]float64{1, 3}); math.Abs(j-0.8) > 1e-12 {
		t.Errorf("1 and 3: %v, want 16/20 = 0.8", j)
	}
	if j := Jain(nil); !math.IsNaN(j) {
		t.Errorf("no shares: %v, want NaN", j)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{math.NaN(), 7}, 7},
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestRates(t *testing.T) {
	times := []time.Time{at(0.1), at(0.2), at(0.7), at(1.4), at(3)}
	got := Rates(times, at(0), at(1.5), 500*time.Millisecond)
	want := []float64{4, 2, 2}
	if len(got) != len(want) {
		t.Fatalf("Rates = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Rates = %v, want %v (per second, 0.5 s bins)", got, want)
		}
	}
}

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 5}, {0.99, 10}, {1, 10}} {
		if got, ok := Quantile(ds, tc.q); !ok || got != tc.want {
			t.Errorf("Quantile(%v) = %v, %v; want %v", tc.q, got, ok, tc.want)
		}
	}
	if _, ok := Quantile(nil, 0.5); ok {
		t.Error("a quantile of nothing")
	}
	if ds[0] != 5 {
		t.Error("Quantile sorted its argument")
	}
}
