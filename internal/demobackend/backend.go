// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package demobackend is a small OTLP/HTTP backend for demos and end-to-end
// tests of the otlp_http_retry exporter. It accepts /v1/traces, /v1/metrics
// and /v1/logs (protobuf or JSON, optionally gzip-compressed), follows a
// script (throttle with 429 + Retry-After for a while; answer 401, or 503
// without Retry-After, for a while; answer errors whose bodies echo the
// request's headers; or be down, refusing connections, for a while), and
// records every request so that a test can check what the exporter did on
// the wire: when each request arrived, what it was answered, which
// idempotency key, headers and body bytes it carried, and how many items it
// held.
package demobackend // import "github.com/otlphttpretry/otlphttpretry/internal/demobackend"

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// Mode is the backend's script.
type Mode int

const (
	// ModeThrottle answers 429 with Retry-After for ThrottleFor after the
	// first request, then 200.
	ModeThrottle Mode = iota
	// ModeUnauthorized answers 401 during the failure phase (see
	// Config.FailRequests), then 200. With no bound on the phase it answers
	// 401 to every request until Recover.
	ModeUnauthorized
	// ModeUnavailable answers 503 without Retry-After during the failure
	// phase, then 200.
	ModeUnavailable
	// ModeEcho answers errors whose bodies echo every request header
	// (Authorization included) during the failure phase, then 200. The
	// answers cycle through three forms: 400 text/plain, 403
	// application/json {"message": ...} and 503 text/plain (no Retry-After).
	ModeEcho
	// ModeQuota is a token bucket (Config.Quota, quota.go), closed for
	// ThrottleFor after the first request.
	ModeQuota
	// ModeFailFirst answers 503 to the first request of each batch, 200 to its retry (quota.go).
	ModeFailFirst
	// ModeLimiter puts Config.Limiter in front of the backend (limit.go,
	// package limiter): any kind of limiter, with any hint, closed for
	// ThrottleFor after the first request. An accepted request is answered
	// after Config.Latency, and stays open at an in-flight limiter until
	// then.
	ModeLimiter
)

// Config is the backend's script.
type Config struct {
	Mode Mode
	// ThrottleFor is how long after the first request the backend answers
	// 429 (ModeThrottle). Zero accepts everything.
	ThrottleFor time.Duration
	// RetryAfter is the value of the Retry-After header on a 429, in
	// seconds. Zero or negative sends no Retry-After header, unless
	// RetryAfterZero is set: then it sends "Retry-After: 0".
	RetryAfter     int
	RetryAfterZero bool
	// FailRequests and FailFor bound the failure phase of ModeUnauthorized,
	// ModeUnavailable and ModeEcho: it ends after FailRequests scripted
	// failures, or FailFor after the first request, whichever comes first.
	// With neither set it lasts until Recover is called (Recover also ends
	// a bounded phase early).
	FailRequests int
	FailFor      time.Duration
	// IdempotencyHeader names the header holding the payload's key; empty
	// means "Idempotency-Key".
	IdempotencyHeader string
	// MaxBodyBytes bounds a request body (compressed and decompressed); 0
	// means 32 MiB.
	MaxBodyBytes int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Quota is ModeQuota's token bucket.
	Quota Quota
	// Limiter is ModeLimiter's limiter.
	Limiter limiter.Spec
	// Latency is how long ModeLimiter holds an accepted request before it
	// answers (what the backend takes to store it); 0 answers at once.
	Latency time.Duration
}

const (
	defaultIdempotencyHeader = "Idempotency-Key"
	defaultMaxBodyBytes      = 32 << 20
	protobufContentType      = "application/x-protobuf"
	jsonContentType          = "application/json"
)

