// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demobackend

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// newClock is the module's fake clock (retry/retrytest) at a fixed start;
// the backend reads it through Config.Now and the test moves it with Advance.
func newClock() *retrytest.Clock {
	return retrytest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

func traces(t *testing.T, spans int, seed byte) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range spans {
		s := ss.Spans().AppendEmpty()
		s.SetName("op")
		s.SetTraceID([16]byte{seed, 1})
		s.SetSpanID([8]byte{seed, byte(i + 1)})
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type reqOpts struct {
	path, ct, encoding, key string
}

func post(t *testing.T, h http.Handler, o reqOpts, body []byte) *http.Response {
	t.Helper()
	if o.path == "" {
		o.path = "/v1/traces"
	}
	if o.ct == "" {
		o.ct = "application/x-protobuf"
	}
	req := httptest.NewRequest(http.MethodPost, o.path, bytes.NewReader(body))
	req.Header.Set("Content-Type", o.ct)
	if o.encoding != "" {
		req.Header.Set("Content-Encoding", o.encoding)
	}
	if o.key != "" {
		req.Header.Set("Idempotency-Key", o.key)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	return rr.Result()
}

func TestThrottleScript(t *testing.T) {
	clock := newClock()
	b := New(Config{ThrottleFor: 10 * time.Second, RetryAfter: 4, Now: clock.Now})
	h := b.Handler()
	body := gz(t, traces(t, 3, 1))

	// t=0: first request, refused with Retry-After 4.
	resp := post(t, h, reqOpts{encoding: "gzip", key: "k1"}, body)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "4" {
		t.Fatalf("first request: got %d Retry-After %q, want 429 and 4", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	var st status.Status
	raw, _ := io.ReadAll(resp.Body)
	if err := proto.Unmarshal(raw, &st); err != nil || st.GetMessage() == "" {
		t.Fatalf("429 body is not a google.rpc.Status with a message: %v %q", err, raw)
	}

	// t=2: inside the window of the first 429.
	clock.Advance(2 * time.Second)
	if resp2 := post(t, h, reqOpts{encoding: "gzip", key: "k2"}, gz(t, traces(t, 2, 2))); resp2.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("t=2: got %d, want 429", resp2.StatusCode)
	}
	// t=10: the throttle is over.
	clock.Advance(8 * time.Second)
	resp = post(t, h, reqOpts{encoding: "gzip", key: "k1"}, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("t=10: got %d, want 200", resp.StatusCode)
	}
	if resp.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("200 content type %q", resp.Header.Get("Content-Type"))
	}
	er := ptraceotlp.NewExportResponse()
	raw, _ = io.ReadAll(resp.Body)
	if err := er.UnmarshalProto(raw); err != nil {
		t.Fatalf("200 body is not an ExportResponse: %v", err)
	}
	// The same key accepted twice is a duplicate.
	clock.Advance(time.Second)
	post(t, h, reqOpts{encoding: "gzip", key: "k1"}, body)

	recs := b.Records()
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	if recs[0].Items != 3 || len(recs[0].ItemIDs) != 3 || recs[0].Key != "k1" || recs[0].RetryAfter != "4" {
		t.Errorf("record 0 = %+v", recs[0])
	}
	if recs[0].BodyHash != recs[2].BodyHash || recs[0].BodyHash == recs[1].BodyHash {
		t.Errorf("body hashes: same bytes must hash alike, different bytes differently")
	}
	if recs[0].InRefusedWindow || !recs[1].InRefusedWindow || recs[2].InRefusedWindow {
		t.Errorf("in-window flags: %v %v %v, want false true false", recs[0].InRefusedWindow, recs[1].InRefusedWindow, recs[2].InRefusedWindow)
	}

	s := b.Summary()
	want := Summary{
		Requests: 4, Refused: 2, Accepted: 2,
		DistinctKeys: 2, KeysReused: 1, DuplicateKeysAccepted: 1, RefusedKeysNeverAccepted: 1,
		ItemsAccepted: 6, DistinctItemsAccepted: 3, DuplicateItemsAccepted: 3,
		FirstRequest: recs[0].Arrival, FirstRefusal: recs[0].Arrival, FirstAccept: recs[2].Arrival,
		InsideRefusedWindow: 1, AnyInsideRefusedWindow: true,
	}
	if s != want {
		t.Errorf("summary\n got %+v\nwant %+v", s, want)
	}
}

func TestWindowStartsWhenRefusalIsDecided(t *testing.T) {
	// A request that arrived before the 429 was decided is not "inside"
	// its window: the client could not have known.
	clock := newClock()
	b := New(Config{ThrottleFor: time.Minute, RetryAfter: 4, Now: clock.Now})
	b.windows = append(b.windows, window{start: clock.Now().Add(time.Millisecond), end: clock.Now().Add(4 * time.Second)})
	post(t, b.Handler(), reqOpts{key: "a"}, traces(t, 1, 1))
	if b.Records()[0].InRefusedWindow {
		t.Fatal("a request arriving before the refusal was decided counted as inside the window")
	}
}

func TestNoRetryAfterHeader(t *testing.T) {
	b := New(Config{ThrottleFor: time.Minute})
	resp := post(t, b.Handler(), reqOpts{key: "a"}, traces(t, 1, 1))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("got %d", resp.StatusCode)
	}
	if _, ok := resp.Header["Retry-After"]; ok {
		t.Fatal("Retry-After sent with RetryAfter 0")
	}
}

func TestNoThrottleAcceptsEverything(t *testing.T) {
	b := New(Config{})
	if resp := post(t, b.Handler(), reqOpts{key: "a"}, traces(t, 2, 1)); resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d, want 200", resp.StatusCode)
	}
}

func TestUnauthorizedMode(t *testing.T) {
	b := New(Config{Mode: ModeUnauthorized, ThrottleFor: time.Minute, RetryAfter: 4})
	for range 3 {
		if resp := post(t, b.Handler(), reqOpts{key: "a"}, traces(t, 1, 1)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("got %d, want 401", resp.StatusCode)
		}
	}
	if s := b.Summary(); s.Unauthorized != 3 || s.Requests != 3 || s.Accepted != 0 || s.Refused != 0 {
		t.Fatalf("summary %+v", s)
	}
}

func TestSignalsAndEncodings(t *testing.T) {
	md := pmetric.NewMetrics()
	g := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("g")
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
	g.Gauge().DataPoints().AppendEmpty().SetIntValue(2)
	metricsProto, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()

	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for range 4 {
		lrs.AppendEmpty().Body().SetStr("x")
	}
	logsJSON, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()

	b := New(Config{})
	h := b.Handler()
	cases := []struct {
		name   string
		opts   reqOpts
		body   []byte
		status int
		items  int
	}{
		{"metrics proto", reqOpts{path: "/v1/metrics"}, metricsProto, 200, 2},
		{"logs json gzip", reqOpts{path: "/v1/logs", ct: "application/json", encoding: "gzip"}, gz(t, logsJSON), 200, 4},
		{"traces with charset", reqOpts{ct: "application/x-protobuf; charset=utf-8"}, traces(t, 5, 3), 200, 5},
		{"garbage", reqOpts{}, []byte("not a protobuf \xff\xff\xff"), 400, 0},
		{"bad gzip", reqOpts{encoding: "gzip"}, []byte("plain"), 400, 0},
		{"unknown encoding", reqOpts{encoding: "br"}, traces(t, 1, 1), 415, 0},
		{"unknown content type", reqOpts{ct: "text/plain"}, traces(t, 1, 1), 415, 0},
	}
	for _, c := range cases {
		resp := post(t, h, c.opts, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
		}
		recs := b.Records()
		if got := recs[len(recs)-1]; got.Items != c.items {
			t.Errorf("%s: items %d, want %d (err %q)", c.name, got.Items, c.items, got.Err)
		}
	}
	if s := b.Summary(); s.MissingKeys != len(cases) || s.Malformed != 4 {
		t.Errorf("summary %+v", s)
	}

	req := httptest.NewRequest(http.MethodGet, "/v1/traces", http.NoBody)
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	if rr.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", rr.Code)
	}
}

