// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An item count a payload cannot have is refused, on the way to disk and
// on the way back, instead of wrapping into a negative (or huge) count
// that would reach the metrics.
func TestPayloadEncodingRefusesItemCountsOutOfRange(t *testing.T) {
	valid, err := payloadEncoding{}.Marshal(context.Background(), newTestPayload(t, []byte("body"), 5, time.Now()))
	require.NoError(t, err)
	head := len(payloadMagic) + 16 + 8

	for _, count := range []uint64{math.MaxInt64 + 1, math.MaxUint64} {
		data := binary.AppendUvarint(append([]byte(nil), valid[:head]...), count)
		data = append(data, "body"...)
		_, r, unmarshalErr := payloadEncoding{}.Unmarshal(data)
		require.Error(t, unmarshalErr, "item count %d", count)
		assert.Nil(t, r)
		assert.Contains(t, unmarshalErr.Error(), "persistent queue item has a corrupt item count")
	}

	p := newTestPayload(t, []byte("body"), 5, time.Now())
	p.items = -1
	_, err = payloadEncoding{}.Marshal(context.Background(), p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-1 items")
}
