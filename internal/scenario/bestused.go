// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"slices"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// BestUsed is the most of a fixed window's limit any exporter can use in
// cell c, from the first request to the last delivery (limiter.Spec.Used),
// when the load's first batch reaches the backend at start: an exporter
// that knows the window sends each batch as soon as it is offered and the
// window has room, and so delivers the load as early as it can be
// delivered, which is what maximises the share used (the accepted requests
// are the load's, and Allowed only grows with the time they take). It
// depends on where in a window the load starts: Allowed counts a whole
// window at its start, and the last window's share is less than a
// window's limit. ok is false for the other kinds of limiter, whose share
// used does not hang on the clock's phase.
func (c Cell) BestUsed(start time.Time) (used float64, ok bool) {
	if c.Limiter.Kind != limiter.FixedWindow || c.Limiter.Window <= 0 {
		return 0, false
	}
	lim, err := limiter.New(c.Limiter)
	if err != nil {
		return 0, false
	}
	w := c.Limiter.Window
	l := c.Load()
	var offers []time.Time
	for s := range l.Senders {
		for k := range l.Batches {
			sec := float64(s)/float64(l.Senders)/l.Rate + float64(k)/l.Rate
			offers = append(offers, start.Add(time.Duration(sec*float64(time.Second))))
		}
	}
	slices.SortFunc(offers, func(a, b time.Time) int { return a.Compare(b) })
	served := make([]limiter.Served, 0, len(offers))
	now := start
	for _, at := range offers {
		now = maxTime(now, at)
		for !lim.Admit(now, limiter.Request{Items: c.Batch}).Accepted() {
			now = c.Limiter.WindowStart(now).Add(w)
		}
		served = append(served, limiter.Served{Arrival: now, Done: now, Accepted: true})
	}
	return c.Limiter.Used(served, served[0].Arrival, served[len(served)-1].Arrival)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
