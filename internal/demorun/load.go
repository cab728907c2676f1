// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Load is a bounded OTLP/HTTP trace load.
type Load struct {
	// Batches requests of SpansPerBatch spans, one every Interval.
	Batches, SpansPerBatch int
	Interval               time.Duration
}

// LoadResult is what a load sent.
type LoadResult struct {
	Start time.Time
	// Batches is how many requests the receiver accepted.
	Batches int
	// SpanIDs lists every span sent as "traceid/spanid" (the demo backend's format).
	SpanIDs []string
}

// Spans is the number of spans sent.
func (r LoadResult) Spans() int { return len(r.SpanIDs) }

// Send posts the load to receiverURL/v1/traces as OTLP/HTTP protobuf. Every
// span gets a trace ID unique to this run, so that spans can be counted
// one by one at the backend.
func (l Load) Send(ctx context.Context, receiverURL string) (LoadResult, error) {
	// Batch and span numbers go into 32-bit halves of the span IDs.
	if l.Batches < 0 || l.Batches > math.MaxUint32 || l.SpansPerBatch < 0 || l.SpansPerBatch > math.MaxUint32 {
		return LoadResult{}, fmt.Errorf("load of %d batches of %d spans: each must be between 0 and %d", l.Batches, l.SpansPerBatch, uint32(math.MaxUint32))
	}
	var run [8]byte
	if _, err := rand.Read(run[:]); err != nil {
		return LoadResult{}, err
	}
	res := LoadResult{Start: time.Now()}
	tick := time.NewTicker(max(l.Interval, time.Millisecond))
	defer tick.Stop()
	for b := range uint32(l.Batches) {
		if b > 0 {
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-tick.C:
			}
		}
		td, ids := buildBatch(run, b, l.SpansPerBatch)
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			return res, err
		}
		if err := postOTLP(ctx, receiverURL+"/v1/traces", body); err != nil {
			return res, fmt.Errorf("batch %d: %w", b, err)
		}
		res.Batches++
		res.SpanIDs = append(res.SpanIDs, ids...)
	}
	return res, nil
}

func buildBatch(run [8]byte, batch uint32, spans int) (ptrace.Traces, []string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "otlp-http-retry-demo")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("demorun")
	var traceID pcommon.TraceID
	copy(traceID[:8], run[:])
	binary.BigEndian.PutUint64(traceID[8:], uint64(batch)+1)
	now := time.Now()
	ids := make([]string, 0, spans)
	for i := range spans {
		s := ss.Spans().AppendEmpty()
		var spanID pcommon.SpanID
		binary.BigEndian.PutUint32(spanID[:4], batch+1)
		binary.BigEndian.PutUint32(spanID[4:], uint32(i)+1)
		s.SetTraceID(traceID)
		s.SetSpanID(spanID)
		s.SetName(fmt.Sprintf("demo-batch-%d-span-%d", batch, i))
		s.SetKind(ptrace.SpanKindInternal)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		s.Attributes().PutInt("demo.batch", int64(batch))
		ids = append(ids, traceID.String()+"/"+spanID.String())
	}
	return td, ids
}

func postOTLP(ctx context.Context, url string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("receiver answered %d: %q", resp.StatusCode, msg)
	}
	return nil
}
