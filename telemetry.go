// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
	"github.com/otlphttpretry/otlphttpretry/retry"
)

// Drop reasons the exporter adds to the loop's.
const (
	dropPartialSuccess = "partial_success"
	dropEncodeFailure  = "encode_failure"
	dropShutdown       = "shutdown"
)

// dropWarnInterval is the least time between two drop warnings of one
// exporter; drops in between are counted and reported with the next one.
const dropWarnInterval = 10 * time.Second

// telemetry turns the loop's events into metrics, logs, span events and
// component status. It never logs header values, credentials, payload
// bytes or a whole idempotency key.
type telemetry struct {
	set        exporter.Settings
	endpoint   string // redacted
	dataType   string
	detailed   bool
	clock      retry.Clock
	tb         *metadata.TelemetryBuilder
	tracer     trace.Tracer
	attrs      attribute.Set // exporter, data_type
	sets       sync.Map      // attrKey -> metric.MeasurementOption
	persistent bool          // the queue keeps interrupted payloads
	host       component.Host

	// Payloads and items the memory queue lost at shutdown, logged once.
	lostPayloads, lostItems atomic.Int64

	healthy atomic.Bool // last status reported was OK (or nothing yet)

	warnMu         sync.Mutex
	lastWarn       time.Time
	suppressedWarn int
}

func newTelemetry(set exporter.Settings, dataType, endpoint string, persistent, detailed bool, clock retry.Clock) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	t := &telemetry{
		set: set, endpoint: endpoint, dataType: dataType, persistent: persistent, detailed: detailed, clock: clock, tb: tb,
		tracer: metadata.Tracer(set.TelemetrySettings),
		attrs:  attribute.NewSet(attribute.String("exporter", set.ID.String()), attribute.String("data_type", dataType)),
	}
	t.healthy.Store(true)
	return t, nil
}