// Record is one request as the backend saw it.
type Record struct {
	// Seq is the 0-based arrival order.
	Seq int
	// Arrival is when the handler started on the request.
	Arrival time.Time
	// Path is the URL path (/v1/traces, /v1/metrics or /v1/logs).
	Path string
	// Header is a copy of the request's headers.
	Header http.Header
	// Status is the HTTP status the backend answered.
	Status int
	// RetryAfter is the Retry-After value sent with a 429 ("" otherwise).
	RetryAfter string
	// Key is the idempotency key header ("" when absent).
	Key string
	// BodyHash is the hex SHA-256 of the body bytes as they came over the
	// wire (before decompression): the same payload resent must hash alike.
	BodyHash string
	// BodyBytes is the wire size of the body.
	BodyBytes int
	// Items is the number of spans, data points or log records decoded.
	Items int
	// ItemIDs identifies each span ("traceid/spanid"); empty for metrics and logs.
	ItemIDs []string
	// InRefusedWindow is set when the request arrived after a 429 was
	// decided and before that 429's Retry-After had passed.
	InRefusedWindow bool
	// Err is why the request was rejected as malformed, if it was.
	Err string
	// Truncated is set when the body did not arrive whole: the connection
	// ended before it did (a client killed mid-request). BodyHash is then
	// of the bytes that came, not of what was sent.
	Truncated bool
	// Limited is set when ModeLimiter's limiter refused the request (429,
	// or 503 when it sheds load).
	Limited bool
	// Answered is when ModeLimiter let an accepted request's answer go,
	// after Config.Latency; zero otherwise.
	Answered time.Time

	open bool // accepted by ModeLimiter: closed once answered
}

// window is the span of time a 429 asked the client to stay away.
type window struct{ start, end time.Time }

// Outage is a span of time the backend was down (refusing connections).
// End is zero while it lasts.
type Outage struct{ Start, End time.Time }

// ErrClosed is returned by Down and Up once Close has been called.
var ErrClosed = errors.New("demo backend closed")

// Backend is the demo OTLP/HTTP backend. Its zero value is not usable: call New.
type Backend struct {
	cfg Config

	mu        sync.Mutex
	first     time.Time // first request's arrival
	records   []Record
	windows   []window
	failed    int  // scripted failures answered so far
	recovered bool // Recover was called

	bucket   bucket           // ModeQuota's state
	seen     map[string]bool  // ModeFailFirst's batches seen
	limit    *limiter.Limiter // ModeLimiter's, built at the first request
	limitErr error            // why ModeLimiter's spec could not be built

	changed chan struct{} // closed and replaced on every request

	// The listener's state, guarded by srvMu: Down closes srv and every
	// connection; Up (or upTimer) listens again on addr.
	srvMu   sync.Mutex
	addr    string
	srv     *http.Server
	down    bool
	closed  bool
	upTimer *time.Timer
	upErr   error
	serving chan struct{} // closed while the backend listens
	outages []Outage
}

