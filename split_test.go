// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// mixedTraces has 3 resources of 2 scopes of 1, 4 and 7 spans, named
// r<resource>s<scope>-<span>, and an empty resource.
func mixedTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range 3 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprint("svc", r))
		rs.SetSchemaUrl(fmt.Sprint("schema", r))
		for sc := range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(fmt.Sprint("scope", sc))
			for i := range []int{1, 4, 7}[(r+sc)%3] {
				ss.Spans().AppendEmpty().SetName(fmt.Sprintf("r%ds%d-%d", r, sc, i))
			}
		}
	}
	td.ResourceSpans().AppendEmpty() // no spans: carries nothing
	return td
}

// flatSpans lists every span as resource/scope/name, in order.
func flatSpans(td ptrace.Traces) []string {
	var out []string
	for _, rs := range td.ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				out = append(out, svc.Str()+"/"+rs.SchemaUrl()+"/"+ss.Scope().Name()+"/"+s.Name())
			}
		}
	}
	return out
}

// Split pieces hold at most the limit, every span once, in order, each
// under its own resource and scope.
func TestSplitTraces(t *testing.T) {
	td := mixedTraces()
	want := flatSpans(td)
	for _, limit := range []int{1, 2, 3, 5, 8, 23, 24, 100} {
		pieces := splitTraces(td, limit)
		var got []string
		for i, p := range pieces {
			assert.LessOrEqual(t, p.SpanCount(), limit, "limit %d piece %d", limit, i)
			assert.Positive(t, p.SpanCount())
			if i < len(pieces)-1 {
				assert.Equal(t, limit, p.SpanCount(), "only the last piece is short")
			}
			got = append(got, flatSpans(p)...)
		}
		assert.Equal(t, want, got, "limit %d", limit)
		assert.Len(t, pieces, (len(want)+limit-1)/limit)
	}
	assert.Equal(t, []ptrace.Traces{td}, splitTraces(td, 0), "0: no limit")
}

func TestSplitLogs(t *testing.T) {
	ld := plog.NewLogs()
	for r := range 2 {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutInt("r", int64(r))
		for sc := range 3 {
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(fmt.Sprint("scope", sc))
			for i := range sc + 2 {
				sl.LogRecords().AppendEmpty().Body().SetStr(fmt.Sprintf("r%ds%d-%d", r, sc, i))
			}
		}
	}
	flat := func(ld plog.Logs) []string {
		var out []string
		for _, rl := range ld.ResourceLogs().All() {
			r, _ := rl.Resource().Attributes().Get("r")
			for _, sl := range rl.ScopeLogs().All() {
				for _, l := range sl.LogRecords().All() {
					out = append(out, fmt.Sprint(r.Int(), sl.Scope().Name(), l.Body().Str()))
				}
			}
		}
		return out
	}
	want := flat(ld)
	for _, limit := range []int{1, 4, 7, 18, 50} {
		var got []string
		for _, p := range splitLogs(ld, limit) {
			assert.LessOrEqual(t, p.LogRecordCount(), limit)
			got = append(got, flat(p)...)
		}
		assert.Equal(t, want, got, "limit %d", limit)
	}
}

// Every metric type is split by data points; a metric continued in the
// next piece keeps its name, unit, description, metadata, type,
// temporality and monotonicity.
func TestSplitMetrics(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("host", "h")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("scope")
	add := func(name string) pmetric.Metric {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetUnit("1")
		m.SetDescription("d-" + name)
		m.Metadata().PutStr("k", name)
		return m
	}
	g := add("gauge").SetEmptyGauge()
	for i := range 5 {
		g.DataPoints().AppendEmpty().SetIntValue(int64(i))
	}
	s := add("sum").SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range 4 {
		s.DataPoints().AppendEmpty().SetDoubleValue(float64(i))
	}
	h := add("histogram").SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	for i := range 3 {
		h.DataPoints().AppendEmpty().SetCount(uint64(i))
	}
	eh := add("exphistogram").SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	for i := range 3 {
		eh.DataPoints().AppendEmpty().SetScale(int32(i))
	}
	su := add("summary").SetEmptySummary()
	for i := range 2 {
		su.DataPoints().AppendEmpty().SetSum(float64(i))
	}
	add("empty").SetEmptyGauge() // no points: carries nothing

	total := md.DataPointCount()
	require.Equal(t, 17, total)
	want := pointsOf(md)
	for _, limit := range []int{1, 2, 3, 4, 6, 16, 17} {
		pieces := splitMetrics(md, limit)
		merged := pmetric.NewMetrics()
		for _, p := range pieces {
			assert.LessOrEqual(t, p.DataPointCount(), limit)
			for _, prm := range p.ResourceMetrics().All() {
				for _, psm := range prm.ScopeMetrics().All() {
					assert.Equal(t, "scope", psm.Scope().Name())
					for _, m := range psm.Metrics().All() {
						assert.Equal(t, "d-"+m.Name(), m.Description())
						v, _ := m.Metadata().Get("k")
						assert.Equal(t, m.Name(), v.Str())
						switch m.Name() {
						case "sum":
							assert.True(t, m.Sum().IsMonotonic())
							assert.Equal(t, pmetric.AggregationTemporalityCumulative, m.Sum().AggregationTemporality())
						case "histogram":
							assert.Equal(t, pmetric.AggregationTemporalityDelta, m.Histogram().AggregationTemporality())
						case "exphistogram":
							assert.Equal(t, pmetric.AggregationTemporalityDelta, m.ExponentialHistogram().AggregationTemporality())
						}
					}
				}
			}
			merged = appendMetrics(merged, p)
		}
		assert.Equal(t, total, merged.DataPointCount(), "limit %d", limit)
		assert.Equal(t, want, pointsOf(merged), "limit %d: every point once, in order", limit)
	}
}

