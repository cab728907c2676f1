// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// gates is shared by every exporter in the process: one gate per
// destination URL, so that all senders to a throttling URL wait together.
var gates retry.Gates

// baseExporter is one exporter instance (one signal of one component ID).
type baseExporter struct {
	cfg    *Config
	set    exporter.Settings
	signal signal
	clock  retry.Clock

	url             string
	redactedURL     string
	contentType     string
	contentEncoding string
	userAgent       string

	client     *http.Client
	idleCloser *idleCloser
	scrub      *scrubber   // credentials out of every text from a response or transport error
	loop       *retry.Loop // the loop of the "" partition: the only one without partitions
	loops      *loops
	gateBase   string     // the destination's gate key; partitions' keys derive from it
	holds      *holdStore // the gates' holds across restarts (persistent queue); nil without
	lines      *lines     // held partitions' batches off the consumers (partitions); nil without
	tel        *telemetry
	lazy       bool // the consumer may encode a batch (Config.lazyEncoding)
}

func newExporter(cfg *Config, set exporter.Settings, sig signal, clock retry.Clock) (*baseExporter, error) {
	e := &baseExporter{
		cfg:         cfg,
		set:         set,
		signal:      sig,
		clock:       clock,
		contentType: protobufContentType,
		lazy:        cfg.lazyEncoding(),
		userAgent:   fmt.Sprintf("%s/%s (%s/%s)", set.BuildInfo.Description, set.BuildInfo.Version, runtime.GOOS, runtime.GOARCH),
	}
	e.url = sig.url(cfg)
	u, err := parseEndpoint(e.url)
	if err != nil {
		return nil, fmt.Errorf("no usable URL for %s: set endpoint or %s_endpoint (%w)", sig.name, sig.name, err)
	}
	e.redactedURL = redact(u)
	e.scrub = newScrubber(&cfg.ClientConfig, e.url)
	if cfg.Encoding == EncodingJSON {
		e.contentType = jsonContentType
	}
	if cfg.ClientConfig.Compression != "" && cfg.ClientConfig.Compression != "none" {
		e.contentEncoding = string(cfg.ClientConfig.Compression)
	}
	overrides, err := cfg.overrides()
	if err != nil {
		return nil, err
	}
	persistent := cfg.QueueConfig.HasValue() && cfg.QueueConfig.Get().StorageID != nil
	if e.tel, err = newTelemetry(set, sig.name, e.redactedURL, persistent, cfg.Telemetry.Detailed, clock); err != nil {
		return nil, err
	}
	policy := retry.Policy{
		Backoff:            cfg.Backoff,
		RetryAfter:         cfg.RetryAfter,
		Unauthorized:       cfg.Unauthorized,
		Outage:             cfg.Outage,
		Pacing:             cfg.Pacing,
		Overrides:          overrides,
		HoldOnUnauthorized: cfg.OnUnauthorized != UnauthorizedDrop,
	}
	base := gateKey(cfg, e.url)
	e.gateBase = base
	limit := 0
	if cfg.batching() {
		limit = cfg.QueueConfig.Get().Batch.Get().Partition.CacheSize
	}
	e.loops = newLoops(func(partition string) (*retry.Loop, func()) {
		// With a persistent queue, the gate goes on holding as the last
		// process's did (holds.go, in start).
		gate, release := gates.Get(partitionGateKey(base, partition), clock)
		loop := retry.NewLoop(policy, clock, gate, e.tel.observe)
		if persistent {
			loop.KeepInterrupted()
		}
		return loop, release
	}, limit)
	e.loop = e.loops.get("")
	return e, nil
}