// New returns a backend following cfg. Serve it with Start, or mount Handler.
func New(cfg Config) *Backend {
	if cfg.IdempotencyHeader == "" {
		cfg.IdempotencyHeader = defaultIdempotencyHeader
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = defaultMaxBodyBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Backend{cfg: cfg, changed: make(chan struct{}), serving: make(chan struct{})}
}

// Start listens on addr (for example "127.0.0.1:0") and serves in the background.
func (b *Backend) Start(addr string) error {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if err := b.listenLocked(addr); err != nil {
		return err
	}
	close(b.serving)
	return nil
}

// listenLocked listens on addr and serves; srvMu is held.
func (b *Backend) listenLocked(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	b.addr = ln.Addr().String()
	srv := &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 10 * time.Second}
	b.srv = srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// URL is the base URL to configure as the exporter's endpoint (no /v1/...).
// It stays the same across Down and Up.
func (b *Backend) URL() string {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	if b.addr == "" {
		return ""
	}
	return "http://" + b.addr
}

// Down takes the backend off the network: it closes the listener and every
// open connection, so that connecting to URL is refused (a refused
// connection never reaches the backend, so nothing is recorded for it;
// count those attempts on the client side). After d it listens again on the
// same address; with d <= 0 it stays down until Up.
func (b *Backend) Down(d time.Duration) error {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	switch {
	case b.closed:
		return ErrClosed
	case b.srv == nil:
		return errors.New("demo backend: Down before Start")
	case b.down:
		return errors.New("demo backend: already down")
	}
	err := b.srv.Close()
	b.srv, b.down, b.upErr = nil, true, nil
	b.serving = make(chan struct{})
	b.outages = append(b.outages, Outage{Start: b.cfg.Now()})
	if d > 0 {
		b.upTimer = time.AfterFunc(d, func() {
			if upErr := b.Up(); upErr != nil && !errors.Is(upErr, ErrClosed) {
				b.srvMu.Lock()
				b.upErr = upErr
				b.srvMu.Unlock()
			}
		})
	}
	return err
}

// Up ends an outage started by Down at once: the backend listens again on
// the same address. It does nothing when the backend is not down.
func (b *Backend) Up() error {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if !b.down {
		return nil
	}
	if b.upTimer != nil {
		b.upTimer.Stop()
		b.upTimer = nil
	}
	if err := b.listenLocked(b.addr); err != nil {
		return fmt.Errorf("demo backend: listening again on %s: %w", b.addr, err)
	}
	b.down = false
	b.outages[len(b.outages)-1].End = b.cfg.Now()
	close(b.serving)
	return nil
}

// Serving returns a channel closed while the backend listens: at once when
// it is up, at the end of the outage when it is down. UpErr tells why a
// timed Up failed.
func (b *Backend) Serving() <-chan struct{} {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	return b.serving
}

// UpErr is the error of the last timed Up (Down with d > 0), if it failed.
func (b *Backend) UpErr() error {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	return b.upErr
}

// Outages returns every outage so far, in order.
func (b *Backend) Outages() []Outage {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	return append([]Outage(nil), b.outages...)
}

// Close stops the server started by Start, and any pending timed Up.
func (b *Backend) Close() error {
	b.srvMu.Lock()
	defer b.srvMu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.upTimer != nil {
		b.upTimer.Stop()
		b.upTimer = nil
	}
	if b.srv == nil {
		return nil
	}
	err := b.srv.Close()
	b.srv = nil
	return err
}

// Recover ends the failure phase of ModeUnauthorized, ModeUnavailable and
// ModeEcho now: every later request is answered as the script's success.
func (b *Backend) Recover() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recovered = true
}

// failingLocked reports whether the failure phase lasts at now; b.mu is held.
func (b *Backend) failingLocked(now time.Time) bool {
	switch {
	case b.recovered:
		return false
	case b.cfg.FailRequests > 0 && b.failed >= b.cfg.FailRequests:
		return false
	case b.cfg.FailFor > 0 && !now.Before(b.first.Add(b.cfg.FailFor)):
		return false
	}
	return true
}

// Handler serves the three OTLP/HTTP export paths.
func (b *Backend) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/v1/traces", "/v1/metrics", "/v1/logs"} {
		mux.HandleFunc(p, b.export)
	}
	return mux
}

