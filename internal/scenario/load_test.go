// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
)

func TestLoadSendsEveryBatchAndRetriesPushback(t *testing.T) {
	// The demo backend stands in for the receiver; every third request is
	// refused with 503 first, as a collector with a full queue answers.
	backend := demobackend.New(demobackend.Config{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		backend.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	l := Load{Senders: 3, Batches: 4, Spans: 5, Instance: 9}
	res := l.Send(context.Background(), srv.URL, NewBodies())
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Batches != 12 || res.Spans != 60 || res.Pushback == 0 {
		t.Fatalf("result %+v: want 12 batches, 60 spans, some pushback", res)
	}
	slices.Sort(res.Accepted)
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(res.Accepted, want) {
		t.Fatalf("accepted batches %v, want %v", res.Accepted, want)
	}
	// The spans the backend decoded are the ones the load says it sent.
	d := CheckDelivery(backend.Records(), []LoadSpec{{Instance: 9, Spans: 5, Batches: res.Accepted}})
	if d.Delivered != 60 || d.Lost != 0 || d.Duplicates != 0 {
		t.Fatalf("delivery %+v", d)
	}
	for _, r := range backend.Records() {
		if i, ok := InstanceOf(r.ItemIDs[0]); !ok || i != 9 {
			t.Fatalf("InstanceOf(%s) = %d, %v; want 9", r.ItemIDs[0], i, ok)
		}
	}
}

func TestLoadStopsOnAnotherRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	t.Cleanup(srv.Close)
	res := Load{Senders: 1, Batches: 3, Spans: 1}.Send(context.Background(), srv.URL, NewBodies())
	if res.Err == nil || res.Batches != 0 {
		t.Fatalf("a 400 from the receiver: %+v, want an error and nothing sent", res)
	}
}

func TestLoadDuration(t *testing.T) {
	if d := (Load{Batches: 11, Rate: 2}).Duration().Seconds(); d != 5 {
		t.Fatalf("11 batches at 2/s take %v s, want 5", d)
	}
	if d := (Load{Batches: 11}).Duration(); d != 0 {
		t.Fatalf("an unpaced load has duration %v", d)
	}
}
