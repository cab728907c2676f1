// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestMeterSumsTheLastWindow: answers older than the window drop out,
// slices skipped over are cleared, and an answer older than the meter
// remembers is not counted.
func TestMeterSumsTheLastWindow(t *testing.T) {
	t0 := time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var m meter
	m.add(at(0), 100, 100, false, 1)
	m.add(at(50), 0, 100, true, 3)
	m.add(at(1500), 100, 100, false, 2)
	assert.Equal(t, meterCounts{accepted: 200, sent: 300, refused: 1, maxAcceptedInFlight: 2}, m.sum(at(1900)))
	assert.Equal(t, meterCounts{accepted: 100, sent: 100, maxAcceptedInFlight: 2}, m.sum(at(2050)), "the first two 2 s old")
	m.add(at(5000), 100, 100, false, 1) // clears what it skips over
	assert.Equal(t, meterCounts{accepted: 100, sent: 100, maxAcceptedInFlight: 1}, m.sum(at(5000)))
	m.add(at(2500), 100, 100, false, 1)
	assert.Equal(t, meterCounts{accepted: 100, sent: 100, maxAcceptedInFlight: 1}, m.sum(at(5000)), "too old to count")
	assert.Equal(t, meterCounts{}, m.sum(at(9000)), "nothing within the window")
}
