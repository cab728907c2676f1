// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
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
	// partition is the batch's partition (sending_queue::batch::partition):
	// its gate and pacer, and the metadata it is sent with. Stored with it.
	partition partition
	// done tells the batcher the batch is finished with (delivered,
	// dropped or interrupted: err says which), so that it gives back the
	// queue capacity the batch's data held and answers the callers that
	// wait for it; nil outside the batcher.
	done     func(err error)
	doneOnce sync.Once
}

// finish tells the batcher the payload is finished with. It runs once.
func (p *payload) finish(err error) {
	if p.done != nil {
		p.doneOnce.Do(func() { p.done(err) })
	}
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
//	"OHR2" | key (16 bytes) | received unix nanos (8) | items (uvarint) |
//	partition key (uvarint length, bytes) | metadata entries (uvarint count,
//	each: name, value count, values; every string as uvarint length, bytes) |
//	body
//
// A payload without a partition (no partition::metadata_keys) is stored as
// "OHR1", the same without partition and metadata, as earlier versions
// did, so that a queue written by either is read by both. The key and the
// body are stored as they were formed and come back unchanged: a restart,
// or a kill -9, sends the same bytes under the same key.
type payloadEncoding struct{}

const (
	payloadMagic            = "OHR1"
	payloadMagicPartitioned = "OHR2"
)

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
	plain := p.partition.key == "" && len(p.partition.meta) == 0
	buf := make([]byte, 0, len(payloadMagic)+16+8+3*binary.MaxVarintLen64+len(p.partition.key)+len(p.body))
	if plain {
		buf = append(buf, payloadMagic...)
	} else {
		buf = append(buf, payloadMagicPartitioned...)
	}
	buf = append(buf, p.key[:]...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(p.received.UnixNano()))
	buf = binary.AppendUvarint(buf, uint64(p.items))
	if plain {
		return append(buf, p.body...), nil
	}
	buf = appendString(buf, p.partition.key)
	buf = binary.AppendUvarint(buf, uint64(len(p.partition.meta)))
	for _, m := range p.partition.meta {
		buf = appendString(buf, m.key)
		buf = binary.AppendUvarint(buf, uint64(len(m.values)))
		for _, v := range m.values {
			buf = appendString(buf, v)
		}
	}
	return append(buf, p.body...), nil
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// errCorrupt: a stored payload that does not parse.
var errCorrupt = errors.New("persistent queue item is a corrupt otlp_http_retry payload")

func (payloadEncoding) Unmarshal(data []byte) (context.Context, xexporterhelper.Request, error) {
	const head = len(payloadMagic) + 16 + 8
	if len(data) < head || (string(data[:len(payloadMagic)]) != payloadMagic && string(data[:len(payloadMagic)]) != payloadMagicPartitioned) {
		return context.Background(), nil, errors.New("persistent queue item is not an otlp_http_retry payload")
	}
	partitioned := string(data[:len(payloadMagic)]) == payloadMagicPartitioned
	p := &payload{}
	copy(p.key[:], data[len(payloadMagic):])
	// Marshal stored UnixNano's int64 bit for bit; this converts it back.
	nanos := int64(binary.BigEndian.Uint64(data[len(payloadMagic)+16:])) //nolint:gosec // G115: a bit-for-bit conversion back to the int64 Marshal wrote, not a narrowing.
	p.received = time.Unix(0, nanos)
	r := reader{data: data[head:]}
	items := r.uvarint()
	if r.err != nil || items > math.MaxInt {
		return context.Background(), nil, errors.New("persistent queue item has a corrupt item count")
	}
	p.items = int(items)
	if partitioned {
		p.partition.key = r.string()
		n := r.uvarint()
		for i := uint64(0); i < n && r.err == nil; i++ {
			m := metaEntry{key: r.string()}
			nv := r.uvarint()
			for j := uint64(0); j < nv && r.err == nil; j++ {
				m.values = append(m.values, r.string())
			}
			p.partition.meta = append(p.partition.meta, m)
		}
		if r.err != nil {
			return context.Background(), nil, errCorrupt
		}
	}
	p.body = append([]byte(nil), r.data...)
	return p.partition.context(), p, nil
}

// reader reads what Marshal appended; err sticks at the first short read.
type reader struct {
	data []byte
	err  error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.data)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.data = r.data[n:]
	return v
}

func (r *reader) string() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.data)) {
		r.err = errCorrupt
		return ""
	}
	s := string(r.data[:n])
	r.data = r.data[n:]
	return s
}

// maskKey shows the last 8 hex digits of a key, enough to follow one
// payload through the logs without handing out the key. A UUIDv7 starts
// with its timestamp, so its first digits are alike for keys minted in the
// same minute; the last ones are random.
func maskKey(key uuid.UUID) string {
	s := key.String()
	return "…" + s[len(s)-8:]
}
