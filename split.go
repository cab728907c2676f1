// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Splitting data that a batch cannot hold whole, into pieces of at most
// max items each, in order, each item once. The source is only read: the
// pieces are copies, since the exporter does not own what it is given
// (MutatesData: false). Resources and scopes are repeated in every piece
// that holds some of their items; a resource or scope with no items at all
// carries nothing a backend counts and is left out.

// splitTraces cuts td into pieces of at most max spans.
func splitTraces(td ptrace.Traces, limit int) []ptrace.Traces {
	if limit <= 0 || td.SpanCount() <= limit {
		return []ptrace.Traces{td}
	}
	var out []ptrace.Traces
	var cur ptrace.Traces
	var curRS ptrace.ResourceSpans
	var curSS ptrace.ScopeSpans
	n := limit // full: the first span opens a piece
	for _, rs := range td.ResourceSpans().All() {
		rsOpen := false
		for _, ss := range rs.ScopeSpans().All() {
			ssOpen := false
			for _, span := range ss.Spans().All() {
				if n == limit {
					cur = ptrace.NewTraces()
					out = append(out, cur)
					n, rsOpen = 0, false
				}
				if !rsOpen {
					curRS = cur.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(curRS.Resource())
					curRS.SetSchemaUrl(rs.SchemaUrl())
					rsOpen, ssOpen = true, false
				}
				if !ssOpen {
					curSS = curRS.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(curSS.Scope())
					curSS.SetSchemaUrl(ss.SchemaUrl())
					ssOpen = true
				}
				span.CopyTo(curSS.Spans().AppendEmpty())
				n++
			}
		}
	}
	return out
}

// splitLogs cuts ld into pieces of at most max log records.
func splitLogs(ld plog.Logs, limit int) []plog.Logs {
	if limit <= 0 || ld.LogRecordCount() <= limit {
		return []plog.Logs{ld}
	}
	var out []plog.Logs
	var cur plog.Logs
	var curRL plog.ResourceLogs
	var curSL plog.ScopeLogs
	n := limit
	for _, rl := range ld.ResourceLogs().All() {
		rlOpen := false
		for _, sl := range rl.ScopeLogs().All() {
			slOpen := false
			for _, rec := range sl.LogRecords().All() {
				if n == limit {
					cur = plog.NewLogs()
					out = append(out, cur)
					n, rlOpen = 0, false
				}
				if !rlOpen {
					curRL = cur.ResourceLogs().AppendEmpty()
					rl.Resource().CopyTo(curRL.Resource())
					curRL.SetSchemaUrl(rl.SchemaUrl())
					rlOpen, slOpen = true, false
				}
				if !slOpen {
					curSL = curRL.ScopeLogs().AppendEmpty()
					sl.Scope().CopyTo(curSL.Scope())
					curSL.SetSchemaUrl(sl.SchemaUrl())
					slOpen = true
				}
				rec.CopyTo(curSL.LogRecords().AppendEmpty())
				n++
			}
		}
	}
	return out
}

// splitMetrics cuts md into pieces of at most max data points. A metric
// with more points than a piece has room for is continued in the next
// piece under the same name, unit, type and temporality.
func splitMetrics(md pmetric.Metrics, limit int) []pmetric.Metrics {
	if limit <= 0 || md.DataPointCount() <= limit {
		return []pmetric.Metrics{md}
	}
	var out []pmetric.Metrics
	var cur pmetric.Metrics
	var curRM pmetric.ResourceMetrics
	var curSM pmetric.ScopeMetrics
	n := limit
	for _, rm := range md.ResourceMetrics().All() {
		rmOpen := false
		for _, sm := range rm.ScopeMetrics().All() {
			smOpen := false
			for _, m := range sm.Metrics().All() {
				points := pointCount(m)
				for from := 0; from < points; {
					if n == limit {
						cur = pmetric.NewMetrics()
						out = append(out, cur)
						n, rmOpen = 0, false
					}
					if !rmOpen {
						curRM = cur.ResourceMetrics().AppendEmpty()
						rm.Resource().CopyTo(curRM.Resource())
						curRM.SetSchemaUrl(rm.SchemaUrl())
						rmOpen, smOpen = true, false
					}
					if !smOpen {
						curSM = curRM.ScopeMetrics().AppendEmpty()
						sm.Scope().CopyTo(curSM.Scope())
						curSM.SetSchemaUrl(sm.SchemaUrl())
						smOpen = true
					}
					to := min(points, from+limit-n)
					copyPoints(m, curSM.Metrics().AppendEmpty(), from, to)
					n += to - from
					from = to
				}
			}
		}
	}
	return out
}

// pointCount is the number of data points of m.
func pointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

// copyPoints copies m's description (name, unit, metadata, type,
// temporality, monotonicity) and its data points [from, to) into dst.
func copyPoints(m, dst pmetric.Metric, from, to int) {
	dst.SetName(m.Name())
	dst.SetDescription(m.Description())
	dst.SetUnit(m.Unit())
	m.Metadata().CopyTo(dst.Metadata())
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		src, d := m.Gauge().DataPoints(), dst.SetEmptyGauge().DataPoints()
		for i := from; i < to; i++ {
			src.At(i).CopyTo(d.AppendEmpty())
		}
	case pmetric.MetricTypeSum:
		s := dst.SetEmptySum()
		s.SetAggregationTemporality(m.Sum().AggregationTemporality())
		s.SetIsMonotonic(m.Sum().IsMonotonic())
		src, d := m.Sum().DataPoints(), s.DataPoints()
		for i := from; i < to; i++ {
			src.At(i).CopyTo(d.AppendEmpty())
		}
	case pmetric.MetricTypeHistogram:
		h := dst.SetEmptyHistogram()
		h.SetAggregationTemporality(m.Histogram().AggregationTemporality())
		src, d := m.Histogram().DataPoints(), h.DataPoints()
		for i := from; i < to; i++ {
			src.At(i).CopyTo(d.AppendEmpty())
		}
	case pmetric.MetricTypeExponentialHistogram:
		h := dst.SetEmptyExponentialHistogram()
		h.SetAggregationTemporality(m.ExponentialHistogram().AggregationTemporality())
		src, d := m.ExponentialHistogram().DataPoints(), h.DataPoints()
		for i := from; i < to; i++ {
			src.At(i).CopyTo(d.AppendEmpty())
		}
	case pmetric.MetricTypeSummary:
		src, d := m.Summary().DataPoints(), dst.SetEmptySummary().DataPoints()
		for i := from; i < to; i++ {
			src.At(i).CopyTo(d.AppendEmpty())
		}
	}
}
