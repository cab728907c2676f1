package demobackend

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
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
)

// fakeClock is a settable clock for the backend.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

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
	if resp := post(t, h, reqOpts{encoding: "gzip", key: "k2"}, gz(t, traces(t, 2, 2))); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("t=2: got %d, want 429", resp.StatusCode)
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

	req := httptest.NewRequest(http.MethodGet, "/v1/traces", nil)
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
