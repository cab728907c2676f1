// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// What exporterhelper v0.165.0 logs about a failed push, through the
// logger of the exporter.Settings given to xexporterhelper.New*Request.
const (
	// exporterhelper/internal/retry_sender.go, at info, with "error" and
	// "interval", before it waits out the interval (1h for shutdownRetry).
	helperRetryMsg = "Exporting failed. Will retry the request after interval."
	// exporterhelper/internal/queue_sender.go, at error with a stack trace,
	// with "error" and "dropped_items", for every error a queue consumer
	// gets back. A suffix may follow ("Try enabling …").
	helperDropMsg = "Exporting failed. Dropping data."
	// The text of exporterhelper's internal shutdown error (experr), which
	// only its retry sender produces when Shutdown ends its wait. A
	// persistent queue keeps an item that fails with exactly that error.
	helperShutdownPrefix = "interrupted due to shutdown: "
)

// keptMsg replaces helperDropMsg for a payload the persistent queue keeps.
const keptMsg = "Export interrupted by shutdown: the payload is kept in the persistent queue and sent again at the next start"

// interruptedError is what push returns when the loop did not finish a
// payload (shutdown, or the caller's context ended): neither delivered nor
// dropped.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string { return e.err.Error() }
func (e *interruptedError) Unwrap() error { return e.err }

func isInterrupted(err error) bool {
	var ie *interruptedError
	return errors.As(err, &ie)
}

// markInterrupted marks push's third kind of outcome. push returns nil
// (delivered), a permanent error (dropped) or a plain error (interrupted);
// the plain error is what exporterhelper's retry sender turns into its
// shutdown error, and what the logger of helperSettings recognises.
func markInterrupted(push func(context.Context, xexporterhelper.Request) error) func(context.Context, xexporterhelper.Request) error {
	return func(ctx context.Context, r xexporterhelper.Request) error {
		err := push(ctx, r)
		if err == nil || consumererror.IsPermanent(err) || isInterrupted(err) {
			return err
		}
		return &interruptedError{err: err}
	}
}

// helperSettings is set for exporterhelper: its logger rewrites what
// exporterhelper would log falsely about an interrupted payload. Every
// other entry, and everything the exporter logs itself, is untouched.
func helperSettings(set exporter.Settings, cfg *Config) exporter.Settings {
	persistent := cfg.QueueConfig.HasValue() && cfg.QueueConfig.Get().StorageID != nil
	set.Logger = set.Logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return &helperLogCore{Core: c, persistent: persistent}
	}))
	return set
}

// helperLogCore is a zap core around exporterhelper's logger.
//
// For a payload interrupted by shutdown, exporterhelper logs "Will retry
// the request after interval" (1h0m0s, which never happens: the wait is
// ended by Shutdown) and then "Exporting failed. Dropping data." at error
// with a stack trace, for every payload. With a persistent queue the
// payload is in fact kept: both lines become one info line saying so. With
// a memory queue it is dropped, and the exporter's own telemetry counts and
// logs that: both lines are left out. Every other entry passes unchanged,
// including a real drop (a permanent error).
type helperLogCore struct {
	zapcore.Core
	persistent bool
}

func (c *helperLogCore) With(fields []zapcore.Field) zapcore.Core {
	return &helperLogCore{Core: c.Core.With(fields), persistent: c.persistent}
}

// Check hands entries that cannot be rewritten straight to the wrapped
// core (its own Check, sampling included, applies); only the two messages
// above come to Write.
func (c *helperLogCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if ent.Message != helperRetryMsg && !strings.HasPrefix(ent.Message, helperDropMsg) {
		return c.Core.Check(ent, ce)
	}
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c *helperLogCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	err := errorField(fields)
	interrupted := err != nil && isInterrupted(err)
	switch {
	case !interrupted:
		// A real failure: exporterhelper's line is true.
	case ent.Message == helperRetryMsg:
		return nil
	case !strings.HasPrefix(err.Error(), helperShutdownPrefix):
		// Ended otherwise than by shutdown: the queue does not keep it.
	case !c.persistent:
		return nil
	default:
		ent.Level, ent.Message, ent.Stack = zapcore.InfoLevel, keptMsg, ""
		fields = keptFields(fields)
	}
	// Through the wrapped core's Check, so that its level and sampling
	// decide, as for any entry.
	c.Core.Check(ent, nil).Write(fields...)
	return nil
}

// errorField returns the error of zap.Error(err) among fields.
func errorField(fields []zapcore.Field) error {
	for _, f := range fields {
		if f.Key == "error" && f.Type == zapcore.ErrorType {
			if err, ok := f.Interface.(error); ok {
				return err
			}
		}
	}
	return nil
}

// keptFields renames exporterhelper's dropped_items to items: nothing was dropped.
func keptFields(fields []zapcore.Field) []zapcore.Field {
	out := make([]zapcore.Field, len(fields))
	copy(out, fields)
	for i := range out {
		if out[i].Key == "dropped_items" {
			out[i].Key = "items"
		}
	}
	return out
}
