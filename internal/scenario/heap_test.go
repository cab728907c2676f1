// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// heapServer serves the collector's heap gauge: growing by 1 000 a scrape
// from 100 000 (garbage piling up), then, from scrape dropAt on, from
// 50 000 (a collection happened).
func heapServer(t *testing.T, dropAt int64) string {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := n.Add(1)
		v := 100_000 + 1_000*i
		if i >= dropAt {
			v = 50_000 + 1_000*(i-dropAt)
		}
		fmt.Fprintf(w, "# TYPE %s gauge\n%s %d\n", heapMetric, heapMetric, v)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestLiveHeapScrapesOnUntilACollection: before the load the collector is
// idle and collects rarely; the baseline goes on past its sampling time
// until it has seen a collection, and takes the lowest value after it.
func TestLiveHeapScrapesOnUntilACollection(t *testing.T) {
	const dropAt = 200 // about 0.4 s of scraping every 2 ms, far past d
	got, err := liveHeap(context.Background(), heapServer(t, dropAt), 10*time.Millisecond, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got != 50_000 {
		t.Errorf("live heap %.0f, want 50000: the first value after the collection", got)
	}
}

// TestLiveHeapFailsWithoutACollection: within its limit and no collection,
// there is no estimate (the held sample must end inside the window).
func TestLiveHeapFailsWithoutACollection(t *testing.T) {
	_, err := liveHeap(context.Background(), heapServer(t, 1_000_000), 10*time.Millisecond, 10*time.Millisecond)
	if err == nil {
		t.Fatal("an estimate without any collection")
	}
}