// start builds the HTTP client. It runs before the queue starts its
// consumers, so the client exists before a persistent queue redelivers.
func (e *baseExporter) start(ctx context.Context, host component.Host) error {
	client, closer, err := newClient(ctx, e.cfg.ClientConfig, host, e.set.TelemetrySettings, e.scrub, e.consumers())
	if err != nil {
		return err
	}
	e.client, e.idleCloser = client, closer
	e.tel.host = host
	if e.holds, err = openHoldStore(ctx, host, e.cfg, e.set.ID, e.signal.name, e.set.Logger, e.clock); err != nil {
		return err
	}
	if e.lines != nil {
		e.lines.store = e.holds
	}
	if e.holds != nil {
		e.loops.setAttach(func(partition string, loop *retry.Loop) func() {
			key := partitionGateKey(e.gateBase, partition)
			gate, pacer := loop.Gate(), loop.Pacer()
			if h, ok := e.holds.restored(key); ok && gate.Restore(h) {
				e.tel.holdRestored(h)
			}
			if k, ok := e.holds.restoredPace(key); ok && pacer.Restore(k) {
				e.tel.paceRestored(pacer)
			}
			stopHold := gate.Watch(func(h retry.Hold) { e.holds.put(key, h) })
			stopPace := pacer.WatchKept(func(k retry.KeptPace) { e.holds.putPace(key, k) })
			return func() {
				stopHold()
				stopPace()
				// What was counted since the last change, kept for the
				// next process (written at the latest at close).
				if pacer != nil {
					e.holds.putPace(key, pacer.Kept())
				}
			}
		})
	}
	return e.tel.registerGauges(e.loops, e.lines.waiting)
}

// stop ends every wait; it runs before exporterhelper's Shutdown, so that
// its retry sender sees an interrupted payload as a shutdown and a
// persistent queue keeps it.
func (e *baseExporter) stop() { e.loops.stop() }

// shutdown runs last, after the queue has finished with every payload.
func (e *baseExporter) shutdown(ctx context.Context) error {
	e.loops.stop()
	e.tel.shutdown()
	e.loops.release()
	err := e.holds.close(ctx)
	if e.idleCloser != nil {
		e.idleCloser.closeIdle()
	}
	return err
}

// otlpRequest is an OTLP export request of any signal.
type otlpRequest interface {
	MarshalProto() ([]byte, error)
	MarshalJSON() ([]byte, error)
}

// newPayload keys a batch as it enters the exporter, and encodes and
// compresses it now or leaves that to its consumer (encodeAtEntry).
func (e *baseExporter) newPayload(ctx context.Context, items int, req otlpRequest) (xexporterhelper.Request, error) {
	key, err := uuid.NewV7()
	if err != nil {
		return nil, e.encodeFailed(ctx, items, err)
	}
	p := &payload{key: key, items: items, received: e.clock.Now()}
	if e.encodeAtEntry() {
		if p.body, err = e.encode(req); err != nil {
			return nil, e.encodeFailed(ctx, items, err)
		}
		return p, nil
	}
	p.pending = req
	return p, nil
}

// encode marshals req in the configured encoding and compresses it.
func (e *baseExporter) encode(req otlpRequest) ([]byte, error) {
	var raw []byte
	var err error
	if e.cfg.Encoding == EncodingJSON {
		raw, err = req.MarshalJSON()
	} else {
		raw, err = req.MarshalProto()
	}
	if err != nil {
		return nil, err
	}
	return compress(e.cfg.ClientConfig.Compression, e.cfg.ClientConfig.CompressionParams.Level, raw)
}

// encodeFailed counts and logs a batch that cannot be encoded, and returns
// the error for whoever handed it over.
func (e *baseExporter) encodeFailed(ctx context.Context, items int, err error) error {
	e.tel.dropped(ctx, items, dropEncodeFailure)
	e.tel.warnDrop(dropEncodeFailure, items, "", err)
	return fmt.Errorf("encoding %d %s items: %w", items, e.signal.name, err)
}