// appendMetrics appends a copy of p's resources to merged.
func appendMetrics(merged, p pmetric.Metrics) pmetric.Metrics {
	for _, rm := range p.ResourceMetrics().All() {
		rm.CopyTo(merged.ResourceMetrics().AppendEmpty())
	}
	return merged
}

// pointsOf lists every data point as metric name and value, in order.
func pointsOf(md pmetric.Metrics) []string {
	var out []string
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					for _, p := range m.Gauge().DataPoints().All() {
						out = append(out, fmt.Sprint(m.Name(), p.IntValue()))
					}
				case pmetric.MetricTypeSum:
					for _, p := range m.Sum().DataPoints().All() {
						out = append(out, fmt.Sprint(m.Name(), p.DoubleValue()))
					}
				case pmetric.MetricTypeHistogram:
					for _, p := range m.Histogram().DataPoints().All() {
						out = append(out, fmt.Sprint(m.Name(), p.Count()))
					}
				case pmetric.MetricTypeExponentialHistogram:
					for _, p := range m.ExponentialHistogram().DataPoints().All() {
						out = append(out, fmt.Sprint(m.Name(), p.Scale()))
					}
				case pmetric.MetricTypeSummary:
					for _, p := range m.Summary().DataPoints().All() {
						out = append(out, fmt.Sprint(m.Name(), p.Sum()))
					}
				}
			}
		}
	}
	return out
}

// halve splits a part in two by items, for every signal, and refuses to
// split one item.
func TestCodecHalve(t *testing.T) {
	raw, err := tracesMarshaler.MarshalTraces(named("h", 5))
	require.NoError(t, err)
	halves, err := tracesCodec.halve(raw)
	require.NoError(t, err)
	require.Len(t, halves, 2)
	assert.Equal(t, 3, halves[0].items)
	assert.Equal(t, 2, halves[1].items)
	one, err := tracesMarshaler.MarshalTraces(named("h", 1))
	require.NoError(t, err)
	_, err = tracesCodec.halve(one)
	require.ErrorIs(t, err, errSingleItem)

	md := pmetric.NewMetrics()
	dps := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints()
	for range 4 {
		dps.AppendEmpty()
	}
	mraw, err := metricsMarshaler.MarshalMetrics(md)
	require.NoError(t, err)
	mh, err := metricsCodec.halve(mraw)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, []int{mh[0].items, mh[1].items})

	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for range 3 {
		lrs.AppendEmpty()
	}
	lraw, err := logsMarshaler.MarshalLogs(ld)
	require.NoError(t, err)
	lh, err := logsCodec.halve(lraw)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1}, []int{lh[0].items, lh[1].items})
}

// Concatenated protobuf requests are one request holding both, and the
// JSON re-encoding of a batch holds every item: what form relies on.
func TestConcatenatedRequestsAreOneRequest(t *testing.T) {
	a, err := tracesMarshaler.MarshalTraces(named("a", 2))
	require.NoError(t, err)
	b, err := tracesMarshaler.MarshalTraces(named("b", 3))
	require.NoError(t, err)
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(append(append([]byte(nil), a...), b...))
	require.NoError(t, err)
	assert.Equal(t, 5, td.SpanCount())
	js, err := tracesCodec.toJSON(append(append([]byte(nil), a...), b...))
	require.NoError(t, err)
	back, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(js)
	require.NoError(t, err)
	assert.Equal(t, flatSpans(td), flatSpans(back))
}