// registerGauges wires the destination's gates (one per partition of
// sending_queue::batch) and the payloads waiting into the async gauges.
// Without partitions there is one gate and each gauge reads it alone; with
// them, rates add up, held and throttled count the partitions holding, the
// remaining hold is the longest and the remaining quota the smallest.
func (t *telemetry) registerGauges(l *loops, parked func() int64) error {
	opt := metric.WithAttributeSet(t.attrs)
	if err := t.tb.RegisterOtlpHTTPRetryPacingRateCallback(func(_ context.Context, o metric.Float64Observer) error {
		var rate float64
		for _, loop := range l.all() {
			rate += loop.Pacer().Rate()
		}
		o.Observe(rate, opt)
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterOtlpHTTPRetryPacingCeilingCallback(func(_ context.Context, o metric.Float64Observer) error {
		var ceiling float64
		for _, loop := range l.all() {
			ceiling += loop.Pacer().Ceiling()
		}
		o.Observe(ceiling, opt)
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterOtlpHTTPRetryRatelimitRemainingCallback(func(_ context.Context, o metric.Int64Observer) error {
		found, least := false, int64(0)
		for _, loop := range l.all() {
			if pol, ok := loop.Pacer().Quota().Binding(nil); ok && pol.HasRemaining && (!found || pol.Remaining < least) {
				found, least = true, pol.Remaining
			}
		}
		if found {
			o.Observe(least, opt)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterOtlpHTTPRetryThrottledCallback(func(_ context.Context, o metric.Int64Observer) error {
		var throttled int64
		for _, loop := range l.all() {
			if reason, _ := loop.Gate().State(); reason == retry.HoldThrottle {
				throttled++
			}
		}
		o.Observe(throttled, opt)
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterOtlpHTTPRetryHeldCallback(func(_ context.Context, o metric.Int64Observer) error {
		held := map[retry.HoldReason]int64{}
		for _, loop := range l.all() {
			reason, _ := loop.Gate().State()
			held[reason]++
		}
		for _, reason := range []retry.HoldReason{retry.HoldThrottle, retry.HoldOutage, retry.HoldUnauthorized} {
			o.Observe(held[reason], t.with(attribute.String("reason", reason.String())))
		}
		return nil
	}); err != nil {
		return err
	}
	if err := t.tb.RegisterOtlpHTTPRetryThrottleRemainingSecondsCallback(func(_ context.Context, o metric.Float64Observer) error {
		var longest time.Duration
		for _, loop := range l.all() {
			_, remaining := loop.Gate().State()
			longest = max(longest, remaining)
		}
		o.Observe(longest.Seconds(), opt)
		return nil
	}); err != nil {
		return err
	}
	return t.tb.RegisterOtlpHTTPRetryWaitingPayloadsCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(l.waiting()+parked(), opt)
		return nil
	})
}

// shutdown logs, once, what the memory queue lost, and stops the metrics.
func (t *telemetry) shutdown() {
	if n := t.lostPayloads.Load(); n > 0 {
		t.set.Logger.Warn("Payloads still queued or waiting at shutdown were lost with the memory queue; configure sending_queue::storage (file_storage) to keep them across restarts",
			zap.String("endpoint", t.endpoint), zap.Int64("payloads", n), zap.Int64("items", t.lostItems.Load()))
	}
	t.tb.Shutdown()
}

// since is the time from t to now on the exporter's clock, in seconds.
func since(clock retry.Clock, t time.Time) float64 { return clock.Now().Sub(t).Seconds() }

// with returns the measurement option for the exporter's identity plus
// kv. The sets are built once per distinct kv and kept: the values come
// from small closed lists (outcomes, status codes, reasons).
func (t *telemetry) with(kv ...attribute.KeyValue) metric.MeasurementOption {
	var key attrKey
	for i := 0; i < len(kv) && i < len(key); i++ {
		key[i] = [2]string{string(kv[i].Key), kv[i].Value.String()}
	}
	if len(kv) <= len(key) {
		if opt, ok := t.sets.Load(key); ok {
			return opt.(metric.MeasurementOption)
		}
	}
	opt := metric.WithAttributeSet(attribute.NewSet(append(t.attrs.ToSlice(), kv...)...))
	if len(kv) <= len(key) {
		t.sets.Store(key, opt)
	}
	return opt
}

// attrKey identifies the extra attributes of a measurement.
type attrKey [2][2]string

// startExport opens the payload's span; the returned func closes it and
// records the latency and, for a payload that was sent at least once, the
// export duration from its first attempt.
func (t *telemetry) startExport(ctx context.Context, p *payload) (context.Context, func(retry.Outcome, time.Time)) {
	masked := maskKey(p.key)
	ctx = context.WithValue(ctx, keyCtx{}, masked)
	ctx, span := t.tracer.Start(ctx, "otlp_http_retry/export", trace.WithAttributes(
		attribute.String("exporter", t.set.ID.String()),
		attribute.String("data_type", t.dataType),
		attribute.Int("items", p.items),
		attribute.Int("bytes", len(p.body)),
		attribute.String("idempotency_key.masked", masked),
	))
	return ctx, func(out retry.Outcome, firstAttempt time.Time) {
		if out.Kind == retry.Interrupted && errors.Is(out.Err, retry.ErrYielded) {
			// Not an outcome: the payload waits in its partition's line.
			span.AddEvent("waits off its consumer while its partition is held")
			span.End()
			return
		}
		final := attribute.String("final_outcome", out.Kind.String())
		if !firstAttempt.IsZero() {
			t.tb.OtlpHTTPRetryExportDurationSeconds.Record(ctx, since(t.clock, firstAttempt), t.with(final))
		}
		t.tb.OtlpHTTPRetryExportLatencySeconds.Record(ctx, since(t.clock, p.received), t.with(final))
		span.SetAttributes(attribute.Int("attempts", out.Attempts), final)
		switch out.Kind {
		case retry.Delivered:
			t.reportOK()
		case retry.Dropped:
			span.SetStatus(codes.Error, out.Reason.String())
			t.dropped(ctx, p.items, out.Reason.String())
			t.warnDrop(out.Reason.String(), p.items, masked, out.Err)
			switch out.Reason {
			case retry.DropRetriesExhausted, retry.DropThrottleBudgetExhausted, retry.DropOutageExhausted, retry.DropConfigError:
				t.report(componentstatus.NewRecoverableErrorEvent(errOrUnknown(out.Err)))
			}
		default:
			span.SetStatus(codes.Error, "interrupted")
			// With the persistent queue, the one line about a payload kept
			// at shutdown is written where exporterhelper reports it (see
			// logfilter.go), since only there is it known to be kept.
			switch {
			case !out.Shutdown, t.persistent:
			default:
				t.dropped(ctx, p.items, dropShutdown)
				t.lostPayloads.Add(1)
				t.lostItems.Add(int64(p.items))
			}
		}
		span.End()
	}
}

// observe receives every event of the loop.
func (t *telemetry) observe(ctx context.Context, e retry.Event) {
	switch e.Kind {
	case retry.EventAttempt:
		t.attempt(ctx, e)
	case retry.EventHoldStart:
		t.holdStarted(e)
	case retry.EventHoldEnd:
		t.holdEnded(e)
	case retry.EventPaced:
		t.tb.OtlpHTTPRetryPacingWaitSeconds.Record(ctx, e.Delay.Seconds(), t.with(attribute.String("pacer", e.Paced.String())))
	}
}

// holdStarted logs the start of a hold once per hold, at a level that says
// whether the operator has something to do, and reports the status.
func (t *telemetry) holdStarted(e retry.Event) {
	switch e.Held {
	case retry.HoldThrottle:
		t.set.Logger.Info("Holding: the backend asked to wait; no request goes to this destination until the wait ends",
			zap.String("endpoint", t.endpoint), zap.Int("status", e.Response.Status),
			zap.Duration("wait", e.Delay), zap.Time("until", e.Until))
	case retry.HoldOutage:
		err := errOrUnknown(e.Response.Err)
		t.set.Logger.Warn("Holding: the destination is failing and nothing it was sent succeeds; "+
			"every payload waits, one probe request goes out per backoff interval (at most retry_after::default while it answers 502, 503 or 504), and nothing is dropped for it",
			zap.String("endpoint", t.endpoint), zap.String("reason", e.Reason), zap.Duration("next_probe_in", e.Delay),
			zap.String("error", err.Error()))
		t.report(componentstatus.NewRecoverableErrorEvent(fmt.Errorf("destination %s is failing; holding all payloads and probing: %w", t.endpoint, err)))
	case retry.HoldUnauthorized:
		t.set.Logger.Error("Holding: the backend answered 401 Unauthorized, so the exporter's credentials are not accepted. "+
			"Nothing is dropped and nothing is sent to this destination but one probe request per unauthorized::probe_interval; "+
			"the first probe that succeeds resumes sending. Fix the headers or auth settings of this exporter "+
			"(or set on_unauthorized: drop to drop only the batches that get a 401).",
			zap.String("endpoint", t.endpoint), zap.Duration("probe_interval", e.Delay))
		t.report(componentstatus.NewRecoverableErrorEvent(fmt.Errorf(
			"the backend at %s answered 401 Unauthorized: fix the credentials (headers or auth) of this exporter; holding all payloads and probing every %s",
			t.endpoint, e.Delay)))
	}
}

// lostAtShutdown counts a payload a memory queue loses at shutdown.
func (t *telemetry) lostAtShutdown(items int) {
	t.dropped(context.Background(), items, dropShutdown)
	t.lostPayloads.Add(1)
	t.lostItems.Add(int64(items))
}

// holdRestored logs a hold kept from before the restart, once, and reports
// the status its start reported.
func (t *telemetry) holdRestored(h retry.Hold) {
	t.set.Logger.Info("Holding, as before the restart: the previous process was in this hold when it stopped; "+
		"no request goes to this destination until it ends, then one probe goes first",
		zap.String("endpoint", t.endpoint), zap.String("reason", h.Reason.String()), zap.Time("until", h.Until))
	switch h.Reason {
	case retry.HoldOutage:
		t.report(componentstatus.NewRecoverableErrorEvent(fmt.Errorf("destination %s was failing when the collector stopped; holding all payloads and probing", t.endpoint)))
	case retry.HoldUnauthorized:
		t.report(componentstatus.NewRecoverableErrorEvent(fmt.Errorf(
			"the backend at %s answered 401 Unauthorized before the restart: fix the credentials (headers or auth) of this exporter; holding all payloads and probing", t.endpoint)))
	}
}

// paceRestored logs a pace kept from before the restart, once per
// partition's pacer that resumed it: the destination (its URL redacted)
// and the pace, no partition's value.
func (t *telemetry) paceRestored(p *retry.Pacer) {
	k := p.Kept()
	fields := []zap.Field{zap.String("endpoint", t.endpoint)}
	if rate := p.Rate(); rate > 0 {
		// (A concurrency limit may be resumed alone: then there is no rate
		// to report.)
		fields = append(fields, zap.String("mode", k.Mode), zap.Float64("items_per_second", rate))
	}
	if k.Concurrency > 0 {
		fields = append(fields, zap.Int("concurrency_limit", k.Concurrency))
	}
	t.set.Logger.Info("Pacing, as before the restart: the previous process had learned this pace from the destination's refusals; "+
		"requests leave at it instead of all at once", fields...)
}

func (t *telemetry) holdEnded(e retry.Event) {
	switch e.Held {
	case retry.HoldThrottle:
		t.set.Logger.Info("Hold ended: the first request after the wait succeeded; sending resumes",
			zap.String("endpoint", t.endpoint))
	case retry.HoldOutage:
		t.set.Logger.Info("Hold ended: the destination answers again; sending resumes",
			zap.String("endpoint", t.endpoint))
	case retry.HoldUnauthorized:
		t.set.Logger.Info("Hold ended: a probe request was accepted, so the credentials work again; sending resumes",
			zap.String("endpoint", t.endpoint))
	}
	t.reportOK()
}

func (t *telemetry) attempt(ctx context.Context, e retry.Event) {
	status := "none"
	if e.Response.Status != 0 {
		status = strconv.Itoa(e.Response.Status)
	}
	outcome := attribute.String("outcome", e.Outcome())
	t.tb.OtlpHTTPRetryAttempts.Add(ctx, 1, t.with(outcome, attribute.String("status_code", status)))
	t.tb.OtlpHTTPRetryAttemptDurationSeconds.Record(ctx, e.Duration.Seconds(), t.with(outcome))

	spanAttrs := []attribute.KeyValue{
		attribute.Int("attempt", e.Attempt), attribute.String("status_code", status), outcome,
	}
	if ra := e.RetryAfter; ra != nil {
		t.tb.OtlpHTTPRetryRetryAfterParsed.Add(ctx, 1, t.with(attribute.String("result", parseResult(*ra))))
		if t.detailed {
			t.tb.OtlpHTTPRetryRetryAfterParseDurationSeconds.Record(ctx, e.ParseDuration.Seconds(), metric.WithAttributeSet(t.attrs))
		}
	}
	if rl := e.RateLimit; rl != nil {
		for _, r := range rl.Rejected {
			t.tb.OtlpHTTPRetryRatelimitRejected.Add(ctx, 1, t.with(attribute.String("reason", string(r.Reason))))
		}
	}
	if e.QuotaDistrusted {
		t.tb.OtlpHTTPRetryRatelimitRejected.Add(ctx, 1, t.with(attribute.String("reason", string(retry.RejectContradicted))))
		t.set.Logger.Warn("The RateLimit headers said the quota was spent, yet the backend accepted a request sent against them: "+
			"ignoring them until the backend refuses a request (429)",
			zap.String("endpoint", t.endpoint), zap.Duration("held_for_at_most", retry.QuotaHoldBound))
	}
	if e.Path != retry.PathNone {
		t.tb.OtlpHTTPRetryRetries.Add(ctx, 1, t.with(attribute.String("path", e.Path.String()), attribute.String("reason", e.Reason)))
		if e.Path == retry.PathRateLimit {
			t.tb.OtlpHTTPRetryRetryAfterWaitSeconds.Record(ctx, e.Delay.Seconds(), t.with(attribute.String("source", e.Source.String())))
		}
		spanAttrs = append(spanAttrs, attribute.String("path", e.Path.String()), attribute.String("delay", e.Delay.String()))
	}
	trace.SpanFromContext(ctx).AddEvent("attempt", trace.WithAttributes(spanAttrs...))

	if e.Action == retry.ActionSuccess || !t.set.Logger.Core().Enabled(zap.DebugLevel) {
		return
	}
	fields := []zap.Field{
		zap.String("endpoint", t.endpoint),
		zap.String("status", status),
		zap.Int("attempt", e.Attempt),
		zap.Int("max_attempts", e.MaxAttempts),
		zap.String("outcome", e.Outcome()),
		zap.String("reason", e.Reason),
		zap.String("key", maskKeyFromContext(ctx)),
	}
	if ra := e.RetryAfter; ra != nil {
		fields = append(fields, zap.String("retry_after", parseResult(*ra)), zap.Duration("retry_after_parsed", ra.Delay),
			zap.Bool("defaulted", defaulted(e.Source)), zap.Bool("capped", ra.Capped))
	}
	if e.Path != retry.PathNone {
		fields = append(fields, zap.String("path", e.Path.String()), zap.Duration("delay", e.Delay))
	}
	if e.Probe {
		fields = append(fields, zap.Bool("probe", true))
	}
	if e.Response.Err != nil {
		fields = append(fields, zap.String("error", e.Response.Err.Error()))
	}
	t.set.Logger.Debug("Retry decision", fields...)
}

// parseResult names the Retry-After parse result as the metric does.
func parseResult(ra retry.RetryAfter) string {
	if ra.Capped {
		return resultCapped
	}
	return string(ra.Result)
}

// dropped counts items that will never be delivered.
func (t *telemetry) dropped(ctx context.Context, items int, reason string) {
	t.tb.OtlpHTTPRetryDroppedItems.Add(ctx, int64(items), t.with(attribute.String("reason", reason)))
}

// partialSuccess logs and counts the items a 2xx response rejected.
func (t *telemetry) partialSuccess(ctx context.Context, p *payload, rejected int64, msg string) {
	if rejected == 0 {
		t.set.Logger.Warn("Partial success with a warning from the backend; nothing was rejected",
			zap.String("endpoint", t.endpoint), zap.String("message", truncate(msg)), zap.String("key", maskKey(p.key)))
		return
	}
	t.dropped(ctx, int(rejected), dropPartialSuccess)
	t.set.Logger.Warn("Partial success: the backend accepted the batch but rejected some items; they are not retried",
		zap.String("endpoint", t.endpoint), zap.Int64("rejected_items", rejected), zap.String("message", truncate(msg)), zap.String("key", maskKey(p.key)))
}

// warnDrop logs a drop at warn, at most once per dropWarnInterval; the
// drops it holds back are counted in the next line.
func (t *telemetry) warnDrop(reason string, items int, key string, err error) {
	t.warnMu.Lock()
	now := t.clock.Now()
	if !t.lastWarn.IsZero() && now.Sub(t.lastWarn) < dropWarnInterval {
		t.suppressedWarn++
		t.warnMu.Unlock()
		return
	}
	suppressed := t.suppressedWarn
	t.lastWarn, t.suppressedWarn = now, 0
	t.warnMu.Unlock()
	t.set.Logger.Warn("Dropped a batch; it will not be retried",
		zap.String("endpoint", t.endpoint), zap.String("reason", reason), zap.Int("items", items),
		zap.String("key", key), zap.String("error", errOrUnknown(err).Error()),
		zap.Int("drops_not_logged_since_last", suppressed))
}

// report sends a status event to the host; the OK after errors is sent once.
func (t *telemetry) report(ev *componentstatus.Event) {
	if t.host == nil {
		return
	}
	t.healthy.Store(false)
	componentstatus.ReportStatus(t.host, ev)
}

func (t *telemetry) reportOK() {
	if t.host == nil || t.healthy.Swap(true) {
		return
	}
	componentstatus.ReportStatus(t.host, componentstatus.NewEvent(componentstatus.StatusOK))
}

type keyCtx struct{}

func maskKeyFromContext(ctx context.Context) string {
	if k, ok := ctx.Value(keyCtx{}).(string); ok {
		return k
	}
	return ""
}

// defaulted says whether a rate-limit wait from source is the exporter's
// own rather than the server's: retry_after::default, the first bare hold,
// and a fixed window's hold until its next window's start.
func defaulted(source retry.DelaySource) bool {
	return source == retry.SourceDefault || source == retry.SourceFirst || source == retry.SourceWindow
}