func (b *Backend) export(w http.ResponseWriter, r *http.Request) {
	arrival := b.cfg.Now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST is accepted", http.StatusMethodNotAllowed)
		return
	}
	rec := Record{Arrival: arrival, Path: r.URL.Path, Header: r.Header.Clone(), Key: r.Header.Get(b.cfg.IdempotencyHeader)}
	wire, err := io.ReadAll(io.LimitReader(r.Body, b.cfg.MaxBodyBytes+1))
	rec.Truncated = err != nil
	if err == nil && int64(len(wire)) > b.cfg.MaxBodyBytes {
		err = fmt.Errorf("body larger than %d bytes", b.cfg.MaxBodyBytes)
	}
	sum := sha256.Sum256(wire)
	rec.BodyHash, rec.BodyBytes = hex.EncodeToString(sum[:]), len(wire)
	var ct string
	if err == nil {
		ct, err = contentType(r.Header.Get("Content-Type"))
	}
	var raw []byte
	if err == nil {
		raw, err = decompress(r.Header.Get("Content-Encoding"), wire, b.cfg.MaxBodyBytes)
	}
	if err == nil {
		rec.Items, rec.ItemIDs, err = decode(r.URL.Path, ct, raw)
	}

	b.mu.Lock()
	now := b.cfg.Now()
	if b.first.IsZero() {
		b.first = arrival
	}
	for _, win := range b.windows {
		if arrival.After(win.start) && arrival.Before(win.end) {
			rec.InRefusedWindow = true
			break
		}
	}
	var echo echoForm
	var limits http.Header
	switch {
	case err != nil:
		rec.Status, rec.Err = http.StatusBadRequest, err.Error()
		if errors.Is(err, errUnsupportedMedia) {
			rec.Status = http.StatusUnsupportedMediaType
		}
	case b.cfg.Mode == ModeQuota:
		limits = b.quotaLocked(now, &rec)
	case b.cfg.Mode == ModeFailFirst:
		b.failFirstLocked(&rec)
	case b.cfg.Mode == ModeLimiter:
		limits = b.limiterLocked(now, &rec)
	case b.cfg.Mode != ModeThrottle:
		if !b.failingLocked(now) {
			rec.Status = http.StatusOK
			break
		}
		switch b.cfg.Mode {
		case ModeUnauthorized:
			rec.Status = http.StatusUnauthorized
		case ModeUnavailable:
			rec.Status = http.StatusServiceUnavailable
		case ModeEcho:
			echo = echoForms[b.failed%len(echoForms)]
			rec.Status = echo.status
		}
		b.failed++
	case now.Before(b.first.Add(b.cfg.ThrottleFor)):
		rec.Status = http.StatusTooManyRequests
		end := now
		switch {
		case b.cfg.RetryAfter > 0:
			rec.RetryAfter = strconv.Itoa(b.cfg.RetryAfter)
			end = now.Add(time.Duration(b.cfg.RetryAfter) * time.Second)
		case b.cfg.RetryAfterZero:
			rec.RetryAfter = "0"
		}
		b.windows = append(b.windows, window{start: now, end: end})
	default:
		rec.Status = http.StatusOK
	}
	rec.Seq = len(b.records)
	b.records = append(b.records, rec)
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()

	if rec.open {
		if b.cfg.Latency > 0 {
			time.Sleep(b.cfg.Latency)
		}
		b.mu.Lock()
		b.closeLocked(rec.Seq, b.cfg.Now())
		b.mu.Unlock()
	}
	setHeaders(w, limits)
	switch rec.Status {
	case http.StatusOK:
		writeOK(w, r.URL.Path, ct)
	case http.StatusTooManyRequests:
		if rec.RetryAfter != "" {
			w.Header().Set("Retry-After", rec.RetryAfter)
		}
		writeStatus(w, rec.Status, "demo backend is throttling: retry after the time in Retry-After")
	case http.StatusUnauthorized:
		writeStatus(w, rec.Status, "demo backend refuses the request: credentials not accepted")
	default:
		if echo.status != 0 {
			writeEcho(w, echo, r.Header)
			return
		}
		if rec.Status == http.StatusServiceUnavailable {
			writeStatus(w, rec.Status, "demo backend is unavailable")
			return
		}
		writeStatus(w, rec.Status, rec.Err)
	}
}

// Records returns a copy of every request recorded so far, in arrival order.
func (b *Backend) Records() []Record {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Record, len(b.records))
	copy(out, b.records)
	return out
}

// Changed returns a channel closed at the next request.
func (b *Backend) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// Summary summarises the requests recorded so far.
func (b *Backend) Summary() Summary { return Summarize(b.Records()) }