// push runs the retry loop for one payload and tells exporterhelper the
// outcome: nil when delivered, a permanent error when dropped, a plain
// error when interrupted (so a persistent queue keeps the payload).
func (e *baseExporter) push(ctx context.Context, r xexporterhelper.Request) error {
	p, ok := r.(*payload)
	if !ok {
		return consumererror.NewPermanent(fmt.Errorf("unexpected request type %T", r))
	}
	if p.pending != nil {
		// Left to the consumer: encoded once, before the first attempt,
		// and the pdata let go.
		body, err := e.encode(p.pending)
		if err != nil {
			return consumererror.NewPermanent(e.encodeFailed(ctx, p.items, err))
		}
		p.body, p.pending = body, nil
	}
	loop, done := e.loops.acquire(p.partition.key)
	defer done()
	if e.lines == nil {
		_, err := e.run(ctx, loop, p)
		p.finish(err)
		return err
	}
	// A batch of a held partition waits in its partition's line, off the
	// consumer (lines.go).
	yielded, err := e.run(retry.WithYield(ctx, e.lines.yield(p)), loop, p)
	if yielded {
		if e.lines.park(p) {
			return nil
		}
		_, err = e.run(ctx, loop, p)
	}
	p.finish(err)
	return err
}

// runParked sends a payload of a line (lines.go) from the line's goroutine,
// and finishes it; false when the shutdown interrupted it.
func (e *baseExporter) runParked(p *payload) bool {
	loop, done := e.loops.acquire(p.partition.key)
	defer done()
	_, err := e.run(p.partition.context(), loop, p)
	p.finish(err)
	return err == nil || consumererror.IsPermanent(err)
}

// run sends p through loop until it is delivered, dropped or interrupted,
// and says which as push does; yielded when it left the loop for its
// partition's line (retry.ErrYielded), having done nothing.
func (e *baseExporter) run(ctx context.Context, loop *retry.Loop, p *payload) (yielded bool, err error) {
	ctx, end := e.tel.startExport(ctx, p)
	var firstAttempt time.Time
	run := func() retry.Outcome {
		return loop.RunItems(ctx, p.items, func(ctx context.Context, attempt int) retry.Response {
			if attempt == 1 && firstAttempt.IsZero() {
				firstAttempt = e.clock.Now()
			}
			return e.send(ctx, p, attempt)
		})
	}
	out := run()
	if out.Kind == retry.Interrupted && errors.Is(out.Err, retry.ErrYielded) {
		end(out, firstAttempt)
		return true, nil
	}
	if out.Kind == retry.Interrupted && out.Shutdown && !e.tel.persistent {
		// A memory queue keeps nothing: a payload the shutdown found
		// waiting (for its paced slot, a backoff) gets the one attempt a
		// queued one gets, unless the destination is held or failing.
		before := out.Attempts
		out = run()
		out.Attempts += before
	}
	end(out, firstAttempt)

	switch out.Kind {
	case retry.Delivered:
		return false, nil
	case retry.Dropped:
		return false, consumererror.NewPermanent(fmt.Errorf("dropped %d %s items after %d attempts (%v): %w",
			p.items, e.signal.name, out.Attempts, out.Reason, errOrUnknown(out.Err)))
	}
	return false, fmt.Errorf("export of %d %s items interrupted after %d attempts: %w", p.items, e.signal.name, out.Attempts, errOrUnknown(out.Err))
}

func errOrUnknown(err error) error {
	if err == nil {
		return errors.New("no further detail")
	}
	return err
}

// newLines returns the lines of held partitions (lines.go), nil without
// partitions. offer puts a payload back into exporterhelper's queue.
func (e *baseExporter) newLines(offer func(context.Context, *payload) error) *lines {
	if !e.cfg.batching() || len(e.cfg.QueueConfig.Get().Batch.Get().Partition.MetadataKeys) == 0 {
		return nil
	}
	q := e.cfg.QueueConfig.Get()
	l := &lines{offer: offer, run: e.runParked, sizer: q.Sizer, m: map[string]*line{},
		gate: func(partition string) *retry.Gate { return e.loops.get(partition).Gate() }}
	if q.StorageID != nil {
		l.limit = q.QueueSize
	}
	l.lost = func(p *payload) {
		e.tel.lostAtShutdown(p.items)
		p.finish(errLostAtShutdown)
	}
	e.lines = l
	return l
}

// consumers is how many payloads can be in flight at once: the queue's
// consumers, or 1 without a queue.
func (e *baseExporter) consumers() int {
	if e.cfg.QueueConfig.HasValue() {
		return max(e.cfg.QueueConfig.Get().NumConsumers, 1)
	}
	return 1
}
