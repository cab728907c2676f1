// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// dropTooLarge: one item that, encoded and compressed alone, is larger
// than sending_queue::batch::max_size (bytes sizer).
const dropTooLarge = "too_large"

// form makes the requests of a batch whose data is parts, and keys them.
// The request is the parts' protobuf bytes one after the other (one valid
// export request: see part), re-encoded as JSON for encoding: json, and
// compressed once. With the bytes sizer and a max_size, a request larger
// than max_size once compressed is split before anything is keyed: by
// parts, or by items when it is one part, each piece formed the same way.
// A key is minted only for bytes that are final: from here on the pair
// (key, bytes) is the batch, in the queue, on disk, on every attempt.
func (e *baseExporter) form(parts []part, received time.Time, p partition) ([]*payload, error) {
	items := 0
	for _, pt := range parts {
		items += pt.items
	}
	body, err := e.encodeParts(parts)
	if err != nil {
		return nil, consumererror.NewPermanent(e.encodeFailed(context.Background(), items, err))
	}
	if limit := e.maxBatchBytes(); limit > 0 && len(body) > limit {
		return e.formHalves(parts, received, p)
	}
	key, err := uuid.NewV7()
	if err != nil {
		return nil, consumererror.NewPermanent(e.encodeFailed(context.Background(), items, err))
	}
	return []*payload{{key: key, body: body, items: items, received: received, partition: p}}, nil
}

// formHalves forms parts in two halves: of the parts by their bytes, or of
// the one part by its items.
func (e *baseExporter) formHalves(parts []part, received time.Time, p partition) ([]*payload, error) {
	var halves [][]part
	if len(parts) > 1 {
		total := 0
		for _, pt := range parts {
			total += len(pt.raw)
		}
		cut, acc := 1, len(parts[0].raw)
		for cut < len(parts)-1 && acc+len(parts[cut].raw) <= total/2 {
			acc += len(parts[cut].raw)
			cut++
		}
		halves = [][]part{parts[:cut], parts[cut:]}
	} else {
		split, err := e.signal.codec.halve(parts[0].raw)
		if errors.Is(err, errSingleItem) {
			e.tel.dropped(context.Background(), parts[0].items, dropTooLarge)
			e.tel.warnDrop(dropTooLarge, parts[0].items, "", err)
			return nil, consumererror.NewPermanent(fmt.Errorf("%w (%d bytes): raise max_size", err, e.maxBatchBytes()))
		}
		if err != nil {
			return nil, consumererror.NewPermanent(e.encodeFailed(context.Background(), parts[0].items, err))
		}
		for _, s := range split {
			halves = append(halves, []part{s})
		}
	}
	var out []*payload
	var errs []error
	for _, h := range halves {
		ps, err := e.form(h, received, p)
		out = append(out, ps...)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// encodeParts turns parts into the bytes sent: their protobuf bytes one
// after the other (re-encoded as JSON when configured), compressed. The
// parts are streamed into the compressor: the batch's uncompressed request
// is never copied out whole.
func (e *baseExporter) encodeParts(parts []part) ([]byte, error) {
	chunks := make([][]byte, len(parts))
	for i, pt := range parts {
		chunks[i] = pt.raw
	}
	if e.cfg.Encoding == EncodingJSON {
		json, err := e.signal.codec.toJSON(bytes.Join(chunks, nil))
		if err != nil {
			return nil, err
		}
		chunks = [][]byte{json}
	}
	return compressChunks(e.cfg.ClientConfig.Compression, e.cfg.ClientConfig.CompressionParams.Level, chunks)
}

// maxBatchBytes is max_size with the bytes sizer (0: no bound).
func (e *baseExporter) maxBatchBytes() int {
	if !e.cfg.batching() {
		return 0
	}
	b := e.cfg.QueueConfig.Get().Batch.Get()
	if b.Sizer != exporterhelper.RequestSizerTypeBytes {
		return 0
	}
	return int(b.MaxSize)
}

// newBatcher returns the exporter's batcher, nil without
// sending_queue::batch. offer hands a formed batch to exporterhelper.
func (e *baseExporter) newBatcher(offer func(context.Context, *payload) error) *batcher {
	if !e.cfg.batching() {
		return nil
	}
	q := *e.cfg.QueueConfig.Get()
	return newBatcher(batcherSettings{
		cfg:   *q.Batch.Get(),
		queue: q,
		clock: e.clock,
		form:  e.form,
		offer: offer,
		lost: func(items int, err error) {
			e.tel.dropped(context.Background(), items, dropQueueFull)
			e.tel.warnDrop(dropQueueFull, items, "", err)
		},
		encodeFailed: e.encodeFailed,
	})
}

// formedKey carries a formed batch through exporterhelper's Consume into
// the converter, which hands it to the queue as it is.
type formedKey struct{}

func withFormedPayload(ctx context.Context, p *payload) context.Context {
	return context.WithValue(ctx, formedKey{}, p)
}

func formedPayload(ctx context.Context) *payload {
	p, _ := ctx.Value(formedKey{}).(*payload)
	return p
}