var errUnsupportedMedia = errors.New("unsupported media type")

func contentType(header string) (string, error) {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return "", fmt.Errorf("%w: %q", errUnsupportedMedia, header)
	}
	switch mt {
	case protobufContentType, jsonContentType:
		return mt, nil
	}
	return "", fmt.Errorf("%w: %q", errUnsupportedMedia, mt)
}

func decompress(encoding string, body []byte, limit int64) ([]byte, error) {
	switch encoding {
	case "", "identity":
		return body, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		raw, err := io.ReadAll(io.LimitReader(zr, limit+1))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if int64(len(raw)) > limit {
			return nil, fmt.Errorf("decompressed body larger than %d bytes", limit)
		}
		return raw, nil
	}
	return nil, fmt.Errorf("%w: Content-Encoding %q", errUnsupportedMedia, encoding)
}

// decode parses an OTLP export request and counts its items.
func decode(path, ct string, raw []byte) (int, []string, error) {
	unmarshal := func(fromProto, fromJSON func([]byte) error) error {
		if ct == jsonContentType {
			return fromJSON(raw)
		}
		return fromProto(raw)
	}
	switch path {
	case "/v1/traces":
		req := ptraceotlp.NewExportRequest()
		if err := unmarshal(req.UnmarshalProto, req.UnmarshalJSON); err != nil {
			return 0, nil, fmt.Errorf("decoding traces: %w", err)
		}
		td := req.Traces()
		ids := make([]string, 0, td.SpanCount())
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					ids = append(ids, s.TraceID().String()+"/"+s.SpanID().String())
				}
			}
		}
		return len(ids), ids, nil
	case "/v1/metrics":
		req := pmetricotlp.NewExportRequest()
		if err := unmarshal(req.UnmarshalProto, req.UnmarshalJSON); err != nil {
			return 0, nil, fmt.Errorf("decoding metrics: %w", err)
		}
		return req.Metrics().DataPointCount(), nil, nil
	case "/v1/logs":
		req := plogotlp.NewExportRequest()
		if err := unmarshal(req.UnmarshalProto, req.UnmarshalJSON); err != nil {
			return 0, nil, fmt.Errorf("decoding logs: %w", err)
		}
		return req.Logs().LogRecordCount(), nil, nil
	}
	return 0, nil, fmt.Errorf("unknown path %q", path)
}

// writeOK answers with an empty ExportResponse of the request's signal, in
// the request's encoding.
func writeOK(w http.ResponseWriter, path, ct string) {
	type response interface {
		MarshalProto() ([]byte, error)
		MarshalJSON() ([]byte, error)
	}
	var resp response
	switch path {
	case "/v1/traces":
		resp = ptraceotlp.NewExportResponse()
	case "/v1/metrics":
		resp = pmetricotlp.NewExportResponse()
	default:
		resp = plogotlp.NewExportResponse()
	}
	marshal := resp.MarshalProto
	if ct == jsonContentType {
		marshal = resp.MarshalJSON
	} else {
		ct = protobufContentType
	}
	body, err := marshal()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeStatus answers an error as OTLP/HTTP asks: a google.rpc.Status in protobuf.
func writeStatus(w http.ResponseWriter, code int, msg string) {
	body, err := proto.Marshal(&status.Status{Code: grpcCode(code), Message: msg})
	if err != nil {
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Content-Type", protobufContentType)
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// grpcCode maps the HTTP statuses the backend uses to gRPC codes.
func grpcCode(httpCode int) int32 {
	switch httpCode {
	case http.StatusTooManyRequests:
		return 8 // RESOURCE_EXHAUSTED
	case http.StatusUnauthorized:
		return 16 // UNAUTHENTICATED
	case http.StatusBadRequest:
		return 3 // INVALID_ARGUMENT
	}
	return 2 // UNKNOWN
}
