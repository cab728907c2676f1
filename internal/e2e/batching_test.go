// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
)

// tenantLoad posts requests of Spans (10) spans to a collector's receiver, Rate
// requests a second, each under the X-Scope-OrgID header Tenant (when set),
// as an OTLP SDK does: a request the receiver does not answer 200 (or a
// connection refused while the collector restarts) is posted again, the
// same bytes, until it is accepted. It records every span it had
// accepted, and the spans of requests it had to post more than once (which
// a collector may have stored before the answer was lost).
type tenantLoad struct {
	Tenant string
	Spans  int
	Rate   float64
	tag    byte // the tenant's byte in every trace ID

	mu       sync.Mutex
	run      [8]byte
	next     uint32
	acked    []string
	resent   map[string]bool
	attempts int
}

func newTenantLoad(t *testing.T, tenant string, tag byte, rate float64) *tenantLoad {
	t.Helper()
	l := &tenantLoad{Tenant: tenant, Spans: 10, Rate: rate, tag: tag, resent: map[string]bool{}}
	if _, err := rand.Read(l.run[:]); err != nil {
		t.Fatal(err)
	}
	return l
}

// run posts until ctx ends or stop is closed; it returns when the request
// in progress is accepted (or ctx ends).
func (l *tenantLoad) send(ctx context.Context, url string, stop <-chan struct{}) {
	client := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(time.Duration(float64(time.Second) / l.Rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		l.next++
		n := l.next
		l.mu.Unlock()
		body, ids := l.request(n)
		for try := 0; ; try++ {
			if try == 1 {
				l.mu.Lock()
				for _, id := range ids {
					l.resent[id] = true
				}
				l.mu.Unlock()
			}
			l.mu.Lock()
			l.attempts++
			l.mu.Unlock()
			if post(ctx, client, url+"/v1/traces", body, l.Tenant) {
				l.mu.Lock()
				l.acked = append(l.acked, ids...)
				l.mu.Unlock()
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// request builds request n: trace ID run | tag | n, span IDs n | i.
func (l *tenantLoad) request(n uint32) ([]byte, []string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "tenant-"+l.Tenant)
	ss := rs.ScopeSpans().AppendEmpty()
	var traceID pcommon.TraceID
	copy(traceID[:8], l.run[:])
	traceID[8] = l.tag
	binary.BigEndian.PutUint32(traceID[12:], n)
	ids := make([]string, 0, l.Spans)
	for i := range l.Spans {
		var spanID pcommon.SpanID
		binary.BigEndian.PutUint32(spanID[:4], n)
		binary.BigEndian.PutUint32(spanID[4:], uint32(i)+1)
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(spanID)
		s.SetName("batching-e2e")
		ids = append(ids, traceID.String()+"/"+spanID.String())
	}
	body, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	return body, ids
}

func post(ctx context.Context, client *http.Client, url string, body []byte, tenant string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if tenant != "" {
		req.Header.Set("X-Scope-OrgID", tenant)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (l *tenantLoad) ackedIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

// identity is what the backend saw of spans that reached it more than
// once: every request carrying a span, whatever its answer, should carry
// one idempotency key.
type identity struct {
	// Repeated is how many distinct spans reached the backend in more
	// than one request; SameKey how many of them came under one key every
	// time; ClientResent how many of the others the load had posted more
	// than once itself (the collector may have stored the first post
	// before its answer was lost: two requests, two keys, the client's
	// doing); Unexplained the rest (must be 0).
	Repeated, SameKey, ClientResent, Unexplained int
	Examples                                     []string
}

func checkIdentity(recs []demobackend.Record, resent map[string]bool) identity {
	keys := map[string]map[string]bool{}
	count := map[string]int{}
	for _, r := range recs {
		for _, id := range r.ItemIDs {
			if keys[id] == nil {
				keys[id] = map[string]bool{}
			}
			keys[id][r.Key] = true
			count[id]++
		}
	}
	var out identity
	for id, n := range count {
		if n < 2 {
			continue
		}
		out.Repeated++
		switch {
		case len(keys[id]) == 1:
			out.SameKey++
		case resent[id]:
			out.ClientResent++
		default:
			out.Unexplained++
			if len(out.Examples) < 5 {
				out.Examples = append(out.Examples, id)
			}
		}
	}
	return out
}

// TestBatchingSurvivesKill9 is the persistent queue with
// sending_queue::batch (no batch processor): the collector is killed with
// SIGKILL twice during a 20 s 429 window and once during an outage, with a
// load of requests running throughout (retried by the sender, as an SDK
// retries, while the collector is down). Nothing the receiver acknowledged
// is lost, and every span that reached the backend more than once came
// under one idempotency key each time: batches formed before a kill are
// stored whole and sent again as they were formed.
func TestBatchingSurvivesKill9(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h := newHarness(t, demobackend.Config{Mode: demobackend.ModeThrottle, ThrottleFor: 20 * time.Second, RetryAfter: 3},
		scenario{Storage: true, NoBatchProcessor: true, NumConsumers: 4,
			Batch: "        flush_timeout: 200ms\n        min_size: 100"})
	h.start(ctx)
	load := newTenantLoad(t, "", 1, 20)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); load.send(ctx, h.receiverURL(), stop) }()

	// The window starts at the backend's first request.
	recs, ok := h.waitRecords(ctx, 30*time.Second, func(r []demobackend.Record) bool { return countStatus(r, http.StatusTooManyRequests) > 0 })
	if !ok {
		t.Fatalf("no 429: %s", statusLine(recs))
	}
	windowStart := recs[0].Arrival
	kill := func(at time.Duration, what string) {
		t.Helper()
		if d := time.Until(windowStart.Add(at)); d > 0 {
			time.Sleep(d)
		}
		if err := h.Collector.Kill(); err != nil {
			t.Fatalf("kill -9 %s: %v", what, err)
		}
		t.Logf("killed %s at +%.1fs", what, time.Since(windowStart).Seconds())
		h.start(ctx)
	}
	kill(5*time.Second, "during the 429 window")
	kill(12*time.Second, "during the 429 window, again")

	// After the window, an outage: the backend refuses connections.
	if d := time.Until(windowStart.Add(24 * time.Second)); d > 0 {
		time.Sleep(d)
	}
	if err := h.Backend.Down(0); err != nil {
		t.Fatal(err)
	}
	kill(28*time.Second, "during the outage")
	if d := time.Until(windowStart.Add(32 * time.Second)); d > 0 {
		time.Sleep(d)
	}
	if err := h.Backend.Up(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	close(stop)
	<-done

	sent := load.ackedIDs()
	recs, ok = h.waitRecords(ctx, 90*time.Second, allAccepted(sent))
	h.stop()
	d := checkDelivery(sent, recs)
	id := checkIdentity(recs, load.resent)
	sum := demobackend.Summarize(recs)
	t.Logf("acknowledged %d spans (%d requests posted, %d spans posted more than once by the sender); backend: %d requests, %d refused; delivery %+v",
		len(sent), load.attempts, len(load.resent), sum.Requests, sum.Refused, d)
	t.Logf("identity: %d spans reached the backend more than once: %d under one key every time, %d re-posted by the sender under a new key, %d unexplained",
		id.Repeated, id.SameKey, id.ClientResent, id.Unexplained)
	if !ok || d.Missing != 0 {
		t.Errorf("%d of %d acknowledged spans lost (e.g. %v)", d.Missing, d.Sent, d.MissingIDs)
	}
	if id.Unexplained != 0 {
		t.Errorf("%d spans reached the backend under two keys without the sender posting them twice (e.g. %v)", id.Unexplained, id.Examples)
	}
	if id.SameKey == 0 {
		t.Errorf("no span reached the backend twice under one key: the kills hit no batch in flight, the test shows nothing")
	}
	if sum.KeysWithChangedBody != 0 {
		t.Errorf("%d keys came with different bytes", sum.KeysWithChangedBody)
	}
	if sum.DuplicateKeysAccepted != 0 {
		t.Logf("%d keys accepted twice (a batch in flight at a kill, accepted, then sent again: the backend can drop the second by its key)", sum.DuplicateKeysAccepted)
	}
	recordBatching(t, "kill9", map[string]any{
		"spans": len(sent), "lost": d.Missing, "requests": sum.Requests, "refused": sum.Refused,
		"repeated_spans": id.Repeated, "repeated_same_key": id.SameKey, "repeated_client_resent": id.ClientResent,
		"repeated_unexplained": id.Unexplained, "keys_with_changed_body": sum.KeysWithChangedBody,
		"keys_accepted_twice": sum.DuplicateKeysAccepted, "sender_resent_spans": len(load.resent),
	})
}

// tenantOf reads the tenant of a gzip'd OTLP traces body: the service.name
// of its first resource (a batch holds one tenant's data).
func tenantOf(body []byte) string {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return ""
	}
	req := ptraceotlp.NewExportRequest()
	if req.UnmarshalProto(raw) != nil || req.Traces().ResourceSpans().Len() == 0 {
		return ""
	}
	v, _ := req.Traces().ResourceSpans().At(0).Resource().Attributes().Get("service.name")
	return strings.TrimPrefix(v.Str(), "tenant-")
}

// tenantBackend answers 429 (Retry-After: 2) to tenant "a" while refusing,
// and records per tenant the spans it accepted, with their arrival.
type tenantBackend struct {
	mu       sync.Mutex
	refuseA  bool
	accepted map[string][]time.Time // one entry per span
	mixed    int                    // requests holding more than one tenant
	refused  []time.Time
}

func (b *tenantBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	tenant := tenantOf(body)
	zr, _ := gzip.NewReader(bytes.NewReader(body))
	raw, _ := io.ReadAll(zr)
	req := ptraceotlp.NewExportRequest()
	_ = req.UnmarshalProto(raw)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, rs := range req.Traces().ResourceSpans().All() {
		if v, _ := rs.Resource().Attributes().Get("service.name"); strings.TrimPrefix(v.Str(), "tenant-") != tenant {
			b.mixed++
			break
		}
	}
	if tenant == "a" && b.refuseA {
		b.refused = append(b.refused, now)
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	for range req.Traces().SpanCount() {
		b.accepted[tenant] = append(b.accepted[tenant], now)
	}
	w.WriteHeader(http.StatusOK)
}

// rate is tenant's accepted spans per second in [from, to).
func (b *tenantBackend) rate(tenant string, from, to time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, at := range b.accepted[tenant] {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// TestBatchingTwoTenantsOneHeld: two tenants through one exporter
// (partition::metadata_keys: [X-Scope-OrgID], the receiver's
// include_metadata), each sending 200 spans/s. The backend refuses tenant
// A with 429 for 20 s. A's batches wait on A's gate; B's delivery rate in
// those 20 s stays within 10 % of its rate before the refusal.
func TestBatchingTwoTenantsOneHeld(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tb := &tenantBackend{accepted: map[string][]time.Time{}}
	h := newHarness(t, demobackend.Config{}, scenario{NoBatchProcessor: true, IncludeMetadata: true, QueueSize: 5000,
		Batch: "        flush_timeout: 200ms\n        min_size: 100\n        partition:\n          metadata_keys: [X-Scope-OrgID]",
		Serve: func(*demobackend.Backend) http.Handler { return tb }})
	h.start(ctx)
	a := newTenantLoad(t, "a", 'a', 20)
	b := newTenantLoad(t, "b", 'b', 20)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, l := range []*tenantLoad{a, b} {
		wg.Go(func() { l.send(ctx, h.receiverURL(), stop) })
	}

	// Before: 2 s to settle, then 15 s measured.
	time.Sleep(2 * time.Second)
	before0 := time.Now()
	time.Sleep(15 * time.Second)
	before1 := time.Now()
	tb.mu.Lock()
	tb.refuseA = true
	tb.mu.Unlock()
	// During: A refused for 20 s; B measured over the window.
	time.Sleep(20 * time.Second)
	during1 := time.Now()
	tb.mu.Lock()
	tb.refuseA = false
	tb.mu.Unlock()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()

	sent := append(a.ackedIDs(), b.ackedIDs()...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		tb.mu.Lock()
		n := len(tb.accepted["a"]) + len(tb.accepted["b"])
		tb.mu.Unlock()
		if n >= len(sent) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.stop()

	rateBefore := tb.rate("b", before0, before1)
	rateDuring := tb.rate("b", before1, during1)
	aBefore, aDuring := tb.rate("a", before0, before1), tb.rate("a", before1, during1)
	tb.mu.Lock()
	refused, mixed := len(tb.refused), tb.mixed
	accA, accB := len(tb.accepted["a"]), len(tb.accepted["b"])
	tb.mu.Unlock()
	t.Logf("tenant B: %.1f spans/s before, %.1f spans/s while A was refused (ratio %.3f); tenant A: %.1f before, %.1f during; A's requests refused: %d; accepted A %d, B %d of %d, %d sent",
		rateBefore, rateDuring, rateDuring/rateBefore, aBefore, aDuring, refused, accA, accB, len(a.ackedIDs())+len(b.ackedIDs()), len(sent))
	if rateBefore <= 0 || rateDuring < 0.9*rateBefore || rateDuring > 1.1*rateBefore {
		t.Errorf("tenant B's rate while A was refused is %.1f spans/s, not within 10 %% of %.1f before", rateDuring, rateBefore)
	}
	if aDuring > 0.1*aBefore {
		t.Errorf("tenant A was delivered at %.1f spans/s while refused", aDuring)
	}
	// A's gate holds for each Retry-After (2 s): about one probe every 2 s.
	if refused > 20/2+3 {
		t.Errorf("%d requests of A refused in a 20 s window with Retry-After: 2; one probe per wait is about 10", refused)
	}
	if mixed != 0 {
		t.Errorf("%d requests held both tenants' data", mixed)
	}
	if accA+accB < len(sent) {
		t.Errorf("%d of %d spans delivered", accA+accB, len(sent))
	}
	recordBatching(t, "two-tenants", map[string]any{
		"b_rate_before": rateBefore, "b_rate_during": rateDuring, "b_rate_ratio": rateDuring / rateBefore,
		"a_rate_before": aBefore, "a_rate_during": aDuring, "a_refused": refused, "mixed_requests": mixed,
		"spans": len(sent), "lost": len(sent) - (accA + accB),
	})
}

// TestBatchingRestartInsideHoldWindow: a restart inside a 401 window and
// inside a 429 window, each by SIGTERM and by kill -9, with file_storage
// and sending_queue::batch. The first process is told to wait 20 s (the
// 401 probe interval, the Retry-After); it stops 5 s in. The new process
// sends at most one request (it sends none: it keeps the hold) before those
// 20 s are over.
func TestBatchingRestartInsideHoldWindow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		backend demobackend.Config
		sc      scenario
		status  int
		kill    bool
	}{
		{"401, SIGTERM", demobackend.Config{Mode: demobackend.ModeUnauthorized, FailFor: 20 * time.Second},
			scenario{ProbeInterval: 20 * time.Second}, http.StatusUnauthorized, false},
		{"401, kill -9", demobackend.Config{Mode: demobackend.ModeUnauthorized, FailFor: 20 * time.Second},
			scenario{ProbeInterval: 20 * time.Second}, http.StatusUnauthorized, true},
		{"429, SIGTERM", demobackend.Config{Mode: demobackend.ModeThrottle, ThrottleFor: 20 * time.Second, RetryAfter: 20},
			scenario{RetryAfterJitter: "0s"}, http.StatusTooManyRequests, false},
		{"429, kill -9", demobackend.Config{Mode: demobackend.ModeThrottle, ThrottleFor: 20 * time.Second, RetryAfter: 20},
			scenario{RetryAfterJitter: "0s"}, http.StatusTooManyRequests, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			sc := tc.sc
			sc.Storage, sc.NoBatchProcessor, sc.NumConsumers = true, true, 10
			sc.Batch = "        flush_timeout: 200ms\n        min_size: 20"
			h := newHarness(t, tc.backend, sc)
			h.start(ctx)
			load := newTenantLoad(t, "", 2, 10)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { defer close(done); load.send(ctx, h.receiverURL(), stop) }()
			recs, ok := h.waitRecords(ctx, 30*time.Second, func(r []demobackend.Record) bool { return countStatus(r, tc.status) > 0 })
			if !ok {
				t.Fatalf("no %d: %s", tc.status, statusLine(recs))
			}
			first := recs[0].Arrival
			holdEnds := first.Add(20 * time.Second)
			time.Sleep(time.Until(first.Add(5 * time.Second)))
			if tc.kill {
				if err := h.Collector.Kill(); err != nil {
					t.Fatal(err)
				}
			} else {
				h.stop()
			}
			restarted := time.Now()
			h.start(ctx)
			time.Sleep(time.Until(holdEnds.Add(3 * time.Second)))
			close(stop)
			<-done
			sent := load.ackedIDs()
			recs, ok = h.waitRecords(ctx, 60*time.Second, allAccepted(sent))
			h.stop()
			inWindow := between(recs, restarted, holdEnds)
			t.Logf("first process: %s", statusLine(between(recs, time.Time{}, restarted)))
			t.Logf("new process before the hold's end (+%.1fs): %d requests: %s", holdEnds.Sub(first).Seconds(), len(inWindow), statusLine(inWindow))
			if len(inWindow) > 1 {
				t.Errorf("the new process sent %d requests before the hold it would have known ended; at most one", len(inWindow))
			}
			d := checkDelivery(sent, recs)
			if !ok || d.Missing != 0 {
				t.Errorf("%d of %d spans lost", d.Missing, d.Sent)
			}
			if kept := h.logText(); !strings.Contains(kept, "Holding, as before the restart") {
				t.Errorf("the new process did not log the kept hold")
			}
			recordBatching(t, "restart-in-hold/"+strings.NewReplacer(", ", "-", " ", "_").Replace(tc.name), map[string]any{
				"new_process_requests_in_window": len(inWindow), "first_process_requests": len(between(recs, time.Time{}, restarted)),
				"spans": len(sent), "lost": d.Missing,
			})
		})
	}
}

// scriptedTenants answers by the tenant of a request's data (tenantOf):
// "permanent" always 400, "retried" 503 at its first attempt and 200 after;
// it records when each tenant's requests arrived.
type scriptedTenants struct {
	mu       sync.Mutex
	arrivals map[string][]time.Time
}

func (s *scriptedTenants) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tenant := tenantOf(body)
	s.mu.Lock()
	s.arrivals[tenant] = append(s.arrivals[tenant], time.Now())
	n := len(s.arrivals[tenant])
	s.mu.Unlock()
	switch {
	case tenant == "permanent":
		w.WriteHeader(http.StatusBadRequest)
	case tenant == "retried" && n == 1:
		w.WriteHeader(http.StatusServiceUnavailable)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// TestBatchingWaitForResult: with sending_queue::wait_for_result and
// sending_queue::batch, two callers whose requests share one batch each
// get the final outcome of their data, after the retry loop, not at
// enqueue: a batch the backend refuses as permanent fails both (not 200),
// and a batch refused once with 503 and then accepted answers both 200,
// only after the accepted attempt.
func TestBatchingWaitForResult(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb := &scriptedTenants{arrivals: map[string][]time.Time{}}
	h := newHarness(t, demobackend.Config{}, scenario{NoBatchProcessor: true, WaitForResult: true,
		Batch: "        flush_timeout: 2s\n        min_size: 20",
		Serve: func(*demobackend.Backend) http.Handler { return sb }})
	h.start(ctx)
	client := &http.Client{Timeout: time.Minute}
	for _, tc := range []struct {
		tenant   string
		attempts int
		ok       bool
	}{
		{"permanent", 1, false},
		{"retried", 2, true},
	} {
		load := newTenantLoad(t, tc.tenant, tc.tenant[0], 1)
		type answer struct {
			status int
			at     time.Time
		}
		answers := make(chan answer, 2)
		for n := range uint32(2) {
			go func() {
				body, _ := load.request(n + 1)
				status := postStatus(ctx, client, h.receiverURL()+"/v1/traces", body)
				answers <- answer{status, time.Now()}
			}()
		}
		a, b := <-answers, <-answers
		sb.mu.Lock()
		arrivals := append([]time.Time(nil), sb.arrivals[tc.tenant]...)
		sb.mu.Unlock()
		t.Logf("%s: callers answered %d and %d; the backend got %d request(s) of their batch", tc.tenant, a.status, b.status, len(arrivals))
		if len(arrivals) != tc.attempts {
			t.Fatalf("%s: the backend got %d requests, want %d (one batch of both callers' data, %d attempt(s))", tc.tenant, len(arrivals), tc.attempts, tc.attempts)
		}
		for _, ans := range []answer{a, b} {
			if (ans.status == http.StatusOK) != tc.ok {
				t.Errorf("%s: a caller was answered %d", tc.tenant, ans.status)
			}
			if ans.at.Before(arrivals[len(arrivals)-1]) {
				t.Errorf("%s: a caller was answered before the batch's last attempt reached the backend", tc.tenant)
			}
		}
	}
	h.stop()
}

// postStatus posts body and returns the HTTP status (0 when no answer).
func postStatus(ctx context.Context, client *http.Client, url string, body []byte) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestBatchingFeatureGateDefaults: a configuration without
// sending_queue::batch batches once the collector runs with the feature
// gate pkg.exporterhelper.queueBatchEnabled (the collector's standard:
// flush_timeout 200ms, so 10-span requests posted 20 times a second reach
// the backend several to a request), and sends each request as it came
// without it (the defaults unchanged).
func TestBatchingFeatureGateDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		gates string
	}{
		{"gate on", "pkg.exporterhelper.queueBatchEnabled"},
		{"gate off", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			h := newHarness(t, demobackend.Config{}, scenario{NoBatchProcessor: true, FeatureGates: tc.gates})
			h.start(ctx)
			load := newTenantLoad(t, "", 3, 20)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { defer close(done); load.send(ctx, h.receiverURL(), stop) }()
			time.Sleep(3 * time.Second)
			close(stop)
			<-done
			sent := load.ackedIDs()
			recs, ok := h.waitRecords(ctx, 30*time.Second, allAccepted(sent))
			h.stop()
			if !ok {
				t.Fatalf("not every span reached the backend: %s", statusLine(recs))
			}
			most := 0
			for _, r := range recs {
				most = max(most, len(r.ItemIDs))
			}
			t.Logf("%s: %d spans in %d client requests reached the backend in %d requests, at most %d spans in one", tc.name, len(sent), len(sent)/10, len(recs), most)
			if batched := most > 10; batched != (tc.gates != "") {
				t.Errorf("%s: at most %d spans in one request (the client's requests hold 10): batching is %v", tc.name, most, batched)
			}
		})
	}
}
