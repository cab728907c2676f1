// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"bytes"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

func TestWireDropsAlternatelyBeforeAndAfterTheBackend(t *testing.T) {
	var handled atomic.Int32
	backend := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		handled.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	w := NewWire(backend, time.Hour)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)

	for i, wantHandled := range []int32{0, 1, 1, 2} {
		resp, err := client.Post(w.URL()+"/v1/traces", "application/x-protobuf", bytes.NewReader(make([]byte, 4096)))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("request %d inside the drop window got an answer: %d", i, resp.StatusCode)
		}
		if got := handled.Load(); got != wantHandled {
			t.Fatalf("after request %d the backend had handled %d requests, want %d", i, got, wantHandled)
		}
	}
	var kinds []string
	for _, a := range w.Arrivals() {
		kinds = append(kinds, a.Dropped)
	}
	if want := []string{DropLost, DropAnswered, DropLost, DropAnswered}; !equal(kinds, want) {
		t.Fatalf("arrivals %v, want %v", kinds, want)
	}
	// Every dropped request cost its connection.
	if n := w.Connections(); n != 4 {
		t.Fatalf("%d connections opened, want 4: each drop closes one", n)
	}
	if start, end := w.DropWindow(); end.Sub(start) != time.Hour {
		t.Fatalf("drop window %v – %v, want an hour from the first request", start, end)
	}
}

func TestWireWithoutDropsPassesThrough(t *testing.T) {
	w := NewWire(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }), 0)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	resp, err := http.Post(w.URL()+"/v1/traces", "application/x-protobuf", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || len(w.Arrivals()) != 1 || w.Arrivals()[0].Dropped != "" {
		t.Fatalf("status %d, arrivals %+v", resp.StatusCode, w.Arrivals())
	}
	if start, _ := w.DropWindow(); !start.IsZero() {
		t.Fatal("a drop window without DropFor")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
