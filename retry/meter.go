// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import "time"

// How far back the meter remembers, in slices of meterSlice.
const (
	meterSlice  = 100 * time.Millisecond
	meterSlices = int64(acceptWindow / meterSlice)
)

// meter counts the answers of the last acceptWindow in slices of meterSlice:
// a fixed amount of memory whatever the rate, and a constant cost per
// answer.
type meter struct {
	slices [meterSlices]meterCounts
	last   int64 // index (time / meterSlice) of the newest slice written
}

type meterCounts struct {
	accepted, sent      int // items
	refused             int // bare refusals
	maxAcceptedInFlight int
}

// add counts an answer at at: accepted items (0 for a refusal), sent items,
// whether it was a bare refusal, and the requests in flight when it left.
func (m *meter) add(at time.Time, accepted, sent int, refused bool, inFlight int) {
	idx := at.UnixNano() / int64(meterSlice)
	if idx > m.last {
		// Clear the slices between the newest written and this one.
		for i := m.last + 1; i <= idx && i <= m.last+meterSlices; i++ {
			m.slices[i%meterSlices] = meterCounts{}
		}
		m.last = idx
	} else if m.last-idx >= meterSlices {
		return // older than the meter remembers
	}
	c := &m.slices[idx%meterSlices]
	c.accepted += accepted
	c.sent += sent
	if refused {
		c.refused++
	}
	if accepted > 0 {
		c.maxAcceptedInFlight = max(c.maxAcceptedInFlight, inFlight)
	}
}

// sum adds up the slices within acceptWindow before now.
func (m *meter) sum(now time.Time) meterCounts {
	idx := now.UnixNano() / int64(meterSlice)
	var s meterCounts
	for i := max(idx-meterSlices+1, m.last-meterSlices+1); i <= min(idx, m.last); i++ {
		c := m.slices[i%meterSlices]
		s.accepted += c.accepted
		s.sent += c.sent
		s.refused += c.refused
		s.maxAcceptedInFlight = max(s.maxAcceptedInFlight, c.maxAcceptedInFlight)
	}
	return s
}
