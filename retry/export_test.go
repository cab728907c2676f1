// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

// Hold makes the gate hold for reason until until, as a report from an
// attempt that passed an open gate would. Only tests use it, to set the scene.
func (g *Gate) Hold(reason HoldReason, until time.Time) Transition {
	g.mu.Lock()
	successes := g.successes
	g.mu.Unlock()
	return g.Report(Pass{Successes: successes}, false, reason, until)
}
