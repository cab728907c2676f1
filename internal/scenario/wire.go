// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// Arrival is one request as it reached the wire, before the backend.
type Arrival struct {
	At time.Time
	// Dropped is how its connection was closed without an answer:
	// DropLost (before the backend saw it) or DropAnswered (after the
	// backend accepted it: the answer was lost); "" when it was answered.
	Dropped string
}

const (
	// DropLost: the request was read in part, then its connection closed.
	DropLost = "lost"
	// DropAnswered: the backend handled the request (and recorded it), then
	// the connection was closed before the answer was written.
	DropAnswered = "answered"
)

// Wire serves a backend handler over loopback, records every request's
// arrival, and for DropFor after the first request closes each request's
// connection without an answer. The drops alternate: the first is read in
// part and lost before the backend sees it; the next reaches the backend,
// which accepts it, and its answer is lost, so a client that retries it
// delivers its items twice (a backend deduplicating on an idempotency key
// would keep one).
type Wire struct {
	next    http.Handler
	dropFor time.Duration
	srv     *http.Server
	url     string

	conns atomic.Int64

	mu       sync.Mutex
	first    time.Time
	drops    int
	arrivals []Arrival
}

// NewWire returns a Wire in front of next; call Start to serve.
func NewWire(next http.Handler, dropFor time.Duration) *Wire {
	return &Wire{next: next, dropFor: dropFor}
}

// Start listens on a free loopback port.
func (w *Wire) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	w.url = "http://" + ln.Addr().String()
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			w.conns.Add(1)
		}
	}}
	go func() { _ = w.srv.Serve(ln) }()
	return nil
}

// URL is the base URL to configure as the exporter's endpoint.
func (w *Wire) URL() string { return w.url }

// Close stops serving and closes every connection.
func (w *Wire) Close() error {
	if w.srv == nil {
		return nil
	}
	return w.srv.Close()
}

// Arrivals returns every request's arrival so far, in order.
func (w *Wire) Arrivals() []Arrival {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Arrival(nil), w.arrivals...)
}

// Connections is how many connections clients have opened so far.
func (w *Wire) Connections() int { return int(w.conns.Load()) }

// DropWindow is when connections were dropped (zero when DropFor is 0 or
// nothing arrived).
func (w *Wire) DropWindow() (start, end time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dropFor <= 0 || w.first.IsZero() {
		return time.Time{}, time.Time{}
	}
	return w.first, w.first.Add(w.dropFor)
}

func (w *Wire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	now := time.Now()
	w.mu.Lock()
	if w.first.IsZero() {
		w.first = now
	}
	drop := ""
	if now.Before(w.first.Add(w.dropFor)) {
		drop = DropLost
		if w.drops%2 == 1 {
			drop = DropAnswered
		}
		w.drops++
	}
	w.arrivals = append(w.arrivals, Arrival{At: now, Dropped: drop})
	w.mu.Unlock()

	switch drop {
	case "":
		w.next.ServeHTTP(rw, r)
		return
	case DropLost:
		_, _ = io.CopyN(io.Discard, r.Body, 1024)
	case DropAnswered:
		w.next.ServeHTTP(httptest.NewRecorder(), r)
	}
	hj, ok := rw.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // HTTP/2: abort the stream instead
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