func TestStartServesOverLoopback(t *testing.T) {
	b := New(Config{})
	if err := b.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	changed := b.Changed()
	resp, err := http.Post(b.URL()+"/v1/traces", "application/x-protobuf", bytes.NewReader(traces(t, 1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("Changed not signalled")
	}
	if got := AcceptedSpans(b.Records()); len(got) != 1 {
		t.Fatalf("accepted spans %v", got)
	}
}

// statuses posts n requests and returns the statuses answered.
func statuses(t *testing.T, h http.Handler, n int) []int {
	t.Helper()
	out := make([]int, 0, n)
	for i := range n {
		resp := post(t, h, reqOpts{key: "k" + strconv.Itoa(i)}, traces(t, 1, byte(i)))
		out = append(out, resp.StatusCode)
	}
	return out
}

func recordedStatuses(b *Backend) []int {
	var out []int
	for _, r := range b.Records() {
		out = append(out, r.Status)
	}
	return out
}

func TestUnauthorizedForFirstRequests(t *testing.T) {
	b := New(Config{Mode: ModeUnauthorized, FailRequests: 2})
	want := []int{401, 401, 200, 200}
	if got := statuses(t, b.Handler(), 4); !slices.Equal(got, want) {
		t.Fatalf("answers %v, want %v", got, want)
	}
	if got := recordedStatuses(b); !slices.Equal(got, want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	if s := b.Summary(); s.Unauthorized != 2 || s.Accepted != 2 || s.DistinctItemsAccepted != 2 {
		t.Fatalf("summary %+v", s)
	}
}

func TestUnauthorizedForDuration(t *testing.T) {
	clock := newClock()
	b := New(Config{Mode: ModeUnauthorized, FailFor: 10 * time.Second, Now: clock.Now})
	var got []int
	for _, step := range []time.Duration{0, 5 * time.Second, 4 * time.Second, time.Second, time.Second} {
		clock.Advance(step)
		got = append(got, post(t, b.Handler(), reqOpts{key: "k"}, traces(t, 1, 1)).StatusCode)
	}
	if want := []int{401, 401, 401, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("answers at 0, 5, 9, 10, 11 s: %v, want %v", got, want)
	}
}

func TestUnauthorizedUntilRecover(t *testing.T) {
	b := New(Config{Mode: ModeUnauthorized})
	if got, want := statuses(t, b.Handler(), 3), []int{401, 401, 401}; !slices.Equal(got, want) {
		t.Fatalf("before Recover: %v, want %v", got, want)
	}
	b.Recover()
	if got, want := statuses(t, b.Handler(), 2), []int{200, 200}; !slices.Equal(got, want) {
		t.Fatalf("after Recover: %v, want %v", got, want)
	}
	// Recover also ends a bounded phase early.
	b = New(Config{Mode: ModeUnauthorized, FailRequests: 100, FailFor: time.Hour})
	statuses(t, b.Handler(), 1)
	b.Recover()
	if got := statuses(t, b.Handler(), 1); got[0] != 200 {
		t.Fatalf("after Recover of a bounded phase: %d, want 200", got[0])
	}
}

func TestUnavailableWindow(t *testing.T) {
	clock := newClock()
	b := New(Config{Mode: ModeUnavailable, FailFor: 15 * time.Second, Now: clock.Now})
	h := b.Handler()
	resp := post(t, h, reqOpts{key: "a"}, traces(t, 2, 1))
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("first request: %d, want 503", resp.StatusCode)
	}
	if _, ok := resp.Header["Retry-After"]; ok {
		t.Fatal("503 carries Retry-After")
	}
	var st status.Status
	raw, _ := io.ReadAll(resp.Body)
	if err := proto.Unmarshal(raw, &st); err != nil || st.GetMessage() == "" {
		t.Fatalf("503 body is not a google.rpc.Status with a message: %v %q", err, raw)
	}
	clock.Advance(14 * time.Second)
	if resp := post(t, h, reqOpts{key: "a"}, traces(t, 2, 1)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("t=14s: %d, want 503", resp.StatusCode)
	}
	clock.Advance(time.Second)
	if resp := post(t, h, reqOpts{key: "a"}, traces(t, 2, 1)); resp.StatusCode != http.StatusOK {
		t.Fatalf("t=15s: %d, want 200", resp.StatusCode)
	}
	s := b.Summary()
	if s.Unavailable != 2 || s.Accepted != 1 || s.Malformed != 0 || s.KeysReused != 1 || s.DistinctItemsAccepted != 2 {
		t.Fatalf("summary %+v", s)
	}
}

func TestEchoHeadersInErrorBodies(t *testing.T) {
	b := New(Config{Mode: ModeEcho, FailRequests: 4})
	h := b.Handler()
	const bearer, apiKey = "Bearer s3cr3t-bearer", "s3cr3t-api-key"
	send := func() *http.Response {
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(traces(t, 1, 1)))
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Authorization", bearer)
		req.Header.Set("X-Api-Key", apiKey)
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, req)
		return rr.Result()
	}
	wantLines := []string{"Authorization: " + bearer, "X-Api-Key: " + apiKey}
	cases := []struct {
		status int
		ct     string
	}{
		{400, "text/plain; charset=utf-8"},
		{403, "application/json"},
		{503, "text/plain; charset=utf-8"},
		{400, "text/plain; charset=utf-8"}, // the forms cycle
	}
	for i, c := range cases {
		resp := send()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.ct {
			t.Fatalf("request %d: %d %q, want %d %q", i, resp.StatusCode, resp.Header.Get("Content-Type"), c.status, c.ct)
		}
		if _, ok := resp.Header["Retry-After"]; ok {
			t.Errorf("request %d: Retry-After sent", i)
		}
		text := string(raw)
		if c.ct == "application/json" {
			var body struct {
				Message string            `json:"message"`
				Headers map[string]string `json:"headers"`
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("request %d: JSON body: %v: %s", i, err, raw)
			}
			if body.Headers["Authorization"] != bearer || body.Headers["X-Api-Key"] != apiKey {
				t.Errorf("request %d: JSON headers %v", i, body.Headers)
			}
			text = body.Message
		}
		for _, line := range wantLines {
			if !strings.Contains(text, line) {
				t.Errorf("request %d: body does not echo %q:\n%s", i, line, text)
			}
		}
	}
	if resp := send(); resp.StatusCode != http.StatusOK {
		t.Fatalf("after FailRequests: %d, want 200", resp.StatusCode)
	}
	recs := b.Records()
	if got, want := recordedStatuses(b), []int{400, 403, 503, 400, 200}; !slices.Equal(got, want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	if recs[0].Header.Get("Authorization") != bearer || recs[0].Header.Get("X-Api-Key") != apiKey {
		t.Errorf("recorded headers %v", recs[0].Header)
	}
	if s := b.Summary(); s.Rejected != 3 || s.Unavailable != 1 || s.Accepted != 1 || s.Malformed != 0 {
		t.Errorf("summary %+v", s)
	}
}

func TestDownRefusesConnectionsThenListensAgain(t *testing.T) {
	b := New(Config{})
	if err := b.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url := b.URL()
	// A keep-alive client: Down must also close its idle connection.
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	postTo := func() error {
		resp, err := client.Post(url+"/v1/traces", "application/x-protobuf", bytes.NewReader(traces(t, 1, 1)))
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	if err := postTo(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Serving():
	default:
		t.Fatal("Serving not closed while up")
	}

	if err := b.Down(0); err != nil {
		t.Fatal(err)
	}
	// The client may first meet its idle connection closed (EOF), as
	// against a real server going away; a new connection is refused.
	err := postTo()
	if err == nil {
		t.Fatal("post while down succeeded")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		if err = postTo(); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("second post while down: %v, want connection refused", err)
		}
	}
	if err := b.Down(0); err == nil {
		t.Error("Down while down: no error")
	}
	select {
	case <-b.Serving():
		t.Fatal("Serving closed while down")
	default:
	}
	if err := b.Up(); err != nil {
		t.Fatal(err)
	}
	if b.URL() != url {
		t.Fatalf("URL changed across Down/Up: %s, then %s", url, b.URL())
	}
	if err := postTo(); err != nil {
		t.Fatalf("post after Up: %v", err)
	}

	// A timed outage ends by itself.
	if err := b.Down(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Serving():
	case <-time.After(10 * time.Second):
		t.Fatal("the backend did not listen again after a timed Down")
	}
	if err := b.UpErr(); err != nil {
		t.Fatal(err)
	}
	if err := postTo(); err != nil {
		t.Fatalf("post after the timed outage: %v", err)
	}
	out := b.Outages()
	if len(out) != 2 || out[0].End.IsZero() || out[1].End.IsZero() || out[1].End.Before(out[1].Start) {
		t.Fatalf("outages %+v", out)
	}
	// Refused connections never reach the backend: only the three accepted posts are recorded.
	if s := b.Summary(); s.Requests != 3 || s.Accepted != 3 {
		t.Fatalf("summary %+v", s)
	}
}

func TestCloseCancelsTimedUp(t *testing.T) {
	b := New(Config{})
	if err := b.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := b.Down(time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Up(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Up after Close: %v, want ErrClosed", err)
	}
	if err := b.Down(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Down after Close: %v, want ErrClosed", err)
	}
}

// cutReader yields its bytes, then fails as a connection that ended
// before the body's end does.
type cutReader struct{ r io.Reader }

func (c cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// TestTruncatedBodyIsNotAChangedBody: a request whose body did not arrive
// whole (a collector killed mid-request) is recorded as truncated and left
// out of the key's byte comparison, since its bytes are not what was
// sent; a whole request with the same key and other bytes still counts.
func TestTruncatedBodyIsNotAChangedBody(t *testing.T) {
	b := New(Config{})
	body := traces(t, 3, 1)
	if resp := post(t, b.Handler(), reqOpts{key: "k"}, body); resp.StatusCode != http.StatusOK {
		t.Fatalf("whole request: status %d", resp.StatusCode)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/traces", cutReader{bytes.NewReader(body[:len(body)/2])})
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set(defaultIdempotencyHeader, "k")
	rec := httptest.NewRecorder()
	b.Handler().ServeHTTP(rec, req)
	if rec.Code == http.StatusOK {
		t.Fatal("a truncated body was accepted")
	}
	s := b.Summary()
	if s.TruncatedBodies != 1 || s.KeysWithChangedBody != 0 || s.KeysReused != 1 {
		t.Fatalf("truncated %d, keys with changed bytes %d, reused %d; want 1, 0, 1", s.TruncatedBodies, s.KeysWithChangedBody, s.KeysReused)
	}
	if resp := post(t, b.Handler(), reqOpts{key: "k"}, traces(t, 3, 2)); resp.StatusCode != http.StatusOK {
		t.Fatalf("other bytes: status %d", resp.StatusCode)
	}
	if s := b.Summary(); s.KeysWithChangedBody != 1 {
		t.Fatalf("keys with changed bytes %d after whole other bytes under the same key, want 1", s.KeysWithChangedBody)
	}
}
