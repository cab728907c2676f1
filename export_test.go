// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"go.opentelemetry.io/collector/exporter"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// NewFactoryWithClock is newFactory for the external tests: the
// benchmarks' exporter waits on a clock that skips its waits.
func NewFactoryWithClock(clock retry.Clock) exporter.Factory { return newFactory(clock) }
