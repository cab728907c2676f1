// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
)

// payload is one batch as it goes on the wire: encoded and compressed once,
// with the idempotency key minted when it enters the exporter. The bytes
// are made at entry or, on a memory queue, by the consumer before the
// first attempt (see EncodeAt); either way every attempt, and every attempt
// after a restart, sends exactly these bytes under exactly this key.
type payload struct {
	key      uuid.UUID
	body     []byte
	items    int
	received time.Time // when the batch entered the exporter
	// pending is the batch while it waits for its consumer to encode it
	// (encode_at auto or consumer); nil once body exists.
	pending otlpRequest
}

var _ xexporterhelper.Request = (*payload)(nil)

// ItemsCount is the number of spans, data points or log records.
func (p *payload) ItemsCount() int { return p.items }

// BytesSize is the size of the wire bytes; before they exist, the size of
// the batch's encoding before compression.
func (p *payload) BytesSize() int {
	if p.pending != nil {
		return requestSize(p.pending)
	}
	return len(p.body)
}

// errNoBatching is returned if exporterhelper ever tries to merge or split a
// payload; Config.Validate rejects sending_queue::batch so it cannot happen.
var errNoBatching = errors.New("otlp_http_retry payloads are never merged or split: use the batch processor instead of sending_queue::batch")

// MergeSplit refuses: merging or splitting would change a payload's identity.
func (p *payload) MergeSplit(context.Context, int, exporterhelper.RequestSizerType, xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	return nil, errNoBatching
}

// payloadEncoding stores payloads in a persistent queue:
//
//	"OHR1" | key (16 bytes) | received unix nanos (8) | items (uvarint) | body
type payloadEncoding struct{}

const payloadMagic = "OHR1"

var _ exporterhelper.QueueBatchEncoding[xexporterhelper.Request] = payloadEncoding{}

func (payloadEncoding) Marshal(_ context.Context, r xexporterhelper.Request) ([]byte, error) {
	p, ok := r.(*payload)
	if !ok {
		return nil, fmt.Errorf("cannot persist request of type %T", r)
	}
	if p.items < 0 {
		return nil, fmt.Errorf("cannot persist a payload of %d items", p.items)
	}
	// A persistent queue always gets payloads encoded at entry; this only
	// guards the format.
	if p.pending != nil {
		return nil, errors.New("cannot persist a payload that is not encoded yet")
	}
	buf := make([]byte, 0, len(payloadMagic)+16+8+binary.MaxVarintLen64+len(p.body))
	buf = append(buf, payloadMagic...)
	buf = append(buf, p.key[:]...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(p.received.UnixNano()))
	buf = binary.AppendUvarint(buf, uint64(p.items))
	return append(buf, p.body...), nil
}

func (payloadEncoding) Unmarshal(data []byte) (context.Context, xexporterhelper.Request, error) {
	const head = len(payloadMagic) + 16 + 8
	if len(data) < head || string(data[:len(payloadMagic)]) != payloadMagic {
		return context.Background(), nil, errors.New("persistent queue item is not an otlp_http_retry payload")
	}
	p := &payload{}
	copy(p.key[:], data[len(payloadMagic):])
	// Marshal stored UnixNano's int64 bit for bit; this converts it back.
	nanos := int64(binary.BigEndian.Uint64(data[len(payloadMagic)+16:])) //nolint:gosec // G115: a bit-for-bit conversion back to the int64 Marshal wrote, not a narrowing.
	p.received = time.Unix(0, nanos)
	items, n := binary.Uvarint(data[head:])
	if n <= 0 || items > math.MaxInt {
		return context.Background(), nil, errors.New("persistent queue item has a corrupt item count")
	}
	p.items = int(items)
	p.body = append([]byte(nil), data[head+n:]...)
	return context.Background(), p, nil
}

// maskKey shows the last 8 hex digits of a key, enough to follow one
// payload through the logs without handing out the key. A UUIDv7 starts
// with its timestamp, so its first digits are alike for keys minted in the
// same minute; the last ones are random.
func maskKey(key uuid.UUID) string {
	s := key.String()
	return "…" + s[len(s)-8:]
}
