// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
)

func newTestPayload(t *testing.T, body []byte, items int, received time.Time) *payload {
	t.Helper()
	key, err := uuid.NewV7()
	require.NoError(t, err)
	return &payload{key: key, body: body, items: items, received: received}
}

func TestPayloadEncodingRoundTrip(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	tests := []struct {
		name     string
		body     []byte
		items    int
		received time.Time
	}{
		{"typical", []byte("\x1f\x8b\x08\x00compressed bytes\x00\xff"), 3, time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)},
		{"empty body", []byte{}, 0, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"many items (multi-byte uvarint)", bytes.Repeat([]byte{0xAB}, 70_000), 1<<40 + 7, time.Date(2030, 6, 1, 8, 30, 0, 1, tokyo)},
		{"body starting like a header", []byte(payloadMagic + payloadMagic), 128, time.Unix(0, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := newTestPayload(t, tt.body, tt.items, tt.received)
			data, err := payloadEncoding{}.Marshal(context.Background(), in)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(data), payloadMagic))

			ctx, r, err := payloadEncoding{}.Unmarshal(data)
			require.NoError(t, err)
			require.NotNil(t, ctx)
			out, ok := r.(*payload)
			require.True(t, ok, "unmarshalled %T", r)
			assert.Equal(t, in.key, out.key)
			assert.True(t, bytes.Equal(in.body, out.body), "body")
			assert.Equal(t, in.items, out.items)
			assert.True(t, in.received.Equal(out.received), "received %s, got %s", in.received, out.received)
			assert.Equal(t, in.received.UnixNano(), out.received.UnixNano())
			assert.Equal(t, in.ItemsCount(), out.ItemsCount())
			assert.Equal(t, in.BytesSize(), out.BytesSize())

			// The payload does not alias the storage buffer.
			for i := range data {
				data[i] = 0
			}
			assert.True(t, bytes.Equal(in.body, out.body), "unmarshalled body must not alias the stored bytes")
		})
	}
}

func TestPayloadEncodingIsStable(t *testing.T) {
	// The on-disk layout is what a restarted (possibly upgraded) collector
	// reads back: pin it.
	key := uuid.MustParse("01936b3c-1f2e-7a4b-8c5d-6e7f8091a2b3")
	p := &payload{key: key, body: []byte("BODY"), items: 300, received: time.Unix(0, 0x0102030405060708)}
	data, err := payloadEncoding{}.Marshal(context.Background(), p)
	require.NoError(t, err)
	want := append([]byte("OHR1"), key[:]...)
	want = append(want,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // big-endian unix nanos
		0xac, 0x02) // uvarint(300)
	want = append(want, "BODY"...)
	assert.Equal(t, want, data)
}

// otherRequest is a request that is not a payload.
type otherRequest struct{}

func (otherRequest) ItemsCount() int { return 1 }
func (otherRequest) BytesSize() int  { return 1 }
func (otherRequest) MergeSplit(context.Context, int, exporterhelper.RequestSizerType, xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	return nil, nil
}

func TestPayloadEncodingRejectsForeignRequest(t *testing.T) {
	_, err := payloadEncoding{}.Marshal(context.Background(), otherRequest{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "otherRequest")
}

func TestPayloadEncodingRejectsGarbage(t *testing.T) {
	valid, err := payloadEncoding{}.Marshal(context.Background(), newTestPayload(t, []byte("body"), 5, time.Now()))
	require.NoError(t, err)
	head := len(payloadMagic) + 16 + 8

	tests := map[string][]byte{
		"nil":                   nil,
		"empty":                 {},
		"magic only":            []byte(payloadMagic),
		"one byte short":        valid[:head-1],
		"no item count":         valid[:head],
		"wrong magic":           append([]byte("OHR0"), valid[len(payloadMagic):]...),
		"pdata, not a payload":  []byte("\x0a\x02\x0a\x00 some protobuf that is longer than the header"),
		"overlong item count":   append(append([]byte(nil), valid[:head]...), bytes.Repeat([]byte{0xff}, 11)...),
		"truncated item count":  append(append([]byte(nil), valid[:head]...), 0x80),
		"lowercase magic":       append([]byte("ohr1"), valid[len(payloadMagic):]...),
		"text that looks close": []byte("OHR1"),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, r, err := payloadEncoding{}.Unmarshal(data)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.NotNil(t, ctx)
			assert.Contains(t, err.Error(), "persistent queue item")
		})
	}
}

func TestPayloadMergeSplitRefuses(t *testing.T) {
	p := newTestPayload(t, []byte("a"), 1, time.Now())
	other := newTestPayload(t, []byte("b"), 1, time.Now())
	for _, tt := range []struct {
		name    string
		maxSize int
		sizer   exporterhelper.RequestSizerType
		other   xexporterhelper.Request
	}{
		{"merge", 0, exporterhelper.RequestSizerTypeItems, other},
		{"split", 1, exporterhelper.RequestSizerTypeItems, nil},
		{"split by bytes", 10, exporterhelper.RequestSizerTypeBytes, nil},
		{"merge and split", 1, exporterhelper.RequestSizerTypeRequests, other},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := p.MergeSplit(context.Background(), tt.maxSize, tt.sizer, tt.other)
			require.ErrorIs(t, err, errNoBatching)
			assert.Nil(t, out)
			assert.Contains(t, err.Error(), "batch processor")
			assert.Contains(t, err.Error(), "sending_queue::batch")
			// Neither payload changed.
			assert.Equal(t, []byte("a"), p.body)
			assert.Equal(t, []byte("b"), other.body)
		})
	}
}

func TestPayloadSizes(t *testing.T) {
	p := newTestPayload(t, make([]byte, 1234), 56, time.Now())
	assert.Equal(t, 56, p.ItemsCount())
	assert.Equal(t, 1234, p.BytesSize())
}

func TestPayloadMaskKeyShowsOnlyEightCharacters(t *testing.T) {
	for range 20 {
		key, err := uuid.NewV7()
		require.NoError(t, err)
		full := key.String()
		masked := maskKey(key)

		assert.Contains(t, masked, "…", "the mask says it is truncated: %q", masked)
		shown := strings.Trim(masked, "…")
		assert.Equal(t, 8, utf8.RuneCountInString(shown), "exactly 8 characters of the key: %q", masked)
		assert.Contains(t, full, shown, "the 8 characters come from the key")
		assert.NotContains(t, masked, full, "never the whole key")
		assert.Len(t, strings.ReplaceAll(full, shown, ""), len(full)-8, "nothing else of the key is shown")
	}
}

// The mask exists so that one can follow a payload through the logs, so two
// payloads minted together must mask differently.
func TestPayloadMaskKeyTellsKeysMintedTogetherApart(t *testing.T) {
	masks := map[string]bool{}
	const n = 64
	for range n {
		key, err := uuid.NewV7()
		require.NoError(t, err)
		masks[maskKey(key)] = true
	}
	assert.Len(t, masks, n, "keys minted together must have distinct masks (the random tail, not the timestamp head)")
}
