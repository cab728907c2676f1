// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Load is a trace load sent to a collector's OTLP/HTTP receiver, as
// protobuf, by Senders concurrent senders.
//
// It is not demorun.Load: that one has one sender, builds each batch
// inside its send loop (its CPU would be timed with the collector's), and
// stops at the first refusal of the receiver. This one sends batches built
// before the clock starts, and, as an OTLP SDK does, retries a batch the
// receiver refuses with 429 or 503 (the collector pushing back when its
// sending queue is full), counting each such refusal.
type Load struct {
	// Senders post concurrently; each sends Batches batches of Spans spans.
	Senders, Batches, Spans int
	// Rate is batches per second per sender; 0 sends as fast as the
	// receiver answers. Paced senders are spread evenly over the interval.
	Rate float64
	// Instance goes into every trace ID, so that loads sent to different
	// collectors of a fleet are told apart at the backend.
	Instance uint32
}

// Total is the number of spans the load sends.
func (l Load) Total() int { return l.Senders * l.Batches * l.Spans }

// Duration is how long a paced load takes (0 for an unpaced one).
func (l Load) Duration() time.Duration {
	if l.Rate <= 0 || l.Batches == 0 {
		return 0
	}
	return time.Duration(float64(l.Batches-1) / l.Rate * float64(time.Second))
}

// LoadResult is what a load did.
type LoadResult struct {
	Start, End time.Time
	// Batches and Spans are what the receiver accepted.
	Batches, Spans int
	// Pushback counts refusals (429/503) and connection errors of the
	// receiver that were retried.
	Pushback int
	// Accepted lists the batch numbers the receiver accepted.
	Accepted []int
	// Latencies are how long the receiver took to accept each accepted
	// batch (its answer to the POST, pushback retries included).
	Latencies []time.Duration
	// Err is why a sender stopped early.
	Err error
}

// Prebuild builds every body of the load into bodies, so that their cost
// is not timed with the run.
func (l Load) Prebuild(bodies *Bodies) {
	for b := range l.Senders * l.Batches {
		bodies.Get(l.Instance, b, l.Spans)
	}
}

// Send posts the load to receiverURL/v1/traces and returns when every
// sender is done or ctx ends.
func (l Load) Send(ctx context.Context, receiverURL string, bodies *Bodies) LoadResult {
	url := receiverURL + "/v1/traces"
	l.Prebuild(bodies)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()

	var mu sync.Mutex
	res := LoadResult{Start: time.Now()}
	var errs []error
	var wg sync.WaitGroup
	for s := range l.Senders {
		wg.Go(func() {
			var offset time.Duration
			if l.Rate > 0 {
				offset = time.Duration(float64(s) / float64(l.Senders) / l.Rate * float64(time.Second))
			}
			for k := range l.Batches {
				b := s*l.Batches + k
				if l.Rate > 0 {
					at := res.Start.Add(offset + time.Duration(float64(k)/l.Rate*float64(time.Second)))
					if err := sleepUntil(ctx, at); err != nil {
						return
					}
				}
				posted := time.Now()
				pushback, err := postBatch(ctx, client, url, bodies.Get(l.Instance, b, l.Spans))
				took := time.Since(posted)
				mu.Lock()
				res.Pushback += pushback
				if err == nil {
					res.Latencies = append(res.Latencies, took)
					res.Batches++
					res.Spans += l.Spans
					res.Accepted = append(res.Accepted, b)
				} else if ctx.Err() == nil {
					errs = append(errs, fmt.Errorf("sender %d, batch %d: %w", s, b, err))
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	res.End = time.Now()
	res.Err = errors.Join(errs...)
	return res
}

func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// postBatch posts body until the receiver accepts it; it returns how many
// refusals it retried.
func postBatch(ctx context.Context, client *http.Client, url string, body []byte) (int, error) {
	pushback := 0
	for {
		code, err := post(ctx, client, url, body)
		switch {
		case err == nil && code == http.StatusOK:
			return pushback, nil
		case ctx.Err() != nil:
			return pushback, ctx.Err()
		case err == nil && code != http.StatusTooManyRequests && code != http.StatusServiceUnavailable:
			return pushback, fmt.Errorf("the receiver answered %d", code)
		}
		pushback++
		if err := sleepUntil(ctx, time.Now().Add(20*time.Millisecond)); err != nil {
			return pushback, err
		}
	}
}

func post(ctx context.Context, client *http.Client, url string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Bodies holds the OTLP requests of every batch sent so far, so that a
// batch is built once per process: every run has its own backend, so runs
// may send the same spans.
type Bodies struct {
	mu sync.Mutex
	m  map[bodyKey][]byte
}

type bodyKey struct {
	instance     uint32
	batch, spans int
}

// NewBodies returns an empty cache.
func NewBodies() *Bodies { return &Bodies{m: map[bodyKey][]byte{}} }

// Get returns the protobuf ExportTraceServiceRequest of batch b.
func (c *Bodies) Get(instance uint32, b, spans int) []byte {
	k := bodyKey{instance, b, spans}
	c.mu.Lock()
	defer c.mu.Unlock()
	if body, ok := c.m[k]; ok {
		return body
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(BuildBatch(instance, b, spans)).MarshalProto()
	if err != nil {
		panic(err) // marshalling pdata built here cannot fail
	}
	c.m[k] = body
	return body
}

// BuildBatch builds batch b of an instance's load, shaped as
// demorun.Load's batches (the load the first measurements used):
// one resource, one scope, spans with a name, two timestamps and one
// attribute.
func BuildBatch(instance uint32, b, spans int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "otlp-http-retry-demo")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("scenariobench")
	traceID := TraceID(instance, b)
	now := time.Now()
	for i := range spans {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(SpanID(b, i))
		s.SetName(fmt.Sprintf("demo-batch-%d-span-%d", b, i))
		s.SetKind(ptrace.SpanKindInternal)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		s.Attributes().PutInt("demo.batch", int64(b))
	}
	return td
}

// TraceID is the trace of batch b of an instance.
func TraceID(instance uint32, b int) pcommon.TraceID {
	var id pcommon.TraceID
	copy(id[:4], "scen")
	binary.BigEndian.PutUint32(id[4:8], instance)
	binary.BigEndian.PutUint64(id[8:], uint64(b)+1) //nolint:gosec // G115: b is a batch index, never negative
	return id
}

// SpanID is span i of batch b.
func SpanID(b, i int) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint32(id[:4], uint32(b)+1) //nolint:gosec // G115: batch and span indexes are small and never negative
	binary.BigEndian.PutUint32(id[4:], uint32(i)+1) //nolint:gosec // G115: as above
	return id
}

// ItemID is span i of batch b as the demo backend names it ("traceid/spanid").
func ItemID(instance uint32, b, i int) string {
	t, s := TraceID(instance, b), SpanID(b, i)
	return hex.EncodeToString(t[:]) + "/" + hex.EncodeToString(s[:])
}

// InstanceOf reads the instance back from an item ID; ok is false for an
// ID this package did not make.
func InstanceOf(itemID string) (uint32, bool) {
	if len(itemID) < 16 {
		return 0, false
	}
	raw, err := hex.DecodeString(itemID[:16])
	if err != nil || string(raw[:4]) != "scen" {
		return 0, false
	}
	return binary.BigEndian.Uint32(raw[4:8]), true
}
